import { LRUCache } from 'lru-cache';
import { type StoredCheckpoint, checkpointKey, checkpointSchema, parseJson } from './format';
import type { StoreBudget, StoreGuard } from './guard';
import { recentCache } from './recent';
import { PARSED_LIMIT } from '../tunables';

/**
 * The checkpoints (`cp:<digest>`): read, checked against the entry they were found through, and
 * written. A checkpoint is immutable per digest, so parsed ones are kept in a small local cache.
 */
export class CheckpointRecords {
  /** Kept in the order cached: a read from the cache leaves the order as it is. */
  private readonly parsed = new LRUCache<string, StoredCheckpoint>({ max: PARSED_LIMIT });
  /** What this instance last wrote or read, newest last: the checkpoints of `state()`. */
  readonly recent = recentCache<StoredCheckpoint>();

  constructor(
    private readonly guard: StoreGuard,
    private readonly warn: (message: string) => void,
  ) {}

  /** The checkpoint of a thread's entry (`digest`, `length`); `undefined` when none, or when it does not match its entry (with a warning). */
  async read(digest: string, length: number, budget: StoreBudget): Promise<StoredCheckpoint | undefined> {
    const cached = this.parsed.peek(digest);
    // A checkpoint is found through a thread's entry: both must name the same prefix.
    if (cached !== undefined && cached.length !== length) {
      this.warn(`ai-compaction: ignored a checkpoint under ${checkpointKey(digest)} whose length does not match its entry`);
      return undefined;
    }
    if (cached !== undefined) {
      // Used now: `state()` must hold it along with its thread.
      this.recent.set(digest, cached);
      return cached;
    }
    const raw = await this.guard.read(checkpointKey(digest), budget);
    if (raw === undefined) return undefined;
    const parsed = parseJson(raw, checkpointSchema);
    if (parsed === undefined || parsed.digest !== digest || parsed.length !== length) {
      this.warn(`ai-compaction: ignored a malformed checkpoint under ${checkpointKey(digest)}`);
      return undefined;
    }
    this.cache(parsed);
    return parsed;
  }

  /** Caches a checkpoint and writes it under its digest. Returns false (after a warning) when the store failed. */
  write(checkpoint: StoredCheckpoint, budget: StoreBudget): Promise<boolean> {
    this.cache(checkpoint);
    return this.guard.write(checkpointKey(checkpoint.digest), JSON.stringify(checkpoint), budget);
  }

  /** Keeps a checkpoint parsed, and among those `state()` holds. */
  cache(checkpoint: StoredCheckpoint): void {
    this.parsed.set(checkpoint.digest, checkpoint);
    this.recent.set(checkpoint.digest, checkpoint);
  }
}
