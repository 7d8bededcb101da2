import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CompactionRecord, type CompactionStore, compaction, memoryStore } from '../../../src';
import { checkpointText } from '../../../src/checkpoint/message';
import type { Message } from '../../../src/prompt/types';
import { recordingLogger, scriptedModel, textOf, wrap } from '../../support/harness';
import { type ManualClock, manualClock, runUntil, settle, stepUntil } from '../../support/manual-clock';
import { SUMMARY, textResult } from '../../support/models';
import { atCeiling, band, gate, under } from '../../support/prepare-fixtures';

// One summary for a prefix across instances (docs/stores.md, the lease): two instances sharing one
// store, as two server processes sharing a Redis. 20,000 window -> 17,000 ceiling; prepared from 13,600.

const CLOCK = Symbol.for('ai-compaction.clock');

const checkpointFor = (record: string): Message => ({ role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, record) }] });

const realSetTimeout = globalThis.setTimeout;

afterEach(() => {
  vi.useRealTimers();
});

describe('the lease', () => {
  it('should let an instance wait for the checkpoint another is writing for the same prefix, and send it', async () => {
    const store = memoryStore();
    const clock = manualClock();
    const { opened, open } = gate();
    const first = scriptedModel({ summary: () => opened.then(() => textResult(SUMMARY, 100, 200)) });
    const second = scriptedModel();
    const a = compaction({ contextWindow: 20_000, store, prepare: false, [CLOCK]: clock } as never);
    const b = compaction({ contextWindow: 20_000, store, prepare: false, [CLOCK]: clock } as never);
    const prompt = atCeiling();
    let done = 0;
    void wrap(first.model, a).doGenerate({ prompt }).then(() => done++);
    await settle(() => first.summaryCalls().length === 1);
    // A's summary has its deadline: one sleep on the clock.
    expect(clock.pending()).toBe(1);
    void wrap(second.model, b).doGenerate({ prompt }).then(() => done++);
    // B finds A's lease and waits (its bound, and its first read of the thread): no summary request of its own.
    await settle(() => clock.pending() === 3);
    expect(second.summaryCalls()).toHaveLength(0);
    expect(second.stepCalls()).toHaveLength(0);
    open();
    await stepUntil(clock, () => done === 2, 200);
    expect(second.summaryCalls()).toHaveLength(0);
    expect(first.summaryCalls()).toHaveLength(1);
    expect(second.stepCalls()[0]!.prompt).toEqual(first.stepCalls()[0]!.prompt);
    expect(second.stepCalls()[0]!.prompt[0]).toEqual(checkpointFor(a.last()!.record));
  });

  it('should not prepare ahead on one instance what another is preparing, and send it at the ceiling', async () => {
    const store = memoryStore();
    const clock = manualClock();
    const { opened, open } = gate();
    const first = scriptedModel({ summary: () => opened.then(() => textResult(SUMMARY, 100, 200)) });
    const second = scriptedModel();
    const background: Promise<unknown>[] = [];
    const waitUntil = (promise: Promise<unknown>) => void background.push(promise);
    const records: CompactionRecord[] = [];
    // The gated summary takes no time by the middleware's clock: it counts as instant, not measured.
    const a = compaction({ contextWindow: 20_000, store, waitUntil, [CLOCK]: clock } as never);
    const b = compaction({ contextWindow: 20_000, store, waitUntil, onCompaction: (record: CompactionRecord) => void records.push(record), [CLOCK]: clock } as never);
    await wrap(first.model, a).doGenerate({ prompt: band() });
    await settle(() => first.summaryCalls().length === 1);
    // Still being written on A: B's step in the band does not start one of its own.
    await wrap(second.model, b).doGenerate({ prompt: under() });
    expect(background).toHaveLength(1);
    // At the ceiling B waits for A's rather than summarizing, and sends it.
    let sent = false;
    void wrap(second.model, b)
      .doGenerate({ prompt: atCeiling() })
      .then(() => (sent = true));
    // A's summary's deadline, B's bound on its wait and its first read of the thread: B waits.
    await settle(() => clock.pending() === 3);
    expect(second.summaryCalls()).toHaveLength(0);
    open();
    await stepUntil(clock, () => sent, 200);
    await Promise.all(background);
    expect(first.summaryCalls()).toHaveLength(1);
    expect(records).toEqual([expect.objectContaining({ reason: 'auto', messagesCovered: 14, prepared: true })]);
    // Sent with all that came after it, it leaves the prompt over the budget: B prepares the
    // catch-up, of a longer prefix (that step's whole conversation), and nothing of A's again.
    expect(second.summaryCalls()).toHaveLength(1);
    expect(second.summaryCalls()[0]!.prompt.length).toBe(1 + atCeiling().length - 14 + 1);
    expect(second.stepCalls()[1]!.prompt).toEqual([checkpointFor(records[0]!.record), ...atCeiling().slice(14)]);
  });

  it('should stop waiting as soon as the other instance fails, and go on as after that failure: held, not summarizing again', async () => {
    const store = memoryStore();
    const clock = manualClock();
    const { opened, open } = gate();
    const first = scriptedModel({ summary: () => opened.then(() => Promise.reject(new Error('summarizer down'))) });
    const second = scriptedModel();
    const a = compaction({ contextWindow: 20_000, store, prepare: false, [CLOCK]: clock } as never);
    const b = compaction({ contextWindow: 20_000, store, prepare: false, [CLOCK]: clock } as never);
    const prompt = atCeiling();
    let done = 0;
    void wrap(first.model, a).doGenerate({ prompt }).then(() => done++);
    await settle(() => first.summaryCalls().length === 1);
    const start = clock.now();
    void wrap(second.model, b).doGenerate({ prompt }).then(() => done++);
    await settle(() => clock.pending() === 3);
    expect(second.summaryCalls()).toHaveLength(0);
    open();
    await stepUntil(clock, () => done === 2, 200);
    // A's lease was released with its failure: B did not wait out the bound (60 s), only to its
    // next read of the thread. A's failure holds the conversation in the store both read
    // (docs/design.md, "No progress"): B makes no second summary request and its step goes out
    // unchanged, as A's did.
    expect(clock.now() - start).toBeLessThan(60_000);
    expect(second.summaryCalls()).toHaveLength(0);
    expect(second.stepCalls()[0]!.prompt).toEqual(prompt);
    expect(first.stepCalls()[0]!.prompt).toEqual(prompt);
  });

  it('should wait for another instance at most the time a summary of that model has been measured to take', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const spin = async () => {
      await vi.advanceTimersByTimeAsync(0);
      await new Promise((resolve) => realSetTimeout(resolve, 0));
    };
    const until = async (condition: () => boolean) => {
      for (let turn = 0; turn < 5_000 && !condition(); turn++) await spin();
      if (!condition()) throw new Error('condition not met');
    };
    const store = memoryStore();
    // A writes one summary in 3 s (measured: it waits 6 s for others), then one that never ends.
    let summaries = 0;
    const first = scriptedModel({
      summary: () => (summaries++ === 0 ? new Promise((resolve) => setTimeout(() => resolve(textResult(SUMMARY, 100, 200)), 3_000)) : new Promise(() => {})),
    });
    const second = scriptedModel();
    const a = compaction({ contextWindow: 20_000, store, prepare: false });
    const b = compaction({ contextWindow: 20_000, store, prepare: false });
    const measured = wrap(first.model, a).doGenerate({ prompt: [...atCeiling().slice(0, 1), ...atCeiling()] });
    let done = false;
    void measured.then(() => (done = true));
    await until(() => first.summaryCalls().length === 1);
    await vi.advanceTimersByTimeAsync(3_000);
    await until(() => done);

    void wrap(first.model, a).doGenerate({ prompt: atCeiling() });
    await until(() => first.summaryCalls().length === 2);
    const start = Date.now();
    let finished = false;
    void wrap(second.model, b)
      .doGenerate({ prompt: atCeiling() })
      .then(() => (finished = true));
    await vi.advanceTimersByTimeAsync(5_900);
    await spin();
    expect(second.summaryCalls()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(200);
    await until(() => finished);
    // A's lease: twice its measured 3 s. B then wrote its own.
    expect(Date.now() - start).toBeLessThanOrEqual(6_100);
    expect(second.summaryCalls()).toHaveLength(1);
  });
});

