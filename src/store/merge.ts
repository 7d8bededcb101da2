import { LEASE_LIMIT, THREAD_LIMIT } from '../tunables';
import { type Count, FORMAT_VERSION, type Hold, type Lease, type PaceRecord, type SummaryTimes, type Thread } from './format';

/** How the writes to a thread merge (docs/stores.md): union by identity, newest first, bounded. */

/** What one write adds to a thread. */
export interface ThreadPatch {
  checkpoints?: Thread['checkpoints'];
  counts?: Thread['counts'];
  holds?: Thread['holds'];
  prepared?: Thread['checkpoints'];
  leases?: Lease[];
  pace?: PaceRecord;
  summaries?: SummaryTimes;
}

/** The identity of each kind of thread entry: a newer entry of the same identity replaces the older. */
const entryKeys = {
  checkpoints: (item: Thread['checkpoints'][number]) => item.digest,
  counts: (item: Count) => `${item.digest}:${item.checkpoint}`,
  holds: (item: Hold) => `${item.digest}:${item.checkpoint}`,
  leases: (item: Lease) => `${item.digest}:${item.owner}`,
};

function unique<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => (seen.has(key(item)) ? false : (seen.add(key(item)), true)));
}

/**
 * Merges a write into a thread: union by identity, newest first, bounded. A lease goes once its
 * checkpoint is listed, once released (`until` 0) or past its time (`now`).
 */
export function mergeThreads(current: Thread, next: ThreadPatch, now = Date.now()): Thread {
  const checkpoints = unique([...(next.checkpoints ?? []), ...current.checkpoints], entryKeys.checkpoints).slice(0, THREAD_LIMIT);
  const prepared = unique([...(next.prepared ?? []), ...(current.prepared ?? [])], entryKeys.checkpoints).slice(0, THREAD_LIMIT);
  const listed = new Set([...checkpoints, ...prepared].map((ref) => ref.digest));
  const leases = unique([...(next.leases ?? []), ...(current.leases ?? [])], entryKeys.leases)
    .filter((item) => item.until > now && !listed.has(item.digest))
    .slice(0, LEASE_LIMIT);
  return {
    v: FORMAT_VERSION,
    checkpoints,
    counts: unique([...(next.counts ?? []), ...current.counts], entryKeys.counts).slice(0, THREAD_LIMIT),
    holds: unique([...(next.holds ?? []), ...current.holds], entryKeys.holds).slice(0, THREAD_LIMIT),
    // Written only once there is one, so threads without prepared checkpoints stay as they were.
    ...(prepared.length === 0 ? {} : { prepared }),
    ...(leases.length === 0 ? {} : { leases }),
    // The newest pace and summary times: a write carries the whole of each.
    ...newest('pace', next.pace, current.pace, (a, b) => a.at > b.at || (a.at === b.at && a.length >= b.length)),
    ...newest('summaries', next.summaries, current.summaries, () => true),
  };
}

/** `{ [name]: value }` of the newer of two (`newer(a, b)`: `a` is at least as new), or nothing when neither is. */
function newest<Name extends string, T>(name: Name, next: T | undefined, current: T | undefined, newer: (a: T, b: T) => boolean): Partial<Record<Name, T>> {
  const value = next === undefined ? current : current === undefined || newer(next, current) ? next : current;
  return value === undefined ? {} : ({ [name]: value } as Record<Name, T>);
}

/** The leases of a thread that hold now, of instances other than `owner`. */
export function liveLeases(thread: Thread | undefined, owner: string, now = Date.now()): Lease[] {
  const listed = new Set([...(thread?.checkpoints ?? []), ...(thread?.prepared ?? [])].map((ref) => ref.digest));
  return (thread?.leases ?? []).filter((item) => item.owner !== owner && item.until > now && !listed.has(item.digest));
}

/** Whether `thread` has an entry of every identity `patch` adds (a concurrent write may have dropped one). */
export function threadHas(thread: Thread, patch: ThreadPatch): boolean {
  const has = <T>(added: T[] | undefined, current: T[], key: (item: T) => string) => {
    const keys = new Set(current.map(key));
    return (added ?? []).every((item) => keys.has(key(item)));
  };
  return (
    has(patch.checkpoints, thread.checkpoints, entryKeys.checkpoints) &&
    has(patch.counts, thread.counts, entryKeys.counts) &&
    has(patch.holds, thread.holds, entryKeys.holds) &&
    has(patch.prepared, thread.prepared ?? [], entryKeys.checkpoints) &&
    // A released lease is had when it is gone.
    has(patch.leases?.filter((item) => item.until > 0), thread.leases ?? [], entryKeys.leases)
  );
}

