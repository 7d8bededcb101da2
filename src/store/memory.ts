import { LRUCache } from 'lru-cache';
import { DEFAULT_MAX_BYTES } from '../tunables';
import type { CompactionStore } from './types';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The most the store holds, in bytes (default 50 MiB). A value counts 2 bytes per UTF-16 code
   * unit of its key plus its value. The least recently used values go first; a single value
   * larger than this is not kept at all.
   */
  maxBytes?: number;
}

/** A {@link CompactionStore} that also reports how many bytes it holds. */
export type MemoryStore = CompactionStore & {
  /** Bytes held now (2 per UTF-16 code unit of every live key and value); never above `maxBytes`. */
  readonly bytes: () => number;
};

/**
 * TTL clock: wall-clock milliseconds, like the expiry of a Redis key. Looked up on every call
 * rather than captured once, so a host (or a test) that swaps `Date` is honoured. (lru-cache's
 * default, `performance.now()`, stops during system sleep in some browsers and reads 0 under
 * fake timers, which lru-cache takes for "no start time" and so never expires.)
 */
const clock = { now: (): number => Date.now() };

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function sizeOf(key: string, value: string): number {
  // lru-cache wants a positive integer; only an empty key with an empty value is rounded up.
  return Math.max(1, 2 * (key.length + value.length));
}

/** A time to live given in `option` (`ttlSeconds` or `ttlMs`) as whole milliseconds, or `undefined` when not given. */
function checkTtl(given: unknown, option: 'ttlSeconds' | 'ttlMs'): number | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'number' || !Number.isFinite(given) || given <= 0) {
    throw new TypeError(
      `ai-compaction: memoryStore ${option} must be a positive number, got ${show(given)}`,
    );
  }
  // lru-cache counts whole milliseconds; never round a positive TTL down to "no TTL".
  return Math.max(1, Math.ceil(option === 'ttlSeconds' ? given * 1000 : given));
}

/**
 * The default store: in memory, bounded in bytes, least recently used out, honouring
 * `ttlSeconds`. Runs on Node, the Edge runtime and in browsers. Each instance is its own space:
 * share one instance to share checkpoints.
 *
 * @throws TypeError when `maxBytes` is not a positive integer.
 */
export function memoryStore(options?: MemoryStoreOptions): MemoryStore {
  const maxBytes = options?.maxBytes === undefined ? DEFAULT_MAX_BYTES : options.maxBytes;
  if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new TypeError(
      `ai-compaction: memoryStore maxBytes must be a positive integer, got ${show(maxBytes)}`,
    );
  }

  const cache = new LRUCache<string, string>({
    maxSize: maxBytes,
    // A value larger than the whole store is dropped (and any older value under its key with it).
    maxEntrySize: maxBytes,
    sizeCalculation: (value, key) => sizeOf(key, value),
    perf: clock,
    // Read the clock on every staleness check instead of caching it behind a 1 ms timer: no timers
    // at all, which suits the Edge runtime and fake timers alike.
    ttlResolution: 0,
  });

  const store: MemoryStore = {
    async get(key) {
      return cache.get(key);
    },
    async set(key, value, setOptions) {
      const ttl = checkTtl(setOptions?.ttlSeconds, 'ttlSeconds');
      cache.set(key, value, ttl === undefined ? undefined : { ttl });
    },
    async delete(key) {
      cache.delete(key);
    },
    async setIfAbsent(key, value, setOptions) {
      const ttl = checkTtl(setOptions?.ttlMs, 'ttlMs');
      // One call of one process: nothing runs between the look and the write.
      if (cache.has(key)) return false;
      cache.set(key, value, ttl === undefined ? undefined : { ttl });
      return true;
    },
    bytes() {
      // Expired values are dropped lazily; drop them now so the count is of live values only.
      cache.purgeStale();
      return cache.calculatedSize;
    },
  };
  return store;
}
