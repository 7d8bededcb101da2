import type { LanguageModelMiddleware } from 'ai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { timed } from '../../bench/strategies';

describe('timed', () => {
  afterEach(() => void vi.useRealTimers());

  it('times the compacting steps, the others, and how long the agent ran before each compaction', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
    let compactions = 0;
    // steps 2 and 4 compact and take 300 ms in transformParams, the others 10 ms
    let call = 0;
    const middleware: LanguageModelMiddleware = {
      specificationVersion: 'v3',
      transformParams: async ({ params }) => {
        call++;
        const compacts = call === 2 || call === 4;
        await new Promise((resolve) => setTimeout(resolve, compacts ? 300 : 10));
        if (compacts) compactions++;
        return params;
      },
    };
    const run = timed({ middleware: [middleware], compactions: () => compactions });
    const transform = run.middleware[0]!.transformParams!;
    for (let step = 0; step < 4; step++) {
      const done = transform({ params: { prompt: [] }, type: 'generate', model: undefined as never });
      await vi.advanceTimersByTimeAsync(300);
      await done;
      // the model answers in 1 s
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(run.compactingMs()).toEqual([300, 300]);
    expect(run.otherMs()).toEqual([10, 10]);
    // step 2 starts 1,300 ms after step 1 did; step 4 starts 1,300 + 1,000 ms after step 2 ended
    expect(run.beforeMs()).toEqual([1_300, 2_300]);
  });
});
