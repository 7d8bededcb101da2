import { describe, expect, it } from 'vitest';
import { cacheExpired, compactionCost, costTrigger, expectedSaving } from '../../../src/compact/trigger';
import type { ModelPricing } from '../../../src/types';

// Compaction timed by what it costs (docs/design.md, "Compaction timed by what it costs"): the
// trigger `W0 + sqrt(2 c K g / r)` (c: a compaction's cost counted twice, its requests and what
// the conversation redoes after it) as a table of exact numbers, within its bounds. Every figure in
// tokens at the model's input price.

const OPENAI: ModelPricing = { cachedInput: 0.1, cacheWrite: 1, output: 8, cacheTtl: 300_000 };
const ANTHROPIC: ModelPricing = { cachedInput: 0.1, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 };
/** A summary request of 30,000 input tokens, 20,000 of them read from the cache, and 1,250 output tokens. */
const SUMMARY = { input: 30_000, cached: 20_000, output: 1_250 };
const CEILING = 108_800;
const FRAME = 2_000;

describe('compactionCost', () => {
  it.each([
    // 10,000 uncached + 20,000 x 0.1 + 1,250 x 8 + the step after, 20,000 tokens written at 1 instead of read at 0.1
    ['OpenAI', OPENAI, SUMMARY, 20_000, 40_000],
    // 10,000 + 2,000 + 1,250 x 5 + 20,000 x (1.25 - 0.1)
    ['Anthropic', ANTHROPIC, SUMMARY, 20_000, 41_250],
    ['a request read whole from the cache', OPENAI, { input: 30_000, cached: 30_000, output: 0 }, 0, 3_000],
    ['a cache that reports more cached than sent', OPENAI, { input: 1_000, cached: 2_000, output: 0 }, 0, 100],
  ])('should cost a compaction under %s prices', (_name, prices, summary, left, cost) => {
    expect(compactionCost(prices, summary, left)).toBe(cost);
  });
});

describe('costTrigger', () => {
  const rows: [string, ModelPricing, number, number, number, number][] = [
    // [what, prices, growth a step, measured cost K, left W0, trigger]
    ['OpenAI, 2,000 a step: 20,000 + sqrt(2 x 2 x 40,000 x 2,000 / 0.1) = 20,000 + 56,569', OPENAI, 2_000, 40_000, 20_000, 76_569],
    ['slower, 500 a step: 20,000 + 28,284', OPENAI, 500, 40_000, 20_000, 48_284],
    ['faster, 4,000 a step: 20,000 + 80,000', OPENAI, 4_000, 40_000, 20_000, 100_000],
    ['Anthropic, its cost 41,250: 20,000 + 57,446', ANTHROPIC, 2_000, 41_250, 20_000, 77_446],
    ['a cheaper compaction, 10,000: 20,000 + 28,284', OPENAI, 2_000, 10_000, 20_000, 48_284],
    ['8,000 a step: 133,137, never above the ceiling', OPENAI, 8_000, 40_000, 20_000, CEILING],
    ['100 a step: 32,649, never so low that it frees less than half of what it compacts (20,000 + 18,000)', OPENAI, 100, 40_000, 20_000, 38_000],
    ['left at 60,000: at least 118,000, so the ceiling', OPENAI, 2_000, 40_000, 60_000, CEILING],
    ['input free when cached: the ceiling', { ...OPENAI, cachedInput: 0 }, 2_000, 40_000, 20_000, CEILING],
    ['no growth: the ceiling', OPENAI, 0, 40_000, 20_000, CEILING],
  ];
  for (const [name, prices, growth, cost, left, trigger] of rows) {
    it(`should put the trigger at ${trigger}: ${name}`, () => {
      expect(costTrigger({ prices, growth, cost }, left, FRAME, CEILING)).toBe(trigger);
    });
  }

  it('should never be above the ceiling nor free less than half of what a compaction at it compacts, whatever the inputs', () => {
    for (const growth of [1, 50, 700, 3_000, 20_000, 200_000]) {
      for (const cost of [0, 1_000, 40_000, 1_000_000]) {
        for (const left of [FRAME, 5_000, 30_000, 54_000, 90_000]) {
          const trigger = costTrigger({ prices: ANTHROPIC, growth, cost }, left, FRAME, CEILING);
          expect(trigger).toBeLessThanOrEqual(CEILING);
          // what it compacts, the prompt less the frame, is at least twice what it keeps, W0 less the frame
          if (trigger < CEILING) expect(trigger - FRAME).toBeGreaterThanOrEqual(2 * (left - FRAME));
        }
      }
    }
  });
});

describe('expectedSaving', () => {
  it('should count the cached input the steps until the next compaction no longer read, less the cost', () => {
    // 40,000 freed, 20 steps at 2,000 a step, each 40,000 x 0.1 cheaper: 80,000 less 40,000
    expect(expectedSaving({ prices: OPENAI, growth: 2_000, cost: 40_000 }, 60_000, 20_000)).toBe(40_000);
    // at the lower bound of a slow conversation it saves more than it costs only later
    expect(expectedSaving({ prices: OPENAI, growth: 100, cost: 40_000 }, 21_000, 20_000)).toBe(-39_000);
  });
});

describe('cacheExpired', () => {
  it.each([
    [300_001, true],
    [300_000, false],
    [20_000, false],
    [undefined, false],
  ])('should take a pause of %s ms against a cache lifetime of 300,000 ms: %s', (idle, expired) => {
    expect(cacheExpired(ANTHROPIC, idle)).toBe(expired);
  });

  it('should know no cold cache without prices', () => {
    expect(cacheExpired(undefined, 3_600_000)).toBe(false);
  });
});
