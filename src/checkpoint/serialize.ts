import { attachmentLine, stringifyJson, toolOutputText } from '../prompt/parts';
import type { Message, Part } from '../prompt/types';
import { RECORD_TOOL_OUTPUT_LIMIT } from '../tunables';

/** How much of each kind of content a serialization keeps. */
export interface SerializeStyle {
  /** `full`; `cut` at a limit with a `[truncated]` note; `ends`: first and last N characters; `omit`. */
  toolOutput: { mode: 'full' } | { mode: 'cut'; limit: number } | { mode: 'ends'; keep: number } | { mode: 'omit' };
  /** Tool call inputs in full, or cut at a limit. */
  toolInputLimit?: number;
  /** Only the user's words. */
  userOnly?: boolean;
  /** Each message's words cut to their first and last N characters. */
  wordsEnds?: number;
}

// Each tool output in a record is cut at 1,250 characters (tunables.ts), exported here for the tests.
export { RECORD_TOOL_OUTPUT_LIMIT } from '../tunables';
export const RECORD_STYLE: SerializeStyle = { toolOutput: { mode: 'cut', limit: RECORD_TOOL_OUTPUT_LIMIT } };

/**
 * Cuts text at `limit` characters, never inside a surrogate pair, and says so with a `[truncated]`
 * note. Text within the limit comes back unchanged.
 */
export function truncate(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, safeCut(text, limit))}\n[truncated]`;
}

/** The first and last `keep` characters, with a note of how many were cut between them. */
export function keepEnds(text: string, keep: number): string {
  if (text.length <= keep * 2) return text;
  const head = text.slice(0, safeCut(text, keep));
  const tailStart = text.length - keep;
  const tail = text.slice(isLowSurrogate(text.charCodeAt(tailStart)) ? tailStart + 1 : tailStart);
  return `${head}\n[${text.length - head.length - tail.length} characters cut]\n${tail}`;
}

/** A cut position at or below `limit` that does not split a surrogate pair. */
function safeCut(text: string, limit: number): number {
  return isHighSurrogate(text.charCodeAt(limit - 1)) ? limit - 1 : limit;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The lines of one message: `[User]: ...`, `[Assistant]: ...`, `[Assistant tool call]: ...`, `[Tool result]: ...`. */
export function messageLines(message: Message, style: SerializeStyle): string[] {
  if (message.role === 'system') return [];
  if (style.userOnly && message.role !== 'user') return [];
  const lines: string[] = [];
  const texts: string[] = [];
  const attachments: string[] = [];
  const label = message.role === 'user' ? '[User]' : '[Assistant]';
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
        if (typeof part.text === 'string' && part.text !== '') texts.push(part.text);
        break;
      case 'file':
        attachments.push(attachmentLine(part.mediaType, part.filename));
        break;
      case 'tool-call':
        if (!style.userOnly) lines.push(`[Assistant tool call]: ${toolCall(part, style)}`);
        break;
      case 'tool-result':
        if (!style.userOnly) {
          const line = toolResult(part, style);
          if (line !== undefined) lines.push(line);
        }
        break;
      default:
        // reasoning, reasoning files, approvals and provider-specific parts are left out
        break;
    }
  }
  const words = texts.join('\n');
  const head = texts.length > 0 ? [`${label}: ${style.wordsEnds === undefined ? words : keepEnds(words, style.wordsEnds)}`] : [];
  return [...head, ...lines, ...(style.userOnly && message.role !== 'user' ? [] : attachments)];
}

function toolCall(part: Part, style: SerializeStyle): string {
  const input = typeof part.input === 'string' ? part.input : stringifyJson(part.input);
  const shown = style.toolInputLimit === undefined ? input : truncate(input, style.toolInputLimit);
  return `${String(part.toolName ?? 'tool')}(${shown})`;
}

function toolResult(part: Part, style: SerializeStyle): string | undefined {
  const { mode } = style.toolOutput;
  if (mode === 'omit') return undefined;
  const output = toolOutputText(part.output);
  const text =
    mode === 'cut'
      ? truncate(output.text, (style.toolOutput as { limit: number }).limit)
      : mode === 'ends'
        ? keepEnds(output.text, (style.toolOutput as { keep: number }).keep)
        : output.text;
  return `${output.error ? '[Tool error]' : '[Tool result]'}: ${text}`;
}

/** Messages as lines joined by a blank line. */
export function serialize(messages: readonly Message[], style: SerializeStyle): string {
  return messages.flatMap((message) => messageLines(message, style)).join('\n\n');
}
