import { LRUCache } from 'lru-cache';

/** How many threads and checkpoints `state()` holds: the latest this instance wrote or read. */
export const RECENT_LIMIT = 8;

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
