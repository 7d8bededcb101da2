import { type Engine, ownState } from '../engine';
import type { SummaryTimes } from '../store/format';
import { RECENT_MEASURES } from '../tunables';
import type { CompactionUsage } from '../types';
import type { StepView } from '../view';

/**
 * What the summaries were measured to take:
 * - per conversation, in its thread in the store (docs/design.md, "The policy"): the policy reads
 *   them, so that every instance sharing the store decides a conversation alike; with the share of
 *   its input the latest request read from the provider's prompt cache (whether a catch-up is worth
 *   its request, docs/design.md, "A catch-up keeps the budget");
 * - per model, on this instance: how long another instance waits for one under its lease
 *   (docs/stores.md), a bound, not a decision.
 */

/** How long the summaries of each model took on an instance, newest first. */
const summaryTimes = ownState(() => new Map<string, number[]>());

/**
 * Remembers how long a summary (or a provider's compaction item) of `model` took for the
 * conversation of `view`, and the share of its requests' input read from the prompt cache (`usage`,
 * when the provider counted both): in the conversation's thread, and for the model here.
 */
export async function measuredSummary(engine: Engine, view: StepView, model: string, ms: number, usage: CompactionUsage): Promise<void> {
  const times = [ms, ...(summaryTimes(engine).get(model) ?? [])].slice(0, RECENT_MEASURES);
  summaryTimes(engine).set(model, times);
  if (view.threadDigest === undefined) return;
  const before = view.thread?.summaries;
  const { inputTokens, cachedInputTokens, outputTokens } = usage;
  const cached = inputTokens !== undefined && inputTokens > 0 && cachedInputTokens !== undefined ? Math.min(1, cachedInputTokens / inputTokens) : before?.cached;
  // What its requests took, as the provider counted them: a compaction's cost (trigger.ts).
  const tokens = inputTokens !== undefined && outputTokens !== undefined ? { input: inputTokens, cached: Math.min(inputTokens, cachedInputTokens ?? 0), output: outputTokens } : before?.tokens;
  const summaries: SummaryTimes = { ms: [ms, ...(before?.ms ?? [])].slice(0, RECENT_MEASURES), ...(cached === undefined ? {} : { cached }), ...(tokens === undefined ? {} : { tokens }) };
  await engine.keeper.saveMeasures(view.threadDigest, { summaries }, view.budget);
}

/** The longest of the recent summaries of `model` on this instance, or `undefined` before one was measured (the lease's bound). */
export function longestSummary(engine: Engine, model: string): number | undefined {
  const times = summaryTimes(engine).get(model);
  return times === undefined || times.length === 0 ? undefined : Math.max(...times);
}

/** What a conversation's summaries were measured to take, as its thread holds it: the longest recent one, the latest request's cached share, and the latest compaction's tokens. */
export function conversationSummaries(view: StepView): { longest: number | undefined; cached: number | undefined; tokens: SummaryTimes['tokens'] } {
  const summaries = view.thread?.summaries;
  return { longest: summaries === undefined || summaries.ms.length === 0 ? undefined : Math.max(...summaries.ms), cached: summaries?.cached, tokens: summaries?.tokens };
}
