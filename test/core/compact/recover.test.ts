import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { CompactionError, compaction, compactionOf } from '../../../src';
import { checkpointText } from '../../../src/checkpoint/message';
import type { CallOptions, Message } from '../../../src/prompt/types';
import { estimatePrompt } from '../../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, convertArrayToReadableStream, convertReadableStreamToArray, finish, isSummaryPrompt, okStream, textResult, usage } from '../../support/models';
import { assistant, chat, recordingLogger, textOf, user, wrap } from '../../support/harness';

const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);

function overflowError(limit = 10_000, sent = 12_000) {
  const body = {
    error: {
      message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${sent} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  };
  return new APICallError({
    message: body.error.message,
    url: 'https://api.openai.com/v1/chat/completions',
    requestBodyValues: {},
    statusCode: 400,
    responseHeaders: {},
    responseBody: JSON.stringify(body),
    data: body,
    isRetryable: false,
  });
}

/** A provider with a real window: it rejects any step whose 4-chars estimate is over `limit`. */
function provider(limit: number, options: { rejectSummaries?: (estimate: number, index: number) => boolean; rejectSteps?: () => boolean } = {}) {
  const steps: CallOptions[] = [];
  const summaries: CallOptions[] = [];
  let rejections = 0;
  const check = (params: CallOptions) => {
    const estimate = estimatePrompt(params.prompt, params.tools);
    if (isSummaryPrompt(params.prompt)) {
      summaries.push(params);
      if (options.rejectSummaries?.(estimate, summaries.length - 1)) throw overflowError(limit, estimate);
      return 'summary' as const;
    }
    steps.push(params);
    if (estimate > limit || options.rejectSteps?.() === true) {
      rejections++;
      throw overflowError(limit, estimate);
    }
    return estimate;
  };
  const model = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => {
      const estimate = check(params);
      return estimate === 'summary' ? textResult(SUMMARY, 500, 200) : textResult('ok', estimate, 10);
    },
    doStream: async (params: CallOptions) => {
      const estimate = check(params) as number;
      return okStream(estimate);
    },
  });
  return { model, steps, summaries, rejections: () => rejections };
}

const long = (): Message[] => [user(tokens(6_000)), assistant(tokens(6_000, 'a')), user('go on')];

