import type Redis from 'ioredis';
import type { createClient } from 'redis';
import { describe, expect, it, vi } from 'vitest';
import { type CompactionRecord, compaction } from '../../src';
import { checkpointText } from '../../src/checkpoint/message';
import { redisStore } from '../../src/redis';
import type { Message } from '../../src/prompt/types';
import { SUMMARY, textResult } from '../support/models';
import { atCeiling, band, gate, under } from '../support/prepare-fixtures';
import { assistant, scriptedModel, textOf, user, wrap } from '../support/harness';
import { useRedisClients } from '../support/redis-server';

// Preparing ahead (docs/design.md, "Preparing ahead") with the Redis store (docs/stores.md): a
// checkpoint prepared in the background by one server instance is held back on every instance, and
// sent by whichever one serves the step at the ceiling. 20,000 window -> 17,000 ceiling; prepared
// from 13,600.

let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;
useRedisClients((clients) => ({ ioredis, nodeRedis } = clients));

/**
 * An instance on ioredis that prepared at the band (`band()`), then sent that checkpoint at the
 * ceiling (`atCeiling()`) with over the budget after it: its catch-up is started in the background
 * (`summary` writes each summary, by index: the catch-up's is the second).
 */
async function sentOverBudget(prefix: string, summary?: NonNullable<Parameters<typeof scriptedModel>[0]>['summary']) {
  const first = scriptedModel(summary === undefined ? {} : { summary });
  const background: Promise<unknown>[] = [];
  const a = compaction({ contextWindow: 20_000, store: redisStore({ client: ioredis, prefix }), waitUntil: (promise) => void background.push(promise), logger: { info: () => undefined, warn: () => undefined } });
  await wrap(first.model, a).doGenerate({ prompt: band() });
  await Promise.all(background);
  await wrap(first.model, a).doGenerate({ prompt: atCeiling() });
  return { first, background };
}

/** The thread record of the one conversation stored under `prefix`. */
async function threadUnder(prefix: string): Promise<{ checkpoints: Array<{ digest: string }>; prepared?: Array<{ length: number; catchUp?: boolean }> }> {
  const [threadKey] = await ioredis.keys(`${prefix}thread:*`);
  return JSON.parse((await ioredis.get(threadKey!))!);
}

