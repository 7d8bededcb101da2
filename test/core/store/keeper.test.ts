import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CompactionStore, compaction, memoryStore } from '../../../src';
import { Keeper, PROBE_FIRST_MS, PROBE_MAX_MS, STORE_TIMEOUT_MS } from '../../../src/store/keeper';
import type { StoredCheckpoint } from '../../../src/store/format';
import type { Message } from '../../../src/prompt/types';
import { assistant, chat, recordingLogger, scriptedModel, user, wrap } from '../../support/harness';

// The outage rule (docs/stores.md), with fake timers and counted calls: a step waits for the store
// 5 seconds at most in all, whatever number of calls it makes; once a call has timed out, or the
// store says it is not connected, every call goes to memory at once, and one probe at a time,
// backing off from 1 s to 30 s, finds when it answers again.

const realSetTimeout = globalThis.setTimeout;
/** Lets work that is not a timer (Web Crypto digests) go on, without moving the fake clock. */
const spin = () => new Promise((resolve) => realSetTimeout(resolve, 0));

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 5_000 && !condition(); turn++) {
    await vi.advanceTimersByTimeAsync(0);
    await spin();
  }
  if (!condition()) throw new Error(`never happened: ${what}`);
}

/** Settles `promise` and records the fake time it settled at. */
function watched<T>(promise: Promise<T>) {
  const state: { done: boolean; at: number | undefined; value: T | undefined; error: unknown } = { done: false, at: undefined, value: undefined, error: undefined };
  promise.then(
    (value) => Object.assign(state, { done: true, at: Date.now(), value }),
    (error: unknown) => Object.assign(state, { done: true, at: Date.now(), error }),
  );
  return state;
}

/**
 * A store over memory whose calls can be made to answer late (`delayMs`), never (`hung`) or fail
 * at once (`failing`), with every call counted and stamped with the fake time it was made.
 */
function controlled() {
  const inner = memoryStore();
  const calls: { method: string; key: string; at: number }[] = [];
  const mode = { delayMs: 0, hung: false, failing: false, connected: undefined as boolean | undefined };
  const answer = <T>(work: () => Promise<T>): Promise<T> => {
    if (mode.failing) return Promise.reject(new Error('refused'));
    if (mode.hung) return new Promise<T>(() => {});
    if (mode.delayMs === 0) return work();
    return new Promise<T>((resolve, reject) => setTimeout(() => work().then(resolve, reject), mode.delayMs));
  };
  const store: CompactionStore = {
    get: (key) => (calls.push({ method: 'get', key, at: Date.now() }), answer(() => inner.get(key))),
    set: (key, value, options) => (calls.push({ method: 'set', key, at: Date.now() }), answer(() => inner.set(key, value, options))),
    delete: (key) => (calls.push({ method: 'delete', key, at: Date.now() }), answer(() => inner.delete(key))),
    connected: () => mode.connected ?? true,
  };
  return { store, inner, calls, mode };
}

