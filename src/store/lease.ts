import type { Clock } from '../clock';
import { type Lease, type StoredCheckpoint, leaseKey, leaseSchema, parseJson } from './format';
import type { CheckpointRecords } from './checkpoints';
import type { StoreBudget, StoreGuard } from './guard';
import type { ThreadRecords } from './threads';
import { LEASE_POLL_MS } from '../tunables';
import { randomHex } from '../prompt/hash';

/**
 * The leases (docs/stores.md, "One summary for a prefix: the lease"): an instance that writes the
 * checkpoint of a prefix takes a lease on it first, and another instance that finds it waits for
 * that checkpoint instead of writing its own. A lease is taken atomically under a key of its own
 * (`lease:<digest>`, the store's `setIfAbsent`: Redis `SET NX PX`), so two instances that ask at
 * the same moment never both get it, and listed in the conversation's thread, where a step that
 * prepares ahead finds it. Their times are read on `clock`. While the store is down there are no
 * leases.
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
   * instance holds it: that lease is returned, and the caller waits for its checkpoint.
   */
  async take(threadDigest: string, ref: { length: number; digest: string }, ms: number, budget: StoreBudget): Promise<Lease | undefined> {
    if (this.guard.down) return undefined;
    const key = leaseKey(ref.digest);
    const mine: Lease = { length: ref.length, digest: ref.digest, owner: this.owner, until: this.clock.now() + ms };
    let taken = await this.guard.claim(key, JSON.stringify(mine), ms, budget);
    if (taken === false) {
      const held = await this.holder(ref.digest, budget);
      if (held !== undefined && held.owner !== this.owner && held.until > this.clock.now()) return held;
      // Gone meanwhile, or past its time on this clock though the store keeps it (clocks apart): taken anew.
      if (held?.owner !== this.owner) {
        await this.guard.remove(key, budget);
        taken = await this.guard.claim(key, JSON.stringify(mine), ms, budget);
        if (taken === false) return this.holder(ref.digest, budget).then((next) => (next?.owner === this.owner ? undefined : next));
      }
    }
    // Not taken: the store failed or went down, and the caller writes it without a lease.
    if (taken !== undefined && !this.guard.down) await this.threads.update(threadDigest, { leases: [mine] }, budget);
    return undefined;
  }

  /** Ends this instance's lease on a prefix whose checkpoint it did not write (the compaction failed). */
  async release(threadDigest: string, ref: { length: number; digest: string }, budget: StoreBudget): Promise<void> {
    if (this.guard.down) return;
    if ((await this.holder(ref.digest, budget))?.owner === this.owner) await this.guard.remove(leaseKey(ref.digest), budget);
    await this.threads.update(threadDigest, { leases: [{ ...ref, owner: this.owner, until: 0 }] }, budget);
  }

  /**
   * Waits for the checkpoint another instance's lease (`held`) is writing: reads its thread until
   * it lists it (then returns it), until the lease is gone (released, or another's now),
   * `deadline` (ms since the epoch) has passed or the store is down (then `undefined`).
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
      if ((await this.holder(held.digest, budget))?.owner !== held.owner) return undefined;
    }
  }

  /** The lease under its own key on writing the checkpoint of `digest`, or `undefined` (none, or not a lease). */
  private async holder(digest: string, budget: StoreBudget): Promise<Lease | undefined> {
    const raw = await this.guard.read(leaseKey(digest), budget);
    const lease = raw === undefined ? undefined : parseJson(raw, leaseSchema);
    return lease?.digest === digest ? lease : undefined;
  }
}
