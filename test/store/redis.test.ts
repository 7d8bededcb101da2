import { Redis as Upstash } from '@upstash/redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createClient as createClient4 } from 'redis4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStore, type RedisClientLike, type RedisStoreOptions } from '../../src/redis';
import { startRedisServer, type RedisServer } from '../support/redis-server';
import { type UpstashEndpoint, startUpstashEndpoint } from '../support/upstash-endpoint';

/** One client library, driven through the store and inspected through its own commands. */
interface Connection {
  client: RedisStoreOptions['client'];
  /** The raw value under a full (prefixed) key. */
  rawGet(key: string): Promise<string | null>;
  /** Seconds left on a full key (-1: no expiry, -2: no key). */
  ttl(key: string): Promise<number>;
  /** Makes `key` a list, so GET on it fails with WRONGTYPE. */
  makeList(key: string): Promise<void>;
  /** Connected and accepting commands. */
  ready(): boolean;
  close(): Promise<void>;
}

interface Flavour {
  name: string;
  /** What a command rejects with while the client has no connection (its offline queue is off). */
  offline: string;
  connect(server: RedisServer): Promise<Connection>;
}

/**
 * node-redis 4, as is or in `legacyMode`, whose commands take callbacks: the store must then use
 * the promise API under `v4`, as the test does.
 */
function nodeRedis4(legacyMode: boolean): Flavour {
  return {
    name: legacyMode ? 'node-redis 4 in legacyMode' : 'node-redis 4',
    offline: 'The client is offline',
    async connect(server) {
      const client = createClient4({ url: server.url, legacyMode, socket: { connectTimeout: 500, reconnectStrategy: () => 50 }, disableOfflineQueue: true });
      client.on('error', () => {});
      await client.connect();
      const commands = (legacyMode ? client.v4 : client) as { get(key: string): Promise<string | null>; ttl(key: string): Promise<number>; rPush(key: string, value: string): Promise<number> };
      return {
        client,
        rawGet: (key) => commands.get(key),
        ttl: (key) => commands.ttl(key),
        makeList: async (key) => void (await commands.rPush(key, 'item')),
        ready: () => client.isReady,
        async close() {
          if (client.isReady) await client.disconnect();
        },
      };
    },
  };
}

// Every option below makes a command fail at once (no offline queue, one try, short timeouts)
// while the server is down, and reconnects quickly once it is back, so no test hangs.
const flavours: Flavour[] = [
  {
    name: 'ioredis',
    offline: "Stream isn't writeable and enableOfflineQueue options is false",
    async connect(server) {
      const client = new Redis({
        host: '127.0.0.1',
        port: server.port,
        lazyConnect: true,
        connectTimeout: 500,
        commandTimeout: 1_000,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        retryStrategy: () => 50,
      });
      client.on('error', () => {});
      await client.connect();
      return {
        client,
        rawGet: (key) => client.get(key),
        ttl: (key) => client.ttl(key),
        makeList: async (key) => void (await client.rpush(key, 'item')),
        ready: () => client.status === 'ready',
        async close() {
          if (client.status === 'ready') await client.quit();
          else client.disconnect();
        },
      };
    },
  },
  {
    name: 'node-redis',
    offline: 'The client is offline',
    async connect(server) {
      const client = createClient({
        url: server.url,
        socket: { connectTimeout: 500, reconnectStrategy: () => 50 },
        disableOfflineQueue: true,
      });
      client.on('error', () => {});
      await client.connect();
      return {
        client,
        rawGet: (key) => client.get(key),
        ttl: (key) => client.ttl(key),
        makeList: async (key) => void (await client.rPush(key, 'item')),
        ready: () => client.isReady,
        async close() {
          if (client.isReady) await client.close();
          else client.destroy();
        },
      };
    },
  },
  nodeRedis4(false),
  nodeRedis4(true),
];

/** Polls `condition` every 10 ms; fails after `timeoutMs`. */
async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

