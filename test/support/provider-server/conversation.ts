// The provider-neutral form every wire format is parsed into. The token counter, the prompt
// cache model and the scripted agent only ever see this shape.

export type ApiName = 'openai-chat' | 'openai-responses' | 'anthropic';

export type Part =
  | { type: 'text'; text: string }
  | { type: 'image' }
  | { type: 'file'; name?: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; id: string; name: string; args: string }
  | { type: 'tool-result'; id: string; text: string; isError?: boolean; images?: number };

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: Part[];
  /** The wire block carries a prompt-cache breakpoint (Anthropic `cache_control`). */
  cacheBreakpoint?: boolean;
}

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON schema of the input, as sent. */
  schema: unknown;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface ParsedRequest {
  model: string;
  stream: boolean;
  messages: Message[];
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
  maxOutputTokens: number | undefined;
  /** Tools or system carry an Anthropic cache breakpoint. */
  headerCacheBreakpoint?: boolean;
}

/** A request the server refuses before looking at its size (HTTP 400/404 in the provider's shape). */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export function jsonString(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value ?? {}) ?? '';
  } catch {
    return String(value);
  }
}

/** All text of a message: text, reasoning, tool call names/arguments and tool results. */
export function messageText(message: Message): string {
  const out: string[] = [];
  for (const part of message.parts) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        out.push(part.text);
        break;
      case 'tool-call':
        out.push(`${part.name}(${part.args})`);
        break;
      case 'tool-result':
        out.push(part.text);
        break;
      default:
        break;
    }
  }
  return out.join('\n');
}

/** Only the text parts (what a user typed, what an assistant said). */
export function plainText(message: Message): string {
  return message.parts
    .filter((p): p is { type: 'text'; text: string } => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}
