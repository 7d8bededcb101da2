import { afterEach, describe, expect, it, vi } from 'vitest';
import { compaction } from '../../src';
import { checkpointText } from '../../src/checkpoint/message';
import { keepEnds } from '../../src/checkpoint/serialize';
import { withUserWords } from '../../src/checkpoint/user-words';
import { memoryStore } from '../../src/store/memory';
import type { Message } from '../../src/prompt/types';
import { estimatePrompt } from '../../src/sizing/estimate';
import { SUMMARY, textResult } from '../support/models';
import { assistant, chat, recordingLogger, scriptedModel, system, textOf, toolCall, toolCallingModel, toolResult, user, wrap } from '../support/harness';

const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);
const checkpointFor = (record: string) => ({ role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, record) }] });

describe('compaction', () => {
  describe('manual compaction', () => {
    it('should compact the next step whatever its size after compactNext(), once', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(scripted.model, middleware);
      middleware.compactNext();
      const prompt = [...chat(2, 10), user('go')];
      await wrapped.doGenerate({ prompt });
      expect(middleware.last()!.reason).toBe('manual');
      await wrapped.doGenerate({ prompt: [...prompt, assistant('went'), user('again')] });
      expect(scripted.summaryCalls()).toHaveLength(1);
    });

    it('should compact a step whose providerOptions.compaction.compact is true, and remove the key', async () => {
      const scripted = scriptedModel();
      const middleware = compaction();
      const prompt = [...chat(2, 10), user('go')];
      await wrap(scripted.model, middleware).doGenerate({
        prompt,
        providerOptions: { compaction: { compact: true }, openai: { store: false } },
      });
      expect(middleware.last()!.reason).toBe('manual');
      for (const call of scripted.calls) expect(call.providerOptions).toEqual({ openai: { store: false } });
    });

    it('should refuse a malformed providerOptions.compaction with an error naming it', async () => {
      const scripted = scriptedModel();
      const run = wrap(scripted.model, compaction()).doGenerate({
        prompt: [user('hi')],
        providerOptions: { compaction: { scope: 42 } },
      });
      await expect(run).rejects.toThrow('ai-compaction: providerOptions.compaction.scope must be a string, got 42');
      expect(scripted.calls).toHaveLength(0);
    });

    it('should refuse providerOptions.compaction that is not an object of its fields, naming the option and the value', async () => {
      const cases: [unknown, string][] = [
        ['tenant-1', 'ai-compaction: providerOptions.compaction must be an object of scope, compact and conversation, got "tenant-1"'],
        [null, 'ai-compaction: providerOptions.compaction must be an object of scope, compact and conversation, got null'],
        [['tenant-1'], 'ai-compaction: providerOptions.compaction must be an object of scope, compact and conversation, got an array'],
        [{ scope: 'tenant-1', tenant: 'x' }, 'ai-compaction: providerOptions.compaction has an unknown field "tenant" (it takes scope, compact and conversation)'],
        [{ conversation: 7 }, 'ai-compaction: providerOptions.compaction.conversation must be a string, got 7'],
        [{ compact: 'yes' }, 'ai-compaction: providerOptions.compaction.compact must be true or false, got "yes"'],
      ];
      for (const [options, message] of cases) {
        const scripted = scriptedModel();
        const run = wrap(scripted.model, compaction()).doGenerate({ prompt: [user('hi')], providerOptions: { compaction: options } as never });
        await expect(run).rejects.toThrow(TypeError);
        await expect(run).rejects.toThrow(message);
        expect(scripted.calls).toHaveLength(0);
      }
    });

    it('should take a conversation name out of providerOptions.compaction before the provider sees it', async () => {
      const scripted = scriptedModel();
      await wrap(scripted.model, compaction()).doGenerate({ prompt: [user('hi')], providerOptions: { compaction: { scope: 't', conversation: 'chat-1' }, openai: { store: false } } });
      expect(scripted.calls[0]!.providerOptions).toEqual({ openai: { store: false } });
    });

    it('should not compact on its own with auto: false', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 20_000, auto: false });
      await wrap(scripted.model, middleware).doGenerate({ prompt: [user(tokens(9_000)), assistant(tokens(9_000, 'a')), user('go')] });
      expect(scripted.summaryCalls()).toHaveLength(0);
      middleware.compactNext();
      await wrap(scripted.model, middleware).doGenerate({ prompt: [user(tokens(9_000)), assistant(tokens(9_000, 'a')), user('go')] });
      expect(middleware.last()!.reason).toBe('manual');
    });
  });

  describe('many conversations, one instance', () => {
    it('should never let one conversation see the checkpoint of another', async () => {
      const summaries = new Map<string, string>();
      const scripted = scriptedModel({
        summary: (prompt) => {
          // The conversation's own tag: from its own newest words, not from the first user message
          // (the checkpoint, after the first compaction), so a leaked checkpoint shows as the other tag.
          const tag = ownTag(prompt);
          const summary = SUMMARY.replace('Fix the failing users route test', `conversation tagged ${tag}`);
          summaries.set(tag, summary);
          return textResult(summary);
        },
      });
      const middleware = compaction({ contextWindow: 20_000 });
      const wrapped = wrap(scripted.model, middleware);
      const a: Message[] = [];
      const b: Message[] = [];
      for (let turn = 0; turn < 12; turn++) {
        for (const [conversation, tag] of [[a, 'a'], [b, 'b']] as const) {
          conversation.push(user(`${tag}${turn} ${tokens(1_500, tag)}`));
          await wrapped.doGenerate({ prompt: conversation });
          conversation.push(assistant(`${tag}${turn} answered ${tokens(1_500, tag)}`));
        }
      }
      const steps = scripted.stepCalls();
      expect(steps).toHaveLength(24);
      expect(scripted.summaryCalls().length).toBeGreaterThanOrEqual(4);
      expect([...summaries.keys()].sort()).toEqual(['a', 'b']);
      for (const [index, call] of steps.entries()) {
        const own = index % 2 === 0 ? 'a' : 'b';
        const other = own === 'a' ? 'b' : 'a';
        const text = call.prompt.map(textOf).join('\n');
        expect(text).not.toContain(`conversation tagged ${other}`);
        expect(text).not.toContain(tokens(100, other));
      }
      // Each conversation's later steps carry its own tagged checkpoint.
      for (const [parity, own] of [[0, 'a'], [1, 'b']] as const) {
        expect(steps.some((call, index) => index % 2 === parity && call.prompt.map(textOf).join('\n').includes(`conversation tagged ${own}`))).toBe(true);
      }
      // A summary request never carries the other conversation's checkpoint or messages either.
      for (const call of scripted.summaryCalls()) {
        const other = ownTag(call.prompt) === 'a' ? 'b' : 'a';
        const text = call.prompt.map(textOf).join('\n');
        expect(text).not.toContain(`conversation tagged ${other}`);
        expect(text).not.toContain(tokens(100, other));
      }
    });

    it('should keep checkpoints of two scopes apart for identical messages', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(scripted.model, middleware);
      const prompt = [...chat(2, 10), user('go')];
      await wrapped.doGenerate({ prompt, providerOptions: { compaction: { scope: 'tenant-1', compact: true } } });
      await wrapped.doGenerate({ prompt: [...prompt, assistant('a'), user('b')], providerOptions: { compaction: { scope: 'tenant-2' } } });
      await wrapped.doGenerate({ prompt: [...prompt, assistant('a'), user('b')], providerOptions: { compaction: { scope: 'tenant-1' } } });
      const [, second, third] = scripted.stepCalls();
      expect(second!.prompt).toEqual([...prompt, assistant('a'), user('b')]);
      expect(third!.prompt[0]).toEqual(checkpointFor(middleware.last()!.record));
    });

    it('should key counts by content, so a conversation never borrows the count of another', async () => {
      // Conversation A is counted at 190,000 by the provider; B starts with the same message but differs after.
      const scripted = scriptedModel({ inputTokens: (prompt) => (textOf(prompt[1]).startsWith('A') ? 190_000 : 100) });
      const middleware = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: [user('same start'), assistant('A branch')] });
      await wrapped.doGenerate({ prompt: [user('same start'), assistant('B branch'), user('b1')] });
      expect(scripted.summaryCalls()).toHaveLength(0);
      await wrapped.doGenerate({ prompt: [user('same start'), assistant('A branch'), assistant('more'), user('a1')] });
      expect(scripted.summaryCalls()).toHaveLength(1);
    });

    it('should run one summary request for ten concurrent steps that need the same compaction', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 20_000 });
      const wrapped = wrap(scripted.model, middleware);
      const prompt = [user(tokens(9_000)), assistant(tokens(9_000, 'a')), user('go')];
      await Promise.all(Array.from({ length: 10 }, () => wrapped.doGenerate({ prompt })));
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(scripted.stepCalls()).toHaveLength(10);
      // The covered turn is one 9,000-token user message and its reply: the record keeps the task's
      // first and last parts (a quarter of the most the record may take, the budget of a quarter of
      // the room of 17,000: 4,250, so 1,062 tokens, 2,124 characters each end) and notes the reply
      // as summarized.
      const record = `[User]: ${keepEnds(tokens(9_000), 2_124)}\n\n[1 earlier steps of this turn are summarized above]`;
      for (const call of scripted.stepCalls()) expect(call.prompt).toEqual([checkpointFor(record), user('go')]);
    });
  });

  describe('conversations that open with the same words', () => {
    it('should find the checkpoint of each of 40 conversations that share their first message', async () => {
      // An index holds 32 entries; conversations are indexed through their first reply, so the 40
      // do not share one.
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(scripted.model, middleware);
      const conversation = (index: number) => [user('What can you do?'), assistant(`Reply ${index}`), user(`ask ${index}`)];
      for (let index = 0; index < 40; index++) {
        middleware.compactNext();
        await wrapped.doGenerate({ prompt: conversation(index) });
      }
      expect(scripted.summaryCalls()).toHaveLength(40);
      for (let index = 0; index < 40; index++) {
        await wrapped.doGenerate({ prompt: [...conversation(index), assistant('answer'), user('more')] });
      }
      const later = scripted.stepCalls().slice(40);
      expect(later.map((call) => textOf(call.prompt[0]!).startsWith('<conversation-checkpoint>'))).toEqual(new Array(40).fill(true));
      expect(later.map((call) => textOf(call.prompt[1]!))).toEqual(Array.from({ length: 40 }, (_, index) => `ask ${index}`));
    });
  });

  describe('conversations that share an opening through its first reply', () => {
    it('should let none of 64 conversations sharing an opening re-summarise on its next step', async () => {
      // One index for all 64 (a fixed task and its canned first reply): each conversation's
      // checkpoint and count stay while it is in use, whatever the others wrote since.
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 20_000 });
      const wrapped = wrap(scripted.model, middleware);
      const opening = [user('Run the nightly audit.'), assistant('Starting the audit.')];
      // About 18,000 tokens: over the ceiling of 17,000, so each compacts on its first step.
      const conversation = (index: number) => [...opening, user(`c${index} ${tokens(9_000)}`), assistant(tokens(9_000, 'a')), user('go')];
      for (let index = 0; index < 64; index++) await wrapped.doGenerate({ prompt: conversation(index) });
      expect(scripted.summaryCalls()).toHaveLength(64);
      for (let index = 0; index < 64; index++) await wrapped.doGenerate({ prompt: [...conversation(index), assistant('done'), user('next')] });
      expect(scripted.summaryCalls()).toHaveLength(64);
      const later = scripted.stepCalls().slice(64);
      expect(later.map((call) => textOf(call.prompt[0]!).startsWith('<conversation-checkpoint>'))).toEqual(new Array(64).fill(true));
    });
  });

  describe('what a thread keeps', () => {
    afterEach(() => vi.restoreAllMocks());

    it('should mark the checkpoint a step went out with as used at that step, so that a full thread keeps it', async () => {
      let now = 1_700_000_000_000;
      vi.spyOn(Date, 'now').mockImplementation(() => now);
      const store = memoryStore();
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000, store });
      const wrapped = wrap(scripted.model, middleware);
      const prompt = [user('Run the nightly audit.'), assistant('Starting.'), user('go')];
      middleware.compactNext();
      await wrapped.doGenerate({ prompt });
      const [digest] = Object.keys(middleware.state().threads);
      const entry = async () => (JSON.parse((await store.get(`thread:${digest}`))!) as { checkpoints: { at?: number }[] }).checkpoints[0]!;
      expect((await entry()).at).toBe(1_700_000_000_000);
      now += 60_000;
      await wrapped.doGenerate({ prompt: [...prompt, assistant('done'), user('next')] });
      expect(hasCheckpointText(scripted.stepCalls().at(-1)!.prompt)).toBe(true);
      expect((await entry()).at).toBe(1_700_000_060_000);
    });
  });

  describe('a checkpoint made before the first reply', () => {
    const openings: Array<[string, Message[]]> = [
      ['an assistant greeting first', [assistant('Hi! How can I help?'), user('fix the bug')]],
      ['a seeded tool call first', [toolCall('c1', 'read', { path: 'a' }), toolResult('c1', 'read', 'contents'), user('fix it')]],
      ['a system message between the user and the reply', [user('u1'), system('context'), assistant('a1'), user('u2')]],
      ['a user message first', [user('u0'), assistant('a0'), user('u1')]],
    ];
    for (const [name, opening] of openings) {
      it(`should keep using it on every later step (${name})`, async () => {
        const scripted = scriptedModel();
        const middleware = compaction({ contextWindow: 200_000 });
        const wrapped = wrap(scripted.model, middleware);
        middleware.compactNext();
        await wrapped.doGenerate({ prompt: opening });
        let conversation = [...opening];
        for (let index = 0; index < 3; index++) {
          conversation = [...conversation, assistant(`reply ${index}`), user(`q ${index}`)];
          await wrapped.doGenerate({ prompt: conversation });
        }
        expect(scripted.summaryCalls()).toHaveLength(1);
        expect(scripted.stepCalls().map((call) => textOf(call.prompt[0]!).startsWith('<conversation-checkpoint>'))).toEqual([true, true, true, true]);
      });
    }

    it('should end a hold placed on the first step at the next step, and keep the no-progress hold that follows', async () => {
      // Tool definitions over the 170,000 ceiling: the first step has nothing older to compact. The
      // second has (the first message): it compacts once, cannot get under the ceiling, and holds.
      const log = recordingLogger();
      const scripted = scriptedModel();
      const wrapped = wrap(scripted.model, compaction({ contextWindow: 200_000, logger: log.logger }));
      const tools = [{ type: 'function' as const, name: 'big', description: tokens(171_000, 'd'), inputSchema: { type: 'object' as const } }];
      let conversation: Message[] = [user('Start the task.')];
      await wrapped.doGenerate({ prompt: conversation, tools });
      for (let index = 0; index < 5; index++) {
        conversation = [...conversation, toolCall(`c${index}`, 'big', {}), toolResult(`c${index}`, 'big', `out ${index}`)];
        await wrapped.doGenerate({ prompt: conversation, tools });
      }
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(scripted.calls.map((call) => (call.summary ? 'S' : 's')).join('')).toBe('sSsssss');
      expect(log.warn.filter((line) => line.includes('there is nothing older to compact'))).toHaveLength(1);
      expect(log.warn.filter((line) => line.includes('the compaction made no progress'))).toHaveLength(1);
    });

    it('should keep a failure hold placed on the first step, before any reply, through the tool loop that follows', async () => {
      // An assistant greeting first: the first step can compact it, and its records are kept under
      // the first message until the conversation has a reply to a user message (the first tool call).
      const log = recordingLogger();
      const scripted = scriptedModel({ summary: () => textResult('no template') });
      const wrapped = wrap(scripted.model, compaction({ contextWindow: 200_000, logger: log.logger }));
      const tools = [{ type: 'function' as const, name: 'big', description: tokens(171_000, 'd'), inputSchema: { type: 'object' as const } }];
      let conversation: Message[] = [assistant('How can I help?'), user('Start the task.')];
      await wrapped.doGenerate({ prompt: conversation, tools });
      for (let index = 0; index < 5; index++) {
        conversation = [...conversation, toolCall(`c${index}`, 'big', {}), toolResult(`c${index}`, 'big', `out ${index}`)];
        await wrapped.doGenerate({ prompt: conversation, tools });
      }
      // One failed compaction (the request and its reminder), then held: the loop grows by far less than 17,000.
      expect(scripted.calls.map((call) => (call.summary ? 'S' : 's')).join('')).toBe('SSssssss');
      expect(log.warn.filter((line) => line.includes('compaction failed (template-missing)'))).toHaveLength(1);
    });
  });

  describe('conversations that share their opening exchange (one index record)', () => {
    /** A store in which every read and write takes `turns` turns of the event loop (no time) and acts when it completes, as over a network. */
    function slowStore(turns: number) {
      const inner = memoryStore();
      const later = async <T>(act: () => Promise<T>): Promise<T> => {
        for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
        return act();
      };
      return {
        get: (key: string) => later(() => inner.get(key)),
        set: (key: string, value: string) => later(() => inner.set(key, value)),
        delete: (key: string) => later(() => inner.delete(key)),
      };
    }
    const opening = (index: number) => [user('Start the task.'), assistant('On it.'), user(`q${index}`), assistant(`r${index}`), user(`next ${index}`)];
    const compactNow = { providerOptions: { compaction: { compact: true } } };

    it('should keep every checkpoint when six of them are stored at once by one instance', async () => {
      const store = slowStore(3);
      const scripted = scriptedModel();
      const wrapped = wrap(scripted.model, compaction({ store }));
      await Promise.all([0, 1, 2, 3, 4, 5].map((index) => wrapped.doGenerate({ prompt: opening(index), ...compactNow })));
      expect(scripted.summaryCalls()).toHaveLength(6);

      const fresh = scriptedModel();
      const other = wrap(fresh.model, compaction({ store }));
      for (const index of [0, 1, 2, 3, 4, 5]) await other.doGenerate({ prompt: [...opening(index), assistant('x'), user('y')] });
      // Without a window nothing compacts on its own: each step shows whether its checkpoint was found.
      expect(fresh.stepCalls().map((call) => textOf(call.prompt[0]!).startsWith('<conversation-checkpoint>'))).toEqual([true, true, true, true, true, true]);
    });

    it('should keep both checkpoints when two instances store them at the same moment', async () => {
      // Both read the thread, then both write it: the second write drops the first one's entry.
      // The first instance reads the thread back, sees its entry gone, and writes it again.
      const store = slowStore(3);
      const scripted = scriptedModel();
      const instances = [compaction({ store }), compaction({ store })];
      await Promise.all(instances.map((middleware, index) => wrap(scripted.model, middleware).doGenerate({ prompt: opening(index), ...compactNow })));
      expect(scripted.summaryCalls()).toHaveLength(2);

      const fresh = scriptedModel();
      const other = wrap(fresh.model, compaction({ store }));
      for (const index of [0, 1]) await other.doGenerate({ prompt: [...opening(index), assistant('x'), user('y')] });
      expect(fresh.stepCalls().map((call) => textOf(call.prompt[0]!).startsWith('<conversation-checkpoint>'))).toEqual([true, true]);
    });

    it("should not let one conversation's no-progress hold end another's", async () => {
      // Tool definitions over the 170,000 ceiling of a 200k window: no compaction can make progress.
      const log = recordingLogger();
      const scripted = scriptedModel();
      const wrapped = wrap(scripted.model, compaction({ contextWindow: 200_000, logger: log.logger }));
      const tools = [{ type: 'function' as const, name: 'big', description: tokens(171_000, 'd'), inputSchema: { type: 'object' as const } }];
      let a = [user('Start the task.'), assistant('On it.'), user('A1'), assistant('a1'), user('A2')];
      let b = [user('Start the task.'), assistant('On it.'), user('B1'), assistant('b1'), user('B2')];
      await wrapped.doGenerate({ prompt: a, tools });
      await wrapped.doGenerate({ prompt: b, tools });
      expect(scripted.summaryCalls()).toHaveLength(2);
      for (let round = 0; round < 4; round++) {
        a = [...a, assistant(`A step ${round}`), user(`A more ${round}`)];
        b = [...b, assistant(`B step ${round}`), user(`B more ${round}`)];
        await wrapped.doGenerate({ prompt: a, tools });
        await wrapped.doGenerate({ prompt: b, tools });
      }
      expect(scripted.summaryCalls()).toHaveLength(2);
      expect(log.warn.filter((line) => line.includes('made no progress'))).toHaveLength(2);
    });
  });

  describe('state', () => {
    it('should continue from state() on a new instance without another summary request', async () => {
      const first = scriptedModel();
      const before = compaction({ contextWindow: 200_000 });
      const prompt = [...chat(2, 10), user('go')];
      before.compactNext();
      await wrap(first.model, before).doGenerate({ prompt });
      const saved = JSON.parse(JSON.stringify(before.state()));

      const second = scriptedModel();
      const after = compaction({ contextWindow: 200_000, state: saved, store: memoryStore() });
      await wrap(second.model, after).doGenerate({ prompt: [...prompt, assistant('went'), user('next')] });
      expect(second.summaryCalls()).toHaveLength(0);
      expect(second.stepCalls()[0]!.prompt).toEqual([checkpointFor(before.last()!.record), user('go'), assistant('went'), user('next')]);
    });

    it('should hold the checkpoint of the conversation used last, even after eight others compacted', async () => {
      // state() holds the 8 threads and checkpoints used last. Conversation 0 compacts, nine
      // others compact after it, then conversation 0 takes a step with its (cached) checkpoint.
      const first = scriptedModel();
      const before = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(first.model, before);
      const conversation = (index: number) => [user(`conversation ${index}`), assistant('a1'), user('q2'), assistant('a2'), user('q3')];
      for (let index = 0; index < 10; index++) {
        before.compactNext();
        await wrapped.doGenerate({ prompt: conversation(index) });
      }
      const next = [...conversation(0), assistant('a3'), user('q4')];
      await wrapped.doGenerate({ prompt: next });
      expect(first.summaryCalls()).toHaveLength(10);
      // When the whole conversation fits in keep, the record is the latest exchange (docs/design.md,
      // "The record"), opened with the user's first message (docs/design.md, "The user's words").
      const record = withUserWords(['[User]: conversation 0'], '[User]: q2\n\n[Assistant]: a2');
      expect(first.stepCalls().at(-1)!.prompt[0]).toEqual(checkpointFor(record));

      const second = scriptedModel();
      const after = compaction({ contextWindow: 200_000, state: JSON.parse(JSON.stringify(before.state())), store: memoryStore() });
      await wrap(second.model, after).doGenerate({ prompt: next });
      expect(second.summaryCalls()).toHaveLength(0);
      expect(second.stepCalls()[0]!.prompt).toEqual([checkpointFor(record), user('q3'), assistant('a3'), user('q4')]);
    });

    it('should refuse a state changed by hand, applying none of it', () => {
      const middleware = compaction();
      const state = middleware.state();
      expect(() => compaction({ state: { ...state, version: 99 } })).toThrow('ai-compaction: option state is refused: it is of version 99');
      expect(() => compaction({ state: { ...state, checksum: '0'.repeat(64) } })).toThrow('checksum does not match');
    });
  });

  describe('small windows', () => {
    it('should bound summary requests over 50 steps of a 16k window with a 6,000-token system prompt', async () => {
      const log = recordingLogger();
      const scripted = toolCallingModel();
      // The count below is that of compacting at the ceiling; prepare.test.ts bounds the same loop with
      // the next checkpoint prepared in the background (docs/design.md, "Preparing ahead").
      const middleware = compaction({ contextWindow: 16_000, logger: log.logger, prepare: false });
      const wrapped = wrap(scripted.model, middleware);
      const system: Message = { role: 'system', content: tokens(6_000, 's') };
      const conversation: Message[] = [user('Fix the build.')];
      for (let index = 0; index < 50; index++) {
        const result = await wrapped.doGenerate({ prompt: [system, ...conversation] });
        // The model's own call: after the compaction's parts on a step that compacted (hooks/part.ts).
        const call = result.content.at(-1) as unknown as { toolCallId: string; toolName: string; input: string };
        conversation.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: call.toolCallId, toolName: 'run', input: JSON.parse(call.input) }] });
        conversation.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: call.toolCallId, toolName: 'run', output: { type: 'text', value: tokens(3_000, 't') } }] });
      }
      const steps = scripted.stepCalls();
      expect(steps).toHaveLength(50);
      // 16,000 window -> ceiling 13,600; the 6,000-token system prompt leaves a room of 7,600, and a
      // compaction keeps a quarter of it, 1,900 (docs/design.md, "One budget"): the newest step stays
      // live shortened to a quarter of the room (1,900 of its 3,006 tokens), the checkpoint takes
      // what the budget leaves (the summary, and the task's ends in the record). A step after a
      // compaction is then about 6,000 + 1,900 + 300 = 8,200; the next adds 3,003 (11,200, under the
      // ceiling) and the one after reaches it. Steps 1-3 (6,004, 9,006,
      // 12,009) need none; steps 4, 6, 8 ... 50 compact: 24 summary requests, a compaction every
      // other step, the floor with a 3,000-token step.
      const summaries = scripted.summaryCalls().length;
      expect(summaries).toBe(24);
      expect(scripted.calls.map((call) => (call.summary ? 'S' : 's')).join('')).toBe(`sss${'Sss'.repeat(23)}Ss`);
      expect(log.info).toHaveLength(summaries);
      expect(log.warn).toEqual([]);
      for (const call of steps) expect(estimatePrompt(call.prompt, call.tools)).toBeLessThan(13_600);
      // Never more than one summary request between two steps.
      expect(scripted.calls.map((call) => (call.summary ? 'S' : 's')).join('')).not.toContain('SS');
    });

    it('should not repeat a compaction that cannot make progress, and warn once', async () => {
      const log = recordingLogger();
      const scripted = scriptedModel({ inputTokens: () => undefined });
      const middleware = compaction({ contextWindow: 20_000, logger: log.logger });
      const wrapped = wrap(scripted.model, middleware);
      // One giant newest message: nothing older to compact; the prompt (18,000) still fits the window.
      const conversation: Message[] = [user(tokens(18_000))];
      for (let index = 0; index < 10; index++) {
        await wrapped.doGenerate({ prompt: conversation });
        conversation.push(user(`more ${index}`));
      }
      expect(scripted.summaryCalls()).toHaveLength(0);
      expect(scripted.stepCalls()).toHaveLength(10);
      expect(log.warn.filter((line) => line.includes('Not compacting again'))).toHaveLength(1);
    });

    it('should compact again only after the prompt grew by a tenth of the ceiling when a system prompt fills it', async () => {
      const log = recordingLogger();
      const scripted = scriptedModel({ inputTokens: () => undefined });
      // 40,000 window -> ceiling 24,000; the system prompt alone takes 24,500.
      const middleware = compaction({ contextWindow: 40_000, logger: log.logger });
      const wrapped = wrap(scripted.model, middleware);
      const system: Message = { role: 'system', content: tokens(24_500, 's') };
      const conversation: Message[] = [user('start')];
      for (let index = 0; index < 16; index++) {
        await wrapped.doGenerate({ prompt: [system, ...conversation] });
        conversation.push(assistant(tokens(200, 'a')), user(`next ${index}`));
      }
      // Step 1 has nothing older to compact; step 2 has (the first exchange) and compacts, still over
      // the ceiling (24,675). Each step adds ~201 tokens, so the prompt has grown by 2,400 (a tenth
      // of 24,000) at step 14 (27,093), which compacts again and is still over the ceiling.
      expect(scripted.calls.map((call) => (call.summary ? 'S' : 's')).join('')).toBe(`sS${'s'.repeat(12)}S${'s'.repeat(3)}`);
      expect(log.warn.filter((line) => line.includes('Not compacting again until it grows by 2400 tokens'))).toHaveLength(2);
      expect(scripted.stepCalls()).toHaveLength(16);
      expect(middleware.last()!.tokensAfter).toBeGreaterThanOrEqual(24_000);
    });
  });
});