describe("another instance's lease holds a step no longer than the step's own summaryTimeout", () => {
  /** Instance A takes the lease on the prefix of `atCeiling()` (60 s: no summary measured) and dies writing it: its summary never comes. */
  async function deadWriter(store: ReturnType<typeof memoryStore>, clock: ManualClock) {
    const dead = scriptedModel({ summary: () => new Promise(() => {}) });
    const a = compaction({ contextWindow: 20_000, store, prepare: false, summaryTimeout: false, [CLOCK]: clock } as never);
    void wrap(dead.model, a).doGenerate({ prompt: atCeiling() });
    await settle(() => dead.summaryCalls().length === 1);
    expect(clock.pending()).toBe(0);
  }

  /** How long, by the clock, the step of `atCeiling()` takes through `wrapped`. */
  async function timedStep(clock: ManualClock, wrapped: ReturnType<typeof wrap>): Promise<number> {
    const start = clock.now();
    let finished: number | undefined;
    void wrapped.doGenerate({ prompt: atCeiling() }).then(() => (finished = clock.now()));
    await runUntil(clock, () => finished !== undefined);
    return finished! - start;
  }

  it('should wait at the ceiling at most its summaryTimeout (1,000 ms), not the dead lease (60 s), then go on as after a failed compaction', async () => {
    const store = memoryStore();
    const clock = manualClock();
    await deadWriter(store, clock);
    const log = recordingLogger();
    const second = scriptedModel();
    const b = compaction({ contextWindow: 20_000, store, prepare: false, summaryTimeout: 1_000, logger: log.logger, [CLOCK]: clock } as never);
    expect(await timedStep(clock, wrap(second.model, b))).toBe(1_000);
    // No summary of its own: it goes out unchanged (it fits the window), as after a failed compaction.
    expect(second.summaryCalls()).toHaveLength(0);
    expect(second.stepCalls()[0]!.prompt).toEqual(atCeiling());
    expect(log.warn.join('\n')).toMatch(/compaction failed \(timeout\)/);
  });

  it('should wait before writing its own (a manual compaction) at most its summaryTimeout, then write it', async () => {
    const store = memoryStore();
    const clock = manualClock();
    await deadWriter(store, clock);
    const second = scriptedModel();
    const b = compaction({ contextWindow: 20_000, store, prepare: false, summaryTimeout: 1_000, [CLOCK]: clock } as never);
    b.compactNext();
    expect(await timedStep(clock, wrap(second.model, b))).toBe(1_000);
    expect(second.summaryCalls()).toHaveLength(1);
    expect(b.last()).toMatchObject({ reason: 'manual' });
  });
});

