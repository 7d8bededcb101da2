import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { CompactionError, compaction } from '../../../src';
import { checkpointMessage } from '../../../src/checkpoint/message';
import { USER_WORDS_NOTE, withUserWords } from '../../../src/checkpoint/user-words';
import { ceiling } from '../../../src/sizing/ceiling';
import type { CallOptions, Message } from '../../../src/prompt/types';
import { MockLanguageModel, SUMMARY, convertArrayToReadableStream, convertReadableStreamToArray, isSummaryPrompt, textResult } from '../../support/models';
import { assistant, chat, recordingLogger, textEstimate as estimate, user, wrap } from '../../support/harness';
import { settle } from '../../support/manual-clock';

// Overflow recovery rules (docs/design.md, "Overflow recovery", "No progress"; docs/stores.md)
// with exact numbers worked out from them:
// 4 characters a token; a compaction keeps a quarter of the room (the ceiling less the system
// prompt and tools), the record what the live part, the summary and the checkpoint's wrapper leave.

const text = (count: number, letter: string) => letter.repeat(count * 4);

/** A Bedrock-style overflow: it states no limit and no prompt size. */
function bedrockOverflow() {
  return new APICallError({
    message: 'Input is too long for requested model.',
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude/converse',
    requestBodyValues: {},
    statusCode: 400,
    responseHeaders: {},
    responseBody: JSON.stringify({ message: 'Input is too long for requested model.' }),
    isRetryable: false,
  });
}


const abortError = () => Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });

/** A model that answers summary requests with the template and rejects the step calls `reject` says. */
function model(reject: (stepIndex: number, params: CallOptions) => unknown) {
  const calls: Array<{ summary: boolean; prompt: Message[]; rejected: boolean }> = [];
  let steps = 0;
  const mock = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => {
      const summary = isSummaryPrompt(params.prompt);
      const entry = { summary, prompt: params.prompt, rejected: false };
      calls.push(entry);
      if (summary) return textResult(SUMMARY, 100, 100);
      const error = reject(steps++, params);
      if (error !== undefined) {
        entry.rejected = true;
        throw error;
      }
      return textResult('ok', estimate(params.prompt), 10);
    },
  });
  return { mock, calls };
}

/** A moment for what is pending to run: `count` turns of the event loop, no time. */
const turns = async (count = 20) => {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
};

