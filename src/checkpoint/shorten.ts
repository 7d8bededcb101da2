import { exchanges } from '../prompt/conversation';
import type { Message } from '../prompt/types';
import { CHARS_PER_TOKEN, TRANSCRIPT_TOOL_INPUT_LIMIT, TRANSCRIPT_TOOL_OUTPUT_ENDS, TRANSCRIPT_WORDS_ENDS } from '../tunables';
import { type SerializeStyle, serialize } from './serialize';

/**
 * The shortening ladder of a transcript, one level per step:
 * 0. whole; 1. tool outputs cut to their first and last 1,000 characters; 2. tool outputs left out
 * and tool inputs cut; 3. only the user's words; 4. only the user's words, each message cut to
 * its first and last 500 characters (a long paste keeps its opening and its end, and the short
 * messages around it stay whole); 5. the exchange omitted.
 */
export const LEVELS: readonly SerializeStyle[] = [
  { toolOutput: { mode: 'full' } },
  { toolOutput: { mode: 'ends', keep: TRANSCRIPT_TOOL_OUTPUT_ENDS } },
  { toolOutput: { mode: 'omit' }, toolInputLimit: TRANSCRIPT_TOOL_INPUT_LIMIT },
  { toolOutput: { mode: 'omit' }, userOnly: true },
  { toolOutput: { mode: 'omit' }, userOnly: true, wordsEnds: TRANSCRIPT_WORDS_ENDS },
];
const OMITTED = LEVELS.length;

/** A transcript of exchanges, each at its own level. */
export function renderTranscript(parts: readonly Message[][], levels: readonly number[]): string {
  return joinTranscript(levels, (index, level) => serialize(parts[index]!, LEVELS[level]!));
}

/** The transcript of exchanges at `levels`, each shown by `textAt(index, level)`, behind a note of those omitted. */
function joinTranscript(levels: readonly number[], textAt: (index: number, level: number) => string): string {
  const omitted = levels.filter((level) => level >= OMITTED).length;
  const shown = levels.flatMap((level, index) => {
    const text = level >= OMITTED ? '' : textAt(index, level);
    return text === '' ? [] : [text];
  });
  return [...(omitted === 0 ? [] : [omittedNote(omitted)]), ...shown].join('\n\n');
}

/** The note that stands for the omitted exchanges. */
function omittedNote(omitted: number): string {
  return `[${omitted} older exchange${omitted === 1 ? '' : 's'} omitted]`;
}

/**
 * The levels of `count` exchanges that make a transcript fit: oldest exchange first, each taken
 * one level before any goes further, the newest never omitted; `undefined` when even that does not
 * fit. `lengthAt(index, level)` is the length of an exchange's text at a level below omitted ('' is
 * 0); `fits` is told the transcript's length at each try. The length is kept as running totals, so
 * a try costs the same whatever the number of exchanges, and `lengthAt` is asked at most once per
 * exchange and level: the ladder is linear in the conversation's length.
 */
export function climbLadder(count: number, lengthAt: (index: number, level: number) => number, fits: (length: number) => boolean): number[] | undefined {
  const levels = new Array<number>(count).fill(0);
  const lengths = levels.map((_, index) => lengthAt(index, 0));
  let shownLength = 0;
  let shown = 0;
  for (const length of lengths) {
    shownLength += length;
    if (length > 0) shown++;
  }
  let omitted = 0;
  const total = (): number => {
    const pieces = shown + (omitted > 0 ? 1 : 0);
    return shownLength + (omitted > 0 ? omittedNote(omitted).length : 0) + Math.max(0, pieces - 1) * 2;
  };
  let done = fits(total());
  for (let level = 1; !done && level <= OMITTED; level++) {
    for (let index = 0; index < count && !done; index++) {
      if (level === OMITTED && index === count - 1) break;
      const before = lengths[index]!;
      const after = level >= OMITTED ? 0 : lengthAt(index, level);
      shownLength += after - before;
      shown += (after > 0 ? 1 : 0) - (before > 0 ? 1 : 0);
      if (level >= OMITTED) omitted++;
      lengths[index] = after;
      levels[index] = level;
      done = fits(total());
    }
  }
  return done ? levels : undefined;
}

/**
 * Shortens a transcript of `messages` until it takes at most `budget` tokens (at `charsPerToken`,
 * the model's learned ratio, 4 until it has counts): oldest exchange first, each exchange taken one
 * level before any exchange goes further (`climbLadder`). The newest exchange is never omitted.
 * `undefined` when even that cannot fit. Each exchange is serialized at most once per level.
 */
export function shortenTranscript(messages: readonly Message[], budget: number, charsPerToken = CHARS_PER_TOKEN): string | undefined {
  const parts = exchanges(messages);
  const texts = parts.map(() => [] as string[]);
  const textAt = (index: number, level: number): string => (texts[index]![level] ??= serialize(parts[index]!, LEVELS[level]!));
  const levels = climbLadder(parts.length, (index, level) => textAt(index, level).length, (length) => Math.round(length / charsPerToken) <= budget);
  return levels && joinTranscript(levels, textAt);
}

/** The one text message a shortened summary request carries in place of the conversation. */
export function transcriptMessageText(transcript: string): string {
  return `Transcript of the conversation to summarize:\n\n<transcript>\n${transcript}\n</transcript>`;
}
