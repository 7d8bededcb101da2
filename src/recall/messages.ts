import { attachmentLine, stringifyJson, toolOutputText } from '../prompt/parts';
import { isOwnPart } from '../prompt/own-parts';
import type { Part } from '../prompt/types';

/** A message of the conversation as the recall tool reads it: its position, its role, its text. */
export interface RecalledMessage {
  position: number;
  role: 'user' | 'assistant' | 'tool' | 'system';
  text: string;
}

/** A message as a tool's `execute` is handed it (`ModelMessage` of AI SDK 6 or 7), read structurally. */
export interface HandedMessage {
  role: string;
  content: unknown;
}

/**
 * The conversation's messages with their positions (docs/design.md, "Recall"), numbered the way
 * the middleware numbers the conversation it compacts, so that a checkpoint's positions are the
 * tool's: the leading system messages are not counted (the `system` option is not handed to a tool
 * at all), consecutive tool messages are one (the AI SDK merges them before the model call), and
 * this package's own `compaction` parts and the answers to tool approvals are left out, with a
 * message they leave empty.
 */
export function positionedMessages(handed: readonly HandedMessage[]): RecalledMessage[] {
  let first = 0;
  while (first < handed.length && handed[first]!.role === 'system') first++;
  const merged: { role: RecalledMessage['role']; parts: Part[] }[] = [];
  for (const message of handed.slice(first)) {
    const role = message.role as RecalledMessage['role'];
    const all = partsOf(message.content);
    // an approval's answer does not reach the model: a tool message of nothing else is dropped, as the AI SDK drops it
    const parts = all.filter((part) => !isOwnPart(part) && !(role === 'tool' && part.type === 'tool-approval-response'));
    if (parts.length === 0 && all.length > 0) continue;
    const previous = merged[merged.length - 1];
    if (role === 'tool' && previous?.role === 'tool') previous.parts.push(...parts);
    else merged.push({ role, parts });
  }
  return merged.map(({ role, parts }, position) => ({ position, role, text: parts.map(partText).filter((text) => text !== '').join('\n\n') }));
}

function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content.filter((part) => typeof part === 'object' && part !== null) as Part[]) : [];
}

/** A part's exact text: words as written, a tool call as `name(input)`, a tool output as it was returned, a file by its name. */
function partText(part: Part): string {
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' ? part.text : '';
    case 'tool-call':
      return `${String(part.toolName ?? 'tool')}(${typeof part.input === 'string' ? part.input : stringifyJson(part.input)})`;
    case 'tool-result':
      return toolOutputText(part.output).text;
    case 'file':
    case 'image':
      return attachmentLine(part.mediaType ?? (part.type === 'image' ? 'image' : 'file'), part.filename);
    default:
      // reasoning, approvals and provider-specific parts: not words of the conversation
      return '';
  }
}
