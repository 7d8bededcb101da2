import { describe, expect, it } from 'vitest';
import { type CompactionStore, memoryStore } from '../../../src';
import { realClock } from '../../../src/clock';
import { type Thread, emptyThread } from '../../../src/store/format';
import { StoreGuard } from '../../../src/store/guard';
import { ThreadRecords, VERIFIED_WRITES } from '../../../src/store/threads';

// The thread records (docs/stores.md, "Keys and records"): the store has no compare-and-set, so a
// write of another instance in between can drop a patch; a verified write reads the thread back.

const digest = (letter: string) => letter.repeat(64);
const ref = (letter: string, length: number) => ({ length, digest: digest(letter) });
/** Entries without the time a write marks them used at. */
const refs = (entries: { at?: number }[]) => entries.map(({ at: _at, ...entry }) => entry);
const key = `thread:${digest('t')}`;

/** A store on which another instance writes `rival` right after this instance's first write of the thread. */
function racing(rival: Thread) {
  const inner = memoryStore();
  const sets: string[] = [];
  const store: CompactionStore = {
    ...inner,
    set: async (setKey, value) => {
      sets.push(setKey);
      await inner.set(setKey, value);
      if (setKey === key && sets.length === 1) await inner.set(key, JSON.stringify(rival));
    },
  };
  return { store, inner, sets };
}

function records(store: CompactionStore) {
  const guard = new StoreGuard(store, { warn: () => {} });
  return { guard, threads: new ThreadRecords(guard, realClock, () => {}) };
}

const read = async (store: CompactionStore): Promise<Thread> => JSON.parse((await store.get(key))!);

describe('ThreadRecords', () => {
  it('should write a verified patch again when a concurrent write dropped it', async () => {
    const { store, inner, sets } = racing({ ...emptyThread(), checkpoints: [ref('b', 6)] });
    const { guard, threads } = records(store);
    expect(VERIFIED_WRITES).toBe(3);
    expect(await threads.update(digest('t'), { checkpoints: [ref('a', 4)] }, guard.budget(), { attempts: VERIFIED_WRITES })).toBe(true);
    expect(sets).toEqual([key, key]);
    // Merged into what the other instance wrote, the patch first.
    expect(refs((await read(inner)).checkpoints)).toEqual([ref('a', 4), ref('b', 6)]);
  });

  it('should not read back a patch written once (a count)', async () => {
    const { store, inner, sets } = racing({ ...emptyThread(), checkpoints: [ref('b', 6)] });
    const { guard, threads } = records(store);
    expect(await threads.update(digest('t'), { checkpoints: [ref('a', 4)] }, guard.budget())).toBe(true);
    expect(sets).toEqual([key]);
    expect(refs((await read(inner)).checkpoints)).toEqual([ref('b', 6)]);
  });

  it("should queue this instance's writes of one thread, so that none drops another", async () => {
    const store = memoryStore();
    const { guard, threads } = records(store);
    const written = await Promise.all([
      threads.update(digest('t'), { checkpoints: [ref('a', 4)] }, guard.budget()),
      threads.update(digest('t'), { checkpoints: [ref('b', 6)] }, guard.budget()),
      threads.update(digest('t'), { checkpoints: [ref('c', 8)] }, guard.budget()),
    ]);
    expect(written).toEqual([true, true, true]);
    expect(refs((await read(store)).checkpoints)).toEqual([ref('c', 8), ref('b', 6), ref('a', 4)]);
  });

  it('should write back a thread kept in memory after the checkpoints it lists, merged with the store\'s, and no checkpoint it does not list', async () => {
    const store = memoryStore();
    const { guard, threads } = records(store);
    await store.set(key, JSON.stringify({ ...emptyThread(), checkpoints: [ref('b', 3)] }));
    const memory = memoryStore();
    await memory.set(key, JSON.stringify({ ...emptyThread(), checkpoints: [ref('a', 6)] }));
    await memory.set(`cp:${digest('a')}`, 'listed');
    await memory.set(`cp:${digest('c')}`, 'not listed');
    expect(await threads.writeBack(memory, [`cp:${digest('a')}`, `cp:${digest('c')}`, key])).toBe(1);
    expect(await store.get(`cp:${digest('a')}`)).toBe('listed');
    expect(await store.get(`cp:${digest('c')}`)).toBeUndefined();
    expect(refs((await read(store)).checkpoints)).toEqual([ref('a', 6), ref('b', 3)]);
  });

  it('should hold the threads it last read or wrote for state()', async () => {
    const { guard, threads } = records(memoryStore());
    await threads.update(digest('t'), { checkpoints: [ref('a', 4)] }, guard.budget());
    await threads.read(digest('e'), guard.budget());
    // An empty thread, stored nowhere, is not held.
    expect([...threads.recent.keys()]).toEqual([digest('t')]);
    expect(refs(threads.recent.get(digest('t'))!.checkpoints)).toEqual([ref('a', 4)]);
  });
});
