import { type Clock, realClock } from '../clock';
import { CheckpointRecords } from './checkpoints';
import { type Count, type Hold, type Lease, type ModelSizing, type PaceRecord, type StoredCheckpoint, type Thread, checkpointKey, parseJson, sizingKey, sizingSchema } from './format';
import type { ThreadPatch } from './merge';
import { type GuardOptions, type StoreBudget, StoreGuard } from './guard';
import { Leases } from './lease';
import { oldestFirst } from './recent';
import { ThreadRecords } from './threads';
import type { CompactionStore } from './types';
import { VERIFIED_WRITES } from '../tunables';

export { PROBE_FIRST_MS, PROBE_MAX_MS, STORE_TIMEOUT_MS } from '../tunables';
export { StoreBudget } from './guard';

type CheckpointRef = Thread['checkpoints'][number];

/** A checkpoint's entry as a patch that marks it used now (its `at` is set as it is written). */
function usedNow(used: CheckpointRef | undefined): Pick<ThreadPatch, 'checkpoints'> {
  if (used === undefined) return {};
  const { at: _at, ...entry } = used;
  return { checkpoints: [entry] };
}

/** How the Keeper reports and how long it waits (the defaults outside tests). */
export interface KeeperOptions extends Omit<GuardOptions, 'writeBack' | 'clock'> {
  /** Where the leases' times and a step's store budget are read (clock.ts); a store call's own timer runs on real time. */
  clock?: Clock;
}

/**
 * Reads and writes what the middleware keeps in a store. A store that fails or returns garbage
 * degrades to "nothing stored" with a warning: never a wrong checkpoint, never a failed step.
 *
 * Each concern is a module of its own: the store's calls, their time budget and the outage rule
 * (`guard.ts`), the thread records and their queued, verified writes (`threads.ts`), the
 * checkpoints and their cache (`checkpoints.ts`), the leases (`lease.ts`). The Keeper wires them
 * for one instance and is what the rest of the middleware calls.
 */
export class Keeper {
  /** This instance, in the leases it writes. */
  readonly owner: string;
  private readonly guard: StoreGuard;
  private readonly threads: ThreadRecords;
  private readonly checkpoints: CheckpointRecords;
  private readonly leases: Leases;
  private readonly warn: (message: string) => void;
  /** Where the leases' times are read: what a merge of threads outside the Keeper reads too. */
  readonly clock: Clock;

  constructor(store: CompactionStore, options: KeeperOptions) {
    const clock = (this.clock = options.clock ?? realClock);
    this.warn = options.warn;
    this.guard = new StoreGuard(store, { ...options, clock, writeBack: (memory, keys) => this.threads.writeBack(memory, keys) });
    this.threads = new ThreadRecords(this.guard, clock, this.warn);
    this.checkpoints = new CheckpointRecords(this.guard, this.warn);
    this.leases = new Leases(this.guard, this.threads, this.checkpoints, clock);
    this.owner = this.leases.owner;
  }

  /** What this instance last wrote or read, newest last: the content of `state()`. */
  get recentThreads(): Map<string, Thread> {
    return oldestFirst(this.threads.recent);
  }

  get recentCheckpoints(): Map<string, StoredCheckpoint> {
    return oldestFirst(this.checkpoints.recent);
  }

  /** A new step's budget: the most it may wait for the store, over all its calls. */
  budget(): StoreBudget {
    return this.guard.budget();
  }

  /** Whether the store is down now (calls go to memory). */
  get down(): boolean {
    return this.guard.down;
  }

  thread(digest: string, budget: StoreBudget): Promise<Thread> {
    return this.threads.read(digest, budget);
  }

  checkpoint(digest: string, length: number, budget: StoreBudget): Promise<StoredCheckpoint | undefined> {
    return this.checkpoints.read(digest, length, budget);
  }

  /** What a model's counts in a scope taught (docs: sizing), under the digest of its `sizingName`; `undefined` when none or malformed. */
  async sizing(digest: string, model: string, scope: string, budget: StoreBudget): Promise<ModelSizing | undefined> {
    const raw = await this.guard.read(sizingKey(digest), budget);
    if (raw === undefined) return undefined;
    const parsed = parseJson(raw, sizingSchema);
    if (parsed === undefined || parsed.model !== model || parsed.scope !== scope) {
      this.warn(`ai-compaction: ignored a malformed sizing record under ${sizingKey(digest)}`);
      return undefined;
    }
    return parsed;
  }

  /** Writes a model's sizing whole (merged by the caller with what it last read). */
  saveSizing(digest: string, sizing: ModelSizing, budget: StoreBudget): Promise<boolean> {
    return this.guard.write(sizingKey(digest), JSON.stringify(sizing), budget);
  }

  /** Stores a checkpoint and adds it to its thread (which ends the lease on it). Returns false (after a warning) when the store failed. */
  async saveCheckpoint(threadDigest: string, checkpoint: StoredCheckpoint, budget: StoreBudget): Promise<boolean> {
    if (!(await this.checkpoints.write(checkpoint, budget))) return false;
    return this.threads.update(threadDigest, { checkpoints: [{ length: checkpoint.length, digest: checkpoint.digest }] }, budget, { attempts: VERIFIED_WRITES });
  }

