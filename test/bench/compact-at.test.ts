// The cost benchmark (bench/compact-at.ts): its two price profiles, and its chat with a person's
// pauses, which must be billed: a turn after a pause longer than the cache's lifetime reads its
// prompt uncached (on the run's virtual clock), and the middleware, told that lifetime, sends a
// ready checkpoint then (the cold-cache rule), and never when told the cache never expires.
import { beforeAll, describe, expect, it } from 'vitest';
import { hostKeepsTimers } from '../../bench/clock';
import { PROFILES, pieces, profileCost, runChatPiece, runContinuityPiece, VARIANTS } from '../../bench/compact-at';

const variant = (name: string) => {
  const index = VARIANTS.findIndex((each) => each.name.startsWith(name));
  if (index < 0) throw new Error(`no variant ${name}`);
  return index;
};

describe('the price profiles', () => {
  it('bill uncached input at the cache-write price, cached input at the cached price, output at the output price', () => {
    const usage = { input: 10_000, cached: 8_000, output: 300 };
    // OpenAI: 2,000 x 1 + 8,000 x 0.1; + 300 x 8
    expect(profileCost(usage, PROFILES.OpenAI)).toEqual({ input: 2_800, full: 5_200 });
    // Anthropic: 2,000 x 1.25 + 8,000 x 0.1; + 300 x 5
    expect(profileCost(usage, PROFILES.Anthropic)).toEqual({ input: 3_300, full: 4_800 });
    expect(PROFILES.Anthropic.cacheTtl).toBe(300_000);
    expect(PROFILES.OpenAI.cacheTtl).toBe(300_000);
  });
});

describe('the chat with its pauses', () => {
  beforeAll(() => hostKeepsTimers());

  it('bills the turn after a pause longer than the cache lifetime uncached, and a shorter pause cached', async () => {
    // 30 turns a minute apart; then the same with the pause before turn 20 at 400 s, and at 290 s
    const even = Array.from({ length: 30 }, (_, turn) => (turn === 0 ? 0 : 60_000));
    const withPause = (ms: number) => even.map((each, turn) => (turn === 20 ? ms : each));
    const ceiling = variant("compactAt: 'ceiling'");
    const chat = (pauses: number[]) => runChatPiece({ seed: 1, variant: ceiling, window: 128_000, turns: 30, pauses });
    const [steady, away, back] = await Promise.all([chat(even), chat(withPause(400_000)), chat(withPause(290_000))]);
    for (const run of [steady, away, back]) {
      expect(run.turns).toBe(30);
      expect(run.error).toBeUndefined();
    }
    // the same prompts either way; only what the cache holds differs
    expect(away.usage.input).toBe(steady.usage.input);
    expect(away.usage.cached).toBeLessThan(steady.usage.cached);
    expect(away.cold).toBe(steady.cold + 1);
    // Anthropic bills the prompt read afresh at the write price, 1.25 instead of 0.1
    const lost = steady.usage.cached - away.usage.cached;
    expect(profileCost(away.usage, PROFILES.Anthropic).input - profileCost(steady.usage, PROFILES.Anthropic).input).toBeCloseTo(lost * (1.25 - 0.1), 6);
    expect(profileCost(away.usage, PROFILES.OpenAI).full).toBeGreaterThan(profileCost(steady.usage, PROFILES.OpenAI).full);
    // under the lifetime, nothing changes
    expect(back.usage).toEqual(steady.usage);
    expect(back.cold).toBe(steady.cold);
  }, 60_000);

  it("sends a ready checkpoint after a break (cold-cache), never when told the cache never expires, and a cache that never expires costs less", async () => {
    // the benchmark's own chat at seed 1: 150 turns, 12 breaks of 6 to 30 minutes; in a 32,000
    // window, where it compacts often enough for a checkpoint to be ready at a break
    const chat = (name: string) => runChatPiece({ seed: 1, variant: variant(name), window: 32_000 });
    const [truth, neverTold, kept] = await Promise.all([
      chat("compactAt: 'cost' (Anthropic prices)"),
      chat("compactAt: 'cost' (Anthropic prices), told the cache never expires"),
      chat("compactAt: 'cost' (Anthropic prices), the provider's cache never expiring"),
    ]);
    for (const run of [truth, neverTold, kept]) expect(run.error).toBeUndefined();
    expect(truth.rules['cold-cache'] ?? 0).toBeGreaterThan(0);
    expect(neverTold.rules['cold-cache'] ?? 0).toBe(0);
    // the same policy with the same clock: the same compactions, only the bill differs
    expect(kept.rules).toEqual(truth.rules);
    expect(kept.usage.input).toBe(truth.usage.input);
    expect(kept.cold).toBeLessThan(truth.cold);
    expect(profileCost(kept.usage, PROFILES.Anthropic).input).toBeLessThan(profileCost(truth.usage, PROFILES.Anthropic).input);
  }, 120_000);
});

describe('one summary request a compaction in the chat with its pauses', () => {
  beforeAll(() => hostKeepsTimers());

  it('sends a checkpoint prepared against the trigger once it is ready, though the trigger has moved up past the prompt since', async () => {
    // Seed 14 at 128,000 under OpenAI prices: turn 148 (36,810 tokens, a trigger of 39,130 its next
    // step may reach) starts the compaction; at turn 149 the trigger stands at 37,568, over the
    // prompt (36,840) again. Held until the prompt reached the trigger, the checkpoint was never
    // sent (the chat ends): 1 compaction for 2 requests. Sent once ready: 2 for 2.
    const run = await runChatPiece({ seed: 14, variant: variant("compactAt: 'cost' (OpenAI prices)"), window: 128_000 });
    expect(run.error).toBeUndefined();
    expect(run.summaryRequests).toBe(2);
    expect(run.compactions).toBe(2);
    expect(run.rules).toEqual({ prepared: 2 });
  }, 60_000);
});

describe('the continuity scoreboard of the cost benchmark', () => {
  it("runs 'cost' with the recall tool offered on the continuity scoreboard only, and the agent asks it where the others cannot", async () => {
    const recall = variant("compactAt: 'cost' (Anthropic prices), with the recall tool");
    const cost = variant("compactAt: 'cost' (Anthropic prices)");
    const all = pieces();
    expect(all.filter((piece) => piece.variant === recall).every((piece) => piece.kind === 'continuity')).toBe(true);
    expect(all.some((piece) => piece.kind === 'continuity' && piece.variant === recall)).toBe(true);
    const [withTool, without] = await Promise.all([
      runContinuityPiece({ window: 32_000, seed: 1, variant: recall, mode: 'lossy' }),
      runContinuityPiece({ window: 32_000, seed: 1, variant: cost, mode: 'lossy' }),
    ]);
    expect(withTool.lookups).toBeGreaterThan(0);
    expect(without.lookups).toBe(0);
  });
});
