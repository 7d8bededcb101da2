import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { compaction } from '../../../src';
import { checkpointText } from '../../../src/checkpoint/message';
import { selectRecord } from '../../../src/checkpoint/record';
import { keptUserMessages } from '../../../src/compact/native';
import type { CallOptions, Message } from '../../../src/prompt/types';
import { type Estimator, FIXED_ESTIMATOR, estimateMessages } from '../../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, finish, isSummaryPrompt, textResult, usage } from '../../support/models';
import { assistant, recordingLogger, system, textOf, user, wrap } from '../../support/harness';

const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);

const openaiItem = { type: 'custom', kind: 'openai.compaction', providerOptions: { openai: { itemId: 'cmp_1', encryptedContent: 'gAAAA-encrypted' } } };
const anthropicItem = { type: 'text', text: 'Summary the provider wrote.', providerOptions: { anthropic: { type: 'compaction', signature: 'sig' } } };

/** A mock of a provider with native compaction: a triggered request returns the item. */
function nativeModel(provider: 'openai.responses' | 'anthropic.messages', counted?: (prompt: Message[]) => number, modelId = 'mock-model-id') {
  const calls: CallOptions[] = [];
  const model = new MockLanguageModel({
    provider,
    modelId,
    doGenerate: async (params: CallOptions) => {
      calls.push(params);
      if (isSummaryPrompt(params.prompt)) return textResult(SUMMARY, 100, 100);
      if (params.providerOptions?.openai?.compactionTrigger === true) {
        return {
          content: [{ type: 'custom', kind: 'openai.compaction', providerMetadata: { openai: { type: 'compaction', itemId: 'cmp_new', encryptedContent: 'enc-new' } } }],
          finishReason: finish('stop'),
          usage: usage(1_000, 50),
          warnings: [],
        };
      }
      if (params.providerOptions?.anthropic?.compaction !== undefined) {
        return {
          content: [{ type: 'text', text: 'Compacted by the provider.', providerMetadata: { anthropic: { type: 'compaction', signature: 'sig-new' } } }],
          finishReason: finish('stop'),
          usage: usage(1_000, 50),
          warnings: [],
        };
      }
      return { content: [{ type: 'text', text: 'ok' }], finishReason: finish('stop'), usage: usage(counted?.(params.prompt), 10), warnings: [] };
    },
  });
  return { model, calls };
}

/** Two manual compactions of two short conversations with `native: true`; each ends with the template summary. */
async function compactTwice(model: unknown, log: ReturnType<typeof recordingLogger>): Promise<void> {
  const middleware = compaction({ native: true, logger: log.logger });
  for (let index = 0; index < 2; index++) {
    middleware.compactNext();
    await wrap(model, middleware).doGenerate({ prompt: [user(`ask ${index}`), assistant('a'), user('b')] });
    expect(middleware.last()!.summary).toBe(SUMMARY);
  }
}

/** What each call the model received was: a native trigger, a summary request or a step. */
const kinds = (calls: CallOptions[], isTrigger: (call: CallOptions) => boolean) =>
  calls.map((call) => (isTrigger(call) ? 'trigger' : isSummaryPrompt(call.prompt) ? 'summary' : 'step'));