const digest = (letter: string) => letter.repeat(64);
const checkpoint = (letter: string, length = 4): StoredCheckpoint => ({
  v: 2, digest: digest(letter), length, summary: 's', record: '', reason: 'auto', tokensBefore: 10, tokensAfter: 5, createdAt: 0,
});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the per-step budget', () => {
  it('should wait for the store 5 seconds at most in all over the calls of one step, then skip it', async () => {
    const { store, calls, mode } = controlled();
    const warnings: string[] = [];
    const keeper = new Keeper(store, { warn: (line) => warnings.push(line) });
    mode.delayMs = 4_000;
    const budget = keeper.budget();
    const start = Date.now();
    const step = watched(
      (async () => {
        await keeper.thread(digest('a'), budget);
        await keeper.checkpoint(digest('b'), 4, budget);
        await keeper.thread(digest('c'), budget);
        return keeper.saveCheckpoint(digest('a'), checkpoint('d'), budget);
      })(),
    );
    await vi.advanceTimersByTimeAsync(4_999);
    expect(step.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => step.done, 'the step settles');
    // The first call answered after 4 s; the second had 1 s left and was given up; the rest went to memory.
    expect(step.at! - start).toBe(STORE_TIMEOUT_MS);
    expect(calls.map((call) => [call.method, call.at - start])).toEqual([
      ['get', 0],
      ['get', 4_000],
    ]);
    expect(step.value).toBe(true);
    expect(warnings).toEqual([
      'ai-compaction: the store is unavailable (it did not answer within 5000 ms); steps go on without it, with checkpoints and counts in memory, until it answers again',
    ]);
    // The checkpoint written in memory is found there.
    expect(await keeper.checkpoint(digest('d'), 4, keeper.budget())).toEqual(checkpoint('d'));
  });

  it('should count calls made side by side once', async () => {
    const { store, calls, mode } = controlled();
    const keeper = new Keeper(store, { warn: () => {} });
    mode.delayMs = 3_000;
    const budget = keeper.budget();
    const start = Date.now();
    const step = watched(
      (async () => {
        await Promise.all([keeper.thread(digest('a'), budget), keeper.thread(digest('b'), budget)]);
        await keeper.thread(digest('c'), budget);
      })(),
    );
    await vi.advanceTimersByTimeAsync(STORE_TIMEOUT_MS);
    await until(() => step.done, 'the step settles');
    // 3 s for the two reads together, 2 s left for the third: given up at 5 s, not 6 or 9.
    expect(step.at! - start).toBe(5_000);
    expect(calls).toHaveLength(3);
  });

  it('should give every step its own budget while the store answers', async () => {
    const { store, calls, mode } = controlled();
    const keeper = new Keeper(store, { warn: () => {} });
    mode.delayMs = 3_000;
    for (let step = 0; step < 3; step++) {
      const done = watched(keeper.thread(digest('a'), keeper.budget()));
      await vi.advanceTimersByTimeAsync(3_000);
      await until(() => done.done, 'the read settles');
    }
    expect(calls).toHaveLength(3);
    expect(keeper.down).toBe(false);
  });

  it('should give up every pending call at once when one times out', async () => {
    const { store, mode } = controlled();
    const keeper = new Keeper(store, { warn: () => {} });
    mode.hung = true;
    const start = Date.now();
    const first = watched(keeper.thread(digest('a'), keeper.budget()));
    await vi.advanceTimersByTimeAsync(2_000);
    const second = watched(keeper.thread(digest('b'), keeper.budget()));
    await vi.advanceTimersByTimeAsync(3_000);
    await until(() => first.done && second.done, 'both settle');
    // The second step was held 3 s, not 5: the store went down at the first timeout.
    expect([first.at! - start, second.at! - start]).toEqual([5_000, 5_000]);
  });

  it('should skip at once a store whose client says it is not connected, and give up a pending call when it says so', async () => {
    const { store, calls, mode } = controlled();
    const warnings: string[] = [];
    const keeper = new Keeper(store, { warn: (line) => warnings.push(line) });
    mode.hung = true;
    const start = Date.now();
    const pending = watched(keeper.thread(digest('a'), keeper.budget()));
    await vi.advanceTimersByTimeAsync(1_000);
    mode.connected = false;
    await vi.advanceTimersByTimeAsync(250);
    await until(() => pending.done, 'the pending read is given up');
    // The client's state is looked at every 250 ms while a call is pending.
    expect(pending.at! - start).toBe(1_250);
    const skipped = watched(keeper.saveCheckpoint(digest('a'), checkpoint('b'), keeper.budget()));
    await until(() => skipped.done, 'the write settles');
    expect(skipped.at! - start).toBe(1_250);
    expect(calls).toHaveLength(1);
    expect(warnings).toEqual([expect.stringContaining('the store is unavailable (its client is not connected)')]);
  });

  it('should hold a step of the middleware 5 seconds at most on a hung store, whatever number of calls it makes, and the next step not at all', async () => {
    const { store, calls, mode } = controlled();
    const log = recordingLogger();
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000, store, logger: log.logger });
    const wrapped = wrap(scripted.model, middleware);
    const conversation: Message[] = [...chat(3, 40, 'h'), user('go')];
    mode.hung = true;
    // A manual compaction: thread and sizing reads, the lease, the checkpoint and its thread, the count.
    middleware.compactNext();
    const step = watched(wrapped.doGenerate({ prompt: conversation }));
    await until(() => calls.length === 2, 'the sizing and thread reads');
    const first = calls[0]!.at;
    await vi.advanceTimersByTimeAsync(4_999);
    expect(step.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => step.done, 'the step settles');
    expect(step.error).toBeUndefined();
    expect(step.at! - first).toBe(5_000);
    // The sizing and thread reads, side by side; nothing after the timeout.
    expect(calls.map((call) => call.key.split(':')[0])).toEqual(['sizing', 'thread']);
    expect(scripted.summaryCalls()).toHaveLength(1);

    conversation.push(assistant('done'), user('next'));
    const next = watched(wrapped.doGenerate({ prompt: conversation }));
    const before = Date.now();
    await until(() => next.done, 'the next step settles');
    expect(next.at).toBe(before);
    expect(calls).toHaveLength(2);
    // It found the checkpoint made in memory: no second summary.
    expect(scripted.summaryCalls()).toHaveLength(1);
    expect(log.warn.filter((line) => line.includes('the store is unavailable'))).toHaveLength(1);
  });
});

