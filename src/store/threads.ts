import type { Clock } from '../clock';
import { type Count, type Thread, checkpointKey, emptyThread, parseJson, threadKey, threadSchema } from './format';
import { type ThreadPatch, mergeThreads, stamped, threadHas } from './merge';
import type { StoreBudget, StoreGuard } from './guard';
import type { MemoryStore } from './memory';
import { recentCache } from './recent';
import { VERIFIED_WRITES } from '../tunables';

// Writes of a checkpoint or hold to a thread, each read back (tunables.ts), exported here for the tests.
export { VERIFIED_WRITES } from '../tunables';

/** How a patch is written to a thread. */
export interface ThreadWrite {
  /** Writes at most, each read back to see the patch was not lost to a concurrent write (default 1: not read back). */
  attempts?: number;
  /** Which older counts stay (the newest always does). */
  keepCount?: (count: Count) => boolean;
  /** The patch is older than what the store has (a restored state): the store's entries win. */
  older?: boolean;
}

/**
 * The thread records (docs/stores.md, "Keys and records"): read, and written by merging a patch
 * into what the store has. The store has no compare-and-set, so a write of another instance in
 * between can drop a patch: a verified write reads the thread back and merges again until it holds
 * it. This instance's own writes of a thread are queued, one at a time.
 */
export class ThreadRecords {
  /** What this instance last wrote or read, newest last: the threads of `state()`. */
  readonly recent = recentCache<Thread>();
  /** The last pending write of each thread: this instance's writes of one thread run one at a time. */
  private readonly writing = new Map<string, Promise<unknown>>();
  /** Threads being written back after an outage: read merged with the store's until they are. */
  private readonly returning = new Map<string, Thread>();

  constructor(
    private readonly guard: StoreGuard,
    /** Where the merges read the time (the leases' `until`). */
    private readonly clock: Clock,
    private readonly warn: (message: string) => void,
  ) {}

  /** The thread under `digest`: empty when none, or when what is stored is not a thread record (with a warning). */
  async read(digest: string, budget: StoreBudget): Promise<Thread> {
    const raw = await this.guard.read(threadKey(digest), budget);
    let parsed = raw === undefined ? undefined : parseJson(raw, threadSchema);
    if (raw !== undefined && parsed === undefined) this.warn(`ai-compaction: ignored a malformed thread record under ${threadKey(digest)}`);
    const returning = this.returning.get(digest);
    if (returning !== undefined) parsed = mergeThreads(parsed ?? emptyThread(), returning, this.clock.now());
    if (parsed === undefined) return emptyThread();
    this.recent.set(digest, parsed);
    return parsed;
  }

  /**
   * Merges `patch` into a thread: read, merge, write. The store has no compare-and-set, so another
   * instance writing the same thread in between can drop the patch; up to `attempts` times the
   * thread is read back and the patch merged again until it holds it. This instance's own writes
   * of a thread are queued, so they never drop each other; the wait in the queue counts against
   * the step's budget like a store call.
   */
  update(digest: string, patch: ThreadPatch, budget: StoreBudget, how: ThreadWrite = {}): Promise<boolean> {
    const previous = this.writing.get(digest);
    const run = (previous === undefined ? Promise.resolve() : this.guard.after(previous, budget)).then(() => this.mergeInto(digest, patch, budget, how));
    const done = run.then(
      () => undefined,
      () => undefined,
    );
    this.writing.set(digest, done);
    void done.then(() => {
      if (this.writing.get(digest) === done) this.writing.delete(digest);
    });
    return run;
  }

  /**
   * After an outage: the threads written in memory meanwhile are merged into the store's (their
   * entries are the newer), each after the checkpoints it still lists. A checkpoint no thread
   * lists any more, and counts of models' characters a token (written again by the next count),
   * are not written back. Returns how many threads were.
   */
  async writeBack(memory: MemoryStore, keys: readonly string[]): Promise<number> {
    const threads: [string, Thread][] = [];
    for (const key of keys) {
      if (!key.startsWith('thread:')) continue;
      const raw = await memory.get(key);
      const thread = raw === undefined ? undefined : parseJson(raw, threadSchema);
      if (thread !== undefined) threads.push([key.slice('thread:'.length), thread]);
    }
    for (const [digest, thread] of threads) this.returning.set(digest, thread);
    await Promise.all(
      threads.map(async ([digest, thread]) => {
        const budget = this.guard.budget();
        try {
          for (const ref of [...thread.checkpoints, ...(thread.prepared ?? [])]) {
            const key = checkpointKey(ref.digest);
            const value = await memory.get(key);
            if (value !== undefined && (await this.guard.read(key, budget)) === undefined) await this.guard.write(key, value, budget);
          }
          await this.update(digest, thread, budget, { attempts: VERIFIED_WRITES });
        } finally {
          if (this.returning.get(digest) === thread) this.returning.delete(digest);
        }
      }),
    );
    return threads.length;
  }

  private async mergeInto(digest: string, written: ThreadPatch, budget: StoreBudget, { attempts = 1, keepCount, older = false }: ThreadWrite): Promise<boolean> {
    // What this instance writes now is used now; a restored state keeps the times it had.
    const patch = older ? written : stamped(written, this.clock.now());
    let current = await this.read(digest, budget);
    for (let attempt = 1; ; attempt++) {
      // Entries of the same identity: the newer wins, and the newest come first.
      const merged = older ? mergeThreads({ ...emptyThread(), ...patch }, current, this.clock.now()) : mergeThreads(current, patch, this.clock.now());
      if (keepCount !== undefined) merged.counts = merged.counts.filter((count, index) => index === 0 || keepCount(count));
      this.recent.set(digest, merged);
      if (!(await this.guard.write(threadKey(digest), JSON.stringify(merged), budget))) return false;
      if (attempt >= attempts) return true;
      current = await this.read(digest, budget);
      if (threadHas(current, patch)) return true;
    }
  }
}