describe.each(flavours)('redisStore with $name', ({ connect, offline }) => {
  let connection: Connection;

  beforeAll(async () => {
    connection = await connect(server);
  });

  afterAll(async () => {
    await connection?.close();
  });

  it('should round-trip a value through set, get and delete', async () => {
    const store = redisStore({ client: connection.client });
    await store.set('roundtrip', '{"summary":"hello","messages":[]}');
    expect(await store.get('roundtrip')).toBe('{"summary":"hello","messages":[]}');
    await store.delete('roundtrip');
    expect(await store.get('roundtrip')).toBeUndefined();
    expect(await connection.rawGet('ai-compaction:roundtrip')).toBeNull();
  });

  it('should return undefined, not null, for a key never set', async () => {
    const store = redisStore({ client: connection.client });
    const value = await store.get('never-set');
    expect(value).toBeUndefined();
  });

  it('should resolve when deleting a key that is not there', async () => {
    const store = redisStore({ client: connection.client });
    await expect(store.delete('never-set')).resolves.toBeUndefined();
  });

  it('should replace the value of a key set twice', async () => {
    const store = redisStore({ client: connection.client });
    await store.set('twice', 'first');
    await store.set('twice', 'second');
    expect(await store.get('twice')).toBe('second');
  });

  it('should keep non-ASCII and large values intact', async () => {
    const store = redisStore({ client: connection.client });
    const value = `ключ 😀 ${'x'.repeat(1_000_000)} 終わり`;
    await store.set('unicode', value);
    expect(await store.get('unicode')).toBe(value);
  });

  it('should store under the default prefix "ai-compaction:"', async () => {
    const store = redisStore({ client: connection.client });
    await store.set('prefixed', 'v');
    expect(await connection.rawGet('ai-compaction:prefixed')).toBe('v');
    expect(await connection.rawGet('prefixed')).toBeNull();
  });

  it('should store under a custom prefix and keep stores of different prefixes apart', async () => {
    const tenantA = redisStore({ client: connection.client, prefix: 'tenant-a:' });
    const tenantB = redisStore({ client: connection.client, prefix: 'tenant-b:' });
    await tenantA.set('shared', 'from a');
    expect(await connection.rawGet('tenant-a:shared')).toBe('from a');
    expect(await tenantB.get('shared')).toBeUndefined();
    await tenantB.set('shared', 'from b');
    expect(await tenantA.get('shared')).toBe('from a');
    expect(await tenantB.get('shared')).toBe('from b');
  });

  it('should take an empty prefix as no prefix', async () => {
    const store = redisStore({ client: connection.client, prefix: '' });
    await store.set('bare-key', 'v');
    expect(await connection.rawGet('bare-key')).toBe('v');
  });

  it('should expire a value after 604800 seconds (7 days) by default', async () => {
    const store = redisStore({ client: connection.client });
    await store.set('default-ttl', 'v');
    expect(await connection.ttl('ai-compaction:default-ttl')).toBe(604_800);
  });

  it('should expire a value after options.ttlSeconds when given', async () => {
    const store = redisStore({ client: connection.client, ttlSeconds: 3_600 });
    await store.set('store-ttl', 'v');
    expect(await connection.ttl('ai-compaction:store-ttl')).toBe(3_600);
  });

  it("should let set's ttlSeconds override the store's", async () => {
    const store = redisStore({ client: connection.client, ttlSeconds: 3_600 });
    await store.set('set-ttl', 'v', { ttlSeconds: 120 });
    expect(await connection.ttl('ai-compaction:set-ttl')).toBe(120);
  });

  it('should round a fractional ttlSeconds up to whole seconds', async () => {
    const store = redisStore({ client: connection.client });
    await store.set('fractional-ttl', 'v', { ttlSeconds: 1.2 });
    expect(await connection.ttl('ai-compaction:fractional-ttl')).toBe(2);
  });

  it('should reset the time to live when a key is set again', async () => {
    const store = redisStore({ client: connection.client });
    await store.set('reset-ttl', 'v1', { ttlSeconds: 30 });
    await store.set('reset-ttl', 'v2');
    expect(await connection.ttl('ai-compaction:reset-ttl')).toBe(604_800);
  });

  it('should set a value only when none is there (SET NX PX), for ttlMs', async () => {
    const store = redisStore({ client: connection.client, prefix: 'nx:' });
    await store.delete('lease');
    expect(await store.setIfAbsent!('lease', 'first', { ttlMs: 90_000 })).toBe(true);
    expect(await store.setIfAbsent!('lease', 'second', { ttlMs: 90_000 })).toBe(false);
    expect(await connection.rawGet('nx:lease')).toBe('first');
    expect(await connection.ttl('nx:lease')).toBe(90);
    await store.delete('lease');
    expect(await store.setIfAbsent!('lease', 'second', { ttlMs: 1_500.5 })).toBe(true);
    expect(await connection.rawGet('nx:lease')).toBe('second');
  });

  it('should give a key to exactly one of many that ask for it at once', async () => {
    const store = redisStore({ client: connection.client, prefix: 'nx-race:' });
    await store.delete('lease');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => store.setIfAbsent!('lease', `v${index}`, { ttlMs: 60_000 })));
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect(await connection.rawGet('nx-race:lease')).toBe(`v${answers.indexOf(true)}`);
  });

  it('should reject with the server error when the command fails', async () => {
    const store = redisStore({ client: connection.client });
    await connection.makeList('ai-compaction:a-list');
    await expect(store.get('a-list')).rejects.toThrow(
      'WRONGTYPE Operation against a key holding the wrong kind of value',
    );
  });

  it('should keep a consistent state under many concurrent calls', async () => {
    const store = redisStore({ client: connection.client, prefix: 'concurrent:' });
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.set(`k${i % 20}`, `v${i}`)));
    // Commands on one connection run in the order they were sent: the last write of each key wins.
    const values = await Promise.all(Array.from({ length: 20 }, (_, k) => store.get(`k${k}`)));
    expect(values).toEqual(Array.from({ length: 20 }, (_, k) => `v${180 + k}`));
  });

  it('should reject while the server is down and work again once it is back', async () => {
    const store = redisStore({ client: connection.client, prefix: 'outage:' });
    await store.set('before', 'v');
    expect(await store.get('before')).toBe('v');

    await server.stop();
    await waitFor(() => !connection.ready());
    await expect(store.get('before')).rejects.toThrow(offline);
    await expect(store.set('during', 'v')).rejects.toThrow(offline);
    await expect(store.delete('before')).rejects.toThrow(offline);

    await server.start();
    await waitFor(() => connection.ready());
    // The restarted server keeps nothing (no persistence).
    expect(await store.get('before')).toBeUndefined();
    await store.set('after', 'back');
    expect(await store.get('after')).toBe('back');
    expect(await connection.ttl('outage:after')).toBe(604_800);
  });
});