describe('the probe', () => {
  it('should probe one call at a time, backing off from 1 s to 30 s, and end the outage at its first answer with one info line', async () => {
    const { store, calls, mode } = controlled();
    const info: string[] = [];
    const keeper = new Keeper(store, { warn: () => {}, info: (line) => info.push(line) });
    mode.hung = true;
    const start = Date.now();
    const first = watched(keeper.thread(digest('a'), keeper.budget()));
    await vi.advanceTimersByTimeAsync(STORE_TIMEOUT_MS);
    await until(() => first.done, 'the first read times out');
    mode.hung = false;
    mode.failing = true;
    // Probes that fail at once: 1, 2, 4, 8, 16, then 30 s apart.
    await vi.advanceTimersByTimeAsync(1_000 + 2_000 + 4_000 + 8_000 + 16_000 + 30_000 + 30_000);
    const probes = calls.slice(1).map((call) => [call.key, call.at - start - STORE_TIMEOUT_MS]);
    expect(probes).toEqual([1_000, 3_000, 7_000, 15_000, 31_000, 61_000, 91_000].map((at) => ['probe', at]));
    expect(PROBE_FIRST_MS).toBe(1_000);
    expect(PROBE_MAX_MS).toBe(30_000);
    expect(keeper.down).toBe(true);
    // Steps meanwhile make no call.
    await keeper.thread(digest('a'), keeper.budget());
    expect(calls).toHaveLength(8);

    mode.failing = false;
    await vi.advanceTimersByTimeAsync(30_000);
    await until(() => info.length > 0, 'the outage ends');
    expect(keeper.down).toBe(false);
    expect(info).toEqual(['ai-compaction: the store answers again after 121.0 s; nothing was stored meanwhile']);
    expect(calls).toHaveLength(9);
    await keeper.thread(digest('a'), keeper.budget());
    expect(calls).toHaveLength(10);
  });

  it('should not call a store whose client says it is not connected, and probe it once it says it is', async () => {
    const { store, calls, mode } = controlled();
    const info: string[] = [];
    const keeper = new Keeper(store, { warn: () => {}, info: (line) => info.push(line) });
    mode.connected = false;
    await keeper.thread(digest('a'), keeper.budget());
    await vi.advanceTimersByTimeAsync(1_000 + 2_000 + 4_000);
    expect(calls).toHaveLength(0);
    mode.connected = true;
    await vi.advanceTimersByTimeAsync(8_000);
    await until(() => info.length > 0, 'the outage ends');
    expect(calls.map((call) => call.key)).toEqual(['probe']);
  });

  it('should write what was stored in memory during the outage to the store once it is back', async () => {
    const { store, inner, mode } = controlled();
    const info: string[] = [];
    const keeper = new Keeper(store, { warn: () => {}, info: (line) => info.push(line) });
    await keeper.saveCheckpoint(digest('t'), checkpoint('a', 3), keeper.budget());
    mode.connected = false;
    expect(await keeper.saveCheckpoint(digest('t'), checkpoint('b', 6), keeper.budget())).toBe(true);
    expect(await inner.get(`cp:${digest('b')}`)).toBeUndefined();
    // Read back from memory meanwhile.
    expect((await keeper.thread(digest('t'), keeper.budget())).checkpoints.map((ref) => ref.length)).toEqual([6]);
    mode.connected = true;
    await vi.advanceTimersByTimeAsync(1_000);
    await until(() => info.length > 0, 'the outage ends');
    expect(info).toEqual(['ai-compaction: the store answers again after 1.0 s; what one conversation stored meanwhile was written to it']);
    expect(JSON.parse((await inner.get(`cp:${digest('b')}`))!)).toEqual(checkpoint('b', 6));
    // Merged with what the store had: both checkpoints, the newer first.
    expect(JSON.parse((await inner.get(`thread:${digest('t')}`))!).checkpoints.map((ref: { length: number }) => ref.length)).toEqual([6, 3]);
  });
});

describe('the Keeper', () => {
  it('should not return a cached checkpoint for an entry that gives it another length', async () => {
    const warnings: string[] = [];
    const keeper = new Keeper(memoryStore(), { warn: (line) => warnings.push(line) });
    const budget = keeper.budget();
    expect(await keeper.saveCheckpoint(digest('c'), checkpoint('a'), budget)).toBe(true);
    expect(await keeper.checkpoint(digest('a'), 4, budget)).toEqual(checkpoint('a'));
    expect(await keeper.checkpoint(digest('a'), 3, budget)).toBeUndefined();
    expect(warnings).toEqual([`ai-compaction: ignored a checkpoint under cp:${digest('a')} whose length does not match its entry`]);
  });

  it('should count a wait behind its own earlier write of a thread against the step, as a store call', async () => {
    const { store, mode } = controlled();
    const keeper = new Keeper(store, { warn: () => {} });
    const count = (length: number) => ({ length, digest: digest('d'), checkpoint: null, frame: digest('e'), input: length * 100, output: 10 });
    mode.hung = true;
    const start = Date.now();
    const first = watched(keeper.saveCount(digest('t'), count(1), new Set(), keeper.budget()));
    await vi.advanceTimersByTimeAsync(3_000);
    const second = watched(keeper.saveCount(digest('t'), count(3), new Set(), keeper.budget()));
    await vi.advanceTimersByTimeAsync(2_000);
    await until(() => first.done && second.done, 'both writes settle');
    expect([first.at! - start, second.at! - start]).toEqual([5_000, 5_000]);
    // Both went to memory, in order: the later count of the same prompt replaced the earlier.
    expect((await keeper.thread(digest('t'), keeper.budget())).counts.map((entry) => entry.input)).toEqual([300]);
  });
});
