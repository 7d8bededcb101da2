import type Redis from 'ioredis';
import type { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { compaction } from '../../src';
import { redisStore } from '../../src/redis';
import type { Message } from '../../src/prompt/types';
import { scriptedModel, toolResult, user, wrap } from '../support/harness';
import { useRedisClients } from '../support/redis-server';

let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;
useRedisClients((clients) => ({ ioredis, nodeRedis } = clients));

const call = (id: string): Message => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'ls', input: {} }] });

/** A tool loop of `count` steps, each output 16,000 characters (4,000 tokens). */
function steps(count: number): Message[] {
  return [user('Fix the failing tests.'), ...Array.from({ length: count }, (_, index) => [call(`c${index + 1}`), toolResult(`c${index + 1}`, 'ls', 'r'.repeat(16_000))]).flat()];
}

describe('cleared tool results in Redis', () => {
  it('should let a second server instance send the cleared messages the first one stored, byte for byte, without compacting', async () => {
    const prefix = `clear-${Date.now()}:`;
    const first = scriptedModel();
    const second = scriptedModel();
    const a = compaction({ contextWindow: 100_000, clearToolResults: true, store: redisStore({ client: ioredis, prefix }) });
    const b = compaction({ contextWindow: 100_000, clearToolResults: true, store: redisStore({ client: nodeRedis, prefix }) });
    const conversation = steps(24);
    await wrap(first.model, a).doGenerate({ prompt: conversation });
    expect(a.last()).toMatchObject({ kind: 'clear', messagesCovered: 43, cleared: { toolResults: 21 } });
    expect(first.summaryCalls()).toHaveLength(0);

    const [key] = await ioredis.keys(`${prefix}cp:*`);
    expect(JSON.parse((await ioredis.get(key!))!)).toMatchObject({ length: 43, summary: '', clear: { from: 0, base: false, at: 49, outputs: 21, characters: 336_000 } });

    const next = [...structuredClone(conversation), call('c25'), toolResult('c25', 'ls', 'done and dusted')];
    await wrap(second.model, b).doGenerate({ prompt: next });
    expect(second.calls).toHaveLength(1);
    expect(b.last()).toBeUndefined();
    const sent = first.stepCalls()[0]!.prompt;
    expect(JSON.stringify(second.stepCalls()[0]!.prompt.slice(0, sent.length))).toBe(JSON.stringify(sent));
    expect(JSON.stringify(sent)).toContain('[tool result cleared: 16000 characters]');
  });

  it('should carry a clearing made on a summary checkpoint: the other instance sends the checkpoint and the cleared messages', async () => {
    const prefix = `clear-base-${Date.now()}:`;
    const first = scriptedModel();
    const a = compaction({ contextWindow: 100_000, clearToolResults: true, store: redisStore({ client: ioredis, prefix }) });
    const wrapped = wrap(first.model, a);
    const conversation = steps(3);
    a.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    for (let step = 4; a.last()!.kind !== 'clear'; step++) {
      conversation.push(call(`c${step}`), toolResult(`c${step}`, 'ls', 'r'.repeat(16_000)));
      await wrapped.doGenerate({ prompt: structuredClone(conversation) });
    }
    const sent = first.stepCalls().at(-1)!.prompt;
    expect(sent[0]).toEqual(first.stepCalls()[0]!.prompt[0]);

    const second = scriptedModel();
    const b = compaction({ contextWindow: 100_000, store: redisStore({ client: nodeRedis, prefix }) });
    await wrap(second.model, b).doGenerate({ prompt: [...structuredClone(conversation), call('c99'), toolResult('c99', 'ls', 'done and dusted')] });
    expect(second.calls).toHaveLength(1);
    expect(JSON.stringify(second.stepCalls()[0]!.prompt.slice(0, sent.length))).toBe(JSON.stringify(sent));
  });
});
