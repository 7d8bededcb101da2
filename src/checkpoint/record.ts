import type { Message } from '../prompt/types';
import { CHARS_PER_TOKEN, RECORD_CEILING_DIVISOR, RECORD_PROGRESS_DIVISOR, USER_MESSAGE_DIVISOR } from '../tunables';
import { RECORD_STYLE, keepEnds, messageLines } from './serialize';

/** The record of a checkpoint: the newest messages it covers, serialized, and where they start. */
export interface CheckpointRecord {
  /** Index in the conversation at which the record's newest messages start (`end` when it has none). */
  start: number;
  text: string;
  tokens: number;
}

/** Most of the ceiling the record may take: a quarter, or every step would compact again. */
export function recordBudget(keep: number, ceiling: number | undefined): number {
  return ceiling === undefined ? keep : Math.max(0, Math.min(keep, Math.floor(ceiling / RECORD_CEILING_DIVISOR)));
}

/** The note between a turn's user message and its newest steps, when the steps between are summarized. */
export function earlierStepsNote(steps: number): string {
  return `[${steps} earlier steps of this turn are summarized above]`;
}

/**
 * Chooses the record among what a new checkpoint covers, `conversation[from..end)` (docs/design.md,
 * "The record"):
 * - the newest messages within `budget` tokens, starting at a user message;
 * - when the newest turn alone is larger, the record starts inside it at an assistant message (a
 *   tool call stays with its result), opening with that turn's user message verbatim (its ends
 *   when longer than a quarter of the budget; found before `from` too) and a note of how many of
 *   its steps are summarized;
 * - when all it covers would fit, only the newest half of it, so that a compaction makes progress.
 * The turn's user message opens it whatever the budget leaves: verbatim up to `userMessage` tokens
 * (a quarter of the budget unless given), its first and last parts past that.
 */
export function selectRecord(
  conversation: readonly Message[],
  budget: number,
  from = 0,
  end = conversation.length,
  charsPerToken = CHARS_PER_TOKEN,
  userMessage = Math.floor(budget / USER_MESSAGE_DIVISOR),
): CheckpointRecord {
  const tokensOf = (chars: number) => Math.round(chars / charsPerToken);
  if (end <= from) return { start: end, text: '', tokens: 0 };
  const lines = new Map<number, string[]>();
  const linesOf = (index: number): string[] => {
    let found = lines.get(index);
    if (found === undefined) lines.set(index, (found = messageLines(conversation[index]!, RECORD_STYLE)));
    return found;
  };
  // suffix[i - from]: characters of the record from message i to `end`, each line with its separator
  const suffix = new Array<number>(end - from + 1).fill(0);
  for (let index = end - 1; index >= from; index--) {
    suffix[index - from] = suffix[index - from + 1]! + linesOf(index).reduce((sum, line) => sum + line.length + 2, 0);
  }
  const tokensFrom = (index: number) => tokensOf(suffix[index - from]!);
  const target = tokensFrom(from) <= budget ? Math.floor(tokensFrom(from) / RECORD_PROGRESS_DIVISOR) : budget;

  for (let index = from; index < end; index++) {
    if (conversation[index]!.role === 'user' && tokensFrom(index) <= target) return recordOf([], index, end, linesOf, tokensOf);
  }

  // Inside the newest turn: its user message, then as many of its newest steps as fit.
  const turnUser = turnUserIndex(conversation, end);
  const head = turnUser < 0 ? [] : userHead(linesOf(turnUser), userMessage, charsPerToken);
  const room = target - tokensOf(head.reduce((sum, line) => sum + line.length + 2, 0) + earlierStepsNote(0).length + 4);
  let start = end;
  for (let index = Math.max(from, turnUser + 1); index < end; index++) {
    if (conversation[index]!.role === 'assistant' && tokensFrom(index) <= room) {
      start = index;
      break;
    }
  }
  let earlier = 0;
  for (let index = turnUser + 1; index < start; index++) if (conversation[index]!.role === 'assistant') earlier++;
  return recordOf([...head, ...(earlier > 0 ? [earlierStepsNote(earlier)] : [])], start, end, linesOf, tokensOf);
}

/**
 * Where the user's words a record starting at `start` holds begin: `start` when it is a user
 * message; else the user message of the turn it starts inside (or after, when it holds no step),
 * which the record opens with.
 */
export function recordOpening(conversation: readonly Message[], start: number, end: number): number {
  if (start < end && conversation[start]!.role === 'user') return start;
  const turnUser = turnUserIndex(conversation, start);
  return turnUser < 0 ? start : turnUser;
}

/**
 * What a record starting inside the turn that `conversation[0, end)` ends in opens with before its
 * steps, that turn's user message whole: its lines and the note on the steps between ('' without a
 * turn). The record shortens the message to its ends past its allowance.
 */
export function openingText(conversation: readonly Message[], end: number): string {
  const turnUser = turnUserIndex(conversation, end);
  if (turnUser < 0) return '';
  return [...messageLines(conversation[turnUser]!, RECORD_STYLE), earlierStepsNote(end - turnUser)].map((line) => `${line}\n\n`).join('');
}

/** The user message of the turn that `conversation[0, end)` ends in: the last one before `end`, or -1. */
export function turnUserIndex(conversation: readonly Message[], end: number): number {
  let index = end - 1;
  while (index >= 0 && conversation[index]!.role !== 'user') index--;
  return index;
}

/** A turn's user message as the record opens with it: verbatim, or its first and last parts past `limit` tokens. */
function userHead(lines: string[], limit: number, charsPerToken: number): string[] {
  const quarter = Math.floor(limit * charsPerToken);
  const text = lines.join('\n\n');
  if (text.length <= quarter) return lines;
  const label = text.startsWith(USER_LABEL) ? USER_LABEL : '';
  return [`${label}${keepEnds(text.slice(label.length), Math.max(1, Math.floor(quarter / 2)))}`];
}

const USER_LABEL = '[User]: ';

/** The record: `head`, then the lines of messages `start` to `end`. */
function recordOf(
  head: string[],
  start: number,
  end: number,
  linesOf: (index: number) => string[],
  tokensOf: (chars: number) => number,
): CheckpointRecord {
  const body: string[] = [...head];
  for (let index = start; index < end; index++) body.push(...linesOf(index));
  const text = body.join('\n\n');
  return { start, text, tokens: tokensOf(text.length) };
}