/**
 * The tag ('a' or 'b') of the conversation a summary request is for, from the newest user message
 * before the appended request that is not a checkpoint (a message of the conversation itself, or
 * the transcript of its messages): `a3 uuu...`, `[User]: b5 bbb...`.
 */
function ownTag(prompt: Message[]): string {
  const own = prompt
    .slice(0, -1)
    .filter((message) => message.role === 'user' && !textOf(message).startsWith('<conversation-checkpoint>'));
  const tag = /\b([ab])\d+\b/.exec(textOf(own.at(-1)))?.[1];
  if (tag === undefined) throw new Error(`no conversation tag in the summary request: ${textOf(own.at(-1)).slice(0, 80)}`);
  return tag;
}

describe('provider counts', () => {
  it('should keep a count measured with another system prompt, plus the growth of the system prompt, in a named conversation', async () => {
    // The first prompt is counted at 500 tokens (too few for its 12,008 characters to learn from,
    // enough to be right: over a fifth of 12,008 / 5). The next one, under a 14,000-token system
    // prompt, rests on that count: 500 + 10 output + the system prompt's growth, (56,000 - 5) / 4
    // = 13,999, + 'next' = 14,510; not its whole estimate, 18,502.
    const scripted = scriptedModel({ inputTokens: () => 500 });
    const middleware = compaction({ contextWindow: 200_000 });
    const wrapped = wrap(scripted.model, middleware);
    const conversation = [user('hi'), assistant('a'.repeat(4 * 3_000)), user('q')];
    const named = { compaction: { conversation: 'chat-1' } };
    await wrapped.doGenerate({ prompt: [{ role: 'system', content: 'short' }, ...conversation], providerOptions: named });
    middleware.compactNext();
    const second: Message[] = [{ role: 'system', content: 's'.repeat(4 * 14_000) }, ...conversation, assistant('b'.repeat(4 * 1_500)), user('next')];
    await wrapped.doGenerate({ prompt: second, providerOptions: named });
    expect(middleware.last()).toMatchObject({ reason: 'manual', tokensBefore: 14_510 });
    expect(estimatePrompt(second)).toBe(18_502);
  });

  it('should keep one count per conversation, not one per step', async () => {
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000 });
    const wrapped = wrap(scripted.model, middleware);
    const conversation: Message[] = [user('start')];
    for (let step = 0; step < 20; step++) {
      await wrapped.doGenerate({ prompt: conversation });
      conversation.push(assistant(`answer ${step}`), user(`question ${step}`));
    }
    // The first step's count is indexed under the first message (there was no reply yet); every
    // later one under the conversation's opening exchange, where each new count replaces the last.
    const threads = Object.values(middleware.state().threads) as Array<{ counts: Array<{ length: number }> }>;
    expect(threads.map((thread) => thread.counts.map((count) => count.length)).sort()).toEqual([[1], [39]]);
  });
});

function hasCheckpointText(prompt: Message[]): boolean {
  return prompt.some((message) => textOf(message).startsWith('<conversation-checkpoint>'));
}
