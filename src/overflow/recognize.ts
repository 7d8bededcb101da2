/**
 * Recognising providers' context-overflow errors.
 *
 * Pure and dependency-free (Web-standard JS only): runs on Node, the Edge runtime and browsers.
 * It never imports from `ai`; errors are read by shape, so checks survive two installed copies of
 * the AI SDK and both provider majors. The patterns (`patterns.ts`) are those of the provider errors kept in
 * `fixtures/overflow/` (each error's status and body as the provider sends it, with whether it is
 * an overflow, the limit and prompt size it states; test/core/overflow/recognize.test.ts reads every
 * one), and the rule is docs/design.md, "Overflow recovery".
 */

import {
  CODE_PATHS,
  CONTEXT_CODES,
  CONTEXT_PATTERNS,
  LIMIT_PATTERNS,
  LONG_CONTEXT_TIER_PATTERN,
  NON_OVERFLOW_CODES,
  NON_OVERFLOW_PATTERNS,
  NO_BODY_PATTERN,
  OPENROUTER_INPUT_PART,
  OPENROUTER_REQUESTED,
  OVERFLOW_STATUSES,
  PROMPT_TOKENS_PATTERNS,
  REQUEST_SIZE_CODES,
  REQUEST_SIZE_PATTERNS,
} from './patterns';
import { MAX_DEPTH, MAX_NESTED_JSON, MAX_NODES, MAX_OBJECT_DEPTH, MAX_STRINGS, MAX_TEXT_LENGTH } from '../tunables';

/** `'context'`: the prompt exceeds the model's window; `'request-size'`: the HTTP request is too big (413). */
export type ContextOverflowKind = 'context' | 'request-size';

/** What the walk over one error learned. */
interface Analysis {
  overflow: boolean;
  kind?: ContextOverflowKind;
  limit?: number;
  promptTokens?: number;
}

/** The evidence one node of the error tree carries. */
interface Evidence {
  status?: number;
  /** Free text: `message`, the raw body, every string inside the parsed bodies. */
  texts: string[];
  /** Provider codes, from the known code fields of every parsed body. */
  codes: string[];
  /** Parsed bodies and raw provider objects. */
  objects: Record<string, unknown>[];
  /** An HTTP 400/413 whose body was empty (Mistral, Cerebras). */
  emptyBodyStatus?: number;
}

type Verdict =
  | { decision: 'unknown' }
  | { decision: 'excluded' }
  | { decision: 'overflow'; kind: ContextOverflowKind; evidence: Evidence };

/**
 * Whether `error` is a provider's rejection of a prompt that does not fit the model: a context
 * overflow or a request-size (HTTP 413) error. Walks `cause`, `RetryError.errors`/`lastError` and
 * gateway wrappers; rate limits, throttling, 5xx and aborts are never overflow.
 */
export function isContextOverflowError(error: unknown): boolean {
  return analyze(error).overflow;
}

/**
 * The model's limit in tokens when the overflow message states it ("maximum context length is
 * 128000 tokens" gives 128000); `undefined` when it does not or `error` is not an overflow.
 */
export function contextOverflowLimit(error: unknown): number | undefined {
  return analyze(error).limit;
}

/**
 * `'request-size'` for an HTTP 413 / "request entity too large" / "payload too large" rejection,
 * `'context'` for any other overflow, `undefined` when `error` is not an overflow.
 */
export function contextOverflowKind(error: unknown): ContextOverflowKind | undefined {
  return analyze(error).kind;
}

/**
 * Whether a stream part is an `error` part holding an overflow: an `Error`, a string, or the raw
 * provider object (`{ error: { code: 'context_length_exceeded', ... } }`, `{ type: 'error', error }`).
 */
export function overflowFromStreamPart(part: { type: string; error?: unknown }): boolean {
  return part.type === 'error' && isContextOverflowError(part.error);
}

/**
 * The size in tokens the overflow message states for the rejected prompt ("However, your messages
 * resulted in 130412 tokens" gives 130412); `undefined` when it does not or `error` is not an overflow.
 */
export function promptTokensFromOverflow(error: unknown): number | undefined {
  return analyze(error).promptTokens;
}

/**
 * The outermost node that decides (overflow or excluded) wins; the numbers come from the first
 * overflow node that states them, so a terse wrapper still yields the upstream error's limit.
 */
function analyze(error: unknown): Analysis {
  const verdicts = walk(error).map(judge);
  const decisive = verdicts.find(verdict => verdict.decision !== 'unknown');
  if (decisive?.decision !== 'overflow') return { overflow: false };

  const evidence = verdicts.flatMap(verdict => (verdict.decision === 'overflow' ? [verdict.evidence] : []));
  return {
    overflow: true,
    kind: decisive.kind,
    limit: firstDefined(evidence, statedLimit),
    promptTokens: firstDefined(evidence, statedPromptTokens),
  };
}

