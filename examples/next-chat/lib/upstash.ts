import { Redis } from '@upstash/redis';
import type { CompactionStore } from 'ai-compaction';
import { redisStore } from 'ai-compaction/redis';

/**
 * With `UPSTASH_REDIS_REST_URL` and `UPSTASH_REDIS_REST_TOKEN` set (what Upstash and Vercel's
 * Redis integration give a project), the Edge route keeps its checkpoints in Redis through
 * `@upstash/redis`, which speaks HTTP and so runs where ioredis cannot (no TCP on the Edge
 * runtime): every isolate, and a new one after a deploy, finds the checkpoint of a conversation
 * instead of summarizing it again. Without them each isolate keeps its own in memory.
 */
export function upstashStoreFromEnvironment(): CompactionStore | undefined {
  const url = process.env.UPSTASH_REDIS_REST_URL;
  const token = process.env.UPSTASH_REDIS_REST_TOKEN;
  if (url === undefined || url === '' || token === undefined || token === '') return undefined;
  // HTTP: a request per command, nothing opened here (importing this module, as `next build` does, sends nothing)
  return redisStore({ client: new Redis({ url, token }) });
}