describe('redisStore with @upstash/redis over its REST protocol', () => {
  let endpoint: UpstashEndpoint;
  let client: Upstash;
  let raw: Redis;

  beforeAll(async () => {
    endpoint = await startUpstashEndpoint(server.port);
    client = new Upstash({ url: endpoint.url, token: endpoint.token, enableTelemetry: false });
    raw = new Redis({ host: '127.0.0.1', port: server.port });
  });

  afterAll(async () => {
    raw?.disconnect();
    await endpoint?.close();
  });

  it('should round-trip JSON text exactly, though the client parses what it reads', async () => {
    const store = redisStore({ client, prefix: 'upstash:' });
    const value = JSON.stringify({ v: 1, summary: 'ключ 😀 "quoted"\n', list: [1, 2.5, -0.001, 1e21, null, true], nested: { a: [] } });
    await store.set('json', value);
    expect(await raw.get('upstash:json')).toBe(value);
    expect(await store.get('json')).toBe(value);
    for (const text of ['plain text', 'acs1.AAAA+/==', '12345', 'true']) {
      await store.set('text', text);
      expect(await store.get('text')).toBe(text);
    }
    await store.delete('json');
    expect(await store.get('json')).toBeUndefined();
    expect(await raw.get('upstash:json')).toBeNull();
  });

  it('should expire values with EX: 7 days by default, or the given ttlSeconds', async () => {
    const store = redisStore({ client, prefix: 'upstash:' });
    await store.set('ttl', 'v');
    expect(await raw.ttl('upstash:ttl')).toBe(604_800);
    await store.set('ttl', 'v', { ttlSeconds: 90 });
    expect(await raw.ttl('upstash:ttl')).toBe(90);
  });

  it('should set a value only when none is there (SET NX PX), for ttlMs', async () => {
    const store = redisStore({ client, prefix: 'upstash-nx:' });
    await raw.del('upstash-nx:lease');
    const before = endpoint.commands.length;
    expect(await store.setIfAbsent!('lease', '{"owner":"a"}', { ttlMs: 90_000 })).toBe(true);
    expect(await store.setIfAbsent!('lease', '{"owner":"b"}', { ttlMs: 90_000 })).toBe(false);
    expect(endpoint.commands.slice(before)).toEqual(['SET', 'SET']);
    expect(await raw.get('upstash-nx:lease')).toBe('{"owner":"a"}');
    expect(await raw.ttl('upstash-nx:lease')).toBe(90);
  });

  it('should send its commands as JSON arrays to the endpoint', async () => {
    const before = endpoint.commands.length;
    await redisStore({ client, prefix: 'upstash:' }).set('sent', 'v');
    expect(endpoint.commands.slice(before)).toEqual(['SET']);
  });

  it('should have no connection state to report', () => {
    expect(redisStore({ client }).connected).toBeUndefined();
  });
});

