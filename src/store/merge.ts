import { LEASE_LIMIT, THREAD_LIMIT } from '../tunables';
import { type Count, FORMAT_VERSION, type Hold, type Lease, type PaceRecord, type SummaryTimes, type Thread } from './format';

/** How the writes to a thread merge (docs/stores.md): union by identity, most recently used first, bounded. */

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

/** Each identity once: the first of it (the newer write) wins. */
function unique<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => (seen.has(key(item)) ? false : (seen.add(key(item)), true)));
}

/**
 * The `THREAD_LIMIT` most recently used of a kind of entry (docs/stores.md, "Keys and records"):
 * by their `at`, never by their place; of two used at the same moment, or with none (written by an
 * older version), the first (the newer write) stays.
 */
function mostRecent<T extends { at?: number }>(items: T[]): T[] {
  if (items.length <= THREAD_LIMIT) return items;
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => (b.item.at ?? 0) - (a.item.at ?? 0) || a.index - b.index)
    .slice(0, THREAD_LIMIT)
    .sort((a, b) => a.index - b.index)
    .map(({ item }) => item);
}

/**
 * Merges a write into a thread: union by identity, newer writes first, bounded by least recent
 * use. A lease goes once its checkpoint is listed, once released (`until` 0) or past its time (`now`).
 */
export function mergeThreads(current: Thread, next: ThreadPatch, now = Date.now()): Thread {
  const checkpoints = mostRecent(unique([...(next.checkpoints ?? []), ...current.checkpoints], entryKeys.checkpoints));
  const prepared = mostRecent(unique([...(next.prepared ?? []), ...(current.prepared ?? [])], entryKeys.checkpoints));
  const listed = new Set([...checkpoints, ...prepared].map((ref) => ref.digest));
  const leases = unique([...(next.leases ?? []), ...(current.leases ?? [])], entryKeys.leases)
    .filter((item) => item.until > now && !listed.has(item.digest))
    .slice(0, LEASE_LIMIT);
  return {
    v: FORMAT_VERSION,
    checkpoints,
    counts: mostRecent(unique([...(next.counts ?? []), ...current.counts], entryKeys.counts)),
    holds: mostRecent(unique([...(next.holds ?? []), ...current.holds], entryKeys.holds)),
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

/** A patch with each entry that has no `at` marked as used at `now` (a write is a use). */
export function stamped(patch: ThreadPatch, now: number): ThreadPatch {
  const stamp = <T extends { at?: number }>(items: T[] | undefined) => items?.map((item) => (item.at === undefined ? { ...item, at: now } : item));
  return {
    ...patch,
    ...(patch.checkpoints === undefined ? {} : { checkpoints: stamp(patch.checkpoints) }),
    ...(patch.prepared === undefined ? {} : { prepared: stamp(patch.prepared) }),
    ...(patch.counts === undefined ? {} : { counts: stamp(patch.counts) }),
    ...(patch.holds === undefined ? {} : { holds: stamp(patch.holds) }),
  };
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

