import { describe, expect, it } from 'vitest';
import { SHARES, atShare } from '../../bench/budget';
import { DEFAULT_BUDGET_SHARE, MAX_BUDGET_SHARE } from '../../src/checkpoint/budget';
import type { Message } from '../../src/prompt/types';
import { estimatePrompt } from '../../src/sizing/estimate';
import { assistant, filler, scriptedModel, user, wrap } from '../support/harness';

// The budget's share benchmark (docs/benchmarking.md, "The budget's share") hands each strategy its
// share of the room under the package's symbol: what a compaction keeps must follow it.
describe('atShare', () => {
  it('measures the default among shares no larger than half the room', () => {
    expect(SHARES).toContain(DEFAULT_BUDGET_SHARE);
    for (const share of SHARES) expect(share).toBeLessThanOrEqual(MAX_BUDGET_SHARE);
  });

  it('keeps what its share of the room allows: an eighth keeps less than half', async () => {
    // 100,000 window -> ceiling 84,000, no frame: a room of 84,000. Twenty-eight 1,500-token
    // exchanges and a new turn reach the ceiling, and the summary request still leaves its reply
    // room in the window (a request without it sizes by half the room whatever the share).
    const prompt: Message[] = [];
    for (let index = 0; index < 28; index++) prompt.push(user(`${index} ${filler(1_500, 'u')}`), assistant(`${index} ${filler(1_500, 'a')}`));
    prompt.push(user('next'));
    const after: number[] = [];
    for (const share of [0.125, 0.5]) {
      const scripted = scriptedModel();
      const run = await atShare(share).start(100_000);
      await wrap(scripted.model, run.middleware[0]).doGenerate({ prompt });
      expect(run.compactions()).toBe(1);
      const sent = estimatePrompt(scripted.stepCalls()[0]!.prompt);
      // the checkpoint and the new turn take at most the share of the room: 10,500 and 42,000
      expect(sent).toBeLessThanOrEqual(share * 84_000);
      after.push(sent);
    }
    // an eighth leaves the record under 10,500 tokens; half lets it take up to keep (15,000): at
    // least two more of its 1,500-token messages
    expect(after[1]! - after[0]!).toBeGreaterThan(3_000);
  });
});
