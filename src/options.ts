import { z } from 'zod';
import type { BufferSetting } from './sizing/ceiling';
import type { CompactionStore } from './store/types';
import type { Model } from './prompt/types';
import { SECRET_MIN_LENGTH } from './store/seal';

/** Where the middleware reports: `console`, pino and winston all fit. */
export interface CompactionLogger {
  info(message: string): void;
  warn(message: string): void;
}

export const DEFAULT_KEEP = 15_000;
export const DEFAULT_SUMMARY_OUTPUT_TOKENS = 32_000;
/** The share of the ceiling at which the next checkpoint is prepared in the background (SPEC 14). */
export const DEFAULT_PREPARE = 0.8;

/** Whether old tool outputs are cleared before a summary is asked for (SPEC 13): decided by the benchmarks. */
export const DEFAULT_CLEAR_TOOL_RESULTS = false;

/** `clearToolResults` after validation: off, or on with its `keep` and `atLeast` (`undefined`: the defaults, which depend on the ceiling). */
export type ClearSetting = false | { keep: number | undefined; atLeast: number | undefined };

const positiveInteger = z.number().int().positive();
const tokenCount = z.number().int().nonnegative();
const share = z
  .string()
  .regex(/^\d+(\.\d+)?%$/)
  .transform((value) => Number.parseFloat(value))
  .refine((value) => value >= 1 && value <= 99);
const secretText = z.string().min(SECRET_MIN_LENGTH);
const functionValue = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function');

/** What each option accepts, said in the error that refuses it. */
const rules = {
  contextWindow: {
    schema: z.union([positiveInteger, functionValue]),
    expected: 'a positive whole number of tokens, or a function of the model returning one',
  },
  buffer: {
    schema: z.union([tokenCount, share]),
    expected: 'a share from "1%" to "99%", or a whole number of tokens (0 or more)',
  },
  keep: { schema: tokenCount, expected: 'a whole number of tokens (0 or more)' },
  auto: { schema: z.boolean(), expected: 'true or false' },
  summaryOutputTokens: { schema: positiveInteger, expected: 'a positive whole number of tokens' },
  summarizer: {
    schema: z.custom<Model>(
      (value) => typeof value === 'object' && value !== null && typeof (value as Model).doGenerate === 'function',
    ),
    expected: 'a language model object (with doGenerate)',
  },
  logger: {
    schema: z.custom<CompactionLogger>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as CompactionLogger).info === 'function' &&
        typeof (value as CompactionLogger).warn === 'function',
    ),
    expected: 'an object with info and warn functions (console, pino and winston fit)',
  },
  store: {
    schema: z.custom<CompactionStore>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        ['get', 'set', 'delete'].every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
    ),
    expected: 'a store with get, set and delete functions',
  },
  onCompaction: { schema: functionValue, expected: 'a function' },
  native: { schema: z.boolean(), expected: 'true or false' },
  prepare: {
    schema: z.union([z.literal(false), z.number().gt(0).lt(1)]),
    expected: 'a share of the ceiling above 0 and below 1 (0.8 prepares at 80 % of it), or false',
  },
  waitUntil: { schema: functionValue, expected: 'a function taking a promise (after() of next/server, waitUntil of a host)' },
  estimate: { schema: functionValue, expected: 'a function (text) => tokens' },
  clearToolResults: {
    schema: z.union([z.boolean(), z.object({ keep: tokenCount.optional(), atLeast: tokenCount.optional() }).strict()]),
    expected: 'true, false, or { keep?, atLeast? } with whole numbers of tokens (0 or more)',
  },
  secret: {
    schema: z.union([secretText, z.array(secretText).min(1)]),
    expected: `a string of at least ${SECRET_MIN_LENGTH} characters, or a non-empty list of them (the first seals, any opens)`,
  },
} as const;

export type OptionName = keyof typeof rules | 'state';

/**
 * The share of the room a compaction keeps (docs/design.md, "One budget"), for the benchmarks that
 * choose its default: an option under this symbol, not part of the public options.
 */
export const BUDGET_SHARE = Symbol.for('ai-compaction.budgetShare');