describe('native compaction', () => {
  it('should let OpenAI Responses compact and send the item back unchanged, followed by the newest user messages', async () => {
    const { model, calls } = nativeModel('openai.responses', () => 5_000);
    const middleware = compaction({ contextWindow: 200_000, native: true, keep: 1_000 });
    const prompt = [system('agent'), user('first ask'), assistant('first answer'), user('second ask'), assistant(tokens(300, 'a')), user('third')];
    middleware.compactNext();
    await wrap(model, middleware).doGenerate({ prompt, providerOptions: { openai: { store: false } } });

    const [trigger, step] = calls;
    expect(trigger!.providerOptions).toEqual({ openai: { store: false, compactionTrigger: true } });
    // The trigger carries the step's own prompt up to the new user message, which goes out live after the item.
    expect(trigger!.prompt).toEqual(prompt.slice(0, -1));
    expect(step!.prompt).toEqual([
      system('agent'),
      { role: 'assistant', content: [{ ...openaiItem, providerOptions: { openai: { itemId: 'cmp_new', encryptedContent: 'enc-new' } } }] },
      user('first ask'),
      user('second ask'),
      user('third'),
    ]);
    expect(middleware.last()).toMatchObject({ reason: 'manual', summary: '', record: '', native: { provider: 'openai', item: { kind: 'openai.compaction' } } });
    expect(calls.filter((call) => isSummaryPrompt(call.prompt))).toHaveLength(0);
  });

  it("should keep the user's newest messages across two native compactions", async () => {
    const { model, calls } = nativeModel('openai.responses', () => 5_000);
    const middleware = compaction({ contextWindow: 200_000, native: true });
    const wrapped = wrap(model, middleware);
    const first = [user('the task'), assistant('working'), user('go on')];
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: first });
    const second = [...first, assistant('more work'), user('and finish')];
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: second });
    const item = { role: 'assistant', content: [{ ...openaiItem, providerOptions: { openai: { itemId: 'cmp_new', encryptedContent: 'enc-new' } } }] };
    expect(calls.at(-1)!.prompt).toEqual([item, user('the task'), user('go on'), user('and finish')]);
  });

  it('should let Anthropic compact on demand and replay its block first', async () => {
    const { model, calls } = nativeModel('anthropic.messages', () => 5_000);
    const middleware = compaction({ contextWindow: 200_000, native: true });
    const prompt = [user('ask'), assistant('answer'), user('next')];
    middleware.compactNext();
    await wrap(model, middleware).doGenerate({ prompt, providerOptions: { anthropic: { contextManagement: { edits: [] } } } });
    expect(calls[0]!.providerOptions).toEqual({ anthropic: { compaction: { type: 'summarize' } } });
    expect(calls[1]!.prompt[0]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Compacted by the provider.', providerOptions: { anthropic: { type: 'compaction', signature: 'sig-new' } } }] });
  });

  it('should wait for the provider to count the item before compacting again', async () => {
    // The provider reports no usage until the third step: the item's size is unknown until then.
    let step = 0;
    const { model, calls } = nativeModel('openai.responses', () => (++step >= 3 ? 190_000 : (undefined as never)));
    // Window 200,000: ceiling 170,000.
    const middleware = compaction({ contextWindow: 200_000, native: true });
    const wrapped = wrap(model, middleware);
    const triggers = () => calls.filter((call) => call.providerOptions?.openai?.compactionTrigger === true).length;
    const stepCalls = () => calls.filter((call) => call.providerOptions?.openai?.compactionTrigger !== true);
    const conversation = [user('the task'), assistant(tokens(180_000, 'a')), user('go')];
    await wrapped.doGenerate({ prompt: conversation });
    expect(triggers()).toBe(1);
    expect(stepCalls().at(-1)!.prompt.slice(1)).toEqual([user('the task'), user('go')]);

    // A long reply after the item: the estimate of what goes out is over the ceiling, but the
    // item's own size is unknown, so the step does not compact.
    conversation.push(assistant(tokens(171_000, 'b')), user('more'));
    await wrapped.doGenerate({ prompt: conversation });
    const sent = stepCalls().at(-1)!.prompt;
    expect(sent.slice(1)).toEqual([user('the task'), user('go'), assistant(tokens(171_000, 'b')), user('more')]);
    const characters = sent.reduce((sum, message) => sum + textOf(message).length, 0);
    expect(Math.round(characters / 4)).toBeGreaterThanOrEqual(170_000);
    expect(triggers()).toBe(1);
    conversation.push(assistant('c'), user('again'));
    await wrapped.doGenerate({ prompt: conversation });
    expect(triggers()).toBe(1);
    // Counted at 190,000 on the third step: the fourth compacts again, once.
    conversation.push(assistant('d'), user('last'));
    await wrapped.doGenerate({ prompt: conversation });
    expect(triggers()).toBe(2);
  });

  it('should fall back to ordinary compaction, with one warning, for a model without native compaction', async () => {
    const log = recordingLogger();
    const received: CallOptions[] = [];
    const other = new MockLanguageModel({
      provider: 'mock',
      doGenerate: async (params: CallOptions) => {
        received.push(params);
        return isSummaryPrompt(params.prompt) ? textResult(SUMMARY, 10, 10) : textResult('ok', 10, 10);
      },
    });
    const middleware = compaction({ contextWindow: 200_000, native: true, logger: log.logger });
    for (let index = 0; index < 2; index++) {
      middleware.compactNext();
      await wrap(other, middleware).doGenerate({ prompt: [user(`ask ${index}`), assistant('a'), user('b')] });
      expect(middleware.last()!.summary).toBe(SUMMARY);
      expect(middleware.last()!.native).toBeUndefined();
    }
    expect(log.warn.filter((line) => line.includes('native compaction is not available for mock:'))).toHaveLength(1);
    // The model got no provider trigger, only ordinary summary requests (one per compaction) and its steps.
    expect(received.filter((call) => call.providerOptions?.openai?.compactionTrigger !== undefined)).toHaveLength(0);
    expect(received.map((call) => isSummaryPrompt(call.prompt))).toEqual([true, false, true, false]);
    expect(received.every((call) => call.providerOptions === undefined)).toBe(true);
  });

  it('should let only the model that made a native checkpoint read it', async () => {
    const a = nativeModel('openai.responses', () => 100, 'a');
    const b = nativeModel('openai.responses', () => 100, 'b');
    const middleware = compaction({ contextWindow: 200_000, native: true });
    const conversation = [user('ask'), assistant('answer'), user('next')];
    middleware.compactNext();
    await wrap(a.model, middleware).doGenerate({ prompt: conversation });
    expect(a.calls.at(-1)!.prompt[0]).toMatchObject({ role: 'assistant', content: [{ type: 'custom', kind: 'openai.compaction' }] });

    // The same conversation and a new turn through model B: it gets the messages, never A's item.
    const next = [...conversation, assistant('reply'), user('more')];
    await wrap(a.model, middleware).doGenerate({ prompt: next });
    expect(a.calls.at(-1)!.prompt[0]).toMatchObject({ role: 'assistant', content: [{ type: 'custom', kind: 'openai.compaction' }] });
    await wrap(b.model, middleware).doGenerate({ prompt: next });
    expect(b.calls).toHaveLength(1);
    expect(b.calls[0]!.prompt).toEqual(next);
    expect(b.calls[0]!.prompt.some((message) => message.role !== 'system' && message.content.some((part) => part.type === 'custom'))).toBe(false);
  });

  it('should follow the item with the newest user messages within keep tokens, in order', async () => {
    const { model, calls } = nativeModel('openai.responses', () => 100);
    const middleware = compaction({ contextWindow: 200_000, native: true, keep: 10 });
    // Newest first: 4 tokens, then 6 (10 in all: kept), then 1 (11: over keep, and nothing older is taken).
    const conversation = [
      user('zzzz'), assistant('first answer'),
      user('yyyy'), assistant('second answer'),
      user(tokens(6, 'w')), assistant('third answer'),
      user(tokens(4, 'v')), assistant('fourth answer'),
      user('go'),
    ];
    middleware.compactNext();
    await wrap(model, middleware).doGenerate({ prompt: conversation });
    const item = { role: 'assistant', content: [{ ...openaiItem, providerOptions: { openai: { itemId: 'cmp_new', encryptedContent: 'enc-new' } } }] };
    expect(calls.at(-1)!.prompt).toEqual([item, user(tokens(6, 'w')), user(tokens(4, 'v')), user('go')]);
  });

  it('should not ask again a model that answered the trigger without an item', async () => {
    const log = recordingLogger();
    const calls: CallOptions[] = [];
    // An OpenAI Responses model whose client ignores the trigger (as @ai-sdk/openai v3 does).
    const model = new MockLanguageModel({
      provider: 'openai.responses',
      doGenerate: async (params: CallOptions) => {
        calls.push(params);
        return isSummaryPrompt(params.prompt) ? textResult(SUMMARY, 10, 10) : textResult('ok', 10, 10);
      },
    });
    await compactTwice(model, log);
    expect(kinds(calls, (call) => call.providerOptions?.openai?.compactionTrigger === true)).toEqual(['trigger', 'summary', 'step', 'summary', 'step']);
    expect(log.warn.filter((line) => line.includes('native compaction is not available for openai.responses:'))).toHaveLength(1);
  });

  for (const [name, retryable, expected] of [
    ['refuses the trigger (400)', false, ['trigger', 'summary', 'step', 'summary', 'step']],
    ['fails transiently on the trigger (503)', true, ['trigger', 'summary', 'step', 'trigger', 'summary', 'step']],
  ] as const) {
    it(`should use ordinary compaction when the provider ${name}, and ask again only after a transient failure`, async () => {
      const log = recordingLogger();
      const calls: CallOptions[] = [];
      const model = new MockLanguageModel({
        provider: 'anthropic.messages',
        doGenerate: async (params: CallOptions) => {
          calls.push(params);
          if (params.providerOptions?.anthropic?.compaction !== undefined) {
            throw new APICallError({
              message: retryable ? 'Service unavailable' : 'compaction is not supported by this model',
              url: 'https://api.anthropic.com/v1/messages',
              requestBodyValues: {},
              statusCode: retryable ? 503 : 400,
              isRetryable: retryable,
            });
          }
          return isSummaryPrompt(params.prompt) ? textResult(SUMMARY, 10, 10) : textResult('ok', 10, 10);
        },
      });
      await compactTwice(model, log);
      expect(kinds(calls, (call) => call.providerOptions?.anthropic?.compaction !== undefined)).toEqual(expected);
      expect(log.warn.filter((line) => line.includes('the native compaction request failed'))).toHaveLength(retryable ? 2 : 1);
    });
  }

  describe('provider items in the caller prompt', () => {
    for (const [name, item] of [['an OpenAI compaction item', openaiItem], ['an Anthropic compaction block', anthropicItem]] as const) {
      it(`should treat ${name} as a checkpoint boundary, never summarized again nor altered`, async () => {
        const calls: CallOptions[] = [];
        const model = new MockLanguageModel({
          doGenerate: async (params: CallOptions) => {
            calls.push(params);
            return isSummaryPrompt(params.prompt) ? textResult(SUMMARY, 10, 10) : textResult('ok', 10, 10);
          },
        });
        const middleware = compaction({ contextWindow: 200_000 });
        const itemMessage = { role: 'assistant', content: [item] } as Message;
        const prompt = [user(tokens(1_000)), assistant('old'), itemMessage, user('after one'), assistant('reply'), user('after two')];
        await wrap(model, middleware).doGenerate({ prompt });
        // What the item stands for is not sent again.
        expect(calls[0]!.prompt).toEqual([itemMessage, user('after one'), assistant('reply'), user('after two')]);

        middleware.compactNext();
        await wrap(model, middleware).doGenerate({ prompt });
        const request = calls[1]!;
        // Up to the end of what the checkpoint covers: the new user message stays live, out of it.
        expect(request.prompt.slice(0, -1)).toEqual([itemMessage, user('after one'), assistant('reply')]);
        // The checkpoint covers only what came after the item; the item goes out first, unchanged.
        const record = '[User]: after one\n\n[1 earlier steps of this turn are summarized above]';
        expect(selectRecord(prompt, 15_000, 3, 5).text).toBe(record);
        expect(calls[2]!.prompt).toEqual([itemMessage, { role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, record) }] }, user('after two')]);
        expect(middleware.last()!.messagesCovered).toBe(5);
        expect(textOf(calls[2]!.prompt[1])).not.toContain(tokens(10));
      });
    }
  });
});