describe('the lease is taken atomically', () => {
  /** Store calls and summaries under way (the test's clock moves only when there is none). */
  let busy = 0;
  const turnsLater = async <T>(turns: number, call: () => T | Promise<T>): Promise<T> => {
    busy++;
    try {
      for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => realSetTimeout(resolve, 0));
      return await call();
    } finally {
      busy--;
    }
  };

  /** `store` with every call answered after `turns` turns of the event loop (a store across a network), passing on what it has. */
  function slowStore(store: CompactionStore, turns: number): CompactionStore {
    return {
      get: (key) => turnsLater(turns, () => store.get(key)),
      set: (key, value, options) => turnsLater(turns, () => store.set(key, value, options)),
      delete: (key) => turnsLater(turns, () => store.delete(key)),
      ...(store.setIfAbsent === undefined ? {} : { setIfAbsent: (key: string, value: string, options: { ttlMs: number }) => turnsLater(turns, () => store.setIfAbsent!(key, value, options)) }),
    };
  }

  /** A model whose summaries come after `turns` turns of the event loop. */
  const slowSummaries = (turns: number) => scriptedModel({ summary: () => turnsLater(turns, () => textResult(SUMMARY, 100, 200)) });

  /** Conversation `index` at the ceiling: `atCeiling()` opened by its own first message. */
  const conversation = (index: number): Message[] => [{ role: 'user', content: [{ type: 'text', text: `conversation ${index}` }] }, { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, ...atCeiling()];

  for (const [fast, slow, writing] of [[0, 0, 0], [5, 5, 50], [10, 14, 100], [6, 8, 30], [20, 27, 200]] as const) {
    it(`should make one summary request per conversation when two instances are sent it at once (their stores answering after ${fast} and ${slow} turns, a summary after ${writing})`, async () => {
      const shared = memoryStore();
      const clock = manualClock();
      const first = slowSummaries(writing);
      const second = slowSummaries(writing);
      const a = wrap(first.model, compaction({ contextWindow: 20_000, store: slowStore(shared, fast), prepare: false, [Symbol.for('ai-compaction.clock')]: clock } as never));
      const b = wrap(second.model, compaction({ contextWindow: 20_000, store: slowStore(shared, slow), prepare: false, [Symbol.for('ai-compaction.clock')]: clock } as never));
      let done = 0;
      for (let index = 0; index < 10; index++) for (const wrapped of [a, b]) void wrapped.doGenerate({ prompt: conversation(index) }).then(() => done++);
      await runUntil(clock, () => done === 20, () => busy > 0);
      expect(first.summaryCalls().length + second.summaryCalls().length).toBe(10);
      // Every step went out with its conversation's checkpoint.
      for (const call of [...first.stepCalls(), ...second.stepCalls()]) expect(textOf(call.prompt[0])).toContain('<conversation-checkpoint>');
    });
  }
});
