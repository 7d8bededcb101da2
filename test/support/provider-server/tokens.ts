import { countTokens, decode, encode } from 'gpt-tokenizer';
import { createHash } from 'node:crypto';
import type { Message, ParsedRequest, Part, ToolDefinition } from './conversation';

/*
 * Token counting rule (the same for all three wire formats; o200k_base via gpt-tokenizer):
 *
 *   prompt = sum over tool definitions of  tokens(name) + tokens(description) + tokens(JSON schema)
 *          + sum over messages/items   of  4 (per-message overhead) + sum of its parts
 *
 *   text / reasoning part   tokens(text)
 *   tool call               tokens(name) + tokens(arguments JSON string as sent)
 *   tool result             tokens(output text as sent; structured outputs as their JSON text)
 *                           + 1,000 per image inside it
 *   image                   1,000 (fixed, whatever its size)
 *   other file (PDF ...)    1,000 (fixed, whatever its size)
 *
 * "Message" means what the wire format sends as one unit: a chat message, a Responses input
 * item (a function_call and a function_call_output are items of their own), an Anthropic
 * message (tool results are blocks of a user message), and the system prompt / instructions
 * (one message when present). Special-token strings such as `<|endoftext|>` are counted as
 * plain text.
 *
 *   output = tokens(reply text) + sum over tool calls of tokens(name) + tokens(arguments JSON)
 */

export const MESSAGE_OVERHEAD = 4;
export const IMAGE_TOKENS = 1_000;
export const FILE_TOKENS = 1_000;

const cache = new Map<string, number>();
const CACHE_LIMIT = 200_000;
const ENCODE_OPTIONS = { disallowedSpecial: new Set<string>() };

/** Tokens of one string, cached by the string itself. */
export function countText(text: string): number {
  if (text.length === 0) return 0;
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const n = countTokens(text, ENCODE_OPTIONS);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, n);
  return n;
}

export function countPart(part: Part): number {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return countText(part.text);
    case 'image':
      return IMAGE_TOKENS;
    case 'file':
      return FILE_TOKENS;
    case 'tool-call':
      return countText(part.name) + countText(part.args);
    case 'tool-result':
      return countText(part.text) + (part.images ?? 0) * IMAGE_TOKENS;
  }
}

export function countMessage(message: Message): number {
  let n = MESSAGE_OVERHEAD;
  for (const part of message.parts) n += countPart(part);
  return n;
}

export function countTools(tools: ToolDefinition[]): number {
  let n = 0;
  for (const tool of tools) {
    n += countText(tool.name) + countText(tool.description) + countText(stableJson(tool.schema));
  }
  return n;
}

export interface PromptCount {
  total: number;
  tools: number;
  /** Tokens per message, in order. */
  perMessage: number[];
}

export function countPrompt(request: Pick<ParsedRequest, 'messages' | 'tools'>): PromptCount {
  const tools = countTools(request.tools);
  const perMessage = request.messages.map(countMessage);
  let total = tools;
  for (const n of perMessage) total += n;
  return { total, tools, perMessage };
}

export function countOutput(text: string, toolCalls: { name: string; args: string }[]): number {
  let n = countText(text);
  for (const call of toolCalls) n += countText(call.name) + countText(call.args);
  return n;
}

/** The first `max` tokens of `text` (for replies cut at the output limit). */
export function truncateToTokens(text: string, max: number): string {
  if (max <= 0) return '';
  const tokens = encode(text, ENCODE_OPTIONS);
  if (tokens.length <= max) return text;
  return decode(tokens.slice(0, max));
}

/** Splits text into stream deltas of about `size` tokens (keeps whole tokens together). */
export function splitDeltas(text: string, size = 4): string[] {
  if (text.length === 0) return [];
  const tokens = encode(text, ENCODE_OPTIONS);
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i += size) out.push(decode(tokens.slice(i, i + size)));
  // decode of partial multi-byte sequences can differ from the source; fall back to characters
  if (out.join('') !== text) {
    const chunks: string[] = [];
    const chars = Array.from(text);
    for (let i = 0; i < chars.length; i += size * 4) chunks.push(chars.slice(i, i + size * 4).join(''));
    return chunks;
  }
  return out;
}

