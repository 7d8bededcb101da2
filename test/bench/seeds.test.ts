// The seeds benchmark (bench/seeds.ts) rests on two things: a seed is another session of the same
// shape (all 500 steps, no error), and another session, not the same one renamed (other costs).
import { describe, expect, it } from 'vitest';
import { costOf } from '../../bench/cost';
import { SEEDS, runSeedPiece } from '../../bench/seeds';

describe('the seeds benchmark', () => {
  it('runs 20 seeds, the session benchmark’s own among them', () => {
    expect(SEEDS).toHaveLength(20);
    expect(SEEDS).toContain(11);
  });

  it('runs another whole session at another seed', async () => {
    // strategy 1: this middleware with prepare: false
    const [one, two] = await Promise.all([runSeedPiece({ seed: 1, strategy: 1 }), runSeedPiece({ seed: 2, strategy: 1 })]);
    for (const run of [one, two]) {
      expect(run.steps).toBe(500);
      expect(run.errors).toBe(0);
    }
    expect(costOf(one.usage).input).not.toBe(costOf(two.usage).input);
    expect(one.usage.input).not.toBe(two.usage.input);
  }, 120_000);
});
