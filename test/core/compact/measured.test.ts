import { describe, expect, it } from 'vitest';
import { conversationSummaries, longestSummary, measuredSummary } from '../../../src/compact/measured';
import { summaryBound } from '../../../src/compact/lease';
import { createEngine } from '../../../src/engine';
import type { StepView } from '../../../src/view';

// What the summaries were measured to take (docs/design.md, "The policy"): per conversation, in its
// thread in the store (the policy reads it, so instances sharing a store decide alike), with the
// share of its input the latest request read from the prompt cache; per model on an instance, the
// lease's bound.

const MODEL = 'test-provider:summarizer';
const THREAD = 'a'.repeat(64);

/** A conversation's step as `measuredSummary` reads it, its thread as the store now holds it. */
async function stepOf(engine: ReturnType<typeof createEngine>): Promise<StepView> {
  const budget = engine.keeper.budget();
  return { threadDigest: THREAD, thread: await engine.keeper.thread(THREAD, budget), budget } as unknown as StepView;
}

async function measure(engine: ReturnType<typeof createEngine>, ms: number, usage: { requests: number; inputTokens?: number; cachedInputTokens?: number; durationMs: number }) {
  await measuredSummary(engine, await stepOf(engine), MODEL, ms, usage);
  return conversationSummaries(await stepOf(engine));
}

describe('measured summaries', () => {
  it('should know nothing of a model or a conversation before its first summary: no time, no cache share, the lease bound 60 s', async () => {
    const engine = createEngine({});
    expect(longestSummary(engine, MODEL)).toBeUndefined();
    expect(conversationSummaries(await stepOf(engine))).toEqual({ longest: undefined, cached: undefined });
    expect(summaryBound(engine, MODEL)).toBe(60_000);
  });

  it('should keep the longest of the last 8 summaries, in the thread and for the model, and bound a lease at twice it, from 5 s to 120 s', async () => {
    const engine = createEngine({});
    expect((await measure(engine, 1_000, { requests: 1, durationMs: 1_000 })).longest).toBe(1_000);
    expect(longestSummary(engine, MODEL)).toBe(1_000);
    expect(summaryBound(engine, MODEL)).toBe(5_000);
    await measure(engine, 20_000, { requests: 1, durationMs: 20_000 });
    expect(summaryBound(engine, MODEL)).toBe(40_000);
    for (let i = 0; i < 7; i++) await measure(engine, 3_000, { requests: 1, durationMs: 3_000 });
    expect((await stepOf(engine)).thread?.summaries?.ms).toEqual([3_000, 3_000, 3_000, 3_000, 3_000, 3_000, 3_000, 20_000]);
    // the 20 s one is the 9th newest now: forgotten
    expect((await measure(engine, 3_000, { requests: 1, durationMs: 3_000 })).longest).toBe(3_000);
    expect(longestSummary(engine, MODEL)).toBe(3_000);
    await measure(engine, 90_000, { requests: 1, durationMs: 90_000 });
    expect(summaryBound(engine, MODEL)).toBe(120_000);
    // per model on an instance; per conversation in the store, which a second instance reads too
    expect(longestSummary(engine, 'test-provider:other')).toBeUndefined();
    expect(longestSummary(createEngine({}), MODEL)).toBeUndefined();
  });

  it("should read the same conversation's summaries from another instance sharing the store", async () => {
    const { memoryStore } = await import('../../../src/store/memory');
    const store = memoryStore();
    const one = createEngine({ store });
    const two = createEngine({ store });
    await measuredSummary(one, await stepOf(one), MODEL, 14_000, { requests: 1, inputTokens: 10_000, cachedInputTokens: 9_000, durationMs: 14_000 });
    expect(conversationSummaries(await stepOf(two))).toEqual({ longest: 14_000, cached: 0.9 });
  });

  it("should take the cache share from the latest summary's usage where the provider counted input and cache reads", async () => {
    const engine = createEngine({});
    expect((await measure(engine, 10, { requests: 1, inputTokens: 12_000, cachedInputTokens: 5_999, durationMs: 10 })).cached).toBeCloseTo(5_999 / 12_000, 10);
    expect((await measure(engine, 10, { requests: 2, inputTokens: 20_000, cachedInputTokens: 19_000, durationMs: 10 })).cached).toBe(0.95);
    // no cache reads reported, or no input: the share measured before stands
    await measure(engine, 10, { requests: 1, inputTokens: 8_000, durationMs: 10 });
    expect((await measure(engine, 10, { requests: 1, inputTokens: 0, cachedInputTokens: 0, durationMs: 10 })).cached).toBe(0.95);
    expect((await measure(engine, 10, { requests: 1, inputTokens: 8_000, cachedInputTokens: 0, durationMs: 10 })).cached).toBe(0);
  });
});