/** The error and everything it wraps, outermost first, bounded and cycle-safe. */
function walk(root: unknown): unknown[] {
  const nodes: unknown[] = [];
  const seen = new Set<unknown>();
  const visit = (node: unknown, depth: number): void => {
    if (node == null || depth > MAX_DEPTH || nodes.length >= MAX_NODES || seen.has(node)) return;
    seen.add(node);
    nodes.push(node);
    if (!isObject(node)) return;
    for (const child of wrapped(node)) visit(child, depth + 1);
  };
  visit(root, 0);
  return nodes;
}

/** `RetryError` (`lastError`, then `errors` newest first) and `cause` (gateway wrappers, chains). */
function wrapped(node: Record<string, unknown>): unknown[] {
  const children: unknown[] = [];
  if ('lastError' in node) children.push(node.lastError);
  if (Array.isArray(node.errors)) children.push(...[...node.errors].reverse());
  if ('cause' in node) children.push(node.cause);
  return children;
}

function judge(node: unknown): Verdict {
  if (isAbort(node)) return { decision: 'excluded' };
  const evidence = gather(node);
  if (isLongContextTier(evidence)) return overflow('context', evidence);
  if (isExcluded(evidence)) return { decision: 'excluded' };

  if (evidence.codes.some(code => CONTEXT_CODES.has(code))) return overflow('context', evidence);
  if (evidence.texts.some(text => matchesAny(CONTEXT_PATTERNS, text))) return overflow('context', evidence);
  const noBody = noBodyStatus(evidence);
  if (noBody != null) return overflow(noBody === 413 ? 'request-size' : 'context', evidence);
  if (
    evidence.status === 413 ||
    evidence.codes.some(code => REQUEST_SIZE_CODES.has(code)) ||
    evidence.texts.some(text => matchesAny(REQUEST_SIZE_PATTERNS, text))
  ) {
    return overflow('request-size', evidence);
  }
  return { decision: 'unknown' };
}

/**
 * Anthropic's 429 for a prompt past 200k without the long-context tier (`LONG_CONTEXT_TIER_PATTERN`,
 * or the status with error type `request_too_large`): an overflow, unless it also reads as a rate limit.
 */
function isLongContextTier({ status, codes, texts }: Evidence): boolean {
  const stated = texts.some((text) => LONG_CONTEXT_TIER_PATTERN.test(text)) || (status === 429 && codes.some((code) => REQUEST_SIZE_CODES.has(code)));
  return stated && !codes.some((code) => NON_OVERFLOW_CODES.has(code)) && !texts.some((text) => NON_OVERFLOW_PATTERNS.some((pattern) => pattern.test(text.trim())));
}

/** The status of a bodiless 400/413: an empty `responseBody`, or a message like "400 status code (no body)". */
function noBodyStatus({ emptyBodyStatus, texts }: Evidence): number | undefined {
  if (emptyBodyStatus != null) return emptyBodyStatus;
  const match = texts.map(text => NO_BODY_PATTERN.exec(text.trim())).find(found => found != null);
  return match == null ? undefined : Number(match[0].slice(0, 3));
}

function overflow(kind: ContextOverflowKind, evidence: Evidence): Verdict {
  return { decision: 'overflow', kind, evidence };
}

function isExcluded({ status, codes, texts, objects }: Evidence): boolean {
  if (status != null && !OVERFLOW_STATUSES.has(status)) return true;
  if (objects.some(object => embeddedStatuses(object).some(isThroughputOrServerStatus))) return true;
  if (codes.some(code => NON_OVERFLOW_CODES.has(code))) return true;
  return texts.some(text => NON_OVERFLOW_PATTERNS.some(pattern => pattern.test(text.trim())));
}

function isThroughputOrServerStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** HTTP statuses some bodies repeat as numbers (`{ error: { code: 429 } }`, vLLM `code: 400`). */
function embeddedStatuses(object: Record<string, unknown>): number[] {
  const error = isObject(object.error) ? object.error : undefined;
  return [object.code, object.status, error?.code, error?.status].filter(
    (value): value is number => typeof value === 'number' && value >= 100 && value <= 599,
  );
}

/** Never treat a cancelled or timed-out call as overflow. */
function isAbort(node: unknown): boolean {
  return isObject(node) && (node.name === 'AbortError' || node.name === 'TimeoutError');
}

function gather(node: unknown): Evidence {
  const evidence: Evidence = { texts: [], codes: [], objects: [] };
  if (typeof node === 'string') {
    evidence.texts.push(node);
    addObject(evidence, parseJsonObject(node));
  } else if (isErrorLike(node)) {
    gatherFromError(node, evidence);
  } else if (isObject(node)) {
    addObject(evidence, node);
  }
  evidence.texts = evidence.texts.map(text => text.slice(0, MAX_TEXT_LENGTH));
  evidence.codes = evidence.objects.flatMap(codesOf);
  return evidence;
}

