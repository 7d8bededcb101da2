import { describe, expect, it } from 'vitest';
import { addUsage, COST_NOTE, costCells, costOf, usageOf } from '../../bench/cost';

describe('cost at cache prices', () => {
  it('bills uncached input at 1, cached input at 0.1 and output at 5', () => {
    expect(costOf({ input: 10_000, cached: 8_000, output: 300 })).toEqual({ input: 2_800, full: 4_300 });
    expect(costOf({ input: 10_000, cached: 0, output: 0 })).toEqual({ input: 10_000, full: 10_000 });
    expect(costOf({ input: 10_000, cached: 10_000, output: 0 })).toEqual({ input: 1_000, full: 1_000 });
    expect(costOf({ input: 0, cached: 0, output: 40 })).toEqual({ input: 0, full: 200 });
  });

  it('refuses cached tokens beyond the input and tokens that are not counts', () => {
    expect(() => costOf({ input: 100, cached: 101, output: 0 })).toThrow('costOf: 101 cached tokens of 100 input tokens');
    expect(() => costOf({ input: -1, cached: 0, output: 0 })).toThrow(/non-negative numbers, got input -1/);
    expect(() => costOf({ input: Number.NaN, cached: 0, output: 0 })).toThrow(/non-negative/);
  });

  it("adds up every answered request, a summary request's too, and never a rejected one", () => {
    const requests = [
      { rejected: false, promptTokens: 12_000, cachedTokens: 10_240, outputTokens: 30 },
      // a summary request: its tokens count like any other
      { rejected: false, promptTokens: 15_000, cachedTokens: 11_904, outputTokens: 900 },
      // over the window: the provider bills nothing
      { rejected: true, promptTokens: 40_000, cachedTokens: undefined, outputTokens: 0 },
      // no cache report
      { rejected: false, promptTokens: 2_000, cachedTokens: undefined, outputTokens: 20 },
    ];
    const usage = usageOf(requests);
    expect(usage).toEqual({ input: 29_000, cached: 22_144, output: 950 });
    // 6,856 uncached + 2,214.4 cached; + 4,750 output
    expect(costOf(usage)).toEqual({ input: 9_070.4, full: 13_820.4 });
    expect(costCells(usage)).toEqual(['29,000', '9,070', '13,820']);
    expect(addUsage(usage, { input: 1, cached: 1, output: 1 })).toEqual({ input: 29_001, cached: 22_145, output: 951 });
    expect(addUsage()).toEqual({ input: 0, cached: 0, output: 0 });
  });

  it('states its weights', () => {
    expect(COST_NOTE).toBe('input cost = uncached input + 0.1 x cached input; full cost = input cost + 5 x output tokens; both in tokens of uncached input, summary requests included');
  });
});