describe('overflow recovery rules', () => {
  describe('wrapGenerate', () => {
    it('should aim the compaction at 85 % of the rejected size when the error states no limit', async () => {
      // Six exchanges; the newest two are sized so that the record differs between a ceiling of
      // 85 % of the prompt's size and one a little larger (or smaller).
      const conversation: Message[] = [];
      for (let index = 0; index < 4; index++) {
        conversation.push(user(text(1, String.fromCharCode(97 + index))), assistant(String.fromCharCode(65 + index).repeat(11_675 + (index === 0 ? 160 : 0))));
      }
      conversation.push(user('mmmm'), assistant(text(20, 'M')), user(text(100, 'n')), assistant(text(8_160, 'N')), user('go on'));

      // S = 80,005 characters / 4 = 20,001 tokens. No window is configured, so the rejected size
      // stands for it: the ceiling is 20,001 - 3,000 (15 %) = 17,001, within 85 % of S. The summary
      // request of a rejected prompt cannot carry the whole conversation, so the record may take up
      // to the most a compaction keeps, half the ceiling, 8,500: less the live turn ('go on', 1), the
      // summary (113), the checkpoint's wrapper (61) and the user's five earlier messages that open
      // the record (50: docs/design.md, "The user's words"), 8,275.
      const size = estimate(conversation);
      expect(size).toBe(20_001);
      expect(ceiling(size, undefined)).toBe(17_001);
      const earlier = ['[User]: aaaa', '[User]: bbbb', '[User]: cccc', '[User]: dddd', '[User]: mmmm'];
      expect(Math.round(withUserWords(earlier, '').length / 4)).toBe(50);
      expect(Math.floor(ceiling(size, undefined) / 2) - 1 - Math.round(SUMMARY.length / 4) - 61 - 50).toBe(8_275);
      const newest = `[User]: ${text(100, 'n')}\n\n[Assistant]: ${text(8_160, 'N')}`;
      const newestTwo = `[User]: mmmm\n\n[Assistant]: ${text(20, 'M')}\n\n${newest}`;
      // The newest exchange (8,266 tokens) fits; the newest two (8,293) do not: a window other than
      // the rejected size by more than half a percent changes the record.
      expect(Math.round(newest.length / 4)).toBe(8_266);
      expect(Math.round(newestTwo.length / 4)).toBe(8_293);

      const { mock, calls } = model((index) => (index === 0 ? bedrockOverflow() : undefined));
      // No window: nothing compacts on its own, only the rejection does.
      const middleware = compaction();
      await wrap(mock, middleware).doGenerate({ prompt: conversation });

      expect(middleware.last()).toMatchObject({ reason: 'overflow', tokensBefore: size, messagesCovered: 12, record: withUserWords(earlier, newest) });
      expect(calls.map((call) => (call.summary ? 'summary' : call.rejected ? 'rejected' : 'step'))).toEqual(['rejected', 'summary', 'step']);
      expect(calls.at(-1)!.prompt).toEqual([checkpointMessage(SUMMARY, withUserWords(earlier, newest)), user('go on')]);
    });

    it('should keep the record within the budget of the ceiling, not of the 85 % target', async () => {
      // Window 32,000: ceiling 16,000; the summary request of the rejected prompt cannot carry it
      // whole, so the record may take up to half of it, 8,000 tokens: less the live turn (1), the
      // summary (113), the wrapper (61) and the user's earlier messages (an eighth, 1,000, at most:
      // docs/design.md, "The user's words"), 6,825 or more. 30 exchanges of two 750-token messages
      // (~45,000 tokens) are rejected; 85 % of that is over 38,000, whose ceiling (over 22,000) would
      // let six exchanges in or more. The ceiling's holds four.
      const conversation: Message[] = [];
      for (let index = 0; index < 30; index++) conversation.push(user(text(750, 'q')), assistant(text(750, 'r')));
      conversation.push(user('go on'));
      const overflow = new APICallError({
        message: "This model's maximum context length is 32000 tokens.",
        url: 'https://api.openai.com/v1/chat/completions',
        requestBodyValues: {},
        statusCode: 400,
        isRetryable: false,
      });
      const { mock, calls } = model((index) => (index === 0 ? overflow : undefined));
      const middleware = compaction({ contextWindow: 32_000, auto: false });
      await wrap(mock, middleware).doGenerate({ prompt: conversation });

      const exchange = `[User]: ${text(750, 'q')}\n\n[Assistant]: ${text(750, 'r')}`;
      // Four exchanges are 6,024 tokens as lines, five 7,531.
      expect(Math.round(exchange.length / 4)).toBe(1_506);
      expect(middleware.last()).toMatchObject({ reason: 'overflow', messagesCovered: 60 });
      const { record } = middleware.last()!;
      const newest = Array.from({ length: 4 }, () => exchange).join('\n\n');
      expect(record.endsWith(`\n\n${newest}`)).toBe(true);
      const words = record.slice(0, record.length - newest.length - 2);
      expect(words.startsWith(`${USER_WORDS_NOTE}\n\n[User]: qqqq`)).toBe(true);
      expect(words).not.toContain('[Assistant]');
      expect(Math.round(words.length / 4)).toBeLessThanOrEqual(1_000);
      expect(calls.map((call) => (call.summary ? 'summary' : call.rejected ? 'rejected' : 'step'))).toEqual(['rejected', 'summary', 'step']);
    });

    it('should still recover from an overflow while a no-progress hold is in place', async () => {
      const log = recordingLogger();
      // Window 20,000: ceiling 17,000. The first step's newest message alone is 17,000 tokens, so
      // its compaction cannot bring the prompt under the ceiling and places a hold.
      const first = [user(text(1_000, 'a')), assistant(text(1_000, 'b')), user(text(17_000, 'g'))];
      const { mock, calls } = model((index) => (index === 1 ? bedrockOverflow() : undefined));
      const middleware = compaction({ contextWindow: 20_000, keep: 10, logger: log.logger });
      const wrapped = wrap(mock, middleware);
      await wrapped.doGenerate({ prompt: first });
      expect(middleware.last()).toMatchObject({ reason: 'auto', messagesCovered: 2 });
      expect(log.warn.filter((line) => line.includes('made no progress'))).toHaveLength(1);

      // Grown by far less than a tenth of the ceiling: held, sent without compacting, and rejected.
      const second = [...first, assistant('ok'), user(text(20, 'x')), assistant(text(20, 'y')), user('more')];
      await wrapped.doGenerate({ prompt: second });

      expect(calls.map((call) => (call.summary ? 'summary' : call.rejected ? 'rejected' : 'step'))).toEqual([
        'summary',
        'step',
        'rejected',
        'summary',
        'step',
      ]);
      expect(middleware.last()).toMatchObject({ reason: 'overflow', messagesCovered: 6 });
      // The record opens with the user's first message (its ends), which it does not hold otherwise.
      expect(middleware.last()!.record.startsWith(`${USER_WORDS_NOTE}\n\n[User]: aaaa`)).toBe(true);
      expect(calls.at(-1)!.prompt).toEqual([checkpointMessage(SUMMARY, middleware.last()!.record), user('more')]);
    });
  });

  describe('wrapStream', () => {
    function streamingModel(kind: 'reject' | 'error-part') {
      const errors: unknown[] = [];
      const summaries: CallOptions[] = [];
      let streams = 0;
      const mock = new MockLanguageModel({
        doGenerate: async (params: CallOptions) => {
          if (!isSummaryPrompt(params.prompt)) throw new Error('only summary requests go through doGenerate');
          summaries.push(params);
          return textResult(SUMMARY, 100, 100);
        },
        doStream: async () => {
          // A guard against a retry loop: a fifth stream is a failure of its own.
          if (++streams > 4) throw new Error('retried too often');
          const error = bedrockOverflow();
          errors.push(error);
          if (kind === 'reject') throw error;
          return { stream: convertArrayToReadableStream([{ type: 'stream-start', warnings: [] }, { type: 'error', error }]) };
        },
      });
      return { mock, errors, summaries, streams: () => streams };
    }

    const prompt = () => [...chat(3, 1_000), user('go on')];

    it("should throw a second rejection of doStream() to the caller as the provider's error", async () => {
      const { mock, errors, summaries, streams } = streamingModel('reject');
      const failure = await wrap(mock, compaction()).doStream({ prompt: prompt() }).catch((error: unknown) => error);
      expect(streams()).toBe(2);
      expect(summaries).toHaveLength(1);
      expect(errors).toHaveLength(2);
      expect(failure).toBe(errors[1]);
      expect(APICallError.isInstance(failure)).toBe(true);
      expect(CompactionError.isInstance(failure)).toBe(false);
    });

    it("should pass a second error part on to the caller as the provider's error", async () => {
      const { mock, errors, summaries, streams } = streamingModel('error-part');
      const { stream } = await wrap(mock, compaction()).doStream({ prompt: prompt() });
      const parts = await convertReadableStreamToArray(stream);
      expect(streams()).toBe(2);
      expect(summaries).toHaveLength(1);
      expect(parts.filter((part) => part.type === 'error')).toEqual([{ type: 'error', error: errors[1] }]);
    });
  });

  describe('single flight', () => {
    it('should let a step that joined another step\'s compaction be aborted while it waits', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const summaryStarted = new Promise<void>((resolve) => (started = resolve));
      let summaries = 0;
      const mock = new MockLanguageModel({
        doGenerate: async (params: CallOptions) => {
          if (isSummaryPrompt(params.prompt)) {
            summaries++;
            started();
            await gate;
            return textResult(SUMMARY, 100, 100);
          }
          return textResult('ok', estimate(params.prompt), 10);
        },
      });
      // Window 20,000: ceiling 17,000; the conversation is about 18,000 tokens.
      const wrapped = wrap(mock, compaction({ contextWindow: 20_000 }));
      const conversation = [...chat(3, 3_000), user('go on')];
      const first = wrapped.doGenerate({ prompt: [...conversation] });
      await summaryStarted;
      const controller = new AbortController();
      const second = wrapped.doGenerate({ prompt: [...conversation], abortSignal: controller.signal }).then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await turns();
      controller.abort();
      // The second step ends while the summary request it joined is still open (it is released below, never before).
      let outcome: unknown;
      void second.then((value) => (outcome = value));
      await settle(() => outcome !== undefined);
      expect((outcome as Error).name).toBe('AbortError');
      release();
      // The step that compacted shows it (hooks/part.ts) before its reply.
      expect((await first).content.map((part) => (part.type === 'text' ? part.text : `${part.type} ${String(part.toolName)}`))).toEqual(['tool-call compaction', 'tool-result compaction', 'ok']);
      expect(summaries).toBe(1);
    });

    it('should compact for the second of two concurrent steps when the first is aborted during the summary request', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const summaryStarted = new Promise<void>((resolve) => (started = resolve));
      const summaries: CallOptions[] = [];
      const steps: CallOptions[] = [];
      const mock = new MockLanguageModel({
        doGenerate: async (params: CallOptions) => {
          if (isSummaryPrompt(params.prompt)) {
            summaries.push(params);
            if (summaries.length === 1) {
              started();
              await gate;
            }
            // A provider ends an aborted request with an AbortError.
            if (params.abortSignal?.aborted) throw abortError();
            return textResult(SUMMARY, 100, 100);
          }
          if (params.abortSignal?.aborted) throw abortError();
          steps.push(params);
          return textResult('ok', estimate(params.prompt), 10);
        },
      });
      // Window 20,000: ceiling 17,000; the conversation is about 18,000 tokens.
      const middleware = compaction({ contextWindow: 20_000 });
      const wrapped = wrap(mock, middleware);
      const conversation = [...chat(3, 3_000), user('go on')];

      const controller = new AbortController();
      const first = wrapped.doGenerate({ prompt: [...conversation], abortSignal: controller.signal }).then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await summaryStarted;
      const second = wrapped.doGenerate({ prompt: [...conversation] });
      // Let the second step reach the compaction in flight (turns of the event loop, no time): it joins it rather than summarize again.
      await turns(50);
      expect(summaries).toHaveLength(1);

      controller.abort();
      release();

      const firstOutcome = await first;
      expect((firstOutcome as Error).name).toBe('AbortError');
      const result = await second;
      expect(result.content.map((part) => (part.type === 'text' ? part.text : `${part.type} ${String(part.toolName)}`))).toEqual(['tool-call compaction', 'tool-result compaction', 'ok']);
      expect(summaries).toHaveLength(2);
      // Its own signal: the summary's deadline (summaryTimeout), not the aborted step's.
      expect(summaries[1]!.abortSignal?.aborted).toBe(false);
      expect(steps).toHaveLength(1);
      const checkpoint = steps[0]!.prompt[0]!;
      expect(checkpoint.role).toBe('user');
      expect(String((checkpoint as { content: Array<{ text?: unknown }> }).content[0]!.text)).toContain('<conversation-checkpoint>');
      expect(steps[0]!.prompt.at(-1)).toEqual(user('go on'));
      expect(middleware.last()).toMatchObject({ reason: 'auto', messagesCovered: 6 });
    });
  });
});
