import { Redis as Upstash } from '@upstash/redis';
import type Redis from 'ioredis';
import type { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompactionStore, compaction } from '../../src';
import type { Message } from '../../src/prompt/types';
import { redisStore } from '../../src/redis';
import { scriptedModel, textOf, user, wrap } from '../support/harness';
import { atCeiling } from '../support/prepare-fixtures';
import { type RedisServer, useRedisClients } from '../support/redis-server';
import { type UpstashEndpoint, startUpstashEndpoint } from '../support/upstash-endpoint';

// One summary for a prefix across instances (docs/stores.md, the lease), over a real Redis: two
// server instances sent the same conversations at once, each at the ceiling of a 20,000-token
// window, write one summary a conversation between them, not one more. The lease is taken with
// SET NX PX.

let server: RedisServer;
let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;
useRedisClients((clients) => ({ server, ioredis, nodeRedis } = clients));

let endpoint: UpstashEndpoint;
let upstash: Upstash;

beforeAll(async () => {
  endpoint = await startUpstashEndpoint(server.port);
  upstash = new Upstash({ url: endpoint.url, token: endpoint.token, enableTelemetry: false });
});

afterAll(async () => {
  await endpoint?.close();
});

/** `store` with every call answered `ms` later (a store farther away), passing on what it has. */
function latent(store: CompactionStore, ms: number): CompactionStore {
  const later = <T>(call: () => Promise<T>) => new Promise<void>((resolve) => setTimeout(resolve, ms)).then(call);
  return {
    get: (key) => later(() => store.get(key)),
    set: (key, value, options) => later(() => store.set(key, value, options)),
    delete: (key) => later(() => store.delete(key)),
    setIfAbsent: (key, value, options) => later(() => store.setIfAbsent!(key, value, options)),
  };
}

/** Conversation `index` at the ceiling: `atCeiling()` opened by its own first message. */
const conversation = (index: number): Message[] => [user(`conversation ${index}`), { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, ...atCeiling()];

// Over HTTP, every store call of 100 steps at once is a request to the test's REST endpoint: with
// 50 conversations a step there waits near the 5 s a step may wait for its store (docs/stores.md),
// past which the store is down and each instance compacts for itself. 20 keep it well inside.
const pairs = [
  ['ioredis', 'node-redis', 50],
  ['node-redis', '@upstash/redis', 20],
] as const;

describe.each(pairs)('two instances over one Redis (%s and %s)', (first, second, conversations) => {
  const clientOf = (name: string) => (name === 'ioredis' ? ioredis : name === 'node-redis' ? nodeRedis : upstash);

  for (const latency of [0, 20]) {
    it(`should make exactly ${conversations} summary requests for ${conversations} conversations sent to both at once (store latency ${latency} ms)`, async () => {
      const prefix = `lease-${first}-${second}-${latency}:`;
      const store = (name: string) => latent(redisStore({ client: clientOf(name), prefix }), latency);
      const modelA = scriptedModel();
      const modelB = scriptedModel();
      const a = wrap(modelA.model, compaction({ contextWindow: 20_000, store: store(first), prepare: false }));
      const b = wrap(modelB.model, compaction({ contextWindow: 20_000, store: store(second), prepare: false }));
      await Promise.all(Array.from({ length: conversations }, (_, index) => [a.doGenerate({ prompt: conversation(index) }), b.doGenerate({ prompt: conversation(index) })]).flat());
      expect(modelA.summaryCalls().length + modelB.summaryCalls().length).toBe(conversations);
      // Each step went out with its conversation's checkpoint.
      const steps = [...modelA.stepCalls(), ...modelB.stepCalls()];
      expect(steps).toHaveLength(2 * conversations);
      for (const call of steps) expect(textOf(call.prompt[0])).toContain('<conversation-checkpoint>');
    });
  }
});
