import type Redis from 'ioredis';
import type { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { compaction } from '../../src';
import { checkpointText } from '../../src/checkpoint/message';
import { redisStore } from '../../src/redis';
import type { Message } from '../../src/prompt/types';
import { SUMMARY } from '../support/models';
import { assistant, chat, recordingLogger, scriptedModel, user, wrap } from '../support/harness';
import { type RedisServer, useRedisClients } from '../support/redis-server';

let server: RedisServer;
let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;
useRedisClients((clients) => ({ server, ioredis, nodeRedis } = clients));

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const checkpointFor = (record: string) => ({ role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, record) }] });

describe('redisStore with the middleware', () => {
  it('should let a second server instance send the checkpoint the first one made, without a summary request', async () => {
    const prefix = `share-${Date.now()}:`;
    const first = scriptedModel();
    const second = scriptedModel();
    // Two instances, as two server processes would have: one on ioredis, one on node-redis.
    const a = compaction({ contextWindow: 200_000, store: redisStore({ client: ioredis, prefix }) });
    const b = compaction({ contextWindow: 200_000, store: redisStore({ client: nodeRedis, prefix }) });
    const prompt = [...chat(2, 20, 'r'), user('go')];
    a.compactNext();
    await wrap(first.model, a).doGenerate({ prompt });
    expect(first.summaryCalls()).toHaveLength(1);

    await wrap(second.model, b).doGenerate({ prompt: [...prompt, assistant('went'), user('next')] });
    expect(second.summaryCalls()).toHaveLength(0);
    expect(second.stepCalls()[0]!.prompt).toEqual([checkpointFor(a.last()!.record), user('go'), assistant('went'), user('next')]);

    const keys = await ioredis.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const key of keys) expect(key).toMatch(new RegExp(`^${prefix}(cp|thread|sizing|lease):[0-9a-f]{64}$`));
  });

  it('should keep every step going while Redis is down, warn, and use Redis again once it is back', async () => {
    const prefix = `fault-${Date.now()}:`;
    const log = recordingLogger();
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000, store: redisStore({ client: ioredis, prefix }), logger: log.logger });
    const wrapped = wrap(scripted.model, middleware);
    const conversation: Message[] = [...chat(2, 20, 'f'), user('step 0')];
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    expect(scripted.summaryCalls()).toHaveLength(1);

    await server.stop();
    await waitFor(() => ioredis.status !== 'ready');
    for (let index = 1; index <= 3; index++) {
      conversation.push(assistant(`answer ${index - 1}`), user(`step ${index}`));
      await wrapped.doGenerate({ prompt: conversation });
    }
    expect(log.warn.filter((line) => line.includes('the store is unavailable (its client is not connected)'))).toHaveLength(1);
    // The conversation is ~100 tokens against a 170,000 ceiling and no compaction was asked for: a
    // checkpoint that cannot be read is no reason to summarize again. The manual one before the
    // outage stays the only summary request.
    expect(scripted.summaryCalls()).toHaveLength(1);
    expect(scripted.stepCalls()).toHaveLength(4);
    // While Redis is down the checkpoint is not found: the conversation goes out whole, never with a wrong checkpoint.
    for (const call of scripted.stepCalls().slice(1)) {
      expect(call.prompt).toEqual(conversation.slice(0, call.prompt.length));
    }
    expect(scripted.stepCalls().slice(1).map((call) => call.prompt.length)).toEqual([7, 9, 11]);

    await server.start();
    await waitFor(() => ioredis.status === 'ready');
    const other = scriptedModel();
    const fresh = compaction({ contextWindow: 200_000, store: redisStore({ client: ioredis, prefix }) });
    fresh.compactNext();
    await wrap(other.model, fresh).doGenerate({ prompt: conversation });
    const later = scriptedModel();
    const third = compaction({ contextWindow: 200_000, store: redisStore({ client: nodeRedis, prefix }) });
    await waitFor(() => nodeRedis.isReady);
    await wrap(later.model, third).doGenerate({ prompt: [...conversation, assistant('x'), user('y')] });
    expect(later.summaryCalls()).toHaveLength(0);
    expect(later.stepCalls()[0]!.prompt[0]).toEqual(checkpointFor(fresh.last()!.record));
  });

  it('should ignore a garbage or truncated value under a key, with a warning', async () => {
    const prefix = `garbage-${Date.now()}:`;
    const maker = scriptedModel();
    const a = compaction({ contextWindow: 200_000, store: redisStore({ client: ioredis, prefix }) });
    const prompt = [...chat(2, 20, 'g'), user('go')];
    a.compactNext();
    await wrap(maker.model, a).doGenerate({ prompt });
    const [checkpointKey] = await ioredis.keys(`${prefix}cp:*`);
    const stored = (await ioredis.get(checkpointKey!))!;

    for (const garbage of [stored.slice(0, stored.length / 2), '{"v":1,"digest":"nope"}', 'not json at all']) {
      await ioredis.set(checkpointKey!, garbage);
      const log = recordingLogger();
      const reader = scriptedModel();
      const b = compaction({ contextWindow: 200_000, store: redisStore({ client: ioredis, prefix }), logger: log.logger });
      const next = [...prompt, assistant('went'), user('next')];
      await wrap(reader.model, b).doGenerate({ prompt: next });
      expect(reader.stepCalls()[0]!.prompt).toEqual(next);
      expect(log.warn.some((line) => line.includes('ignored a malformed checkpoint'))).toBe(true);
    }
    const threadKey = (await ioredis.keys(`${prefix}thread:*`))[0]!;
    await ioredis.set(threadKey, '{"v":1,"checkpoints":[{"length":"x"}]');
    const log = recordingLogger();
    const reader = scriptedModel();
    await wrap(reader.model, compaction({ store: redisStore({ client: ioredis, prefix }), logger: log.logger })).doGenerate({ prompt });
    expect(reader.stepCalls()[0]!.prompt).toEqual(prompt);
    expect(log.warn.some((line) => line.includes('ignored a malformed thread record'))).toBe(true);
  });
});
