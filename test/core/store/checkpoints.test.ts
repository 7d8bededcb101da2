import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../../src';
import { CheckpointRecords } from '../../../src/store/checkpoints';
import type { StoredCheckpoint } from '../../../src/store/format';
import { StoreGuard } from '../../../src/store/guard';
import { oldestFirst } from '../../../src/store/recent';
import type { CompactionStore } from '../../../src/store/types';

const digest = (n: number) => n.toString(16).padStart(64, '0');
const checkpoint = (n: number, length = 4): StoredCheckpoint => ({
  v: 2, digest: digest(n), length, summary: `s${n}`, record: '', reason: 'auto', tokensBefore: 10, tokensAfter: 5, createdAt: 0,
});

function counted() {
  const inner = memoryStore();
  const gets: string[] = [];
  const store: CompactionStore = { ...inner, get: (key) => (gets.push(key), inner.get(key)) };
  return { store, inner, gets };
}

describe('CheckpointRecords', () => {
  it('should read a checkpoint it wrote from its cache, without a store call', async () => {
    const { store, gets } = counted();
    const guard = new StoreGuard(store, { warn: () => {} });
    const records = new CheckpointRecords(guard, () => {});
    expect(await records.write(checkpoint(1), guard.budget())).toBe(true);
    expect(await records.read(digest(1), 4, guard.budget())).toEqual(checkpoint(1));
    expect(gets).toEqual([]);
  });

  it('should keep 64 parsed checkpoints in the order cached: a read from the cache does not keep the oldest', async () => {
    const { store, gets } = counted();
    const guard = new StoreGuard(store, { warn: () => {} });
    const records = new CheckpointRecords(guard, () => {});
    for (let n = 1; n <= 64; n++) await records.write(checkpoint(n), guard.budget());
    expect(await records.read(digest(1), 4, guard.budget())).toEqual(checkpoint(1));
    expect(gets).toEqual([]);
    await records.write(checkpoint(65), guard.budget());
    expect(await records.read(digest(2), 4, guard.budget())).toEqual(checkpoint(2));
    expect(await records.read(digest(1), 4, guard.budget())).toEqual(checkpoint(1));
    expect(gets).toEqual([`cp:${digest(1)}`]);
  });

  it('should ignore a stored checkpoint whose digest or length is not its entry, with a warning', async () => {
    const { store, inner } = counted();
    const warnings: string[] = [];
    const guard = new StoreGuard(store, { warn: () => {} });
    const records = new CheckpointRecords(guard, (line) => warnings.push(line));
    await inner.set(`cp:${digest(1)}`, JSON.stringify(checkpoint(2)));
    await inner.set(`cp:${digest(3)}`, JSON.stringify(checkpoint(3, 5)));
    expect(await records.read(digest(1), 4, guard.budget())).toBeUndefined();
    expect(await records.read(digest(3), 4, guard.budget())).toBeUndefined();
    expect(warnings).toEqual([
      `ai-compaction: ignored a malformed checkpoint under cp:${digest(1)}`,
      `ai-compaction: ignored a malformed checkpoint under cp:${digest(3)}`,
    ]);
  });

  it('should hold the last 8 checkpoints written or read for state(), oldest first', async () => {
    const guard = new StoreGuard(memoryStore(), { warn: () => {} });
    const records = new CheckpointRecords(guard, () => {});
    for (let n = 1; n <= 9; n++) await records.write(checkpoint(n), guard.budget());
    await records.read(digest(3), 4, guard.budget());
    // Read from the cache, the third becomes the newest.
    expect([...oldestFirst(records.recent).keys()]).toEqual([2, 4, 5, 6, 7, 8, 9, 3].map(digest));
  });
});
