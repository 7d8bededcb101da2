import { Redis as Upstash } from '@upstash/redis';
import { Redis, Cluster } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { createClient as createClient4 } from 'redis4';
import { describe, expectTypeOf, it } from 'vitest';
import { redisStore, type CompactionStore, type NodeRedis4ClientLike, type RedisClientLike, type RedisStoreOptions } from '../../src/redis';

// Type level only: nothing here runs, so no client connects.
describe('redisStore client types', () => {
  it('should accept an ioredis client without a cast', () => {
    const client = new Redis();
    expectTypeOf(client).toExtend<RedisClientLike>();
    expectTypeOf(redisStore({ client })).toEqualTypeOf<CompactionStore>();
  });

  it('should accept an ioredis cluster without a cast', () => {
    const client = new Cluster([{ host: '127.0.0.1', port: 6379 }]);
    expectTypeOf(client).toExtend<RedisClientLike>();
    expectTypeOf(redisStore({ client })).toEqualTypeOf<CompactionStore>();
  });

  it('should accept a node-redis client without a cast', () => {
    const client = createClient();
    expectTypeOf(client).toExtend<RedisClientLike>();
    expectTypeOf(redisStore({ client, prefix: 'app:', ttlSeconds: 3600 })).toEqualTypeOf<CompactionStore>();
  });

  it('should accept a node-redis client with modules and RESP3 without a cast', () => {
    const client = createClient({ url: 'redis://127.0.0.1:6379', RESP: 3 });
    expectTypeOf(client).toExtend<RedisClientLike>();
    expectTypeOf(redisStore({ client })).toEqualTypeOf<CompactionStore>();
  });

  it('should accept a node-redis 4 client, also in legacyMode, without a cast', () => {
    const client = createClient4();
    expectTypeOf(client).toExtend<NodeRedis4ClientLike>();
    expectTypeOf(redisStore({ client })).toEqualTypeOf<CompactionStore>();
    const legacy = createClient4({ legacyMode: true });
    expectTypeOf(redisStore({ client: legacy })).toEqualTypeOf<CompactionStore>();
  });

  it("should accept a client of one's own typed with Redis's argument order", () => {
    const client = {
      get: async (_key: string): Promise<string | null> => null,
      set: async (_key: string, _value: string, _mode: 'EX', _seconds: number): Promise<'OK'> => 'OK',
      del: async (_key: string): Promise<number> => 1,
    };
    expectTypeOf(client).toExtend<RedisClientLike>();
    expectTypeOf(redisStore({ client })).toEqualTypeOf<CompactionStore>();
  });

  it('should accept an @upstash/redis client without a cast', () => {
    const client = new Upstash({ url: 'https://example.upstash.io', token: 'token' });
    expectTypeOf(client).toExtend<RedisClientLike>();
    expectTypeOf(redisStore({ client })).toEqualTypeOf<CompactionStore>();
  });

  it('should accept a node-redis cluster without a cast', () => {
    const client = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:6379' }] });
    expectTypeOf(client).toExtend<RedisClientLike>();
    expectTypeOf(redisStore({ client })).toEqualTypeOf<CompactionStore>();
  });

  it('should refuse a client without del and options of the wrong type', () => {
    const partial = { get: async (_key: string) => null, set: async (_key: string, _value: string) => 'OK' };
    expectTypeOf(partial).not.toExtend<RedisClientLike>();
    expectTypeOf<{ client: RedisClientLike; prefix: number }>().not.toExtend<RedisStoreOptions>();
    expectTypeOf<{ client: RedisClientLike; ttlSeconds: string }>().not.toExtend<RedisStoreOptions>();
    expectTypeOf<{ prefix: string }>().not.toExtend<RedisStoreOptions>();
  });

  it('should take exactly one options argument', () => {
    expectTypeOf(redisStore).parameters.toEqualTypeOf<[RedisStoreOptions]>();
  });
});