describe('redisStore connected()', () => {
  it('should read an ioredis client by its status: connecting at first, lost once it was ready', () => {
    const client = { status: 'connecting', get: async () => null, set: async () => 'OK', del: async () => 1 };
    const store = redisStore({ client });
    const states = (statuses: string[]) => statuses.map((status) => ((client.status = status), store.connected!()));
    expect(states(['wait', 'connecting', 'connect', 'ready', 'reconnecting', 'connecting', 'connect', 'ready', 'close', 'end'])).toEqual([
      true, true, true, true, false, false, false, true, false, false,
    ]);
  });

  it('should read a node-redis client by isReady: opening at first, lost once it was ready', () => {
    const client = { isOpen: true, isReady: false, get: async () => null, set: async () => 'OK', del: async () => 1 };
    const store = redisStore({ client });
    const states = (pairs: [boolean, boolean][]) => pairs.map(([isOpen, isReady]) => (Object.assign(client, { isOpen, isReady }), store.connected!()));
    expect(states([[false, false], [true, false], [true, true], [true, false], [true, true], [false, false]])).toEqual([false, true, true, false, true, false]);
  });

  it('should say nothing for a client without such state', () => {
    expect(redisStore({ client: { get: async () => null, set: async () => 'OK', del: async () => 1 } }).connected).toBeUndefined();
  });
});

