import type { Message } from '../prompt/types';
import { CHARS_PER_TOKEN, USER_WORDS_ENDS_DIVISOR } from '../tunables';
import { withoutSection } from './identifiers';
import { RECORD_STYLE, keepEnds, messageLines } from './serialize';

/**
 * The user's own words (docs/design.md, "The user's words"). A summary may drop a rule the user gave
 * turns ago ("do not edit files under src/legacy/"): a summarizer that forgets loses it, and an agent
 * then breaks it. So the record of each checkpoint opens with the user's messages that it does not
 * hold otherwise, verbatim: made by the middleware from the caller's messages, not by the model.
 * The checkpoint message places them at the start of its summary section, in the order things were
 * said: the summary and the record that follow are newer than they are.
 */

/** The line that opens the user's earlier messages in a record (docs/design.md, "The user's words"). */
export const USER_WORDS_NOTE = "[The user's earlier messages, verbatim; what came between and after them is summarized below]";
/** The line that closes them. */
export const USER_WORDS_END = "[End of the user's earlier messages]";

/** One user message of the list: where it stands in the conversation, and its line. */
export interface UserWords {
  index: number;
  line: string;
}

/**
 * The user's messages of `conversation[from, to)` as record lines (`[User]: text`, files named,
 * never their bytes), within `budget` tokens: each one verbatim, or its first and last parts when
 * longer than a quarter of the budget; when they do not all fit, the first (the task, most often)
 * and then the newest. In the conversation's order.
 */
export function collectUserWords(conversation: readonly Message[], from: number, to: number, budget: number, charsPerToken = CHARS_PER_TOKEN): UserWords[] {
  const room = Math.floor(budget * charsPerToken) - USER_WORDS_NOTE.length - USER_WORDS_END.length - 4;
  if (room <= 0) return [];
  const ends = Math.floor(room / USER_WORDS_ENDS_DIVISOR);
  const all: UserWords[] = [];
  for (let index = from; index < Math.min(to, conversation.length); index++) {
    const message = conversation[index]!;
    if (message.role !== 'user') continue;
    const text = messageLines(message, RECORD_STYLE).join('\n');
    if (text !== '') all.push({ index, line: keepEnds(text, ends) });
  }
  const kept: UserWords[] = [];
  let used = 0;
  const take = (words: UserWords) => {
    if (used + words.line.length + 2 > room) return false;
    kept.push(words);
    used += words.line.length + 2;
    return true;
  };
  if (all.length > 0) take(all[0]!);
  for (let index = all.length - 1; index >= 1; index--) if (!take(all[index]!)) break;
  return kept.sort((a, b) => a.index - b.index);
}

/** The record opened with the user's earlier messages (`lines`), when there are any. */
export function withUserWords(lines: readonly string[], record: string): string {
  if (lines.length === 0) return record;
  const words = [USER_WORDS_NOTE, ...lines, USER_WORDS_END].join('\n\n');
  return record === '' ? words : `${words}\n\n${record}`;
}

/** A record's opening of the user's earlier messages (`''` when it has none), and the rest of it. */
export function splitUserWords(record: string): { words: string; rest: string } {
  const close = `\n\n${USER_WORDS_END}`;
  const end = record.startsWith(`${USER_WORDS_NOTE}\n\n`) ? record.indexOf(close) : -1;
  if (end < 0) return { words: '', rest: record };
  return { words: record.slice(0, end + close.length), rest: record.slice(end + close.length).replace(/^\n\n/, '') };
}

/** A summary without a copy of the user's earlier messages the model made from a checkpoint (up to its first heading): the middleware adds its own. */
export function withoutUserWordsSection(summary: string): string {
  return withoutSection(summary, USER_WORDS_NOTE);
}
