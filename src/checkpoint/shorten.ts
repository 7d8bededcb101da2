import { exchanges } from '../prompt/conversation';
import type { Message } from '../prompt/types';
import { CHARS_PER_TOKEN } from '../sizing/estimate';
import { type SerializeStyle, serialize } from './serialize';

/**
 * The shortening ladder of a transcript, one level per step:
 * 0. whole; 1. tool outputs cut to their first and last 1,000 characters; 2. tool outputs left out
 * and tool inputs cut; 3. only the user's words; 4. the exchange omitted.
 */
export const LEVELS: readonly SerializeStyle[] = [
  { toolOutput: { mode: 'full' } },
  { toolOutput: { mode: 'ends', keep: 1_000 } },
  { toolOutput: { mode: 'omit' }, toolInputLimit: 200 },
  { toolOutput: { mode: 'omit' }, userOnly: true },
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
 * Shortens a transcript of `messages` until it takes at most `budget` tokens (4 characters a
 * token): oldest exchange first, each exchange taken one level before any exchange goes further.
 * The newest exchange is never omitted. `undefined` when even that cannot fit.
 */
export function shortenTranscript(messages: readonly Message[], budget: number): string | undefined {
  const parts = exchanges(messages);
  const levels = parts.map(() => 0);
  const fits = () => {
    const text = renderTranscript(parts, levels);
    return Math.round(text.length / CHARS_PER_TOKEN) <= budget ? text : undefined;
  };
  let text = fits();
  for (let level = 1; text === undefined && level <= OMITTED; level++) {
    for (let index = 0; index < parts.length && text === undefined; index++) {
      if (level === OMITTED && index === parts.length - 1) break;
      levels[index] = level;
      text = fits();
    }
  }
  return text;
}

/** The one text message a shortened summary request carries in place of the conversation. */
export function transcriptMessageText(transcript: string): string {
  return `Transcript of the conversation to summarize:\n\n<transcript>\n${transcript}\n</transcript>`;
}
