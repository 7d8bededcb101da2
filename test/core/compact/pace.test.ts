import { afterEach, describe, expect, it, vi } from 'vitest';
import { stepPace } from '../../../src/compact/prepare';
import { createEngine } from '../../../src/engine';
import type { Message } from '../../../src/prompt/types';
import type { StepView } from '../../../src/view';

// How fast a conversation grows (docs/design.md, "Timed to the summary"): the growth of its recent
// steps, the time between them outside the middleware, and the time since its checkpoint changed.

const THREAD = 'a'.repeat(64);

/** What `stepPace` reads of a step: its thread, its conversation's length, its checkpoint and whether it compacted (`serve` gives its size). */
function step(length: number, options: { checkpoint?: string; compacted?: boolean } = {}): StepView {
  const conversation = Array.from({ length }, (_, index): Message => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: [{ type: 'text', text: `${index}` }] }));
  return {
    threadDigest: THREAD,
    conversation,
    ...(options.checkpoint === undefined ? {} : { checkpoint: { digest: options.checkpoint } }),
    ...(options.compacted === true ? { compaction: {} } : {}),
  } as unknown as StepView;
}

describe('stepPace', () => {
  afterEach(() => vi.useRealTimers());

  /** Serves one step: it arrives at `arrived` ms with a prompt of `brought` tokens and goes out at `left` ms (after any wait) at `size`. */
  function serve(engine: ReturnType<typeof createEngine>, view: StepView, size: number, arrived: number, left = arrived, brought = size) {
    vi.setSystemTime(left);
    return stepPace(engine, { ...view, size: { counted: 0, estimated: size } }, { at: arrived, size: brought });
  }

  it('should measure the growth and the time between steps, with nothing for the first step of a conversation', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const engine = createEngine({ contextWindow: 20_000 });
    expect(serve(engine, step(1), 1_000, 0)).toBeUndefined();
    expect(serve(engine, step(3), 1_600, 1_000)).toEqual({ growth: 600, meanGrowth: 600, meanInterval: 1_000 });
    expect(serve(engine, step(5), 2_500, 3_000)).toEqual({ growth: 900, meanGrowth: 750, meanInterval: 1_500 });
  });

  it('should leave out of the time between steps what a step spent waiting in the middleware, and count from when it went out', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const engine = createEngine({ contextWindow: 20_000 });
    serve(engine, step(1, { checkpoint: 'c1' }), 14_000, 0);
    serve(engine, step(3, { checkpoint: 'c1' }), 15_000, 1_000);
    // arrives at 16,000 tokens 1 s after the step before went out, waits 4 s for a summary, goes out
    // compacted to 4,000 at 6 s: it grew 1,000 tokens, what it compacted is no growth
    expect(serve(engine, step(5, { checkpoint: 'c2', compacted: true }), 4_000, 2_000, 6_000, 16_000)).toEqual({ growth: 1_000, meanGrowth: 1_000, meanInterval: 1_000, sinceShrunk: 0 });
    // 1 s after it went out, 2,000 tokens over where it went out: not 5 s after the step before it arrived
    expect(serve(engine, step(7, { checkpoint: 'c2' }), 6_000, 7_000)).toEqual({ growth: 2_000, meanGrowth: 4_000 / 3, meanInterval: 1_000, sinceShrunk: 1_000 });
  });

  it("should count from when the conversation's checkpoint changed, also where another instance made it", () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const engine = createEngine({ contextWindow: 20_000 });
    serve(engine, step(1, { checkpoint: 'c1' }), 10_000, 0);
    expect(serve(engine, step(3, { checkpoint: 'c1' }), 11_000, 1_000)?.sinceShrunk).toBeUndefined();
    // a checkpoint made elsewhere: the step goes out with it and compacted nothing itself
    expect(serve(engine, step(5, { checkpoint: 'c2' }), 4_000, 2_000)?.sinceShrunk).toBe(0);
    expect(serve(engine, step(7, { checkpoint: 'c2' }), 4_600, 3_500)?.sinceShrunk).toBe(1_500);
  });

  it('should not take a smaller prompt with the same checkpoint for a compaction', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const engine = createEngine({ contextWindow: 20_000 });
    serve(engine, step(1, { checkpoint: 'c1' }), 10_000, 0);
    // a long tool output dropped by the caller: the prompt shrinks, no checkpoint changed
    const pace = serve(engine, step(3, { checkpoint: 'c1' }), 9_000, 1_000);
    expect(pace).toEqual({ growth: -1_000, meanGrowth: 1, meanInterval: 1_000 });
  });

  it('should start the growth anew on a step that does not extend the one before, and keep when the checkpoint changed', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const engine = createEngine({ contextWindow: 20_000 });
    serve(engine, step(3, { checkpoint: 'c1' }), 10_000, 0);
    serve(engine, step(5, { checkpoint: 'c2', compacted: true }), 4_000, 1_000, 3_000, 11_000);
    // a retry of the same step: no pace, and the compaction is remembered
    expect(serve(engine, step(5, { checkpoint: 'c2' }), 4_000, 4_000)).toBeUndefined();
    expect(serve(engine, step(7, { checkpoint: 'c2' }), 4_500, 5_000)).toEqual({ growth: 500, meanGrowth: 500, meanInterval: 1_000, sinceShrunk: 2_000 });
  });
});
