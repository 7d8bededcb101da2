import { DEFAULT_TTL_SECONDS } from '../tunables';
import type { CompactionStore } from './types';

/**
 * The part of a Redis client the store calls: `get`, `set` and `del` returning promises.
 * Instances of ioredis (`new Redis()`, `new Cluster()`), of node-redis v4 to v6
 * (`createClient()`, `createCluster()`) and of `@upstash/redis` (`new Redis({ url, token })`,
 * `Redis.fromEnv()`, over HTTP) fit as they are.
 *
 * How the store calls `set` depends on the client, recognised at run time:
 * - node-redis (anything with a boolean `isOpen`): `set(key, value, { expiration: { type: 'EX',
 *   value: seconds }, EX: seconds })`; v5 and v6 read `expiration`, v4 reads `EX`.
 * - `@upstash/redis` (no `isOpen` or `status`, a `pipeline()` method and a `json` object):
 *   `set(key, value, { ex: seconds })`; what its `get` deserialized from JSON is turned back into
 *   the JSON text that was stored.
 * - any other client, ioredis among them: the Redis command's own argument order,
 *   `set(key, value, 'EX', seconds)`.
 *
 * The lease on writing a summary is taken with `SET key value NX PX ms` (the store's
 * `setIfAbsent`), in each client's form: node-redis `{ expiration: { type: 'PX', value }, PX,
 * condition: 'NX', NX: true }` (v5 and v6 read `expiration` and `condition`, v4 `PX` and `NX`),
 * `@upstash/redis` `{ px, nx: true }`, any other `'PX', ms, 'NX'`; each answers `"OK"` or `null`.
 *
 * Whether the client is connected is read from its own state (docs/stores.md): ioredis's `status`,
 * node-redis's `isReady`; an Upstash client has no connection to lose.
 */
export interface RedisClientLike {
  get(key: string): Promise<unknown>;
  // Method syntax on purpose: parameters compare bivariantly, so every client's overloads fit.
  set(key: string, value: string, ...expiry: unknown[]): Promise<unknown>;
  del(key: string): Promise<unknown>;
}

/** A node-redis 4 client: its `set` takes at most three parameters, the third its options. */
export interface NodeRedis4ClientLike {
  get(key: string): Promise<unknown>;
  set(key: string, value: string, options?: any): Promise<unknown>;
  del(key: string): Promise<unknown>;
}

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /** A connected (or connecting) ioredis or node-redis client, or an `@upstash/redis` client; the store never connects or quits it. */
  client: RedisClientLike | NodeRedis4ClientLike;
  /** Put before every key (default `"ai-compaction:"`); use it to separate apps sharing a database. */
  prefix?: string;
  /** Seconds a value lives when `set` is not given `ttlSeconds` (default 604800, 7 days). */
  ttlSeconds?: number;
}

const DEFAULT_PREFIX = 'ai-compaction:';

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

function checkOptions(options: unknown): asserts options is RedisStoreOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `ai-compaction: redisStore options must be an object with a client, got ${show(options)}`,
    );
  }
  const { client, prefix, ttlSeconds } = options as Record<string, unknown>;
  if (client === null || (typeof client !== 'object' && typeof client !== 'function')) {
    throw new TypeError(
      `ai-compaction: redisStore client must be an ioredis, node-redis or @upstash/redis client, got ${show(client)}`,
    );
  }
  for (const method of ['get', 'set', 'del'] as const) {
    if (typeof (client as Record<string, unknown>)[method] !== 'function') {
      throw new TypeError(
        `ai-compaction: redisStore client must have a ${method}() method (an ioredis, node-redis or @upstash/redis client)`,
      );
    }
  }
  if (prefix !== undefined && typeof prefix !== 'string') {
    throw new TypeError(`ai-compaction: redisStore prefix must be a string, got ${show(prefix)}`);
  }
  if (ttlSeconds !== undefined && !isPositiveInteger(ttlSeconds)) {
    throw new TypeError(
      `ai-compaction: redisStore ttlSeconds must be a positive integer, got ${show(ttlSeconds)}`,
    );
  }
}

/** Whole seconds for `EX`: a positive `ttlSeconds` is rounded up, never down to "expire now". */
function expirySeconds(ttlSeconds: unknown): number {
  if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new TypeError(
      `ai-compaction: redisStore ttlSeconds must be a positive number, got ${show(ttlSeconds)}`,
    );
  }
  return Math.ceil(ttlSeconds);
}

/** Whole milliseconds for `PX`: a positive `ttlMs` is rounded up, never down to "expire now". */
function expiryMilliseconds(ttlMs: unknown): number {
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new TypeError(`ai-compaction: redisStore ttlMs must be a positive number, got ${show(ttlMs)}`);
  }
  return Math.ceil(ttlMs);
}

let decoder: TextDecoder | undefined;

