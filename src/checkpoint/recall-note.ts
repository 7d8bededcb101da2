import type { Message } from '../prompt/types';
import { earlierStepsNote, turnUserIndex } from './record';
import { RECORD_STYLE, messageLines } from './serialize';
import { USER_WORDS_END, USER_WORDS_NOTE } from './user-words';

/**
 * What a checkpoint says when the step's tools include the recall tool (docs/design.md, "Recall"):
 * the messages it stands for can be looked up by the tool, under the name the host gave it, and a
 * line of its record or of the user's earlier messages starts with the position of the message it
 * comes from, the number the tool takes.
 */
export interface RecallMention {
  /** The tool's name in the step's tools. */
  name: string;
  /** The conversation the checkpoint covers a prefix of. */
  conversation: readonly Message[];
  /** Messages the checkpoint covers: positions 0 to `covered - 1`. */
  covered: number;
}

/** The sentence that tells the model the covered messages can be looked up. */
export function recallNote({ name, covered }: Pick<RecallMention, 'name' | 'covered'>): string {
  return (
    `Messages 0 to ${covered - 1} of this conversation stand behind this checkpoint: the \`${name}\` tool looks up their exact text, ` +
    'by words (a path, an error, what the user said) or by position (`from`, `to`). A line below that starts with `#n` is from the message at position n.'
  );
}

const position = (index: number, line: string) => `#${index} ${line}`;

/**
 * The record with each line of a message prefixed with that message's position. The record is the
 * serialization of the newest covered messages, so it is read back from its end, message by
 * message, for as long as a message's lines are what the record holds; then the turn's user
 * message the record may open with. A line that cannot be told for sure keeps no number.
 */
export function numberRecord(record: string, conversation: readonly Message[], covered: number): string {
  let rest = record;
  const numbered: string[] = [];
  let index = covered - 1;
  for (; index >= 0 && rest !== ''; index--) {
    const lines = messageLines(conversation[index]!, RECORD_STYLE);
    if (lines.length === 0) continue;
    const block = lines.join('\n\n');
    if (rest !== block && !rest.endsWith(`\n\n${block}`)) break;
    numbered.unshift(lines.map((line) => position(index, line)).join('\n\n'));
    rest = rest.slice(0, Math.max(0, rest.length - block.length - 2));
  }
  if (rest !== '') {
    // a record that starts inside a turn opens with the turn's user message (its ends when long),
    // and a note when steps of the turn come between
    const user = turnUserIndex(conversation, index + 1);
    const noted = new RegExp(`\\n\\n${escape(earlierStepsNote(0)).replace('0', '\\d+')}$`).test(rest);
    const opensTurn = user >= 0 && /^\[User\]: /.test(rest) && (noted || user === index);
    numbered.unshift(opensTurn ? position(user, rest) : rest);
  }
  return numbered.join('\n\n');
}

/**
 * The user's earlier messages (the block the summary section opens with) with each one prefixed
 * with its position: the user messages of the covered part, in order, each found verbatim or as
 * its first and last parts with the note of what was cut between them.
 */
export function numberUserWords(words: string, conversation: readonly Message[], covered: number): string {
  const open = `${USER_WORDS_NOTE}\n\n`;
  const close = `\n\n${USER_WORDS_END}`;
  if (!words.startsWith(open) || !words.endsWith(close)) return words;
  const inner = words.slice(open.length, words.length - close.length);
  const out: string[] = [];
  let at = 0;
  for (let index = 0; index < covered && at < inner.length; index++) {
    const message = conversation[index]!;
    if (message.role !== 'user') continue;
    const full = messageLines(message, RECORD_STYLE).join('\n');
    const length = shownLength(inner, at, full);
    if (length === undefined) continue;
    out.push(position(index, inner.slice(at, at + length)));
    at += length + 2;
  }
  if (at < inner.length) return words;
  return `${open}${out.join('\n\n')}${close}`;
}

/** How many characters of `text` from `at` show `full`, whole or by its ends, up to a line break or the end; undefined when they do not. */
function shownLength(text: string, at: number, full: string): number | undefined {
  const ends = (length: number) => at + length === text.length || text.startsWith('\n\n', at + length);
  if (full !== '' && text.startsWith(full, at) && ends(full.length)) return full.length;
  const cut = /\n\[(\d+) characters cut\]\n/g;
  cut.lastIndex = at;
  const found = cut.exec(text);
  if (found === null) return undefined;
  const head = text.slice(at, found.index);
  const tailLength = full.length - head.length - Number(found[1]);
  if (head === '' || tailLength <= 0 || !full.startsWith(head)) return undefined;
  const tail = full.slice(full.length - tailLength);
  const after = found.index + found[0].length;
  return text.startsWith(tail, after) && ends(after + tailLength - at) ? after + tailLength - at : undefined;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
