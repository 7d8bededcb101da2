import { stepEnd } from '../prompt/conversation';
import { toolOutputText } from '../prompt/parts';
import type { ContentMessage, Message, Part } from '../prompt/types';
import { estimateMessages } from '../sizing/estimate';
import { CHARS_PER_TOKEN, NOTE_ROOM } from '../tunables';
import { keepEnds } from './serialize';

/** A tool output's text inside a step: where it is, and how long. */
interface Output {
  message: number;
  part: number;
  /** Index of a text item in a `content` output. */
  item?: number;
  text: string;
}

/**
 * The messages after a checkpoint as they go out (docs/design.md, "What stays live"): the step
 * right after it (an assistant message and the tool results after it, live when the checkpoint was
 * made) takes at most `budget` tokens, its tool outputs shortened to their first and last parts
 * when it is larger. The same messages always give the same bytes, so later steps keep the
 * provider's cache: the view sends it at 4 characters a token, not at a learned ratio that may move
 * between two steps.
 */
export function afterCheckpoint(conversation: Message[], from: number, budget: number | undefined, charsPerToken = CHARS_PER_TOKEN): Message[] {
  const rest = conversation.slice(from);
  if (budget === undefined) return rest;
  const end = stepEnd(conversation, from);
  if (end === from) return rest;
  return [...shortenStep(conversation.slice(from, end), budget, charsPerToken), ...conversation.slice(end)];
}

/**
 * A step within `budget` tokens: when it is larger, its tool outputs are cut to their first and
 * last parts (each with a note of how many characters were left out), the longest first, so that
 * every output keeps as much as the budget allows. User and assistant words are never shortened;
 * the caller's messages are not changed.
 */
export function shortenStep(step: Message[], budget: number, charsPerToken = CHARS_PER_TOKEN): Message[] {
  const tokens = estimateMessages(step, 0, step.length, { charsPerToken });
  if (tokens <= budget) return step;
  const outputs: Output[] = [];
  step.forEach((message, index) => {
    if (message.role === 'system') return;
    message.content.forEach((part, partIndex) => {
      if (part.type !== 'tool-result') return;
      const output = part.output as { type?: unknown; value?: unknown } | undefined;
      if (output?.type === 'content' && Array.isArray(output.value)) {
        output.value.forEach((item: Part, itemIndex) => {
          if (item?.type === 'text' && typeof item.text === 'string') outputs.push({ message: index, part: partIndex, item: itemIndex, text: item.text });
        });
      } else if (output?.type === 'text' || output?.type === 'json' || output?.type === 'error-text' || output?.type === 'error-json') {
        outputs.push({ message: index, part: partIndex, text: toolOutputText(output).text });
      }
    });
  });
  const outputChars = outputs.reduce((sum, output) => sum + output.text.length, 0);
  const otherChars = Math.max(0, tokens * charsPerToken - outputChars);
  const lengths = outputs.map((output) => output.text.length);
  const room = Math.max(0, Math.floor(budget * charsPerToken) - otherChars);
  // Each output that is cut carries a note: room for it comes out of the share.
  const cut = lengths.filter((length) => length > fairShare(lengths, room)).length;
  const cap = fairShare(lengths, Math.max(0, room - cut * NOTE_ROOM));
  const shortened = new Map<string, string>();
  for (const output of outputs) {
    if (output.text.length > cap) shortened.set(`${output.message}:${output.part}:${output.item ?? ''}`, keepEnds(output.text, Math.floor(cap / 2)));
  }
  if (shortened.size === 0) return step;
  return step.map((message, index) => {
    if (message.role === 'system') return message;
    let changed = false;
    const content = message.content.map((part, partIndex) => {
      const next = shortenedPart(part, (item) => shortened.get(`${index}:${partIndex}:${item ?? ''}`));
      changed ||= next !== part;
      return next;
    });
    return changed ? ({ ...message, content } as ContentMessage) : message;
  });
}

/** The largest length each of `lengths` may keep so that together they take at most `room`. */
function fairShare(lengths: number[], room: number): number {
  const sorted = [...lengths].sort((a, b) => a - b);
  let left = room;
  for (let index = 0; index < sorted.length; index++) {
    const share = Math.floor(left / (sorted.length - index));
    if (sorted[index]! > share) return share;
    left -= sorted[index]!;
  }
  return Number.POSITIVE_INFINITY;
}

function shortenedPart(part: Part, textFor: (item: number | undefined) => string | undefined): Part {
  if (part.type !== 'tool-result') return part;
  const output = part.output as { type: string; value: unknown };
  if (output.type === 'content') {
    const items = output.value as Part[];
    let changed = false;
    const value = items.map((item, index) => {
      const text = textFor(index);
      if (text === undefined) return item;
      changed = true;
      return { ...item, text };
    });
    return changed ? { ...part, output: { ...output, value } } : part;
  }
  const text = textFor(undefined);
  if (text === undefined) return part;
  // A JSON output cut in the middle is no longer JSON: it goes out as text of the same kind.
  const type = output.type === 'error-json' || output.type === 'error-text' ? 'error-text' : 'text';
  return { ...part, output: { ...output, type, value: text } };
}