describe('overflow recovery', () => {
  describe('wrapGenerate', () => {
    it('should compact a rejected step and send it once more, even with auto: false', async () => {
      const log = recordingLogger();
      const real = provider(10_000);
      const middleware = compaction({ auto: false, logger: log.logger });
      const result = await wrap(real.model, middleware).doGenerate({ prompt: long() });
      expect(textOf({ role: 'assistant', content: result.content })).toBe('ok');
      expect(real.rejections()).toBe(1);
      expect(real.steps).toHaveLength(2);
      // The record keeps the covered turn's task (its ends: it is long), never nothing.
      expect(middleware.last()!.record).toMatch(/^\[User\]: u+\n\[\d+ characters cut\]\nu+\n\n\[1 earlier steps of this turn are summarized above\]$/);
      expect(real.steps[1]!.prompt).toEqual([{ role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, middleware.last()!.record) }] }, user('go on')]);
      expect(middleware.last()).toMatchObject({ reason: 'overflow', messagesCovered: 2, tokensBefore: 12_001 });
      expect(log.warn.filter((line) => line.includes('rejected the prompt as too long'))).toHaveLength(1);
      expect(log.info).toHaveLength(1);
    });

    it("should throw the provider's own error on a second rejection", async () => {
      // A provider that counts far more than the estimate: it rejects the compacted step too.
      const real = provider(10_000, { rejectSteps: () => true });
      const prompt = [user(tokens(6_000)), assistant(tokens(6_000, 'a')), user('next')];
      const error = await wrap(real.model, compaction()).doGenerate({ prompt }).catch((caught: unknown) => caught);
      expect(APICallError.isInstance(error)).toBe(true);
      expect((error as APICallError).statusCode).toBe(400);
      expect(real.steps).toHaveLength(2);
      expect(real.summaries).toHaveLength(1);
    });

    it('should fail with too-large, sending nothing more, when the newest message alone is over the window', async () => {
      // Compaction covers the older messages, but the newest user message alone (11,000) is over the
      // window the rejection states (10,000): no step goes out over the window by the estimate.
      const real = provider(10_000);
      const prompt = [user(tokens(6_000)), assistant(tokens(6_000, 'a')), user(tokens(11_000, 'n'))];
      const error = await wrap(real.model, compaction()).doGenerate({ prompt }).catch((caught: unknown) => caught);
      expect(CompactionError.isInstance(error)).toBe(true);
      expect((error as CompactionError).reason).toBe('too-large');
      expect(real.steps).toHaveLength(1);
      expect(real.summaries).toHaveLength(0);
    });

    it('should learn the window a rejection states and compact before the call from then on', async () => {
      const real = provider(10_000);
      const middleware = compaction();
      const wrapped = wrap(real.model, middleware);
      await wrapped.doGenerate({ prompt: long() });
      expect(real.rejections()).toBe(1);
      // Learned window 10,000 -> ceiling 8,500. A new conversation of 9,000 tokens compacts first.
      await wrapped.doGenerate({ prompt: [user(tokens(4_500, 'x')), assistant(tokens(4_500, 'y')), user('next')] });
      expect(real.rejections()).toBe(1);
      expect(middleware.last()!.reason).toBe('auto');
    });

    it('should fail with a CompactionError, not the overflow, when the compaction fails', async () => {
      const real = provider(10_000, { rejectSummaries: () => true });
      const error = await wrap(real.model, compaction()).doGenerate({ prompt: long() }).catch((caught: unknown) => caught);
      expect(CompactionError.isInstance(error)).toBe(true);
      expect((error as CompactionError).reason).toBe('too-large');
      expect(APICallError.isInstance((error as CompactionError).cause)).toBe(true);
    });

    it('should pass an abort of the step through untouched and store nothing', async () => {
      const controller = new AbortController();
      const calls: CallOptions[] = [];
      const model = new MockLanguageModel({
        doGenerate: async (params: CallOptions) => {
          calls.push(params);
          controller.abort();
          throw Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
        },
      });
      // No window: the step goes out as it is (no compaction first), and its abort is not taken for an overflow.
      const middleware = compaction();
      const error = await wrap(model, middleware).doGenerate({ prompt: long(), abortSignal: controller.signal }).catch((caught: unknown) => caught);
      expect((error as Error).name).toBe('AbortError');
      expect(CompactionError.isInstance(error)).toBe(false);
      expect(calls).toHaveLength(1);
      expect(calls.filter((call) => isSummaryPrompt(call.prompt))).toHaveLength(0);
      expect(calls[0]!.prompt).toEqual(long());
      expect(middleware.last()).toBeUndefined();
      expect(middleware.state().checkpoints).toEqual({});
    });

    it('should not recover an abort whose error reads like an overflow', async () => {
      // An aborted step's error is passed on even when its message would match an overflow.
      const controller = new AbortController();
      const calls: CallOptions[] = [];
      const model = new MockLanguageModel({
        doGenerate: async (params: CallOptions) => {
          calls.push(params);
          controller.abort();
          throw overflowError();
        },
      });
      const middleware = compaction();
      const error = await wrap(model, middleware).doGenerate({ prompt: long(), abortSignal: controller.signal }).catch((caught: unknown) => caught);
      expect(APICallError.isInstance(error)).toBe(true);
      expect(calls).toHaveLength(1);
      expect(middleware.last()).toBeUndefined();
    });
    it('should end with the abort when the summary request is aborted, and store nothing', async () => {
      const controller = new AbortController();
      const model = new MockLanguageModel({
        doGenerate: async (params: CallOptions) => {
          if (!isSummaryPrompt(params.prompt)) return textResult('ok', 10, 10);
          controller.abort();
          throw Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
        },
      });
      const middleware = compaction({ contextWindow: 200_000 });
      middleware.compactNext();
      const error = await wrap(model, middleware).doGenerate({ prompt: long(), abortSignal: controller.signal }).catch((caught: unknown) => caught);
      expect((error as Error).name).toBe('AbortError');
      expect(CompactionError.isInstance(error)).toBe(false);
      expect(middleware.last()).toBeUndefined();
      expect(middleware.state().checkpoints).toEqual({});
    });

    it('should fail with summarizer-failed, keeping the cause, when the summarizer throws, and store nothing', async () => {
      const log = recordingLogger();
      const broken = new Error('socket hang up');
      const model = new MockLanguageModel({
        doGenerate: async (params: CallOptions) => {
          if (isSummaryPrompt(params.prompt)) throw broken;
          return textResult('ok', estimatePrompt(params.prompt), 10);
        },
      });
      const middleware = compaction({ contextWindow: 200_000, logger: log.logger });
      middleware.compactNext();
      await wrap(model, middleware).doGenerate({ prompt: long() });
      expect(middleware.last()).toBeUndefined();
      expect(middleware.state().checkpoints).toEqual({});
      // The package's prefix once: the CompactionError's message has its own.
      expect(log.warn).toEqual([
        'ai-compaction: compaction failed (summarizer-failed): the summary request failed: socket hang up; the step goes out unchanged. ' +
          'Not compacting this conversation on its own again until its prompt grows by 17000 tokens (from 12001 to 29001), ' +
          'except a step that no longer fits the window (failure 1 in a row; each further one doubles the growth).',
      ]);
    });
  });

  describe('wrapStream', () => {
    it('should recover a rejected doStream()', async () => {
      const real = provider(10_000);
      const middleware = compaction();
      const { stream } = await wrap(real.model, middleware).doStream({ prompt: long() });
      const parts = await convertReadableStreamToArray(stream);
      // The compaction's call and result right after stream-start (hooks/part.ts).
      expect(parts.map((part) => part.type)).toEqual(['stream-start', 'tool-call', 'tool-result', 'text-start', 'text-delta', 'text-end', 'finish']);
      expect(middleware.last()!.reason).toBe('overflow');
    });

    it('should recover an overflow error part that comes before any content', async () => {
      let calls = 0;
      const prompts: Message[][] = [];
      const model = new MockLanguageModel({
        doGenerate: async () => textResult(SUMMARY, 100, 100),
        doStream: async ({ prompt }: CallOptions) => {
          prompts.push(prompt);
          calls++;
          return {
            stream: convertArrayToReadableStream<unknown>(
              calls === 1
                ? [
                    { type: 'stream-start', warnings: [] },
                    { type: 'error', error: { type: 'error', error: { type: 'invalid_request_error', code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' } } },
                  ]
                : [
                    { type: 'stream-start', warnings: [] },
                    { type: 'text-start', id: '1' },
                    { type: 'text-delta', id: '1', delta: 'fine' },
                    { type: 'text-end', id: '1' },
                    { type: 'finish', finishReason: finish('stop'), usage: usage(100, 5) },
                  ],
            ),
          };
        },
      });
      const middleware = compaction();
      const { stream } = await wrap(model, middleware).doStream({ prompt: long() });
      const parts = await convertReadableStreamToArray(stream);
      expect(parts.filter((part) => part.type === 'error')).toHaveLength(0);
      expect(parts.find((part) => part.type === 'text-delta')).toMatchObject({ delta: 'fine' });
      expect(middleware.last()!.record).toMatch(/^\[User\]: /);
      expect(prompts[1]![0]).toEqual({ role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, middleware.last()!.record) }] });
    });

    it('should never retry once content has reached the caller', async () => {
      const error = { type: 'error', error: { code: 'context_length_exceeded', message: 'too long' } };
      const model = new MockLanguageModel({
        doStream: async () => ({
          stream: convertArrayToReadableStream([
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: '1' },
            { type: 'text-delta', id: '1', delta: 'partial' },
            { type: 'error', error },
          ]),
        }),
      });
      const middleware = compaction();
      const { stream } = await wrap(model, middleware).doStream({ prompt: long() });
      const parts = await convertReadableStreamToArray(stream);
      expect(parts.map((part) => part.type)).toEqual(['stream-start', 'text-start', 'text-delta', 'error']);
      expect(middleware.last()).toBeUndefined();
    });

    it('should pass the first text delta on while the inner stream is still open', async () => {
      let push!: ReadableStreamDefaultController<unknown>;
      const inner = new ReadableStream({ start: (controller) => void (push = controller) });
      const model = new MockLanguageModel({ doStream: async () => ({ stream: inner }) });
      const started = wrap(model, compaction({ contextWindow: 100_000 })).doStream({ prompt: [user('hi')] });
      push.enqueue({ type: 'stream-start', warnings: [] });
      push.enqueue({ type: 'text-start', id: '1' });
      push.enqueue({ type: 'text-delta', id: '1', delta: 'first' });
      const reader = (await started).stream.getReader();
      expect((await reader.read()).value).toMatchObject({ type: 'stream-start' });
      expect((await reader.read()).value).toMatchObject({ type: 'text-start' });
      expect((await reader.read()).value).toMatchObject({ type: 'text-delta', delta: 'first' });
      push.enqueue({ type: 'finish', finishReason: finish('stop'), usage: usage(5, 1) });
      push.close();
      expect((await reader.read()).value).toMatchObject({ type: 'finish' });
      expect((await reader.read()).done).toBe(true);
    });

    it('should record the usage of the finish part, and handle a stream without one', async () => {
      const log = recordingLogger();
      const prompts: Message[][] = [];
      const model = new MockLanguageModel({
        doGenerate: async () => textResult(SUMMARY, 100, 100),
        doStream: async ({ prompt }: CallOptions) => {
          prompts.push(structuredClone(prompt));
          const parts: unknown[] = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: '1' }, { type: 'text-delta', id: '1', delta: 'x' }, { type: 'text-end', id: '1' }];
          // The first step reports 150,000 input tokens; the later ones end without a finish part.
          if (prompts.length === 1) parts.push({ type: 'finish', finishReason: finish('stop'), usage: usage(150_000, 10) });
          return { stream: convertArrayToReadableStream(parts) };
        },
      });
      const middleware = compaction({ contextWindow: 160_000, logger: log.logger });
      const wrapped = wrap(model, middleware);
      const first = [user('small question')];
      await convertReadableStreamToArray((await wrapped.doStream({ prompt: first })).stream);
      const second = [...first, assistant('x'), user('again')];
      const parts = await convertReadableStreamToArray((await wrapped.doStream({ prompt: second })).stream);
      // 150,000 + 10 output + 1 for 'again' (5 characters, 1.25 rounded): over the 136,000 ceiling.
      expect(middleware.last()).toMatchObject({ reason: 'auto', tokensBefore: 150_011 });
      const autoRecord = middleware.last()!.record;

      // The stream without a finish part reaches the caller whole, records no count, warns nothing.
      expect(parts.map((part) => part.type)).toEqual(['stream-start', 'tool-call', 'tool-result', 'text-start', 'text-delta', 'text-end']);
      const threads = Object.values(middleware.state().threads) as Array<{ counts: Array<{ length: number; input: number }> }>;
      expect(threads.flatMap((thread) => thread.counts)).toEqual([expect.objectContaining({ length: 1, input: 150_000 })]);
      expect(log.warn).toEqual([]);

      // So the next step is measured by the estimate of its whole prompt (the checkpoint and after).
      middleware.compactNext();
      await convertReadableStreamToArray((await wrapped.doStream({ prompt: [...second, assistant('y'), user('third')] })).stream);
      expect(autoRecord).toBe('[User]: small question\n\n[1 earlier steps of this turn are summarized above]');
      expect(prompts[1]![0]).toEqual({ role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, autoRecord) }] });
      expect(middleware.last()).toMatchObject({ reason: 'manual', tokensBefore: estimatePrompt([...prompts[1]!, assistant('y'), user('third')]) });
      expect(log.warn).toEqual([]);
    });
  });

  describe('a summary request that is itself too long', () => {
    it('should retry it as a transcript aimed at 85, 70, 50 and 35 % of its size', async () => {
      const real = provider(10_000, { rejectSummaries: (_estimate, index) => index < 3 });
      const middleware = compaction({ auto: false });
      const prompt = [...chat(6, 900, 'q'), user('continue')];
      await wrap(real.model, middleware).doGenerate({ prompt, maxOutputTokens: 100 });
      const sizes = real.summaries.map((request) => estimatePrompt(request.prompt, request.tools));
      expect(real.summaries).toHaveLength(4);
      expect(sizes[1]!).toBeLessThanOrEqual(Math.floor(sizes[0]! * 0.85));
      expect(sizes[2]!).toBeLessThanOrEqual(Math.floor(sizes[0]! * 0.7));
      expect(sizes[3]!).toBeLessThanOrEqual(Math.floor(sizes[0]! * 0.5));
      // Aimed at each share of the first size, not at a share of the previous try.
      expect(sizes[3]!).toBeGreaterThan(Math.floor(sizes[0]! * 0.35));
      for (const request of real.summaries.slice(1)) {
        expect(request.tools).toBeUndefined();
        expect(textOf(request.prompt.at(-2))).toContain('<transcript>');
      }
      expect(middleware.last()!.reason).toBe('overflow');
    });
  });
});

