import type Redis from 'ioredis';
import type { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { compaction } from '../../src';
import { sha256Hex } from '../../src/prompt/hash';
import { redisStore } from '../../src/redis';
import type { Message } from '../../src/prompt/types';
import { assistant, scriptedModel, textOf, user, wrap } from '../support/harness';
import { useRedisClients } from '../support/redis-server';

let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;
useRedisClients((clients) => ({ ioredis, nodeRedis } = clients));

/** A new conversation of 9,001 characters: 2,250 tokens at 4 characters a token, 3,000 at 3. */
const probe = (tag: string): Message[] => [user(`${tag}${'b'.repeat(6_000 - tag.length)}`), assistant('c'.repeat(3_000)), user('q')];

describe('redisStore with learned characters a token', () => {
  it("should let a second server instance estimate a conversation new to it at the ratio the first one's counts taught", async () => {
    const prefix = `sizing-${Date.now()}:`;
    const taught = `taught:${'a'.repeat(11_993)}`;
    // The provider counts the first conversation's 12,000 characters at 4,000 tokens; nothing else.
    const model = scriptedModel({ inputTokens: (prompt) => (textOf(prompt.find((message) => message.role === 'user')) === taught ? 4_000 : undefined) }).model;
    const a = compaction({ contextWindow: 200_000, store: redisStore({ client: ioredis, prefix }) });
    const b = compaction({ contextWindow: 200_000, store: redisStore({ client: nodeRedis, prefix }) });
    await wrap(model, a).doGenerate({ prompt: [user(taught)] });

    // Per model and scope: here no scope.
    const key = `${prefix}sizing:${await sha256Hex(new TextEncoder().encode(JSON.stringify(['mock-provider:mock-model-id', ''])))}`;
    expect(JSON.parse((await ioredis.get(key))!)).toMatchObject({ model: 'mock-provider:mock-model-id', scope: '', chars: [{ measured: 12_000, counted: 4_000 }] });

    b.compactNext();
    await wrap(model, b).doGenerate({ prompt: probe('redis') });
    expect(b.last()!.tokensBefore).toBe(3_000);

    // Another scope on the same Redis: that tenant's prompts taught nothing, 4 stands.
    b.compactNext();
    await wrap(model, b).doGenerate({ prompt: probe('scoped'), providerOptions: { compaction: { scope: 'tenant-2' } } });
    expect(b.last()!.tokensBefore).toBe(2_250);

    // An instance on another prefix (another Redis, in effect) has nothing to learn from: 4 stands.
    const c = compaction({ contextWindow: 200_000, store: redisStore({ client: ioredis, prefix: `${prefix}other:` }) });
    c.compactNext();
    await wrap(model, c).doGenerate({ prompt: probe('other') });
    expect(c.last()!.tokensBefore).toBe(2_250);
  });
});
