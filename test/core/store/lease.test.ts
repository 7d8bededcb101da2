import { describe, expect, it } from 'vitest';
import { type CompactionStore, memoryStore } from '../../../src';
import type { Clock } from '../../../src/clock';
import { CheckpointRecords } from '../../../src/store/checkpoints';
import type { StoredCheckpoint } from '../../../src/store/format';
import { StoreGuard } from '../../../src/store/guard';
import { Leases } from '../../../src/store/lease';
import { ThreadRecords } from '../../../src/store/threads';

// The leases (docs/stores.md, "One summary for a prefix: the lease") between two instances sharing
// one store, on a simulated clock: a sleep moves it, nothing waits.

const digest = (letter: string) => letter.repeat(64);
const ref = { length: 4, digest: digest('c') };
const thread = digest('t');
const checkpoint: StoredCheckpoint = { v: 2, ...ref, summary: 's', record: '', reason: 'auto', tokensBefore: 10, tokensAfter: 5, createdAt: 0 };

function simulatedClock(start: number) {
  const slept: number[] = [];
  const clock: Clock & { at: number } = {
    at: start,
    now: () => clock.at,
    sleep: async (ms) => {
      slept.push(ms);
      clock.at += ms;
    },
  };
  return { clock, slept };
}

function instance(store: CompactionStore, clock: Clock) {
  const guard = new StoreGuard(store, { warn: () => {} });
  const threads = new ThreadRecords(guard, clock, () => {});
  const checkpoints = new CheckpointRecords(guard, () => {});
  return { guard, threads, checkpoints, leases: new Leases(guard, threads, checkpoints, clock) };
}

/** The memory store without `setIfAbsent`, as a host's own store may be. */
function withoutSetIfAbsent(): CompactionStore {
  const { setIfAbsent: _setIfAbsent, ...rest } = memoryStore();
  return rest;
}

/** Two instances sharing one store and one simulated clock. */
function twoInstances(store: CompactionStore = memoryStore()) {
  const { clock, slept } = simulatedClock(1_000_000);
  return { clock, slept, a: instance(store, clock), b: instance(store, clock) };
}

type Instance = ReturnType<typeof instance>;

/** `a` takes the lease on `prefix`; `b`, trying to, is handed it. */
async function heldBy(a: Instance, b: Instance, prefix: { length: number; digest: string }) {
  await a.leases.take(thread, prefix, 10_000, a.guard.budget());
  return (await b.leases.take(thread, prefix, 10_000, b.guard.budget()))!;
}

describe('Leases', () => {
  it("should take a free lease, and hand another instance's back to an instance that tries to take it", async () => {
    const { clock, a, b } = twoInstances();
    expect(a.leases.owner).toMatch(/^[0-9a-f]{16}$/);
    expect(await a.leases.take(thread, ref, 10_000, a.guard.budget())).toBeUndefined();
    expect(await b.leases.take(thread, ref, 10_000, b.guard.budget())).toEqual({ ...ref, owner: a.leases.owner, until: 1_010_000 });
    // Past its time, it holds no more.
    clock.at = 1_010_000;
    expect(await b.leases.take(thread, ref, 10_000, b.guard.budget())).toBeUndefined();
    expect((await a.threads.read(thread, a.guard.budget())).leases).toEqual([{ ...ref, owner: b.leases.owner, until: 1_020_000 }]);
  });

  it('should end a released lease', async () => {
    const { a, b } = twoInstances();
    await a.leases.take(thread, ref, 10_000, a.guard.budget());
    await a.leases.release(thread, ref, a.guard.budget());
    expect((await b.threads.read(thread, b.guard.budget())).leases).toBeUndefined();
    expect(await b.leases.take(thread, ref, 10_000, b.guard.budget())).toBeUndefined();
  });

  it('should wait for the leased checkpoint, reading the thread 200 ms, then 400 ms... up to 1 s apart, until the deadline', async () => {
    const { slept, a, b } = twoInstances();
    const held = await heldBy(a, b, ref);
    expect(await b.leases.awaitLeased(thread, held, 1_003_000, b.guard.budget())).toBeUndefined();
    expect(slept).toEqual([200, 400, 800, 1_000, 600]);
  });

  it('should return the checkpoint once its thread lists it, and nothing once its lease is released', async () => {
    const { slept, a, b } = twoInstances();
    const held = await heldBy(a, b, ref);
    await a.checkpoints.write(checkpoint, a.guard.budget());
    await a.threads.update(thread, { checkpoints: [ref] }, a.guard.budget());
    expect(await b.leases.awaitLeased(thread, held, 1_003_000, b.guard.budget())).toEqual(checkpoint);
    expect(slept).toEqual([200]);

    const other = { length: 6, digest: digest('d') };
    const second = await heldBy(a, b, other);
    await a.leases.release(thread, other, a.guard.budget());
    expect(await b.leases.awaitLeased(thread, second, 1_003_000, b.guard.budget())).toBeUndefined();
    expect(slept).toEqual([200, 200]);
  });

  it('should take no lease while the store is down', async () => {
    const { clock } = simulatedClock(1_000_000);
    const a = instance({ ...memoryStore(), connected: () => false }, clock);
    expect(await a.threads.read(thread, a.guard.budget())).toEqual({ v: 2, checkpoints: [], counts: [], holds: [] });
    expect(a.guard.down).toBe(true);
    expect(await a.leases.take(thread, ref, 10_000, a.guard.budget())).toBeUndefined();
    expect((await a.threads.read(thread, a.guard.budget())).leases).toBeUndefined();
  });
});

describe.each([
  ['with setIfAbsent (atomic)', () => memoryStore()],
  ['without setIfAbsent (a read, a write and a read back)', withoutSetIfAbsent],
])('the lease under its own key, %s', (_name, makeStore) => {
  it('should give the lease to one of two instances that ask at the same moment, and hand it to the other', async () => {
    const { a, b } = twoInstances(makeStore());
    const [fromA, fromB] = await Promise.all([a.leases.take(thread, ref, 10_000, a.guard.budget()), b.leases.take(thread, ref, 10_000, b.guard.budget())]);
    const winner = fromA === undefined ? a : b;
    expect([fromA, fromB].filter((lease) => lease === undefined)).toHaveLength(1);
    expect(fromA ?? fromB).toEqual({ ...ref, owner: winner.leases.owner, until: 1_010_000 });
    expect((await a.threads.read(thread, a.guard.budget())).leases).toEqual([{ ...ref, owner: winner.leases.owner, until: 1_010_000 }]);
  });

  it("should stop a wait once the lease's key is gone, though the thread still lists it", async () => {
    const store = makeStore();
    const { slept, a, b } = twoInstances(store);
    const held = await heldBy(a, b, ref);
    await store.delete(`lease:${ref.digest}`);
    expect((await b.threads.read(thread, b.guard.budget())).leases).toHaveLength(1);
    expect(await b.leases.awaitLeased(thread, held, 1_003_000, b.guard.budget())).toBeUndefined();
    expect(slept).toEqual([200]);
  });

  it('should free the key when the lease is released, for another instance to take', async () => {
    const store = makeStore();
    const { a, b } = twoInstances(store);
    await a.leases.take(thread, ref, 10_000, a.guard.budget());
    expect(await store.get(`lease:${ref.digest}`)).toBe(JSON.stringify({ ...ref, owner: a.leases.owner, until: 1_010_000 }));
    await a.leases.release(thread, ref, a.guard.budget());
    expect(await store.get(`lease:${ref.digest}`)).toBeUndefined();
    expect(await b.leases.take(thread, ref, 10_000, b.guard.budget())).toBeUndefined();
  });
});
