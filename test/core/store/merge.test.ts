import { describe, expect, it } from 'vitest';
import { emptyThread } from '../../../src/store/format';
import { mergeThreads, stamped } from '../../../src/store/merge';
import { THREAD_LIMIT } from '../../../src/tunables';

// docs/stores.md, "Keys and records": a full thread drops the least recently used entries, never
// an entry by its place in the list.

const digest = (index: number) => index.toString(16).padStart(64, '0');

describe('a full thread', () => {
  it('should keep an entry used since, whatever its place, and drop the least recently used', () => {
    // Full: entry k written at time k, newest first; the oldest-placed, entry 0, used again at 1,000.
    const checkpoints = Array.from({ length: THREAD_LIMIT }, (_, index) => ({ length: 4, digest: digest(THREAD_LIMIT - 1 - index), at: THREAD_LIMIT - 1 - index }));
    checkpoints[checkpoints.length - 1] = { ...checkpoints[checkpoints.length - 1]!, at: 1_000 };
    const current = { ...emptyThread(), checkpoints };
    const merged = mergeThreads(current, stamped({ checkpoints: [{ length: 4, digest: digest(5_000) }] }, 2_000), 0);
    expect(merged.checkpoints).toHaveLength(THREAD_LIMIT);
    const kept = new Set(merged.checkpoints.map((ref) => ref.digest));
    expect(kept.has(digest(5_000))).toBe(true);
    expect(kept.has(digest(0))).toBe(true);
    // Out: entry 1, the least recently used.
    expect(kept.has(digest(1))).toBe(false);
  });

  it('should mark what a write adds as used at its time, and leave a given time as it is', () => {
    const patch = stamped({ checkpoints: [{ length: 4, digest: digest(1) }, { length: 5, digest: digest(2), at: 7 }] }, 100);
    expect(patch.checkpoints!.map((ref) => ref.at)).toEqual([100, 7]);
  });
});