function stableJson(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/*
 * Prompt-cache model (usage realism only: it never changes the total input count).
 * A request's prefix hashes are a chain over [tools + first message, ...]: prefix i covers the
 * tool definitions and messages 0..i. OpenAI caches automatically: prompts of 1,024 tokens or
 * more read the longest prefix an earlier request of the same API had, in 128-token steps.
 * Anthropic caches only at `cache_control` breakpoints (prefixes of 1,024 tokens or more).
 * With an expiry (`CacheExpiry`), a prefix no request read or wrote for `idleMs` is gone, as the
 * providers' caches drop a prefix after about 5 minutes idle; without one a prefix stays.
 */
export function prefixHashes(request: Pick<ParsedRequest, 'messages' | 'tools'>): string[] {
  const out: string[] = [];
  let previous = createHash('sha1').update(stableJson(request.tools)).digest('hex');
  for (const message of request.messages) {
    previous = createHash('sha1')
      .update(previous)
      .update(message.role)
      .update(stableJson(message.parts))
      .digest('hex');
    out.push(previous);
  }
  return out;
}

/** Idle time after which OpenAI and Anthropic drop a cached prefix: 5 minutes. */
export const CACHE_IDLE_MS = 5 * 60_000;

/**
 * When a cached prefix expires: once `idleMs` or more have passed on `now` (milliseconds) since a
 * request last read or wrote it.
 */
export interface CacheExpiry {
  idleMs: number;
  now: () => number;
}

export class PrefixCache {
  /** Each prefix, with when a request last read or wrote it (0 without an expiry); oldest first. */
  private readonly seen = new Map<string, number>();
  constructor(
    private readonly limit = 50_000,
    private readonly expiry?: CacheExpiry,
  ) {}

  /** Whether the prefix is cached (an expired one is dropped). */
  has(hash: string): boolean {
    const at = this.seen.get(hash);
    if (at === undefined) return false;
    if (this.expiry !== undefined && this.expiry.now() - at >= this.expiry.idleMs) {
      this.seen.delete(hash);
      return false;
    }
    return true;
  }

  /** Caches the prefix; with an expiry, one cached already is refreshed (read or written now). */
  add(hash: string): void {
    if (this.seen.has(hash)) {
      if (this.expiry === undefined) return;
      this.seen.delete(hash);
    } else if (this.seen.size >= this.limit) {
      const first = this.seen.keys().next();
      if (!first.done) this.seen.delete(first.value);
    }
    this.seen.set(hash, this.expiry?.now() ?? 0);
  }
}

export interface CacheUsage {
  cacheRead: number;
  cacheWrite: number;
}

/** OpenAI automatic prompt caching: read the longest known prefix, write every prefix. */
export function openaiCache(
  cache: PrefixCache,
  hashes: string[],
  count: PromptCount,
  commit: boolean,
): CacheUsage {
  let cacheRead = 0;
  if (count.total >= 1024) {
    let cumulative = count.tools;
    let best = 0;
    for (let i = 0; i < hashes.length; i++) {
      cumulative += count.perMessage[i] ?? 0;
      if (cache.has(hashes[i]!)) best = cumulative;
    }
    cacheRead = best >= 1024 ? Math.floor(best / 128) * 128 : 0;
  }
  if (commit) for (const h of hashes) cache.add(h);
  return { cacheRead, cacheWrite: 0 };
}

/** Anthropic breakpoint caching: read the longest written prefix up to the last breakpoint, write at breakpoints. */
export function anthropicCache(
  cache: PrefixCache,
  hashes: string[],
  count: PromptCount,
  breakpoints: number[],
  commit: boolean,
): CacheUsage {
  if (breakpoints.length === 0) return { cacheRead: 0, cacheWrite: 0 };
  const cumulativeAt: number[] = [];
  let cumulative = count.tools;
  for (let i = 0; i < hashes.length; i++) {
    cumulative += count.perMessage[i] ?? 0;
    cumulativeAt.push(cumulative);
  }
  const last = Math.max(...breakpoints);
  let cacheRead = 0;
  let read: number | undefined;
  for (let i = 0; i <= last && i < hashes.length; i++) {
    if (cache.has(hashes[i]!)) {
      cacheRead = cumulativeAt[i]!;
      read = i;
    }
  }
  const lastCumulative = cumulativeAt[last] ?? 0;
  let cacheWrite = 0;
  if (lastCumulative >= 1024 && !cache.has(hashes[last]!)) cacheWrite = lastCumulative - cacheRead;
  if (commit) {
    // the prefix read is refreshed (it stays cached while requests read it), the breakpoints written
    if (read !== undefined) cache.add(hashes[read]!);
    for (const b of breakpoints) if ((cumulativeAt[b] ?? 0) >= 1024 && hashes[b]) cache.add(hashes[b]);
  }
  return { cacheRead, cacheWrite };
}
