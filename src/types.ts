import type { LanguageModel, LanguageModelMiddleware } from 'ai';
import type { CompactionState, SealedCompactionState } from './state';
import type { CompactionStore } from './store/types';

/** Where the middleware reports: `console`, pino and winston all fit. */
export interface CompactionLogger {
  info(message: string): void;
  warn(message: string): void;
}

/** Why a compaction ran. */
export type CompactionReason = 'auto' | 'overflow' | 'manual';

/**
 * What a compaction did: `summary`, a checkpoint of a summary and record; `clear`, old tool outputs
 * cleared, no model call (`clearToolResults`); `native`, the provider's own compaction item.
 */
export type CompactionKind = 'summary' | 'clear' | 'native';

/**
 * What a compaction's model calls cost: calls the middleware makes itself, so they are in no
 * `usage`, `totalUsage` or `onFinish` of the AI SDK. Sum it over `onCompaction` for what compaction
 * costs (docs/observability.md).
 */
export interface CompactionUsage {
  /**
   * Model requests made: the summary request, its reminder and its shortened retries (a request the
   * provider rejected counts too); with `native: true`, the provider's compaction request. For a
   * checkpoint prepared ahead, the requests made in the background. 0 for a clearing.
   */
  requests: number;
  /** Input tokens of those requests as the provider reported them, summed; absent when it reported none. */
  inputTokens?: number;
  /** Of the input tokens, those the provider read from its prompt cache; absent when it reported none. */
  cachedInputTokens?: number;
  /** Output tokens as the provider reported them, summed; absent when it reported none. */
  outputTokens?: number;
  /**
   * Milliseconds spent waiting for those requests: the time the summary took to write. For a
   * checkpoint prepared ahead, that time passed in the background, beside the steps.
   */
  durationMs: number;
}

/** What `last()` returns and `onCompaction` receives: one compaction. */
/**
 * The rule of the policy that decided a compaction (docs/design.md, "The policy"): `ceiling` (the
 * step reached the ceiling and compacted), `prepared` (it sent a checkpoint prepared ahead),
 * `cost` (the step reached the trigger that costs least, under the ceiling: `compactAt`),
 * `cold-cache` (it sent a prepared checkpoint after a pause longer than the provider's cache lifetime),
 * `catch-up` (a step under the ceiling sent a catch-up, prepared because the prompt after a
 * prepared checkpoint was over the budget), `from-prepared` (compacted from a prepared checkpoint
 * that did not fit), `clear` and `clear-instead` (cleared old tool results, at the ceiling or
 * instead of waiting for a summary), `manual`, `overflow`.
 */
export type CompactionRule = 'ceiling' | 'cost' | 'cold-cache' | 'prepared' | 'catch-up' | 'from-prepared' | 'clear' | 'clear-instead' | 'manual' | 'overflow';

/** The totals of an instance's summary requests (`usage()`): tokens as the providers reported them, 0 where none did. */
export interface CompactionTotals {
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Milliseconds spent writing them. */
  durationMs: number;
}

export interface CompactionRecord {
  reason: CompactionReason;
  /** The rule of the policy that decided it (docs/design.md, "The policy"). */
  rule: CompactionRule;
  /** What the compaction did. */
  kind: CompactionKind;
  /** Messages of the caller's conversation the checkpoint stands in for; for a clearing, the messages whose old tool outputs it clears. */
  messagesCovered: number;
  /** Estimated (or provider-counted) size of the prompt before, in tokens. */
  tokensBefore: number;
  /** Estimated size of the prompt sent after, in tokens. */
  tokensAfter: number;
  summary: string;
  /** The serialized record of the newest covered messages. */
  record: string;
  /** With `native: true`: the provider's compaction item, sent back unchanged (summary and record are empty). */
  native?: { provider: 'openai' | 'anthropic'; item: Record<string, unknown> };
  /** `true` when the checkpoint was prepared in the background ahead of the step that first sent it (`prepare`). */
  prepared?: boolean;
  /** For a clearing: how many tool outputs it replaced, and the characters of text they held (summary and record are empty). */
  cleared?: { toolResults: number; characters: number };
  /** What its model calls cost; for a checkpoint prepared ahead, reported here, on the step that first sends it. */
  usage: CompactionUsage;
  /** The model's window when it was made, and where it came from; absent when the model has none (no option, not in the catalog, never rejected a prompt). */
  window?: { tokens: number; source: WindowSource };
  /**
   * What the policy expected the compaction to save, in tokens at the model's input price: the
   * cached input the steps until the next compaction no longer read, less what the compaction
   * costs (its summary requests and the step after, written to the cache afresh). Absent where the
   * model's prices or the conversation's growth are unknown.
   */
  expectedSaving?: number;
}

