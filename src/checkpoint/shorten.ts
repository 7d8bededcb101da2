import { exchanges } from '../prompt/conversation';
import type { Message } from '../prompt/types';
import { CHARS_PER_TOKEN } from '../sizing/estimate';
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
  { toolOutput: { mode: 'ends', keep: 1_000 } },
  { toolOutput: { mode: 'omit' }, toolInputLimit: 200 },
  { toolOutput: { mode: 'omit' }, userOnly: true },
  { toolOutput: { mode: 'omit' }, userOnly: true, wordsEnds: 500 },
];
const OMITTED = LEVELS.length;

/** A transcript of exchanges, each at its own level. */
export function renderTranscript(parts: readonly Message[][], levels: readonly number[]): string {
  const omitted = levels.filter((level) => level >= OMITTED).length;
  const shown = parts
    .map((exchange, index) => (levels[index]! >= OMITTED ? '' : serialize(exchange, LEVELS[levels[index]!]!)))
    .filter((text) => text !== '');
  const note = omitted === 0 ? [] : [`[${omitted} older exchange${omitted === 1 ? '' : 's'} omitted]`];
  return [...note, ...shown].join('\n\n');
}

/**
 * Shortens a transcript of `messages` until it takes at most `budget` tokens (at `charsPerToken`,
 * the model's learned ratio, 4 until it has counts): oldest exchange first, each exchange taken one
 * level before any exchange goes further. The newest exchange is never omitted. `undefined` when
 * even that cannot fit. Each exchange is serialized once per level; a try only adds up lengths.
 */
export function shortenTranscript(messages: readonly Message[], budget: number, charsPerToken = CHARS_PER_TOKEN): string | undefined {
  const parts = exchanges(messages);
  const levels = parts.map(() => 0);
  const texts = parts.map(() => new Map<number, string>());
  const textAt = (index: number, level: number): string => {
    let text = texts[index]!.get(level);
    if (text === undefined) {
      text = level >= OMITTED ? '' : serialize(parts[index]!, LEVELS[level]!);
      texts[index]!.set(level, text);
    }
    return text;
  };
  const lengthNow = (): number => {
    let length = 0;
    let pieces = 0;
    let omitted = 0;
    levels.forEach((level, index) => {
      if (level >= OMITTED) return void omitted++;
      const text = textAt(index, level);
      if (text === '') return;
      length += text.length;
      pieces++;
    });
    if (omitted > 0) {
      length += `[${omitted} older exchange${omitted === 1 ? '' : 's'} omitted]`.length;
      pieces++;
    }
    return length + Math.max(0, pieces - 1) * 2;
  };
  const fits = () => Math.round(lengthNow() / charsPerToken) <= budget;
  let done = fits();
  for (let level = 1; !done && level <= OMITTED; level++) {
    for (let index = 0; index < parts.length && !done; index++) {
      if (level === OMITTED && index === parts.length - 1) break;
      levels[index] = level;
      done = fits();
    }
  }
  return done ? renderTranscript(parts, levels) : undefined;
}

/** The one text message a shortened summary request carries in place of the conversation. */
export function transcriptMessageText(transcript: string): string {
  return `Transcript of the conversation to summarize:\n\n<transcript>\n${transcript}\n</transcript>`;
}
