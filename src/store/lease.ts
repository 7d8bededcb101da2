import type { Clock } from '../clock';
import type { Lease, StoredCheckpoint, Thread } from './format';
import type { CheckpointRecords } from './checkpoints';
import type { StoreBudget, StoreGuard } from './guard';
import type { ThreadRecords } from './threads';
import { LEASE_POLL_MS } from '../tunables';
import { randomHex } from '../prompt/hash';

/**
 * The leases in the thread records (docs/stores.md, "One summary for a prefix: the lease"): an
 * instance that writes the checkpoint of a prefix takes a lease on it first, and another instance
 * that finds it waits for that checkpoint instead of writing its own. Their times are read on
 * `clock`. While the store is down there are no leases.
 */
export class Leases {
  /** This instance, in the leases it writes. */
  readonly owner = randomHex(8);

  constructor(
    private readonly guard: StoreGuard,
    private readonly threads: ThreadRecords,
    private readonly checkpoints: CheckpointRecords,
    private readonly clock: Clock,
  ) {}

  /**
   * Takes the lease on writing the checkpoint of a prefix (`ref`) for `ms`, unless another
   * instance holds one: that lease is returned, and the caller waits for its checkpoint. Two
   * instances that take it at the same moment both see both leases once written; the one of the
   * smaller owner keeps it.
   */
  async take(threadDigest: string, ref: { length: number; digest: string }, ms: number, budget: StoreBudget): Promise<Lease | undefined> {
    if (this.guard.down) return undefined;
    const others = (thread: Thread) => otherLeases(thread, ref.digest, this.owner, this.clock.now());
    const held = others(await this.threads.read(threadDigest, budget))[0];
    if (held !== undefined || this.guard.down) return held;
    const mine: Lease = { ...ref, owner: this.owner, until: this.clock.now() + ms };
    if (!(await this.threads.update(threadDigest, { leases: [mine] }, budget)) || this.guard.down) return undefined;
    const after = await this.threads.read(threadDigest, budget);
    const rival = others(after).sort((a, b) => (a.owner < b.owner ? -1 : 1))[0];
    const kept = (after.leases ?? []).some((item) => item.owner === this.owner && item.digest === ref.digest);
    // Another's lease only: its write replaced this one. Both: the smaller owner keeps it.
    if (rival !== undefined && (!kept || rival.owner < this.owner)) return rival;
    return undefined;
  }

  /** Ends this instance's lease on a prefix whose checkpoint it did not write (the compaction failed). */
  async release(threadDigest: string, ref: { length: number; digest: string }, budget: StoreBudget): Promise<void> {
    if (this.guard.down) return;
    await this.threads.update(threadDigest, { leases: [{ ...ref, owner: this.owner, until: 0 }] }, budget);
  }

  /**
   * Waits for the checkpoint another instance's lease (`held`) is writing: reads its thread until
   * it lists it (then returns it), until the lease is gone, `deadline` (ms since the epoch) has
   * passed or the store is down (then `undefined`).
   */
  async awaitLeased(threadDigest: string, held: Lease, deadline: number, budget: StoreBudget): Promise<StoredCheckpoint | undefined> {
    let wait: number = LEASE_POLL_MS.first;
    for (;;) {
      const until = Math.min(deadline, held.until);
      const now = this.clock.now();
      if (now >= until) return undefined;
      await this.clock.sleep(Math.min(wait, until - now));
      wait = Math.min(wait * 2, LEASE_POLL_MS.max);
      if (this.guard.down) return undefined;
      const thread = await this.threads.read(threadDigest, budget);
      if ([...thread.checkpoints, ...(thread.prepared ?? [])].some((item) => item.digest === held.digest)) {
        return this.checkpoints.read(held.digest, held.length, budget);
      }
      if (!(thread.leases ?? []).some((item) => item.owner === held.owner && item.digest === held.digest && item.until > this.clock.now())) return undefined;
    }
  }
}

/** The leases on `digest` of instances other than `owner` that hold now, in a thread. */
function otherLeases(thread: Thread, digest: string, owner: string, now: number): Lease[] {
  return (thread.leases ?? []).filter((item) => item.digest === digest && item.owner !== owner && item.until > now);
}