/**
 * An `APICallError`, gateway error, or other `Error`: read only the fields that carry the
 * provider's answer (never `requestBodyValues`, which holds the user's prompt).
 */
function gatherFromError(node: Record<string, unknown>, evidence: Evidence): void {
  const status = typeof node.statusCode === 'number' ? node.statusCode : typeof node.status === 'number' ? node.status : undefined;
  if (status != null) evidence.status = status;
  if (typeof node.message === 'string') evidence.texts.push(node.message);

  const body = node.responseBody;
  if (typeof body === 'string') {
    if (body.trim() === '' && (status === 400 || status === 413)) evidence.emptyBodyStatus = status;
    evidence.texts.push(body);
    addObject(evidence, parseJsonObject(body));
  }
  if (isObject(node.data)) addObject(evidence, node.data);
  if (isObject(node.error)) addObject(evidence, node.error);
  evidence.objects.push(pick(node, ['code', 'type']));
}

/** Adds a parsed body or raw object, its strings, and any JSON nested in those strings (OpenRouter `metadata.raw`). */
function addObject(evidence: Evidence, object: Record<string, unknown> | undefined, nested = 0): void {
  if (object == null || evidence.objects.includes(object)) return;
  evidence.objects.push(object);
  for (const text of stringsIn(object)) {
    evidence.texts.push(text);
    if (nested < MAX_NESTED_JSON) addObject(evidence, parseJsonObject(text), nested + 1);
  }
}

function stringsIn(value: unknown): string[] {
  const strings: string[] = [];
  const visit = (item: unknown, depth: number): void => {
    if (strings.length >= MAX_STRINGS || depth > MAX_OBJECT_DEPTH) return;
    if (typeof item === 'string') strings.push(item);
    else if (Array.isArray(item)) item.forEach(child => visit(child, depth + 1));
    else if (isObject(item)) Object.values(item).forEach(child => visit(child, depth + 1));
  };
  visit(value, 0);
  return strings;
}

function codesOf(object: Record<string, unknown>): string[] {
  return CODE_PATHS.map(path => at(object, path))
    .filter((value): value is string => typeof value === 'string')
    .map(code => code.toLowerCase());
}

function statedLimit(evidence: Evidence): number | undefined {
  return firstNumber(evidence.texts, LIMIT_PATTERNS) ?? structuredNumber(evidence.objects, 'n_ctx');
}

function statedPromptTokens(evidence: Evidence): number | undefined {
  return (
    firstNumber(evidence.texts, PROMPT_TOKENS_PATTERNS) ??
    openRouterInput(evidence.texts) ??
    structuredNumber(evidence.objects, 'n_prompt_tokens')
  );
}

function firstNumber(texts: string[], patterns: readonly RegExp[]): number | undefined {
  for (const pattern of patterns) {
    for (const text of texts) {
      const number = toNumber(pattern.exec(text)?.[1]);
      if (number != null) return number;
    }
  }
  return undefined;
}

function openRouterInput(texts: string[]): number | undefined {
  for (const text of texts) {
    const parts = OPENROUTER_REQUESTED.exec(text)?.[1];
    if (parts == null) continue;
    const inputs = [...parts.matchAll(OPENROUTER_INPUT_PART)].map(match => toNumber(match[1]) ?? 0);
    if (inputs.length > 0) return inputs.reduce((sum, count) => sum + count, 0);
  }
  return undefined;
}

/** llama.cpp states the sizes as fields: `{ error: { n_prompt_tokens, n_ctx } }`. */
function structuredNumber(objects: Record<string, unknown>[], key: string): number | undefined {
  for (const object of objects) {
    for (const value of [object[key], at(object, ['error', key])]) {
      if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
    }
  }
  return undefined;
}

function toNumber(digits: string | undefined): number | undefined {
  if (digits == null) return undefined;
  const number = Number(digits.replace(/,/g, ''));
  return Number.isSafeInteger(number) && number > 0 ? number : undefined;
}

function firstDefined<T, R>(items: T[], read: (item: T) => R | undefined): R | undefined {
  for (const item of items) {
    const value = read(item);
    if (value !== undefined) return value;
  }
  return undefined;
}

function matchesAny(patterns: readonly RegExp[], text: string): boolean {
  return patterns.some(pattern => pattern.test(text));
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function at(object: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = object;
  for (const key of path) {
    if (!isObject(value)) return undefined;
    value = value[key];
  }
  return value;
}

function pick(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = Object.create(null);
  for (const key of keys) if (key in object) picked[key] = object[key];
  return picked;
}

function isErrorLike(value: unknown): value is Record<string, unknown> {
  return value instanceof Error || (isObject(value) && typeof value.message === 'string' && typeof value.name === 'string');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