/**
 * A model's prices, as ratios to its input price, and its provider's prompt-cache lifetime: what
 * the model catalog holds, or what the `pricing` option gives (docs/design.md, "The window").
 */
export interface ModelPricing {
  /** A cached input token: `0.1` where a read from the prompt cache costs a tenth of an input token; `1` where there is no discount. */
  cachedInput: number;
  /** A token written to the prompt cache: `1.25` for Anthropic's 5-minute cache; `1` where writing costs no more than input. */
  cacheWrite: number;
  /** An output token: `8` for gpt-5 ($10 against $1.25 a million). */
  output: number;
  /** Milliseconds the provider keeps a prompt's prefix cached after its last use (`300_000`: 5 minutes). */
  cacheTtl: number;
}

/**
 * Where the window in force came from: `option` (`contextWindow`), `catalog` (the model catalog),
 * `learned` (stated by the provider's rejection of a prompt as too long, when smaller).
 */
export type WindowSource = 'option' | 'catalog' | 'learned';

/** Options of `compaction()`. Every one is optional. */
export interface CompactionOptions {
  /**
   * The model's context window in tokens, or a function of the model returning it (or `undefined`).
   * It wins over the model catalog, which knows the windows of the models of the providers the AI
   * SDK has clients for (their input limit where they state one). Without either, the middleware
   * never compacts on its own.
   * @default the model catalog's
   */
  contextWindow?: number | ((model: { provider: string; modelId: string }) => number | undefined);
  /**
   * The model's prices as ratios to its input price, and its prompt cache's lifetime in
   * milliseconds: for a model the catalog lacks, or a negotiated price. Each field given wins over
   * the catalog's, field by field.
   * @default the model catalog's
   */
  pricing?: Partial<ModelPricing>;
  /**
   * Room kept free: a share of the window (`"20%"` compacts at 80 % full) or a number of tokens.
   * @default 15 % of the window, at least 16,000 tokens when the window is 32,000 or more
   */
  buffer?: `${number}%` | number;
  /**
   * Tokens of the newest conversation kept verbatim as the checkpoint's record.
   * @default 15_000
   */
  keep?: number;
  /**
   * `false`: compact only when asked (`compactNext()`, `providerOptions.compaction.compact`) or on overflow.
   * @default true
   */
  auto?: boolean;
  /** A model used for summaries instead of the step's own. @default the step's own model */
  summarizer?: Exclude<LanguageModel, string>;
  /**
   * The most tokens a summary may take (never more than the output limit the model catalog states
   * for the model that writes it).
   * @default 32_000
   */
  summaryOutputTokens?: number;
  /**
   * Milliseconds a summary may take to be written (its requests, reminder and retries included,
   * in the foreground and in the background) before it is aborted and the compaction fails with
   * reason `timeout`; a step waiting for a summary being written waits at most until then.
   * `false`: no bound. At most 2,147,483,647 (the most a timer holds): more is refused.
   * @default 120_000
   */
  summaryTimeout?: number | false;
  /** `{ info, warn }`: one info line per compaction, a warning per rejection or failure. */
  logger?: CompactionLogger;
  /** Where checkpoints and provider counts live. @default an in-memory store bounded in bytes */
  store?: CompactionStore;
  /** A value from `state()` of another instance, to continue from (sealed when made with `secret`: then this instance needs the secret). */
  state?: CompactionState | SealedCompactionState;
  /** Called after each compaction with the record `last()` returns: once per compaction, so sum its `usage` here for what compaction costs. */
  onCompaction?: (record: CompactionRecord) => void;
  /**
   * Let the provider compact where it can (OpenAI Responses with `@ai-sdk/openai` v4, Anthropic
   * on-demand compaction); any other model gets ordinary compaction, with one warning.
   * @default false
   */
  native?: boolean;
  /**
   * Share of the ceiling at which the next checkpoint is prepared in the background: the step that
   * reaches it goes out at once while its summary is written beside it, and the first step that
   * reaches the ceiling sends that checkpoint instead of waiting for a summary. It is held back
   * until then. Under a trigger below the ceiling (`compactAt`), the share is not used: the whole
   * compaction starts one step ahead of the trigger, and steps over the trigger go out whole (they
   * fit the window) until its checkpoint is ready: one summary request a compaction.
   * `false`: the step at the compaction point waits for its summary.
   * @default 0.8
   */
  prepare?: number | false;
  /**
   * Hands background work (a checkpoint being prepared) to a serverless host, so that it is not
   * cut off when the response is sent: `after` of `next/server`, `waitUntil` of `@vercel/functions`,
   * `ctx.waitUntil` of a Worker. Without it the work runs detached.
   */
  waitUntil?: (promise: Promise<unknown>) => void;
  /**
   * Tokens of a text by a real tokenizer (`gpt-tokenizer`'s `countTokens`, `@anthropic-ai/tokenizer`...),
   * instead of characters a token. Images count 1,500 tokens and PDFs 2,000 either way. The
   * provider's counts still correct it: its figures are multiplied by a factor learned per model,
   * from 1 (its own figure) to 2 (what a tokenizer of another model family may miss).
   * @default 4 characters a token, then the characters a token learned from each model's counts
   */
  estimate?: (text: string) => number;
  /**
   * Before a summary is asked for, clear old tool outputs: at the ceiling, the output of every tool
   * result older than the newest `keep` tokens (and not in the newest step) goes out as
   * `[tool result cleared: N characters]`, with every call, result part and word kept. No model
   * call. Used when it frees at least `atLeast` tokens and brings the prompt to at most half the
   * ceiling; otherwise a summary is made, over the cleared messages.
   * `keep` defaults to the record's budget (`keep`, at most a quarter of the ceiling), `atLeast`
   * to a quarter of the ceiling.
   * @default false
   */
  clearToolResults?: boolean | { keep?: number; atLeast?: number };
  /**
   * Seals every value written to the store (AES-GCM through Web Crypto, a key derived per kind of
   * value, the store key bound in): a value another program wrote, changed, moved to another key
   * or sealed with another secret is ignored with a warning, never sent, and no stored value holds
   * conversation text in the clear. A string of at least 32 characters, or a list of them: the first
   * seals, any opens (put a new secret first to rotate). Recommended for any store that other code
   * can write to. It does not decide who may call your server. Without it, values are stored as JSON.
   */
  secret?: string | readonly string[];
  /**
   * Show each compaction as the AI SDK's agent harnesses do: a provider-executed, dynamic tool call
   * named `compaction` (input `{}`) and its result `{ trigger, summary, tokensBefore, tokensAfter }`,
   * first in the content of the step that sends the new checkpoint and right after `stream-start` in
   * its stream. `useChat` holds it as a `dynamic-tool` part. These parts, sent back with the
   * conversation, are dropped before the prompt goes out: no provider receives them.
   * `providerMetadata.compaction` is there either way. `false`: no part.
   * @default true
   */
  streamPart?: boolean;
  /**
   * When a conversation is compacted below the ceiling: `'cost'` where it costs least, from the
   * model's prices (`pricing`), the conversation's growth per step and what its own compactions
   * cost; `'ceiling'` only at the ceiling; or a share of the ceiling (`0.4`). A model whose prices
   * are unknown compacts at the ceiling.
   * @default 'cost'
   */
  compactAt?: 'cost' | 'ceiling' | number;
}