/** Options after validation, with their defaults filled in. */
export interface ResolvedOptions {
  contextWindow: number | ((model: Model) => number | undefined) | undefined;
  buffer: BufferSetting | undefined;
  keep: number;
  auto: boolean;
  summaryOutputTokens: number;
  summarizer: Model | undefined;
  logger: CompactionLogger | undefined;
  store: CompactionStore | undefined;
  onCompaction: ((record: never) => unknown) | undefined;
  native: boolean;
  /** Share of the ceiling at which the next checkpoint is prepared, or `false`. */
  prepare: number | false;
  waitUntil: ((promise: Promise<unknown>) => void) | undefined;
  /** A tokenizer for text, instead of the characters-a-token rule. */
  estimate: ((text: string) => number) | undefined;
  clearToolResults: ClearSetting;
  /** The secrets values are sealed with (the first seals, any opens), or `undefined`: stored as JSON. */
  secret: readonly string[] | undefined;
  /** Share of the room a compaction keeps, at most half (`undefined`: the default). */
  budgetShare: number | undefined;
}

/** Validates options at construction: a bad one throws a `TypeError` naming the option and value. */
export function resolveOptions(options: Record<string, unknown>): ResolvedOptions {
  const known = new Set<string>([...Object.keys(rules), 'state']);
  for (const name of Object.keys(options)) {
    if (!known.has(name)) throw new TypeError(`ai-compaction: unknown option ${name}`);
  }
  const value = <K extends keyof typeof rules>(name: K): z.output<(typeof rules)[K]['schema']> | undefined => {
    const given = options[name];
    if (given === undefined) return undefined;
    const parsed = rules[name].schema.safeParse(given);
    if (!parsed.success) {
      // A secret is never shown, only what was wrong with it.
      const shown = name === 'clearToolResults' ? describeSetting(given) : name === 'secret' ? describeSecret(given) : describe(given);
      throw new TypeError(`ai-compaction: option ${name} must be ${rules[name].expected}, got ${shown}`);
    }
    return parsed.data as z.output<(typeof rules)[K]['schema']>;
  };
  const buffer = value('buffer');
  return {
    contextWindow: value('contextWindow') as ResolvedOptions['contextWindow'],
    buffer: buffer === undefined ? undefined : typeof options.buffer === 'string' ? { share: buffer } : { tokens: buffer },
    keep: value('keep') ?? DEFAULT_KEEP,
    auto: value('auto') ?? true,
    summaryOutputTokens: value('summaryOutputTokens') ?? DEFAULT_SUMMARY_OUTPUT_TOKENS,
    summarizer: value('summarizer'),
    logger: value('logger'),
    store: value('store'),
    onCompaction: value('onCompaction') as ResolvedOptions['onCompaction'],
    native: value('native') ?? false,
    prepare: value('prepare') ?? DEFAULT_PREPARE,
    waitUntil: value('waitUntil') as ResolvedOptions['waitUntil'],
    estimate: value('estimate') as ResolvedOptions['estimate'],
    clearToolResults: clearSetting(value('clearToolResults') ?? DEFAULT_CLEAR_TOOL_RESULTS),
    secret: secretSetting(value('secret')),
    budgetShare: budgetShare((options as { [BUDGET_SHARE]?: unknown })[BUDGET_SHARE]),
  };
}

function secretSetting(given: string | string[] | undefined): readonly string[] | undefined {
  if (given === undefined) return undefined;
  return typeof given === 'string' ? [given] : [...given];
}

function budgetShare(given: unknown): number | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'number' || !(given > 0 && given <= 0.5)) throw new TypeError(`ai-compaction: the budget share must be above 0 and at most 0.5, got ${describe(given)}`);
  return given;
}

function clearSetting(given: boolean | { keep?: number | undefined; atLeast?: number | undefined }): ClearSetting {
  if (given === false) return false;
  return given === true ? { keep: undefined, atLeast: undefined } : { keep: given.keep, atLeast: given.atLeast };
}

/** What a refused secret was, without showing it. */
function describeSecret(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (Array.isArray(value)) {
    if (value.length === 0) return 'an empty list';
    const bad = value.findIndex((item) => typeof item !== 'string' || item.length < SECRET_MIN_LENGTH);
    return `a list whose entry ${bad} is ${typeof value[bad] === 'string' ? `a string of ${(value[bad] as string).length} characters` : describe(value[bad])}`;
  }
  return describe(value);
}

/** A small settings object as JSON (`{"keep":-1}`), so an error shows the field at fault; anything else as `describe` shows it. */
function describeSetting(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return describe(value);
  const entries = Object.entries(value);
  if (entries.length > 4 || entries.some(([, item]) => typeof item === 'object' || typeof item === 'function')) return describe(value);
  return `{ ${entries.map(([key, item]) => `${key}: ${describe(item)}`).join(', ')} }`;
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : String(value);
}