function asValue(reply: unknown, upstash: boolean): string | undefined {
  if (reply === null || reply === undefined) return undefined;
  if (typeof reply === 'string') return reply;
  // A client set up to return buffers (ioredis `getBuffer`-style mappings, node-redis typeMapping).
  if (reply instanceof Uint8Array) return (decoder ??= new TextDecoder()).decode(reply);
  // @upstash/redis parses every reply that is JSON (its automaticDeserialization, on by default):
  // the JSON text the middleware stored comes back the same from JSON.stringify.
  if (upstash && (typeof reply === 'object' || typeof reply === 'number' || typeof reply === 'boolean')) return JSON.stringify(reply);
  throw new TypeError(`ai-compaction: redisStore expected a string from GET, got ${show(reply)}`);
}

/** The kind of client, recognised once: the shape of a client does not change. */
type ClientKind = 'node-redis' | 'ioredis' | 'upstash' | 'other';

function kindOfClient(client: object): ClientKind {
  const shape = client as { isOpen?: unknown; status?: unknown; pipeline?: unknown; json?: unknown };
  // node-redis clients, clusters, sentinels and pools all expose a boolean `isOpen` getter;
  // ioredis has `status` instead; @upstash/redis neither, but its pipeline() and json commands.
  if (typeof shape.isOpen === 'boolean') return 'node-redis';
  if (typeof shape.status === 'string') return 'ioredis';
  if (typeof shape.pipeline === 'function' && typeof shape.json === 'object' && shape.json !== null) return 'upstash';
  return 'other';
}

/** ioredis states in which commands wait for a connection that was lost (or end at once). */
const IOREDIS_DISCONNECTED = new Set(['reconnecting', 'close', 'end']);
/** ioredis states of a connection being made: the first one (commands queue for it), or again after a loss. */
const IOREDIS_CONNECTING = new Set(['connecting', 'connect']);

/**
 * Whether the client can answer now, from its own state. A client that has never been ready yet is
 * taken as connecting (its commands wait for the first connection); one that was ready and is not
 * has lost its connection. `undefined` where the client has no such state.
 */
function connectionOf(client: object, kind: ClientKind): (() => boolean) | undefined {
  let seenReady = false;
  if (kind === 'ioredis') {
    return () => {
      const { status } = client as { status: string };
      if (status === 'ready') return (seenReady = true);
      if (IOREDIS_DISCONNECTED.has(status)) return false;
      return !(seenReady && IOREDIS_CONNECTING.has(status));
    };
  }
  if (kind === 'node-redis' && typeof (client as { isReady?: unknown }).isReady === 'boolean') {
    return () => {
      const { isReady, isOpen } = client as { isReady: boolean; isOpen: boolean };
      if (isReady) return (seenReady = true);
      return !seenReady && isOpen;
    };
  }
  return undefined;
}

/**
 * The promise API of a node-redis 4 client in `legacyMode` (whose own methods take callbacks), or
 * `undefined`. Outside legacy mode its `v4` getter throws.
 */
function legacyCommands(client: unknown): RedisClientLike | undefined {
  try {
    const commands = (client as { v4?: RedisClientLike }).v4;
    return typeof commands?.get === 'function' ? commands : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A {@link CompactionStore} in Redis, so every server instance shares checkpoints. Pass your own
 * ioredis, node-redis or `@upstash/redis` client (HTTP: the Edge runtime and serverless hosts);
 * this module imports none. Keys are `prefix + key`, every value expires (`EX`) after
 * `ttlSeconds`. Errors of the client reject the returned promises; `connected()` reads the
 * client's own state.
 *
 * @throws TypeError when the client lacks get/set/del, `prefix` is not a string or `ttlSeconds`
 *   is not a positive integer.
 */
export function redisStore(options: RedisStoreOptions): CompactionStore {
  checkOptions(options);
  const kind = kindOfClient(options.client);
  const client = (kind === 'node-redis' ? legacyCommands(options.client) : undefined) ?? (options.client as RedisClientLike);
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const defaultTtl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  const connected = connectionOf(options.client, kind);

  return {
    async get(key) {
      return asValue(await client.get(prefix + key), kind === 'upstash');
    },
    async set(key, value, setOptions) {
      const seconds =
        setOptions?.ttlSeconds === undefined ? defaultTtl : expirySeconds(setOptions.ttlSeconds);
      if (kind === 'node-redis') {
        await client.set(prefix + key, value, {
          expiration: { type: 'EX', value: seconds },
          EX: seconds,
        });
      } else if (kind === 'upstash') {
        await client.set(prefix + key, value, { ex: seconds });
      } else {
        await client.set(prefix + key, value, 'EX', seconds);
      }
    },
    async delete(key) {
      await client.del(prefix + key);
    },
    async setIfAbsent(key, value, { ttlMs }) {
      const ms = expiryMilliseconds(ttlMs);
      let reply: unknown;
      if (kind === 'node-redis') {
        reply = await client.set(prefix + key, value, { expiration: { type: 'PX', value: ms }, PX: ms, condition: 'NX', NX: true });
      } else if (kind === 'upstash') {
        reply = await client.set(prefix + key, value, { px: ms, nx: true });
      } else {
        reply = await client.set(prefix + key, value, 'PX', ms, 'NX');
      }
      // "OK" when set; null (nil) when the key was there.
      return reply !== null && reply !== undefined;
    },
    ...(connected === undefined ? {} : { connected }),
    prefix,
  };
}
