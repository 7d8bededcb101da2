import { LRUCache } from 'lru-cache';
import { RECENT_LIMIT } from '../tunables';

// How many threads and checkpoints `state()` holds (tunables.ts), exported here for the tests.
export { RECENT_LIMIT } from '../tunables';

/**
 * A bounded cache of values by digest: `set` makes an entry the newest and, past `max`, drops the
 * one set longest ago; a look (`peek`) leaves the order as it is.
 */
export function recentCache<T extends {}>(max = RECENT_LIMIT): LRUCache<string, T> {
  return new LRUCache<string, T>({ max });
}

/** The entries of such a cache, the least recently used first (the order `state()` lists them in); reading them leaves the order as it is. */
export function oldestFirst<T extends {}>(cache: LRUCache<string, T>): Map<string, T> {
  const entries = new Map<string, T>();
  for (const key of cache.rkeys()) entries.set(key, cache.peek(key)!);
  return entries;
}
