import { afterEach, describe, expect, it, vi } from 'vitest';
import { CompactionError, compaction } from '../../../src';
import type { CallOptions, Message } from '../../../src/prompt/types';
import { recordingLogger, wrap } from '../../support/harness';
import { MockLanguageModel, convertReadableStreamToArray, isSummaryPrompt, okStream, textResult } from '../../support/models';
import { atCeiling, band } from '../../support/prepare-fixtures';
import { estimatePrompt } from '../../../src/sizing/estimate';

// No summary holds a step without bound (docs/design.md, "No summary holds a step without bound"):
// a summarizer that never answers, and ignores the abort, costs a step at most `summaryTimeout`,
// once, in the foreground and in the background, through doGenerate and doStream. Window 20,000:
// ceiling 17,000, the band from 13,600. Time is faked: nothing here sleeps.

const TIMEOUT = 1_000;

const realSetTimeout = globalThis.setTimeout;
/** Lets the middleware's work that leaves the event loop (Web Crypto digests) come back, in real time, until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 2_000 && !condition(); turn++) await new Promise((resolve) => realSetTimeout(resolve, 1));
  if (!condition()) throw new Error('condition not met');
}
/** A moment of real time for what is pending to run (the step must still be waiting after it). */
const moment = () => new Promise((resolve) => realSetTimeout(resolve, 50));

/** A model whose summaries never come (their abort signals are kept), and whose steps answer at once. */
function silentSummarizer() {
  const signals: (AbortSignal | undefined)[] = [];
  const steps: Message[][] = [];
  const model = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => {
      if (isSummaryPrompt(params.prompt)) {
        signals.push(params.abortSignal);
        return new Promise<never>(() => {});
      }
      steps.push(params.prompt);
      return textResult('ok', estimatePrompt(params.prompt), 10);
    },
    doStream: async (params: CallOptions) => {
      steps.push(params.prompt);
      return okStream(estimatePrompt(params.prompt));
    },
  });
  return { model, signals, steps };
}

afterEach(() => vi.useRealTimers());

for (const via of ['doGenerate', 'doStream'] as const) {
  describe(`summaryTimeout through ${via}`, () => {
    /** Sends `prompt` as one step; resolves once it went out and (for a stream) was read. */
    const send = async (wrapped: ReturnType<typeof wrap>, prompt: Message[]) => {
      if (via === 'doGenerate') return wrapped.doGenerate({ prompt });
      return convertReadableStreamToArray((await wrapped.doStream({ prompt })).stream);
    };

    it('should abort a summary written in the foreground at the timeout and send the step unchanged, then hold the conversation', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const log = recordingLogger();
      const silent = silentSummarizer();
      const wrapped = wrap(silent.model, compaction({ contextWindow: 20_000, prepare: false, summaryTimeout: TIMEOUT, logger: log.logger }));
      let done = false;
      const step = send(wrapped, atCeiling()).then(() => (done = true));
      await until(() => silent.signals.length === 1);
      await vi.advanceTimersByTimeAsync(TIMEOUT - 1);
      await moment();
      expect(done).toBe(false);
      expect(silent.signals).toHaveLength(1);
      expect(silent.signals[0]!.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await step;
      // Aborted at 1,000 ms; the step went out as it was (it fits the window of 20,000).
      expect(silent.signals[0]!.aborted).toBe(true);
      expect(silent.steps).toEqual([atCeiling()]);
      expect(log.warn[0]).toMatch(/^ai-compaction: compaction failed \(timeout\): the summary was not written within summaryTimeout \(1000 ms\); the step goes out unchanged\./);
      // The failure backoff: the next step, a little larger, sends no second summary request.
      await send(wrapped, [...atCeiling(), { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, { role: 'user', content: [{ type: 'text', text: 'again' }] }]);
      expect(silent.signals).toHaveLength(1);
      expect(silent.steps).toHaveLength(2);
    });

    it('should throw the timeout as a CompactionError when the step does not fit the window without the summary', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const silent = silentSummarizer();
      const wrapped = wrap(silent.model, compaction({ contextWindow: 18_000, prepare: false, summaryTimeout: TIMEOUT }));
      const step = send(wrapped, atCeiling()).then(
        () => undefined,
        (error: unknown) => error,
      );
      await until(() => silent.signals.length === 1);
      await vi.advanceTimersByTimeAsync(TIMEOUT);
      const error = await step;
      expect(CompactionError.isInstance(error)).toBe(true);
      expect((error as CompactionError).reason).toBe('timeout');
      expect(silent.steps).toHaveLength(0);
    });

    it('should abort a summary prepared in the background at its deadline: the step at the ceiling waits for it until then, once', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const log = recordingLogger();
      const silent = silentSummarizer();
      const background: Promise<unknown>[] = [];
      const wrapped = wrap(silent.model, compaction({ contextWindow: 20_000, summaryTimeout: TIMEOUT, logger: log.logger, waitUntil: (work) => void background.push(work) }));
      // In the band: the next checkpoint is prepared in the background; the step does not wait.
      await send(wrapped, band());
      await until(() => silent.signals.length === 1);
      await vi.advanceTimersByTimeAsync(400);
      // At the ceiling 400 ms later: it waits for the summary being written, until its deadline.
      let done = false;
      const step = send(wrapped, atCeiling()).then(() => (done = true));
      await moment();
      await vi.advanceTimersByTimeAsync(599);
      await moment();
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await step;
      await Promise.all(background);
      expect(silent.signals[0]!.aborted).toBe(true);
      // It went out unchanged, with no second summary request, and none follows on the next step.
      expect(silent.steps.at(-1)).toEqual(atCeiling());
      expect(silent.signals).toHaveLength(1);
      expect(log.warn.some((line) => line.includes('(timeout'))).toBe(true);
      await send(wrapped, [...atCeiling(), { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, { role: 'user', content: [{ type: 'text', text: 'again' }] }]);
      expect(silent.signals).toHaveLength(1);
    });

    it('should leave the wait without bound with summaryTimeout: false', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const silent = silentSummarizer();
      const wrapped = wrap(silent.model, compaction({ contextWindow: 20_000, prepare: false, summaryTimeout: false }));
      let done = false;
      void send(wrapped, atCeiling()).then(() => (done = true));
      await until(() => silent.signals.length === 1);
      await vi.advanceTimersByTimeAsync(600_000);
      await moment();
      expect(done).toBe(false);
      expect(silent.signals[0]!.aborted).toBe(false);
    });
  });
}
