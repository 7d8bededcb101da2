import { COMPACTION_COST_COUNTED } from '../tunables';
import type { ModelPricing } from '../types';

/**
 * Compaction timed by what it costs (docs/design.md, "Compaction timed by what it costs"): the
 * size at which compacting a conversation costs least, and what a compaction is expected to save.
 * Pure: prices, sizes and growth are arguments. Every figure is in tokens at the model's input price.
 */

/** The tokens of a compaction's summary requests: their input, the part of it read from the prompt cache, their output. */
export interface SummaryTokens {
  input: number;
  cached: number;
  output: number;
}

/** What the trigger is computed from: what compacting costs and saves in this conversation. */
export interface Economy {
  prices: ModelPricing;
  /** The conversation's mean growth per step, in tokens. */
  growth: number;
  /** What one of its compactions costs (`compactionCost`). */
  cost: number;
}

/**
 * What one compaction costs beyond the steps it serves: its summary requests (input read from the
 * cache at the cached price, the rest at the input price, output at the output price) and the step
 * after it, whose prompt (`left` tokens) is written to the cache afresh instead of read from it.
 */
export function compactionCost(prices: ModelPricing, summary: SummaryTokens, left: number): number {
  const cached = Math.min(summary.cached, summary.input);
  const requests = summary.input - cached + cached * prices.cachedInput + summary.output * prices.output;
  return requests + Math.max(0, prices.cacheWrite - prices.cachedInput) * left;
}

/**
 * The trigger that costs least: a conversation growing `growth` tokens a step, left at `left` by a
 * compaction costing `cost`, pays per step `r (left + x / 2) + cost growth / x` between two
 * compactions `x` tokens apart, least at `x = sqrt(2 cost growth / r)`; the cost is counted
 * `COMPACTION_COST_COUNTED` times (its requests, and what the conversation redoes after it). Never
 * above the ceiling, and never so low that a compaction frees less than half of what it compacts: what it compacts (the
 * prompt less its `frame`, the system messages and tools) at least twice what it keeps (`left` less
 * the frame). Input is free of charge when cached (`r` 0) or nothing grows: the ceiling.
 */
export function costTrigger({ prices, growth, cost }: Economy, left: number, frame: number, ceiling: number): number {
  const r = prices.cachedInput;
  if (!(r > 0) || !(growth > 0)) return ceiling;
  const cheapest = left + Math.sqrt((2 * COMPACTION_COST_COUNTED * cost * growth) / r);
  const lowest = left + Math.max(0, left - frame);
  return Math.round(Math.min(ceiling, Math.max(lowest, cheapest)));
}

/**
 * What a compaction from `before` to `after` tokens is expected to save: each step until the
 * conversation has grown back (`(before - after) / growth` steps) reads `before - after` fewer
 * cached tokens, less what the compaction costs. Negative where it costs more than it saves.
 */
export function expectedSaving({ prices, growth, cost }: Economy, before: number, after: number): number {
  const freed = Math.max(0, before - after);
  const steps = growth > 0 ? freed / growth : 0;
  return Math.round(prices.cachedInput * freed * steps - cost);
}

/** Whether the pause before a step (`idle`, ms since the step before went out) outlived the provider's cache: its prompt is read uncached whatever goes out. */
export function cacheExpired(prices: ModelPricing | undefined, idle: number | undefined): boolean {
  return prices !== undefined && idle !== undefined && idle > prices.cacheTtl;
}