describe('keptUserMessages', () => {
  // Three user messages of 400 characters: 100 tokens each at 4 characters a token, 200 at 2.
  const conversation: Message[] = [user('a'.repeat(400)), assistant('ok'), user('b'.repeat(400)), assistant('ok'), user('c'.repeat(400)), assistant('ok')];
  const each = (estimator: Estimator) => estimateMessages(conversation, 0, 1, estimator);

  it('should keep the newest user messages within keep tokens, oldest first', () => {
    const keep = 2 * each(FIXED_ESTIMATOR) + 1;
    expect(keptUserMessages(conversation, 0, conversation.length, keep)).toEqual([2, 4]);
    expect(keptUserMessages(conversation, 0, conversation.length, 3 * each(FIXED_ESTIMATOR))).toEqual([0, 2, 4]);
    // only the covered ones: from 1 to 4 holds one user message
    expect(keptUserMessages(conversation, 1, 4, keep)).toEqual([2]);
  });

  it("should measure them at the model's learned characters a token", () => {
    const learned: Estimator = { charsPerToken: 2 };
    const keep = 2 * each(FIXED_ESTIMATOR) + 1;
    expect(each(learned)).toBeGreaterThan(keep / 2);
    expect(keptUserMessages(conversation, 0, conversation.length, keep, learned)).toEqual([4]);
  });
});