/** What the step that compacted carries in its result's `providerMetadata.compaction`. */
export interface CompactionMetadata {
  reason: CompactionReason;
  /** The rule of the policy that decided it, as in the record (absent when an older version of this package wrote it). */
  rule?: CompactionRule;
  /** What the compaction did (`summary` when an older version of this package wrote it). */
  kind: CompactionKind;
  messagesCovered: number;
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
  /** What its model calls cost, as in the record (absent when an older version of this package wrote it). */
  usage?: CompactionUsage;
  /** `true` when the checkpoint was prepared in the background ahead of this step, the first to send it (`prepare`). */
  prepared?: true;
  /** What the policy expected it to save, as in the record. */
  expectedSaving?: number;
}

/** Per-call options, under `providerOptions.compaction`. Removed before the provider sees the call. */
export interface CompactionCallOptions {
  /** Separates tenants: identical messages in two scopes never share a checkpoint, count or learned characters a token. */
  scope?: string;
  /** Compact this step whatever its size. */
  compact?: boolean;
  /**
   * Names the conversation (for example `useChat`'s chat id). A checkpoint is found only by a step
   * of the same scope whose messages it covers and, without a name, whose system messages are
   * those it was written with (a summary may hold what they hold). With a name, it follows the
   * name instead: a system prompt that changes between steps (a date, a user's profile) keeps the
   * conversation's checkpoint. Give each conversation its own name; two conversations under one
   * name and scope share what they store.
   */
  conversation?: string;
}

/** The middleware, with the host's controls (`State`: what `state()` returns; with `secret`, a promise of the sealed state). */
export type CompactionMiddleware<State = CompactionState | Promise<SealedCompactionState>> = LanguageModelMiddleware & {
  /** Makes the next step compact, whatever its size. */
  compactNext(): void;
  /** The last compaction, or `undefined` before the first. */
  last(): CompactionRecord | undefined;
  /**
   * The totals of every summary request this instance made since it was built: those of failed
   * compactions, of checkpoints prepared and never sent, reminders and shortened retries included,
   * each once, with the tokens its provider reported. What the provider billed for summaries.
   */
  usage(): CompactionTotals;
  /**
   * A JSON value holding the recent checkpoints and counts; `compaction({ state })` continues from
   * it. With `secret`, a promise of the state sealed with it.
   */
  state(): State;
};