  /**
   * Stores a checkpoint prepared ahead (docs/design.md, "Preparing ahead") and lists it among its
   * thread's prepared ones, not among the checkpoints steps find: it is held back until a step at
   * the ceiling promotes it.
   */
  async savePrepared(threadDigest: string, checkpoint: StoredCheckpoint, budget: StoreBudget, catchUp = false, whole = false): Promise<boolean> {
    if (!(await this.checkpoints.write(checkpoint, budget))) return false;
    return this.markPrepared(threadDigest, checkpoint, budget, catchUp, whole);
  }

  /** Lists a stored checkpoint among its thread's prepared ones; `catchUp`: the first step after it sends it (not held back). */
  markPrepared(threadDigest: string, ref: { length: number; digest: string }, budget: StoreBudget, catchUp = false, whole = false): Promise<boolean> {
    const entry = { length: ref.length, digest: ref.digest, ...(catchUp ? { catchUp: true as const } : {}), ...(whole ? { whole: true as const } : {}) };
    return this.threads.update(threadDigest, { prepared: [entry] }, budget, { attempts: VERIFIED_WRITES });
  }

  /**
   * Lists a prepared checkpoint, sent for the first time, among its thread's checkpoints: later
   * steps find it like any other. `sent` names the conversation of the step that sent it.
   */
  async promote(threadDigest: string, checkpoint: StoredCheckpoint, sent: { length: number; digest: string } | undefined, budget: StoreBudget): Promise<boolean> {
    const ref = { length: checkpoint.length, digest: checkpoint.digest, ...(sent === undefined ? {} : { sent }) };
    return this.threads.update(threadDigest, { checkpoints: [ref] }, budget, { attempts: VERIFIED_WRITES });
  }

  /**
   * Adds a count to its thread; counts of shorter prompts of the same conversation (`superseded`)
   * go. `used`: the entry of the checkpoint the step went out with, marked as used now, so that a
   * full thread keeps it (docs/stores.md, "Keys and records").
   */
  async saveCount(threadDigest: string, count: Count, superseded: ReadonlySet<string>, budget: StoreBudget, pace?: PaceRecord, used?: CheckpointRef): Promise<boolean> {
    // A count lost to a concurrent write only means the next step estimates more: not read back.
    const patch = { counts: [count], ...(pace === undefined ? {} : { pace }), ...usedNow(used) };
    return this.threads.update(threadDigest, patch, budget, { keepCount: (kept) => !superseded.has(kept.digest) });
  }

  /**
   * Writes what the policy measured of a thread's conversation (its pace, its summaries' times:
   * docs/design.md, "The policy"), for every instance; `used` as for `saveCount`.
   */
  async saveMeasures(threadDigest: string, patch: Partial<Pick<ThreadPatch, 'pace' | 'summaries'>>, budget: StoreBudget, used?: CheckpointRef): Promise<boolean> {
    return this.threads.update(threadDigest, { ...patch, ...usedNow(used) }, budget);
  }

  /** Adds entries found under another index (a conversation's first message) to this one. */
  async adopt(threadDigest: string, patch: ThreadPatch, budget: StoreBudget): Promise<boolean> {
    return this.threads.update(threadDigest, patch, budget, { attempts: VERIFIED_WRITES });
  }

  async saveHold(threadDigest: string, hold: Hold, budget: StoreBudget): Promise<boolean> {
    return this.threads.update(threadDigest, { holds: [hold] }, budget, { attempts: VERIFIED_WRITES });
  }

  /** Takes the lease on writing the checkpoint of a prefix (`lease.ts`): another instance's lease when it holds one, which the caller waits for. */
  lease(threadDigest: string, ref: { length: number; digest: string }, ms: number, budget: StoreBudget): Promise<Lease | undefined> {
    return this.leases.take(threadDigest, ref, ms, budget);
  }

  /** Ends this instance's lease on a prefix whose checkpoint it did not write (the compaction failed). */
  release(threadDigest: string, ref: { length: number; digest: string }, budget: StoreBudget): Promise<void> {
    return this.leases.release(threadDigest, ref, budget);
  }

  /** Waits for the checkpoint another instance's lease (`held`) is writing, until `deadline` (`lease.ts`). */
  awaitLeased(threadDigest: string, held: Lease, deadline: number, budget: StoreBudget): Promise<StoredCheckpoint | undefined> {
    return this.leases.awaitLeased(threadDigest, held, deadline, budget);
  }

  /**
   * Writes what `state()` held into the store, merged with what the store already has (which is
   * newer: its entries come first). `state()` holds it all from the start.
   */
  async restore(threads: Record<string, Thread>, checkpoints: Record<string, StoredCheckpoint>): Promise<void> {
    for (const checkpoint of Object.values(checkpoints)) this.checkpoints.cache(checkpoint);
    for (const [digest, thread] of Object.entries(threads)) this.threads.recent.set(digest, thread);
    const budget = this.budget();
    await Promise.all([
      ...Object.values(checkpoints).map((checkpoint) => this.guard.write(checkpointKey(checkpoint.digest), JSON.stringify(checkpoint), budget)),
      ...Object.entries(threads).map(([digest, thread]) => this.threads.update(digest, thread, budget, { attempts: VERIFIED_WRITES, older: true })),
    ]);
  }
}
