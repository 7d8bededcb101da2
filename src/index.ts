/** Context compaction for the Vercel AI SDK. */
export { compaction } from './compaction';
/** The compaction a step made, read from its `providerMetadata`. */
export { compactionOf } from './metadata';
/** Options, per-call options, the middleware, and what it reports of a compaction. */
export type {
  CompactionCallOptions,
  CompactionKind,
  CompactionMetadata,
  CompactionMiddleware,
  CompactionOptions,
  CompactionReason,
  CompactionRecord,
  CompactionRule,
  CompactionTotals,
  CompactionUsage,
  ModelPricing,
} from './types';
/** Whether a call is this package's summary request; a middleware after this one should pass it on unchanged. */
export { isSummaryRequest } from './checkpoint/summarize';
/** A compaction that failed; nothing was stored. */
export { CompactionError, type CompactionFailure } from './errors';
/** Recognises a provider's "prompt too long" rejection, and the limit it states. */
export { contextOverflowLimit, isContextOverflowError } from './overflow/recognize';
/** The default store: in memory, least recently used out, bounded in bytes. */
export { memoryStore } from './store/memory';
/** Where checkpoints and counts live: implement it to back them with anything. */
export type { CompactionStore } from './store/types';
/** The value `state()` returns, and what it returns sealed with the `secret` option. */
export type { CompactionState, SealedCompactionState } from './state';
/** The logger the middleware writes to. */
export type { CompactionLogger } from './options';
