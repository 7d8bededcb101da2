import { exchanges } from '../prompt/conversation';
import type { Message } from '../prompt/types';
import { CHARS_PER_TOKEN } from '../sizing/estimate';
import { RECORD_STYLE, messageLines } from './serialize';

/** The record of a checkpoint: the newest messages it covers, serialized, and where they start. */
export interface CheckpointRecord {
  /** Index in the covered messages at which the record starts (their length when empty). */
  start: number;
  text: string;
  tokens: number;
}

/** Most of the ceiling the record may take: a quarter, or every step would compact again. */
export function recordBudget(keep: number, ceiling: number | undefined): number {
  return ceiling === undefined ? keep : Math.max(0, Math.min(keep, Math.floor(ceiling / 4)));
}

/**
 * Chooses the record among `messages` (what a new checkpoint covers and the previous one did not):
 * the newest messages within `budget` tokens, starting at a user message so a tool call stays with
 * its result. When they all fit, only the latest exchange; when there is a single exchange, none.
 */
export function selectRecord(messages: readonly Message[], budget: number): CheckpointRecord {
  const none: CheckpointRecord = { start: messages.length, text: '', tokens: 0 };
  if (exchanges(messages).length <= 1) return none;

  const lines = messages.map((message) => messageLines(message, RECORD_STYLE));
  const chars = lines.map((messageLine) => messageLine.reduce((sum, line) => sum + line.length + 2, 0));
  const suffix = new Array<number>(messages.length + 1).fill(0);
  for (let index = messages.length - 1; index >= 0; index--) suffix[index] = suffix[index + 1]! + chars[index]!;
  const tokensFrom = (start: number) => Math.round(suffix[start]! / CHARS_PER_TOKEN);

  const userStarts: number[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'user') userStarts.push(index);
  });
  if (userStarts.length === 0) return none;

  let start: number | undefined;
  if (tokensFrom(0) <= budget) {
    start = userStarts[userStarts.length - 1];
  } else {
    start = userStarts.find((index) => tokensFrom(index) <= budget);
  }
  if (start === undefined) return none;
  const text = lines.slice(start).flat().join('\n\n');
  return { start, text, tokens: Math.round(text.length / CHARS_PER_TOKEN) };
}
