import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CompactionStore, memoryStore } from '../../../src';
import { StoreBudget, StoreGuard } from '../../../src/store/guard';
import type { MemoryStore } from '../../../src/store/memory';

// The store's calls and the outage rule (docs/stores.md), on their own; through the middleware's
// Keeper in keeper.test.ts.

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('StoreBudget', () => {
  it('should count calls made side by side once', () => {
    const budget = new StoreBudget(5_000);
    budget.begin();
    vi.advanceTimersByTime(1_000);
    budget.begin();
    vi.advanceTimersByTime(500);
    budget.end();
    expect(budget.remaining()).toBe(3_500);
    vi.advanceTimersByTime(500);
    budget.end();
    // Nothing pending: the time between calls is not counted.
    vi.advanceTimersByTime(10_000);
    expect(budget.remaining()).toBe(3_000);
  });
});

describe('StoreGuard', () => {
  it("should count a step's budget on the clock it is given, not on the real time spent computing while a call is pending", async () => {
    // the store answers once the test says so; meanwhile 6 s of real time pass (a slow machine, a long computation)
    const inner = memoryStore();
    let answer: (() => void) | undefined;
    const store: CompactionStore = { ...inner, get: (key) => new Promise((resolve) => (answer = () => resolve(inner.get(key)))) };
    const warnings: string[] = [];
    const still = { now: () => 1_000 };
    const guard = new StoreGuard(store, { warn: (line) => warnings.push(line), clock: still });
    const budget = guard.budget();
    const first = guard.read('thread:x', budget);
    await Promise.resolve();
    vi.setSystemTime(Date.now() + 6_000);
    answer!();
    expect(await first).toBeUndefined();
    expect(budget.remaining()).toBe(5_000);
    await inner.set('thread:x', 'kept');
    const second = guard.read('thread:x', budget);
    await Promise.resolve();
    answer!();
    expect(await second).toBe('kept');
    expect(guard.down).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('should keep what is written while the store is down in memory, and hand it over in the order first written once a probe answers', async () => {
    const inner = memoryStore();
    const state = { connected: false };
    const store: CompactionStore = { ...inner, connected: () => state.connected };
    const warnings: string[] = [];
    const info: string[] = [];
    const handed: { keys: string[]; values: (string | undefined)[] }[] = [];
    const writeBack = async (memory: MemoryStore, keys: string[]) => {
      handed.push({ keys, values: await Promise.all(keys.map((key) => memory.get(key))) });
      return 2;
    };
    const guard = new StoreGuard(store, { warn: (line) => warnings.push(line), info: (line) => info.push(line), writeBack });
    expect(await guard.write('thread:x', 'one', guard.budget())).toBe(true);
    expect(guard.down).toBe(true);
    await guard.write('cp:y', 'two', guard.budget());
    await guard.write('thread:x', 'three', guard.budget());
    expect(await guard.read('thread:x', guard.budget())).toBe('three');
    expect(await inner.get('thread:x')).toBeUndefined();
    state.connected = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(guard.down).toBe(false);
    expect(handed).toEqual([{ keys: ['thread:x', 'cp:y'], values: ['three', 'two'] }]);
    expect(warnings).toEqual([
      'ai-compaction: the store is unavailable (its client is not connected); steps go on without it, with checkpoints and counts in memory, until it answers again',
    ]);
    expect(info).toEqual(['ai-compaction: the store answers again after 1.0 s; what 2 conversations stored meanwhile was written to it']);
    // Memory is given up: a read goes to the store again.
    expect(await guard.read('thread:x', guard.budget())).toBeUndefined();
  });

  it('should warn about a store that returns something other than a string, and go on without it', async () => {
    const warnings: string[] = [];
    const store = { ...memoryStore(), get: async () => 42 } as unknown as CompactionStore;
    const guard = new StoreGuard(store, { warn: (line) => warnings.push(line) });
    expect(await guard.read('cp:a', guard.budget())).toBeUndefined();
    expect(guard.down).toBe(false);
    expect(warnings).toEqual(['ai-compaction: the store returned a number for cp:a; ignored']);
  });
});
