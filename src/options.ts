import { z } from 'zod';
import { type Clock, isClock, realClock } from './clock';
import { describe } from './errors';
import {
  DEFAULT_CLEAR_TOOL_RESULTS,
  DEFAULT_KEEP,
  DEFAULT_PREPARE,
  DEFAULT_SUMMARY_OUTPUT_TOKENS,
  DEFAULT_SUMMARY_TIMEOUT_MS,
  MAX_BUDGET_SHARE,
  SECRET_MIN_LENGTH,
} from './tunables';
import type { Model } from './prompt/types';
import type { BufferSetting } from './sizing/ceiling';
import type { CompactionStore } from './store/types';
import type { CompactionLogger, CompactionOptions, CompactionRecord, ModelPricing } from './types';

/** `compactAt` after validation: where a conversation is compacted below the ceiling (docs/design.md, "Compaction timed by what it costs"). */
export type CompactAt = 'cost' | 'ceiling' | number;

export type { CompactionLogger } from './types';

// The options' defaults (tunables.ts), exported here for the tests and the benchmarks.
export { DEFAULT_KEEP, DEFAULT_SUMMARY_OUTPUT_TOKENS } from './tunables';

/** `clearToolResults` after validation: off, or on with its `keep` and `atLeast` (`undefined`: the defaults, which depend on the ceiling). */
export type ClearSetting = false | { keep: number | undefined; atLeast: number | undefined };

const positiveInteger = z.number().int().positive();
const tokenCount = z.number().int().nonnegative();
const share = z
  .string()
  .regex(/^\d+(\.\d+)?%$/)
  .transform((value) => Number.parseFloat(value))
  .refine((value) => value >= 1 && value <= 99);
const ratio = z.number().nonnegative().finite().optional();
const secretText = z.string().min(SECRET_MIN_LENGTH);
const functionValue = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function');

/**
 * How each option of `CompactionOptions` (types.ts, where each is documented) is read: what it
 * accepts (`schema`, and in words `expected`, said in the error that refuses it) and what it
 * becomes once validated, with its default filled in (`resolve`, given the parsed value or
 * `undefined` when unset). One entry an option: `ResolvedOptions` and `resolveOptions` are made
 * from this table, and the compiler refuses a table that misses an option or has one too many.
 * (`state` is read by `parseState`, state.ts.)
 */
const OPTIONS = {
  contextWindow: option({
    schema: z.union([positiveInteger, functionValue]),
    expected: 'a positive whole number of tokens, or a function of the model returning one',
    resolve: (value) => value as number | ((model: Model) => number | undefined) | undefined,
  }),
  pricing: option({
    schema: z
      .object({ cachedInput: ratio, cacheWrite: ratio, output: ratio, cacheTtl: z.number().int().positive().optional() })
      .strict(),
    expected: 'an object { cachedInput?, cacheWrite?, output? } of ratios to the input price (finite numbers, 0 or more) and cacheTtl? in milliseconds (a whole number, above 0)',
    /** The host's prices, each field winning over the catalog's (model.ts). */
    resolve: (value): Partial<ModelPricing> | undefined => (value === undefined ? undefined : withoutUndefined(value)),
    show: describeSetting,
  }),
  buffer: option({
    schema: z.union([tokenCount, share]),
    expected: 'a share from "1%" to "99%", or a whole number of tokens (0 or more)',
    resolve: (value, given): BufferSetting | undefined => (value === undefined ? undefined : typeof given === 'string' ? { share: value } : { tokens: value }),
  }),
  keep: option({ schema: tokenCount, expected: 'a whole number of tokens (0 or more)', resolve: (value) => value ?? DEFAULT_KEEP }),
  auto: option({ schema: z.boolean(), expected: 'true or false', resolve: (value) => value ?? true }),
  summaryOutputTokens: option({ schema: positiveInteger, expected: 'a positive whole number of tokens', resolve: (value) => value ?? DEFAULT_SUMMARY_OUTPUT_TOKENS }),
  summaryTimeout: option({
    // A timer holds at most 2,147,483,647 ms (a signed 32-bit count); past it, it fires at once.
    schema: z.union([positiveInteger.max(2 ** 31 - 1), z.literal(false)]),
    expected: 'a positive whole number of milliseconds up to 2,147,483,647 (the most a timer holds), or false',
    resolve: (value): number | false => value ?? DEFAULT_SUMMARY_TIMEOUT_MS,
  }),
  summarizer: option({
    schema: z.custom<Model>(
      (value) => typeof value === 'object' && value !== null && typeof (value as Model).doGenerate === 'function',
    ),
    expected: 'a language model object (with doGenerate)',
    resolve: (value) => value,
  }),
  logger: option({
    schema: z.custom<CompactionLogger>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as CompactionLogger).info === 'function' &&
        typeof (value as CompactionLogger).warn === 'function',
    ),
    expected: 'an object with info and warn functions (console, pino and winston fit)',
    resolve: (value) => value,
  }),
  store: option({
    schema: z.custom<CompactionStore>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        ['get', 'set', 'delete'].every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
    ),
    expected: 'a store with get, set and delete functions',
    resolve: (value) => value,
  }),
  onCompaction: option({ schema: functionValue, expected: 'a function', resolve: (value) => value as ((report: CompactionRecord) => unknown) | undefined }),
  native: option({ schema: z.boolean(), expected: 'true or false', resolve: (value) => value ?? false }),
  prepare: option({
    schema: z.union([z.literal(false), z.number().gt(0).lt(1)]),
    expected: 'a share of the ceiling above 0 and below 1 (0.8 prepares at 80 % of it), or false',
    /** Share of the ceiling at which the next checkpoint is prepared, or `false`. */
    resolve: (value): number | false => value ?? DEFAULT_PREPARE,
  }),
  waitUntil: option({
    schema: functionValue,
    expected: 'a function taking a promise (after() of next/server, waitUntil of a host)',
    resolve: (value) => value as ((promise: Promise<unknown>) => void) | undefined,
  }),
  estimate: option({
    schema: functionValue,
    expected: 'a function (text) => tokens',
    /** A tokenizer for text, instead of the characters-a-token rule. */
    resolve: (value) => value as ((text: string) => number) | undefined,
  }),
  clearToolResults: option({
    schema: z.union([z.boolean(), z.object({ keep: tokenCount.optional(), atLeast: tokenCount.optional() }).strict()]),
    expected: 'true, false, or { keep?, atLeast? } with whole numbers of tokens (0 or more)',
    resolve: (value) => clearSetting(value ?? DEFAULT_CLEAR_TOOL_RESULTS),
    show: describeSetting,
  }),
  streamPart: option({ schema: z.boolean(), expected: 'true or false', resolve: (value) => value ?? true }),
  compactAt: option({
    schema: z.union([z.literal('cost'), z.literal('ceiling'), z.number().gt(0).lte(1)]),
    expected: "'cost', 'ceiling', or a share of the ceiling above 0 and at most 1",
    resolve: (value): CompactAt => value ?? 'cost',
  }),
  secret: option({
    schema: z.union([secretText, z.array(secretText).min(1)]),
    expected: `a string of at least ${SECRET_MIN_LENGTH} characters, or a non-empty list of them (the first seals, any opens)`,
    /** The secrets values are sealed with (the first seals, any opens), or `undefined`: stored as JSON. */
    resolve: (value) => secretSetting(value),
    // A secret is never shown, only what was wrong with it.
    show: describeSecret,
  }),
} satisfies { [Name in Exclude<keyof CompactionOptions, 'state'>]-?: Rule<z.ZodType, unknown> };