describe('providerMetadata.compaction', () => {
  const summaryOr = (text: string) => async (params: CallOptions) => (isSummaryPrompt(params.prompt) ? textResult(SUMMARY, 10, 10) : textResult(text, 10, 10));

  it("should report the step's compaction in the result of doGenerate, and nothing on other steps", async () => {
    const model = new MockLanguageModel({ doGenerate: summaryOr('ok') });
    const middleware = compaction({ contextWindow: 200_000 });
    const wrapped = wrap(model, middleware);
    middleware.compactNext();
    const compacted = (await wrapped.doGenerate({ prompt: long() })) as { providerMetadata?: Record<string, unknown> };
    expect(compacted.providerMetadata?.compaction).toEqual({
      reason: 'manual',
      rule: 'manual',
      kind: 'summary',
      messagesCovered: 2,
      tokensBefore: 12_001,
      tokensAfter: middleware.last()!.tokensAfter,
      summary: SUMMARY,
      // The summary request's usage as the provider reported it (10 in, 10 out).
      usage: { requests: 1, inputTokens: 10, outputTokens: 10, durationMs: middleware.last()!.usage.durationMs },
    });
    expect(compactionOf(compacted.providerMetadata)).toEqual(compacted.providerMetadata?.compaction);
    const plain = (await wrapped.doGenerate({ prompt: [...long(), assistant('ok'), user('more')] })) as { providerMetadata?: Record<string, unknown> };
    expect(plain.providerMetadata?.compaction).toBeUndefined();
    expect(compactionOf(plain.providerMetadata)).toBeUndefined();
    expect(compactionOf({ compaction: { reason: 'other', messagesCovered: 1, tokensBefore: 1, tokensAfter: 1 } })).toBeUndefined();
  });

  it("should report it on the stream's finish part", async () => {
    const model = new MockLanguageModel({
      doGenerate: summaryOr('ok'),
      doStream: async () => ({
        stream: convertArrayToReadableStream<unknown>([
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: '1' },
          { type: 'text-delta', id: '1', delta: 'x' },
          { type: 'text-end', id: '1' },
          { type: 'finish', finishReason: finish('stop'), usage: usage(10, 1), providerMetadata: { openai: { responseId: 'r1' } } },
        ]),
      }),
    });
    const middleware = compaction({ contextWindow: 200_000 });
    middleware.compactNext();
    const parts = await convertReadableStreamToArray((await wrap(model, middleware).doStream({ prompt: long() })).stream);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', providerMetadata: { openai: { responseId: 'r1' }, compaction: { reason: 'manual', messagesCovered: 2 } } });
  });
});
