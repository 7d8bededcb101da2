import { redisStore } from 'ai-compaction/redis';
import type { CompactionStore } from 'ai-compaction';
import Redis from 'ioredis';

/**
 * With `REDIS_URL` set (`redis://localhost:6379`), the middleware keeps its checkpoints in Redis,
 * so that every server instance, and this one after a restart, finds the checkpoint of a
 * conversation instead of summarizing it again. Node.js only (ioredis speaks TCP); node-redis
 * (`createClient({ url }).connect()`) fits `redisStore` the same way.
 */
export function storeFromEnvironment(): CompactionStore | undefined {
  const url = process.env.REDIS_URL;
  if (url === undefined || url === '') return undefined;
  // connects on the first command, so that importing this module (as `next build` does) opens nothing
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let warned = false;
  // the middleware goes on without the store while Redis is down (and logs it); say so once here too
  client.on('error', (error: Error) => {
    if (warned) return;
    warned = true;
    console.warn(`next-chat: Redis at REDIS_URL: ${error.message}`);
  });
  client.on('ready', () => (warned = false));
  return redisStore({ client });
}
