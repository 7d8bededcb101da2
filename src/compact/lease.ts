import type { Engine } from '../engine';
import type { StoredCheckpoint } from '../store/format';
import { LEASE_BOUNDS_MS, LEASE_SUMMARY_FACTOR, LEASE_UNMEASURED_MS } from '../tunables';
import type { StepView } from '../view';
import { untilAborted } from './flight';
import { longestSummary } from './measured';

/**
 * One summary for a prefix across instances (docs/stores.md, the lease). Before it writes the
 * checkpoint of a prefix, an instance takes a short lease on it in the conversation's thread;
 * another instance that needs the same checkpoint, or prepares one ahead for the same
 * conversation, finds the lease and waits for that checkpoint instead of writing its own, for at
 * most the time a summary of that model has been measured to take. Within an instance, the single
 * flight does the same (flight.ts).
 */

/**
 * How long a summary of `model` may take here: twice the longest of its recent ones, 5 s to 120 s
 * (60 s before one was measured), and never more than this instance's own `summaryTimeout`. It is
 * the lease this instance takes (its summary is aborted by then), and the most it waits for
 * another's: an instance that died writing holds no step longer than that (docs/design.md, "No
 * summary holds a step without bound").
 */
export function summaryBound(engine: Engine, model: string): number {
  const longest = longestSummary(engine, model);
  const measured = longest === undefined ? LEASE_UNMEASURED_MS : Math.min(LEASE_BOUNDS_MS.max, Math.max(LEASE_BOUNDS_MS.min, LEASE_SUMMARY_FACTOR * longest));
  const timeout = engine.settings.summaryTimeout;
  return timeout === false ? measured : Math.min(measured, timeout);
}

/**
 * Before a step writes the checkpoint of `ref` (a prefix of its conversation): when another
 * instance holds the lease on it, waits for that checkpoint (bounded by `summaryBound`, and by the
 * step's abort signal) and returns it; otherwise takes the lease (`undefined`: write your own).
 */
export async function leaseOrWait(engine: Engine, view: StepView, ref: { length: number; digest: string }, model: string): Promise<StoredCheckpoint | undefined> {
  const { threadDigest, budget } = view;
  if (threadDigest === undefined) return undefined;
  const bound = summaryBound(engine, model);
  const held = await engine.keeper.lease(threadDigest, ref, bound, budget);
  if (held === undefined) return undefined;
  const made = await untilAborted(engine.keeper.awaitLeased(threadDigest, held, engine.clock.now() + bound, budget), view.params.abortSignal);
  if (made !== undefined) return made;
  // Not written in time (the other instance failed or is gone): this one writes it.
  await engine.keeper.lease(threadDigest, ref, bound, budget);
  return undefined;
}

/** Waits for a checkpoint another instance's lease says it is writing for a prefix of this conversation (bounded as above). */
export function awaitLease(engine: Engine, view: StepView, held: { length: number; digest: string; owner: string; until: number }, model: string): Promise<StoredCheckpoint | undefined> {
  const made = engine.keeper.awaitLeased(view.threadDigest!, held, engine.clock.now() + summaryBound(engine, model), view.budget);
  return untilAborted(made, view.params.abortSignal);
}

/** Ends this instance's lease on a prefix whose compaction failed, so others need not wait for it. */
export async function releaseLease(engine: Engine, view: StepView, ref: { length: number; digest: string }): Promise<void> {
  if (view.threadDigest !== undefined) await engine.keeper.release(view.threadDigest, ref, view.budget);
}
