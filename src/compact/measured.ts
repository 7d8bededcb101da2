import { type Engine, ownState } from '../engine';
import type { CompactionUsage } from '../types';

/**
 * What an instance measured of each model's summaries (keyed `provider:modelId`): how long the
 * recent ones took to write (the lease's bound, docs/stores.md; preparing timed to the summary,
 * docs/design.md) and the share of its input the latest one read from the provider's prompt cache
 * (whether a catch-up is worth its request, docs/design.md, "A catch-up keeps the budget").
 */

/** Summary times remembered per model. */
const TIMES_KEPT = 8;

/** How long the summaries of each model took on an instance, newest first. */
const summaryTimes = ownState(() => new Map<string, number[]>());
/** The share of its input the latest summary request of each model read from the prompt cache, where the provider said. */
const summaryCached = ownState(() => new Map<string, number>());

/**
 * Remembers how long a summary (or a provider's compaction item) of `model` took, and the share of
 * its requests' input read from the prompt cache (`usage`, when the provider counted both).
 */
export function measuredSummary(engine: Engine, model: string, ms: number, usage: CompactionUsage): void {
  const times = [ms, ...(summaryTimes(engine).get(model) ?? [])].slice(0, TIMES_KEPT);
  summaryTimes(engine).set(model, times);
  const { inputTokens, cachedInputTokens } = usage;
  if (inputTokens !== undefined && inputTokens > 0 && cachedInputTokens !== undefined) summaryCached(engine).set(model, cachedInputTokens / inputTokens);
}

/** The longest of the recent summaries of `model` here, or `undefined` before one was measured. */
export function longestSummary(engine: Engine, model: string): number | undefined {
  const times = summaryTimes(engine).get(model);
  return times === undefined || times.length === 0 ? undefined : Math.max(...times);
}

/**
 * The share of its input the latest summary request of `model` here read from the prompt cache;
 * `undefined` before one was counted (a provider that reports no cache reads).
 */
export function summaryCachedShare(engine: Engine, model: string): number | undefined {
  return summaryCached(engine).get(model);
}
