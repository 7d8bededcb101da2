import { describe, expect, it } from 'vitest';
import { longestSummary, measuredSummary, summaryCachedShare } from '../../../src/compact/measured';
import { summaryBound } from '../../../src/compact/lease';
import { createEngine } from '../../../src/engine';

// What an instance measured of each model's summaries: how long the recent ones took (the lease's
// bound, preparing timed to the summary), and what share of its input the latest one read from the
// provider's prompt cache (docs/design.md, "A catch-up keeps the budget").

const MODEL = 'test-provider:summarizer';

describe('measured summaries', () => {
  it('should know nothing of a model before its first summary: no time, no cache share, the lease bound 60 s', () => {
    const engine = createEngine({});
    expect(longestSummary(engine, MODEL)).toBeUndefined();
    expect(summaryCachedShare(engine, MODEL)).toBeUndefined();
    expect(summaryBound(engine, MODEL)).toBe(60_000);
  });

  it('should keep the longest of the last 8 summaries, and bound a lease at twice it, from 5 s to 120 s', () => {
    const engine = createEngine({});
    measuredSummary(engine, MODEL, 1_000, { requests: 1, durationMs: 1_000 });
    expect(longestSummary(engine, MODEL)).toBe(1_000);
    expect(summaryBound(engine, MODEL)).toBe(5_000);
    measuredSummary(engine, MODEL, 20_000, { requests: 1, durationMs: 20_000 });
    expect(summaryBound(engine, MODEL)).toBe(40_000);
    for (let i = 0; i < 8; i++) measuredSummary(engine, MODEL, 3_000, { requests: 1, durationMs: 3_000 });
    // the 20 s one is the 9th newest now: forgotten
    expect(longestSummary(engine, MODEL)).toBe(3_000);
    measuredSummary(engine, MODEL, 90_000, { requests: 1, durationMs: 90_000 });
    expect(summaryBound(engine, MODEL)).toBe(120_000);
    // per model, per instance
    expect(longestSummary(engine, 'test-provider:other')).toBeUndefined();
    expect(longestSummary(createEngine({}), MODEL)).toBeUndefined();
  });

  it("should take the cache share from the latest summary's usage where the provider counted input and cache reads", () => {
    const engine = createEngine({});
    measuredSummary(engine, MODEL, 10, { requests: 1, inputTokens: 12_000, cachedInputTokens: 5_999, durationMs: 10 });
    expect(summaryCachedShare(engine, MODEL)).toBeCloseTo(5_999 / 12_000, 10);
    measuredSummary(engine, MODEL, 10, { requests: 2, inputTokens: 20_000, cachedInputTokens: 19_000, durationMs: 10 });
    expect(summaryCachedShare(engine, MODEL)).toBe(0.95);
    // no cache reads reported, or no input: the share measured before stands
    measuredSummary(engine, MODEL, 10, { requests: 1, inputTokens: 8_000, durationMs: 10 });
    measuredSummary(engine, MODEL, 10, { requests: 1, inputTokens: 0, cachedInputTokens: 0, durationMs: 10 });
    expect(summaryCachedShare(engine, MODEL)).toBe(0.95);
    measuredSummary(engine, MODEL, 10, { requests: 1, inputTokens: 8_000, cachedInputTokens: 0, durationMs: 10 });
    expect(summaryCachedShare(engine, MODEL)).toBe(0);
  });
});