describe('redisStore client detection', () => {
  /** A stand-in client that records every call and answers like a server would. */
  function recordingClient(shape: Record<string, unknown> = {}) {
    const calls: unknown[][] = [];
    const data = new Map<string, string>();
    const client = {
      ...shape,
      async get(key: string) {
        calls.push(['get', key]);
        return data.get(key) ?? null;
      },
      async set(key: string, value: string, ...rest: unknown[]) {
        calls.push(['set', key, value, ...rest]);
        data.set(key, value);
        return 'OK';
      },
      async del(key: string) {
        calls.push(['del', key]);
        return data.delete(key) ? 1 : 0;
      },
    };
    return { client, calls };
  }

  it('should call set with an expiration object on a node-redis client (boolean isOpen)', async () => {
    const { client, calls } = recordingClient({ isOpen: true, isReady: true });
    const store = redisStore({ client });
    await store.set('k', 'v');
    await store.set('k', 'v', { ttlSeconds: 60 });
    expect(calls).toEqual([
      ['set', 'ai-compaction:k', 'v', { expiration: { type: 'EX', value: 604_800 }, EX: 604_800 }],
      ['set', 'ai-compaction:k', 'v', { expiration: { type: 'EX', value: 60 }, EX: 60 }],
    ]);
  });

  it('should detect node-redis even while it is closed (isOpen false)', async () => {
    const { client, calls } = recordingClient({ isOpen: false });
    await redisStore({ client }).set('k', 'v', { ttlSeconds: 5 });
    expect(calls).toEqual([['set', 'ai-compaction:k', 'v', { expiration: { type: 'EX', value: 5 }, EX: 5 }]]);
  });

  it('should call set with positional EX seconds on an ioredis client (status string)', async () => {
    const { client, calls } = recordingClient({ status: 'ready', options: {} });
    const store = redisStore({ client, prefix: 'p:', ttlSeconds: 10 });
    await store.set('k', 'v');
    await store.set('k', 'v', { ttlSeconds: 2.5 });
    expect(calls).toEqual([
      ['set', 'p:k', 'v', 'EX', 10],
      ['set', 'p:k', 'v', 'EX', 3],
    ]);
  });

  it('should call set with { ex } on an @upstash/redis client (pipeline() and json, no status or isOpen)', async () => {
    const { client, calls } = recordingClient({ pipeline: () => ({}), json: {} });
    await redisStore({ client }).set('k', 'v', { ttlSeconds: 30 });
    expect(calls).toEqual([['set', 'ai-compaction:k', 'v', { ex: 30 }]]);
  });

  it("should take a lease with SET NX PX in each client's form", async () => {
    const shapes: [Record<string, unknown>, unknown[]][] = [
      [{ isOpen: true, isReady: true }, [{ expiration: { type: 'PX', value: 1_500 }, PX: 1_500, condition: 'NX', NX: true }]],
      [{ status: 'ready' }, ['PX', 1_500, 'NX']],
      [{ pipeline: () => ({}), json: {} }, [{ px: 1_500, nx: true }]],
      [{}, ['PX', 1_500, 'NX']],
    ];
    for (const [shape, rest] of shapes) {
      const { client, calls } = recordingClient(shape);
      expect(await redisStore({ client }).setIfAbsent!('k', 'v', { ttlMs: 1_499.2 })).toBe(true);
      expect(calls).toEqual([['set', 'ai-compaction:k', 'v', ...rest]]);
    }
    const nil = { get: async () => null, set: async () => null, del: async () => 1 };
    expect(await redisStore({ client: nil }).setIfAbsent!('k', 'v', { ttlMs: 10 })).toBe(false);
    await expect(redisStore({ client: nil }).setIfAbsent!('k', 'v', { ttlMs: 0 })).rejects.toThrow('ai-compaction: redisStore ttlMs must be a positive number, got 0');
  });

  it('should call set with positional EX seconds on any other client', async () => {
    const { client, calls } = recordingClient();
    await redisStore({ client }).set('k', 'v');
    expect(calls).toEqual([['set', 'ai-compaction:k', 'v', 'EX', 604_800]]);
  });

  it('should prefix the keys of get and delete', async () => {
    const { client, calls } = recordingClient({ isOpen: true });
    const store = redisStore({ client, prefix: 'x:' });
    await store.get('k');
    await store.delete('k');
    expect(calls).toEqual([
      ['get', 'x:k'],
      ['del', 'x:k'],
    ]);
  });

  it('should decode a value returned as bytes', async () => {
    const client = {
      get: async () => new TextEncoder().encode('ключ 😀'),
      set: async () => 'OK',
      del: async () => 1,
    };
    expect(await redisStore({ client }).get('k')).toBe('ключ 😀');
  });

  it('should reject a reply that is neither a string, bytes nor null', async () => {
    const client = { get: async () => 42, set: async () => 'OK', del: async () => 1 };
    await expect(redisStore({ client }).get('k')).rejects.toThrow(
      new TypeError('ai-compaction: redisStore expected a string from GET, got 42'),
    );
  });

  it('should pass on the rejection of the client unchanged', async () => {
    const failure = new Error('connection lost');
    const client = {
      get: async () => Promise.reject(failure),
      set: async () => Promise.reject(failure),
      del: async () => Promise.reject(failure),
    };
    const store = redisStore({ client });
    await expect(store.get('k')).rejects.toBe(failure);
    await expect(store.set('k', 'v')).rejects.toBe(failure);
    await expect(store.delete('k')).rejects.toBe(failure);
  });

  it('should turn a client that throws synchronously into a rejection', async () => {
    const client = {
      get: () => {
        throw new Error('sync failure');
      },
      set: async () => 'OK',
      del: async () => 1,
    } as unknown as RedisClientLike;
    await expect(redisStore({ client }).get('k')).rejects.toThrow('sync failure');
  });
});

