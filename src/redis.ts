/** A checkpoint store in Redis, shared by every server instance; pass your ioredis, node-redis or @upstash/redis client. */
export { redisStore } from './store/redis';
/** The client `redisStore` accepts: an ioredis, node-redis (v4 to v6) or @upstash/redis instance, typed by shape. */
export type { NodeRedis4ClientLike, RedisClientLike } from './store/redis';
/** Options of `redisStore`: the client, a key prefix and the default time to live. */
export type { RedisStoreOptions } from './store/redis';
/** Where checkpoints and provider counts live; `redisStore` returns one. */
export type { CompactionStore } from './store/types';