/** One option's entry: its schema, what it accepts in words, what it becomes, and how a refused value is shown (`describe` by default). */
interface Rule<Schema extends z.ZodType, Resolved> {
  schema: Schema;
  expected: string;
  resolve(value: z.output<Schema> | undefined, given: unknown): Resolved;
  show?: (given: unknown) => string;
}

/** An entry of the table, its `resolve` typed by its schema. */
function option<Schema extends z.ZodType, Resolved>(rule: Rule<Schema, Resolved>): Rule<Schema, Resolved> {
  return rule;
}

type Options = typeof OPTIONS;

/**
 * The share of the room a compaction keeps (docs/design.md, "One budget"), for the benchmarks that
 * choose its default: an option under this symbol, not part of the public options.
 */
export const BUDGET_SHARE = Symbol.for('ai-compaction.budgetShare');

/**
 * The clock the middleware reads (clock.ts), for the benchmarks that simulate a model's time: an
 * option under this symbol, not part of the public options.
 */
export const CLOCK = Symbol.for('ai-compaction.clock');

/** Options after validation, with their defaults filled in. */
export type ResolvedOptions = { [Name in keyof Options]: ReturnType<Options[Name]['resolve']> } & {
  /** Share of the room a compaction keeps, at most half (`undefined`: the default). */
  budgetShare: number | undefined;
  /** Where the time is read: the real clock outside the benchmarks. */
  clock: Clock;
};

/** Validates options at construction: a bad one throws a `TypeError` naming the option and value. */
export function resolveOptions(options: Record<string, unknown>): ResolvedOptions {
  const known = new Set<string>([...Object.keys(OPTIONS), 'state']);
  for (const name of Object.keys(options)) {
    if (!known.has(name)) throw new TypeError(`ai-compaction: unknown option ${name}`);
  }
  const resolved: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(OPTIONS) as [string, Rule<z.ZodType, unknown>][]) {
    const given = options[name];
    let value: unknown;
    if (given !== undefined) {
      const parsed = rule.schema.safeParse(given);
      if (!parsed.success) throw new TypeError(`ai-compaction: option ${name} must be ${rule.expected}, got ${(rule.show ?? describe)(given)}`);
      value = parsed.data;
    }
    resolved[name] = rule.resolve(value, given);
  }
  resolved.budgetShare = budgetShare((options as { [BUDGET_SHARE]?: unknown })[BUDGET_SHARE]);
  resolved.clock = clockSetting((options as { [CLOCK]?: unknown })[CLOCK]);
  return resolved as ResolvedOptions;
}

function secretSetting(given: string | string[] | undefined): readonly string[] | undefined {
  if (given === undefined) return undefined;
  return typeof given === 'string' ? [given] : [...given];
}

function budgetShare(given: unknown): number | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'number' || !(given > 0 && given <= MAX_BUDGET_SHARE)) throw new TypeError(`ai-compaction: the budget share must be above 0 and at most ${MAX_BUDGET_SHARE}, got ${describe(given)}`);
  return given;
}

function clockSetting(given: unknown): Clock {
  if (given === undefined) return realClock;
  if (!isClock(given)) throw new TypeError(`ai-compaction: the clock must have now() and sleep(), got ${describe(given)}`);
  return given;
}

function clearSetting(given: boolean | { keep?: number | undefined; atLeast?: number | undefined }): ClearSetting {
  if (given === false) return false;
  return given === true ? { keep: undefined, atLeast: undefined } : { keep: given.keep, atLeast: given.atLeast };
}

/** The fields given (`{ output: undefined }` gives none). */
function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
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
