import { describe, expect, it } from 'vitest';
import { type Arrival, paceOf, paceRecord } from '../../../src/compact/pace';
import type { PaceRecord } from '../../../src/store/format';

// How fast a conversation grows (docs/design.md, "The policy"): the growth of its recent steps, the
// time between them outside the middleware, and the time since its checkpoint changed, from the
// record its thread keeps. Pure: time is handed in as numbers.

/**
 * Serves one step after `before`: it arrives at `arrived` ms with `length` messages and a prompt of
 * `brought` tokens, with checkpoint `from`, and goes out at `left` ms (after any wait) at `size`
 * tokens with checkpoint `to` (`compacted`: it compacted or sent a prepared one).
 */
function serve(before: PaceRecord | undefined, step: { length: number; from?: string; to?: string; compacted?: boolean; counted?: boolean; sinceCount?: number }, size: number, arrived: number, left = arrived, brought = size) {
  const arrival: Arrival = { at: arrived, length: step.length, size: brought, counted: step.counted === true, sinceCount: step.sinceCount ?? 0, checkpoint: step.from };
  const pace = paceOf(before, arrival, arrived);
  const record = paceRecord(before, arrival, left, { size, counted: step.counted === true, checkpoint: step.to ?? step.from, changed: step.compacted === true });
  return { pace, record };
}

describe('paceOf and paceRecord', () => {
  it('should measure the growth and the time between steps, with nothing for the first step of a conversation', () => {
    const first = serve(undefined, { length: 1 }, 1_000, 0);
    expect(first.pace).toBeUndefined();
    expect(first.record).toEqual({ at: 0, length: 1, size: 1_000, growths: [], intervals: [] });
    const second = serve(first.record, { length: 3 }, 1_600, 1_000);
    expect(second.pace).toEqual({ growth: 600, meanGrowth: 600, meanInterval: 1_000, idle: 1_000 });
    const third = serve(second.record, { length: 5 }, 2_500, 3_000);
    expect(third.pace).toEqual({ growth: 900, meanGrowth: 750, meanInterval: 1_500, idle: 2_000 });
    expect(third.record).toEqual({ at: 3_000, length: 5, size: 2_500, growths: [900, 600], intervals: [2_000, 1_000] });
  });

  it('should leave out of the time between steps what a step spent waiting in the middleware, and count from when it went out', () => {
    const a = serve(undefined, { length: 1, from: 'c1' }, 14_000, 0);
    const b = serve(a.record, { length: 3, from: 'c1' }, 15_000, 1_000);
    // arrives at 16,000 tokens 1 s after the step before went out, waits 4 s for a summary, goes out
    // compacted to 4,000 at 6 s: it grew 1,000 tokens, what it compacted is no growth
    const c = serve(b.record, { length: 5, from: 'c1', to: 'c2', compacted: true }, 4_000, 2_000, 6_000, 16_000);
    expect(c.pace).toEqual({ growth: 1_000, meanGrowth: 1_000, meanInterval: 1_000, idle: 1_000 });
    expect(c.record).toMatchObject({ at: 6_000, size: 4_000, checkpoint: 'c2', shrunkAt: 6_000 });
    // 1 s after it went out, 2,000 tokens over where it went out: not 5 s after the step before it arrived
    expect(serve(c.record, { length: 7, from: 'c2' }, 6_000, 7_000).pace).toEqual({ growth: 2_000, meanGrowth: 4_000 / 3, meanInterval: 1_000, idle: 1_000, sinceShrunk: 1_000 });
  });

  it("should count from when the conversation's checkpoint changed, also where another instance made it", () => {
    const a = serve(undefined, { length: 1, from: 'c1' }, 10_000, 0);
    const b = serve(a.record, { length: 3, from: 'c1' }, 11_000, 1_000);
    expect(b.pace?.sinceShrunk).toBeUndefined();
    // a checkpoint made elsewhere: the step arrives with it and compacted nothing itself
    const c = serve(b.record, { length: 5, from: 'c2' }, 4_000, 2_000);
    expect(c.pace?.sinceShrunk).toBe(0);
    expect(serve(c.record, { length: 7, from: 'c2' }, 4_600, 3_500).pace?.sinceShrunk).toBe(1_500);
  });

  it('should not take a smaller prompt with the same checkpoint for a compaction', () => {
    const a = serve(undefined, { length: 1, from: 'c1' }, 10_000, 0);
    // a long tool output dropped by the caller: the prompt shrinks, no checkpoint changed
    expect(serve(a.record, { length: 3, from: 'c1' }, 9_000, 1_000).pace).toEqual({ growth: -1_000, meanGrowth: 1, meanInterval: 1_000, idle: 1_000 });
  });

  it('should start the growth anew on a step that does not extend the one before, and keep when the checkpoint changed', () => {
    const a = serve(undefined, { length: 3, from: 'c1' }, 10_000, 0);
    const b = serve(a.record, { length: 5, from: 'c1', to: 'c2', compacted: true }, 4_000, 1_000, 3_000, 11_000);
    // a retry of the same step: no pace, and the compaction is remembered
    const retry = serve(b.record, { length: 5, from: 'c2' }, 4_000, 4_000);
    expect(retry.pace).toBeUndefined();
    expect(retry.record).toEqual({ at: 4_000, length: 5, size: 4_000, growths: [], intervals: [], checkpoint: 'c2', shrunkAt: 3_000 });
    expect(serve(retry.record, { length: 7, from: 'c2' }, 4_500, 5_000).pace).toEqual({ growth: 500, meanGrowth: 500, meanInterval: 1_000, idle: 1_000, sinceShrunk: 2_000 });
  });

  it('should take what came since a first count after estimates for the growth, not the count: it says how large the prompt was all along', () => {
    const a = serve(undefined, { length: 1 }, 1_000, 0);
    const b = serve(a.record, { length: 3, counted: true, sinceCount: 11 }, 150_011, 1_000);
    expect(b.pace).toEqual({ growth: 11, meanGrowth: 11, meanInterval: 1_000, idle: 1_000 });
    expect(b.record).toEqual({ at: 1_000, length: 3, size: 150_011, counted: true, growths: [11], intervals: [1_000] });
    expect(serve(b.record, { length: 5, counted: true, sinceCount: 200 }, 150_211, 2_000).pace).toEqual({ growth: 200, meanGrowth: 105.5, meanInterval: 1_000, idle: 1_000 });
  });

  it('should keep at most the newest eight growths and intervals', () => {
    let record: PaceRecord | undefined;
    for (let step = 0; step < 12; step++) record = serve(record, { length: 1 + 2 * step }, 1_000 * (step + 1), 500 * step).record;
    expect(record!.growths).toEqual(Array(8).fill(1_000));
    expect(record!.intervals).toEqual(Array(8).fill(500));
  });
});