describe('redisStore with prepare', () => {
  it('should hold a checkpoint prepared by one instance back on another, and let that one send it at the ceiling without a summary request', async () => {
    const prefix = `prepare-${Date.now()}:`;
    const { opened, open } = gate();
    const first = scriptedModel({ summary: () => opened.then(() => textResult(SUMMARY, 100, 200)) });
    const background: Promise<unknown>[] = [];
    const a = compaction({ contextWindow: 20_000, store: redisStore({ client: ioredis, prefix }), waitUntil: (promise) => void background.push(promise) });
    await wrap(first.model, a).doGenerate({ prompt: band() });
    // The step went out; its summary is still being written.
    expect(first.stepCalls()[0]!.prompt).toEqual(band());
    expect(await ioredis.keys(`${prefix}cp:*`)).toHaveLength(0);
    open();
    await Promise.all(background);

    // Stored in Redis: the checkpoint, and the thread lists it as prepared, not among its checkpoints.
    const [checkpointKey] = await ioredis.keys(`${prefix}cp:*`);
    expect(checkpointKey).toBeDefined();
    const [threadKey] = await ioredis.keys(`${prefix}thread:*`);
    const thread = JSON.parse((await ioredis.get(threadKey!))!) as { checkpoints: unknown[]; prepared?: Array<{ length: number; digest: string }> };
    expect(thread.checkpoints).toEqual([]);
    // Each entry with when it was written or last used (`at`).
    expect(thread.prepared).toEqual([{ length: 14, digest: checkpointKey!.slice(`${prefix}cp:`.length), at: expect.any(Number) }]);

    // A second instance, on another client: under the ceiling the conversation goes out whole.
    const second = scriptedModel();
    const records: CompactionRecord[] = [];
    const b = compaction({ contextWindow: 20_000, store: redisStore({ client: nodeRedis, prefix }), onCompaction: (record) => void records.push(record) });
    const wrapped = wrap(second.model, b);
    await wrapped.doGenerate({ prompt: under() });
    expect(second.stepCalls()[0]!.prompt).toEqual(under());
    // At the ceiling it sends the prepared checkpoint at once, and reports it.
    await wrapped.doGenerate({ prompt: atCeiling() });
    expect(second.summaryCalls()).toHaveLength(0);
    expect(records).toEqual([expect.objectContaining({ reason: 'auto', messagesCovered: 14, prepared: true, summary: SUMMARY })]);
    const checkpoint: Message = { role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, records[0]!.record) }] };
    expect(second.stepCalls()[1]!.prompt).toEqual([checkpoint, ...atCeiling().slice(14)]);

    // Sent, it is promoted: now a checkpoint any instance finds, the first one included, with the
    // conversation of the step that sent it (where it left the prompt: the next is prepared from there).
    const promoted = JSON.parse((await ioredis.get(threadKey!))!) as { checkpoints: unknown[] };
    expect(promoted.checkpoints).toEqual([
      { length: 14, digest: checkpointKey!.slice(`${prefix}cp:`.length), sent: { length: atCeiling().length, digest: expect.stringMatching(/^[0-9a-f]{64}$/) }, at: expect.any(Number) },
    ]);
    const third = scriptedModel();
    const next = [...atCeiling(), assistant('done'), user('thanks')];
    await wrap(third.model, a).doGenerate({ prompt: next });
    expect(third.summaryCalls()).toHaveLength(0);
    expect(third.stepCalls()[0]!.prompt).toEqual([checkpoint, ...next.slice(14)]);
  });

  it('should not prepare again on another instance what one has prepared already', async () => {
    const prefix = `prepare-once-${Date.now()}:`;
    const first = scriptedModel();
    const second = scriptedModel();
    const background: Promise<unknown>[] = [];
    const waitUntil = (promise: Promise<unknown>) => void background.push(promise);
    const a = compaction({ contextWindow: 20_000, store: redisStore({ client: ioredis, prefix }), waitUntil });
    const b = compaction({ contextWindow: 20_000, store: redisStore({ client: nodeRedis, prefix }), waitUntil });
    await wrap(first.model, a).doGenerate({ prompt: band() });
    await Promise.all(background);
    await wrap(second.model, b).doGenerate({ prompt: under() });
    await Promise.all(background);
    expect(background).toHaveLength(1);
    expect(first.summaryCalls().length + second.summaryCalls().length).toBe(1);
  });

  it('should list a catch-up in Redis, so that the first step after it is ready sends it on any instance', async () => {
    const prefix = `catch-up-${Date.now()}:`;
    // The step at the ceiling sends the prepared checkpoint with 4,500 tokens and more after it,
    // over the budget: the catch-up of its whole conversation is written in the background.
    const { first, background } = await sentOverBudget(prefix);
    await Promise.all(background);
    expect(first.summaryCalls()).toHaveLength(2);
    const thread = await threadUnder(prefix);
    expect(thread.prepared).toEqual(expect.arrayContaining([expect.objectContaining({ length: atCeiling().length, catchUp: true })]));
    // Another instance, on the other client, serves the next step: under the ceiling, it sends it.
    const second = scriptedModel();
    const records: CompactionRecord[] = [];
    const b = compaction({ contextWindow: 20_000, store: redisStore({ client: nodeRedis, prefix }), onCompaction: (record) => void records.push(record) });
    const next = [...atCeiling(), assistant('done'), user('thanks')];
    await wrap(second.model, b).doGenerate({ prompt: next });
    expect(second.summaryCalls()).toHaveLength(0);
    expect(records).toEqual([expect.objectContaining({ messagesCovered: atCeiling().length, prepared: true })]);
    const checkpoint: Message = { role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, records[0]!.record) }] };
    expect(second.stepCalls()[0]!.prompt).toEqual([checkpoint, ...next.slice(atCeiling().length)]);
  });
  it('should let another instance go on without waiting while a catch-up is written, and send it once it is ready', async () => {
    const prefix = `catch-up-gated-${Date.now()}:`;
    const slow = gate();
    let written = false;
    // the second summary request, the catch-up, is held until the gate opens
    const { first, background } = await sentOverBudget(prefix, (_prompt, index) => (index === 1 ? slow.opened.then(() => ((written = true), textResult(SUMMARY, 100, 200))) : undefined));
    // its request goes out in the background, after the step
    await vi.waitFor(() => expect(first.summaryCalls()).toHaveLength(2));
    // Another instance serves the next two steps while it is written: neither waits for it, and
    // each sends the first checkpoint with what came after it.
    const second = scriptedModel();
    const records: CompactionRecord[] = [];
    const b = compaction({ contextWindow: 20_000, store: redisStore({ client: nodeRedis, prefix }), onCompaction: (record) => void records.push(record) });
    const one = [...atCeiling(), assistant('one'), user('two')];
    const two = [...one, assistant('three'), user('four')];
    await wrap(second.model, b).doGenerate({ prompt: one });
    await wrap(second.model, b).doGenerate({ prompt: two });
    expect(written).toBe(false);
    expect(second.summaryCalls()).toHaveLength(0);
    expect(records).toEqual([]);
    const promoted = await threadUnder(prefix);
    const firstCheckpoint = await ioredis.get(`${prefix}cp:${promoted.checkpoints[0]!.digest}`);
    expect(firstCheckpoint).not.toBeNull();
    expect(textOf(second.stepCalls()[0]!.prompt[0])).toBe(textOf(second.stepCalls()[1]!.prompt[0]));
    expect(second.stepCalls()[1]!.prompt.slice(1)).toEqual(two.slice(14));
    // Written: the first step after it is ready, on the other instance, sends it.
    slow.open();
    await Promise.all(background);
    const three = [...two, assistant('five'), user('six')];
    await wrap(second.model, b).doGenerate({ prompt: three });
    expect(records).toEqual([expect.objectContaining({ messagesCovered: atCeiling().length, prepared: true })]);
    const checkpoint: Message = { role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, records[0]!.record) }] };
    expect(second.stepCalls()[2]!.prompt).toEqual([checkpoint, ...three.slice(atCeiling().length)]);
    expect(second.summaryCalls()).toHaveLength(0);
  });

  it('should change nothing in Redis when a catch-up fails: every instance keeps sending the first checkpoint', async () => {
    const prefix = `catch-up-failed-${Date.now()}:`;
    const { first, background } = await sentOverBudget(prefix, (_prompt, index) => (index === 1 ? Promise.reject(new Error('summarizer down')) : undefined));
    await Promise.all(background);
    expect(first.summaryCalls()).toHaveLength(2);
    const thread = await threadUnder(prefix);
    expect(thread.checkpoints).toHaveLength(1);
    expect((thread.prepared ?? []).filter((ref) => ref.catchUp === true)).toEqual([]);
    const second = scriptedModel();
    const records: CompactionRecord[] = [];
    const b = compaction({ contextWindow: 20_000, store: redisStore({ client: nodeRedis, prefix }), onCompaction: (record) => void records.push(record) });
    const next = [...atCeiling(), assistant('done'), user('thanks')];
    await wrap(second.model, b).doGenerate({ prompt: next });
    expect(records).toEqual([]);
    expect(second.summaryCalls()).toHaveLength(0);
    expect(second.stepCalls()[0]!.prompt.slice(1)).toEqual(next.slice(14));
    expect(textOf(second.stepCalls()[0]!.prompt[0]).startsWith('<conversation-checkpoint>')).toBe(true);
  });
});

