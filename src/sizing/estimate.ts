import { fileTokens, inlineFileText, toolOutputFileTokens, toolOutputText } from '../prompt/parts';
import type { FunctionTool, Message, Part } from '../prompt/types';

/** The cheap estimate: 4 characters a token. */
export const CHARS_PER_TOKEN = 4;

/** Characters of text plus tokens of attachments, kept apart so rounding happens once. */
export interface Measure {
  chars: number;
  tokens: number;
}

export function toTokens(measure: Measure): number {
  return Math.round(measure.chars / CHARS_PER_TOKEN) + measure.tokens;
}

/** Estimated tokens of messages: text length / 4, an image 1,500, a PDF (or other file) 2,000. */
export function estimateMessages(messages: readonly Message[], from = 0, to = messages.length): number {
  const total: Measure = { chars: 0, tokens: 0 };
  for (let index = from; index < to; index++) addMessage(total, messages[index]!);
  return toTokens(total);
}

/** Estimated tokens of tool definitions: name, description and JSON schema. */
export function estimateTools(tools: readonly FunctionTool[] | undefined): number {
  if (tools === undefined) return 0;
  let chars = 0;
  for (const tool of tools) {
    chars += (tool.name?.length ?? 0) + (typeof tool.description === 'string' ? tool.description.length : 0);
    if (tool.inputSchema !== undefined) chars += jsonLength(tool.inputSchema);
  }
  return Math.round(chars / CHARS_PER_TOKEN);
}

/** The whole prompt: system messages, conversation and tool definitions. */
export function estimatePrompt(prompt: readonly Message[], tools?: readonly FunctionTool[]): number {
  return estimateMessages(prompt) + estimateTools(tools);
}

export function addMessage(total: Measure, message: Message): void {
  if (message.role === 'system') {
    total.chars += message.content.length;
    return;
  }
  for (const part of message.content) addPart(total, part);
}

export function addPart(total: Measure, part: Part): void {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      total.chars += typeof part.text === 'string' ? part.text.length : 0;
      return;
    case 'file':
    case 'reasoning-file': {
      const inline = inlineFileText(part.data);
      if (inline !== undefined) total.chars += inline.length;
      else total.tokens += fileTokens(part.mediaType);
      return;
    }
    case 'tool-call':
      total.chars += String(part.toolName ?? '').length + inputLength(part.input);
      return;
    case 'tool-result': {
      total.chars += toolOutputText(part.output).text.length;
      total.tokens += toolOutputFileTokens(part.output);
      return;
    }
    default:
      return;
  }
}

function inputLength(input: unknown): number {
  return typeof input === 'string' ? input.length : jsonLength(input);
}

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}