describe('redisStore options', () => {
  const client = { get: async () => null, set: async () => 'OK', del: async () => 1 };

  it.each([
    [undefined, 'ai-compaction: redisStore options must be an object with a client, got undefined'],
    [null, 'ai-compaction: redisStore options must be an object with a client, got null'],
    [{}, 'ai-compaction: redisStore client must be an ioredis, node-redis or @upstash/redis client, got undefined'],
    [{ client: 'redis://localhost' }, 'ai-compaction: redisStore client must be an ioredis, node-redis or @upstash/redis client, got "redis://localhost"'],
    [{ client: { get: client.get, set: client.set } }, 'ai-compaction: redisStore client must have a del() method (an ioredis, node-redis or @upstash/redis client)'],
    [{ client: { set: client.set, del: client.del } }, 'ai-compaction: redisStore client must have a get() method (an ioredis, node-redis or @upstash/redis client)'],
    [{ client: { get: client.get, set: 'SET', del: client.del } }, 'ai-compaction: redisStore client must have a set() method (an ioredis, node-redis or @upstash/redis client)'],
    [{ client, prefix: 1 }, 'ai-compaction: redisStore prefix must be a string, got 1'],
    [{ client, prefix: null }, 'ai-compaction: redisStore prefix must be a string, got null'],
    [{ client, ttlSeconds: 0 }, 'ai-compaction: redisStore ttlSeconds must be a positive integer, got 0'],
    [{ client, ttlSeconds: -60 }, 'ai-compaction: redisStore ttlSeconds must be a positive integer, got -60'],
    [{ client, ttlSeconds: 1.5 }, 'ai-compaction: redisStore ttlSeconds must be a positive integer, got 1.5'],
    [{ client, ttlSeconds: Number.POSITIVE_INFINITY }, 'ai-compaction: redisStore ttlSeconds must be a positive integer, got Infinity'],
    [{ client, ttlSeconds: '60' }, 'ai-compaction: redisStore ttlSeconds must be a positive integer, got "60"'],
  ])('should refuse options %j with a TypeError naming the option', (options, message) => {
    expect(() => redisStore(options as Parameters<typeof redisStore>[0])).toThrow(new TypeError(message));
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])(
    'should reject set with ttlSeconds %s and not call the client',
    async (ttlSeconds) => {
      let sets = 0;
      const counting = { ...client, set: async () => void sets++ };
      await expect(redisStore({ client: counting }).set('k', 'v', { ttlSeconds })).rejects.toThrow(
        new TypeError(`ai-compaction: redisStore ttlSeconds must be a positive number, got ${String(ttlSeconds)}`),
      );
      expect(sets).toBe(0);
    },
  );

  it('should import no Redis library of its own', async () => {
    const { readFile } = await import('node:fs/promises');
    const source = await readFile(new URL('../../src/store/redis.ts', import.meta.url), 'utf8');
    // Its default TTL is one of the tunable numbers (src/tunables.ts, which imports nothing).
    expect(source.match(/^import .*$/gm)).toEqual(["import { DEFAULT_TTL_SECONDS } from '../tunables';", "import type { CompactionStore } from './types';"]);
  });
});
