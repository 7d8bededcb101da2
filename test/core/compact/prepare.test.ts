import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { APICallError, generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { type CompactionOptions, type CompactionRecord, compaction, compactionOf, memoryStore } from '../../../src';
import { checkpointText } from '../../../src/checkpoint/message';
import { UPDATE_PROMPT } from '../../../src/checkpoint/prompts';
import { resolveOptions } from '../../../src/options';
import type { Message } from '../../../src/prompt/types';
import { estimatePrompt } from '../../../src/sizing/estimate';
import { SUMMARY, isSummaryPrompt, textResult, usage } from '../../support/models';
import { MockLanguageModel } from '../../support/models';
import { settle } from '../../support/manual-clock';
import { atCeiling, band, gate, tokens, under } from '../../support/prepare-fixtures';
import { readFileAgent, readFileTools } from '../../support/read-file-agent';
import { assistant, recordingLogger, scriptedModel, system, textOf, toolCall, toolCallingModel, toolResult, user, wrap } from '../../support/harness';

// Preparing ahead (docs/design.md, "Preparing ahead"). A 20,000-token window has a 17,000-token
// ceiling ("The ceiling"); `prepare: 0.8` prepares from 13,600. The conversations it grows through
// are in test/support/prepare-fixtures.ts. The clock stands still (only `Date` is faked): the
// summaries of these test doubles take no time, and a summary measured to take time would time
// preparing to it ("Timed to the summary"), which the tests of that move the clock for.

const WINDOW = 20_000;

/** An instance whose background work is collected, so a test can wait for it. */
function collecting(options: CompactionOptions & { secret?: undefined } = {}) {
  const background: Promise<unknown>[] = [];
  const records: CompactionRecord[] = [];
  const middleware = compaction({
    contextWindow: WINDOW,
    waitUntil: (promise) => void background.push(promise),
    onCompaction: (record) => void records.push(record),
    ...options,
  });
  return { middleware, background, records, settled: () => Promise.all(background) };
}

/** A moment for what is pending to run (a step that must still be waiting after it): turns of the event loop, no time. */
const turns = async (count = 20) => {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
};

/** The summary requests that summarize from scratch: not a catch-up, whose first message is the checkpoint it updates. */
const fromScratch = <Call extends { prompt: Message[] }>(calls: Call[]) => calls.filter((call) => !textOf(call.prompt[0]).startsWith('<conversation-checkpoint>'));

const checkpointOf = (record: CompactionRecord): Message => ({ role: 'user', content: [{ type: 'text', text: checkpointText(record.summary, record.record) }] });

describe('prepare', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['Date'] }));
  afterEach(() => vi.useRealTimers());

  describe('the step that reaches prepare x ceiling', () => {
    it('should go out at once, unchanged, while its summary is still being written', async () => {
      const summary = gate();
      let summaryDone = false;
      const scripted = scriptedModel({
        summary: () =>
          summary.opened.then(() => {
            summaryDone = true;
            return textResult(SUMMARY, 100, 200);
          }),
      });
      const { middleware, background, settled } = collecting();
      const prompt = band();
      const result = await wrap(scripted.model, middleware).doGenerate({ prompt });
      // The step resolved; its summary request was made and is still pending.
      expect(summaryDone).toBe(false);
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(scripted.stepCalls()[0]!.prompt).toEqual(prompt);
      expect((result as { providerMetadata?: Record<string, unknown> }).providerMetadata?.compaction).toBeUndefined();
      expect(middleware.last()).toBeUndefined();
      expect(background).toHaveLength(1);
      summary.open();
      await settled();
      expect(summaryDone).toBe(true);
      // Made, but not reported: no step has sent it yet.
      expect(middleware.last()).toBeUndefined();
    });

    it("should send the step's own request up to its live part, exactly what compacting that step would send", async () => {
      const prepared = scriptedModel();
      const now = scriptedModel();
      const tools = [{ type: 'function', name: 'read_file', description: 'Read a file', inputSchema: { type: 'object' } }];
      const prompt = [system('You are a coding agent.'), ...band()];
      const ahead = collecting();
      await wrap(prepared.model, ahead.middleware).doGenerate({ prompt, tools, maxOutputTokens: 500 } as never);
      await ahead.settled();
      // The same step compacted on the spot (docs/design.md, "The summary request") sends the same
      // summary request.
      const manual = compaction({ contextWindow: WINDOW, prepare: false });
      manual.compactNext();
      await wrap(now.model, manual).doGenerate({ prompt, tools, maxOutputTokens: 500 } as never);
      expect(prepared.summaryCalls()).toHaveLength(1);
      expect(prepared.summaryCalls()[0]).toEqual(now.summaryCalls()[0]);
      // System, the conversation up to the new user message, and the summary prompt.
      expect(prepared.summaryCalls()[0]!.prompt.slice(0, -1)).toEqual(prompt.slice(0, -1));
    });

    it('should not prepare below prepare x ceiling, nor at the ceiling itself', async () => {
      const scripted = scriptedModel();
      const { middleware, background } = collecting();
      // 7 exchanges of 900 + 900: 12,601 tokens, under 13,600.
      const low: Message[] = [];
      for (let index = 0; index < 7; index++) low.push(user(tokens(900)), assistant(tokens(900, 'a')));
      await wrap(scripted.model, middleware).doGenerate({ prompt: [...low, user('next')] });
      expect(scripted.summaryCalls()).toHaveLength(0);
      expect(background).toHaveLength(0);
      // At the ceiling with nothing prepared: compacts as in 6, on the spot, and prepares nothing.
      await wrap(scripted.model, middleware).doGenerate({ prompt: atCeiling() });
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(background).toHaveLength(0);
      expect(middleware.last()).toMatchObject({ reason: 'auto' });
      expect(middleware.last()!.prepared).toBeUndefined();
    });

    it('should follow the prepare share: 0.5 prepares from 8,500 tokens', async () => {
      const scripted = scriptedModel();
      const { middleware, background, settled } = collecting({ prepare: 0.5 });
      const prompt = [user(tokens(4_300)), assistant(tokens(4_300, 'a')), user('next')];
      await wrap(scripted.model, middleware).doGenerate({ prompt });
      await settled();
      expect(background).toHaveLength(1);
      expect(scripted.summaryCalls()).toHaveLength(1);
    });
  });

  describe('held back while under the ceiling', () => {
    it('should send the steps under the ceiling whole, and prepare nothing more for them', async () => {
      const scripted = scriptedModel();
      const { middleware, background, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      await settled();
      await wrapped.doGenerate({ prompt: under() });
      await settled();
      expect(scripted.stepCalls().map((call) => call.prompt)).toEqual([band(), under()]);
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(background).toHaveLength(1);
      expect(records).toEqual([]);
    });
  });

  describe('the first step at the ceiling', () => {
    it('should send the prepared checkpoint at once, covering only the prefix it was made for, everything after it live', async () => {
      const scripted = scriptedModel();
      const { middleware, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      await settled();
      await wrapped.doGenerate({ prompt: under() });
      const conversation = atCeiling();
      const result = (await wrapped.doGenerate({ prompt: conversation })) as { providerMetadata?: Record<string, unknown> };
      // No summary request of its own: the one made beside the first step stands.
      // Beside it a catch-up (an update of the checkpoint it sent) may have begun: none from scratch.
      expect(fromScratch(scripted.summaryCalls())).toHaveLength(1);
      // It covers the 14 messages before that step's new user message; all that came since is live.
      expect(records).toHaveLength(1);
      const record = records[0]!;
      expect(record).toMatchObject({ reason: 'auto', rule: 'prepared', messagesCovered: 14, summary: SUMMARY, prepared: true });
      expect(scripted.stepCalls()[2]!.prompt).toEqual([checkpointOf(record), ...conversation.slice(14)]);
      expect(record.tokensBefore).toBeGreaterThanOrEqual(17_000);
      expect(record.tokensAfter).toBe(estimatePrompt(scripted.stepCalls()[2]!.prompt));
      expect(record.tokensAfter).toBeLessThan(17_000);
      expect(middleware.last()).toEqual(record);
      expect(result.providerMetadata?.compaction).toEqual({
        reason: 'auto',
        rule: 'prepared',
        kind: 'summary',
        messagesCovered: 14,
        tokensBefore: record.tokensBefore,
        tokensAfter: record.tokensAfter,
        summary: SUMMARY,
        usage: record.usage,
        prepared: true,
      });
      expect(compactionOf(result.providerMetadata)).toEqual(result.providerMetadata?.compaction);
      // The request made in the background, counted on this step that sends it: the scripted provider
      // reports the summary request's estimate as its input tokens, and 200 output tokens.
      expect(record.usage).toMatchObject({ requests: 1, inputTokens: estimatePrompt(scripted.summaryCalls()[0]!.prompt), outputTokens: 200 });

      // With all that came after it live (4,500 tokens and more) the prompt is over the budget of a
      // quarter of the room (4,250): a catch-up of this step's whole conversation was prepared beside
      // it, and the next step, under the ceiling, sends it.
      await settled();
      expect(scripted.summaryCalls()).toHaveLength(2);
      expect(scripted.summaryCalls()[1]!.prompt).toEqual([checkpointOf(record), ...conversation.slice(14), expect.objectContaining({ role: 'user' })]);
      const next = [...conversation, assistant('done'), user('thanks')];
      await wrapped.doGenerate({ prompt: next });
      expect(records).toHaveLength(2);
      expect(records[1]).toMatchObject({ reason: 'auto', messagesCovered: conversation.length, prepared: true });
      expect(scripted.stepCalls()[3]!.prompt).toEqual([checkpointOf(records[1]!), ...next.slice(conversation.length)]);
      // From then on it is found like any checkpoint, and reported no more.
      const after = [...next, assistant('ok'), user('bye')];
      await wrapped.doGenerate({ prompt: after });
      expect(scripted.stepCalls()[4]!.prompt).toEqual([checkpointOf(records[1]!), ...after.slice(conversation.length)]);
      expect(records).toHaveLength(2);
      expect(scripted.summaryCalls()).toHaveLength(2);
    });

    it('should send it under streaming too, with the metadata on the finish part', async () => {
      const scripted = scriptedModel();
      const streaming = new MockLanguageModel({
        doGenerate: (params: never) => (scripted.model as unknown as { doGenerate: (p: never) => unknown }).doGenerate(params),
        doStream: async ({ prompt }: { prompt: Message[] }) => ({
          stream: new ReadableStream({
            start(controller) {
              controller.enqueue({ type: 'stream-start', warnings: [] });
              controller.enqueue({ type: 'text-start', id: 't' });
              controller.enqueue({ type: 'text-delta', id: 't', delta: 'ok' });
              controller.enqueue({ type: 'text-end', id: 't' });
              controller.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(estimatePrompt(prompt), 10) });
              controller.close();
            },
          }),
        }),
      });
      const { middleware, settled } = collecting();
      const wrapped = wrap(streaming, middleware);
      const read = async (prompt: Message[]) => {
        const parts: Array<{ type: string; providerMetadata?: Record<string, unknown> }> = [];
        const { stream } = await wrapped.doStream({ prompt });
        const reader = stream.getReader();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) parts.push(chunk.value);
        return parts;
      };
      await read(band());
      await settled();
      const parts = await read(atCeiling());
      const finish = parts.find((part) => part.type === 'finish')!;
      expect(finish.providerMetadata?.compaction).toMatchObject({ reason: 'auto', messagesCovered: 14, prepared: true });
      expect(middleware.last()!.prepared).toBe(true);
    });

    it('should compact now, updating the prepared checkpoint, when the prompt with it does not fit', async () => {
      const scripted = scriptedModel();
      const { middleware, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      await settled();
      // A 3,000-token reply and a 13,000-token new message: with the prepared checkpoint the prompt
      // is still over the ceiling.
      const conversation = [...band(), assistant(tokens(3_000, 'b')), user(tokens(13_000, 'd'))];
      await wrapped.doGenerate({ prompt: conversation });
      expect(scripted.summaryCalls()).toHaveLength(2);
      const update = scripted.summaryCalls()[1]!.prompt;
      // The summary request of this step: the prepared checkpoint, what came after it up to the live
      // part, and the update prompt (docs/design.md, "The next compaction").
      expect(textOf(update[0]).startsWith('<conversation-checkpoint>')).toBe(true);
      expect(update.slice(1, -1)).toEqual(conversation.slice(14, 16));
      expect(textOf(update[update.length - 1])).toBe(UPDATE_PROMPT);
      // One compaction reported: the one sent, covering everything before the new message.
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ reason: 'auto', messagesCovered: 16 });
      expect(records[0]!.prepared).toBeUndefined();
      expect(scripted.stepCalls()[1]!.prompt).toEqual([checkpointOf(records[0]!), conversation[16]]);
    });

    it('should wait for a checkpoint still being prepared rather than start a second summary', async () => {
      const summary = gate();
      const scripted = scriptedModel({ summary: () => summary.opened.then(() => textResult(SUMMARY, 100, 200)) });
      const { middleware, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      let sent = false;
      const step = wrapped.doGenerate({ prompt: atCeiling() }).then(() => (sent = true));
      await turns();
      expect(sent).toBe(false);
      summary.open();
      await step;
      await settled();
      // No second summary at the ceiling; the one after it is the catch-up of that step's whole
      // conversation (the prompt with the first is over the budget), prepared beside it.
      expect(records).toEqual([expect.objectContaining({ messagesCovered: 14, prepared: true })]);
      expect(scripted.summaryCalls()).toHaveLength(2);
      expect(scripted.summaryCalls()[1]!.prompt).toEqual([checkpointOf(records[0]!), ...atCeiling().slice(14), expect.objectContaining({ role: 'user' })]);
    });

    it('should compact on the spot, not wait, when the prompt could not fit with the one being prepared', async () => {
      const summary = gate();
      const scripted = scriptedModel({ summary: (_prompt, index) => (index === 0 ? summary.opened.then(() => textResult(SUMMARY, 100, 200)) : undefined) });
      const { middleware, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      // 14 messages covered leave 17,000+ tokens after them: no checkpoint of that prefix can help.
      const conversation = [...band(), assistant(tokens(7_000, 'b')), user('go'), assistant(tokens(10_000, 'c')), user('on')];
      await wrapped.doGenerate({ prompt: conversation });
      expect(scripted.summaryCalls()).toHaveLength(2);
      expect(records).toEqual([expect.objectContaining({ messagesCovered: 18 })]);
      summary.open();
      await settled();
    });
  });

  describe('a catch-up', () => {
    /**
     * band() prepared (its summary `first`, by default the template), then atCeiling() sends it with
     * a tail over the budget; the catch-up's summary (the second) waits for `second`.
     */
    async function sentWithTail(second: () => Promise<unknown>, options: CompactionOptions & { secret?: undefined } = {}, first?: unknown) {
      const scripted = scriptedModel({ summary: (_prompt, index) => (index === 1 ? second() : index === 0 ? first : undefined) });
      const instance = collecting(options);
      const wrapped = wrap(scripted.model, instance.middleware);
      await wrapped.doGenerate({ prompt: band() });
      await instance.settled();
      const conversation = atCeiling();
      await wrapped.doGenerate({ prompt: conversation });
      return { scripted, ...instance, wrapped, conversation };
    }

    it('should be written in the background: the steps until it is ready send the first checkpoint and what came after it, without waiting', async () => {
      const summary = gate();
      const { scripted, records, wrapped, conversation, settled } = await sentWithTail(() => summary.opened.then(() => textResult(SUMMARY, 100, 200)));
      expect(records).toHaveLength(1);
      // its request goes out in the background, after the step
      await settle(() => scripted.summaryCalls().length === 2);
      expect(scripted.summaryCalls()).toHaveLength(2);
      // Two more steps while the catch-up is still being written: neither waits, neither starts another.
      const first = [...conversation, assistant('one'), user('two')];
      await wrapped.doGenerate({ prompt: first });
      const second = [...first, assistant('three'), user('four')];
      await wrapped.doGenerate({ prompt: second });
      expect(scripted.stepCalls()).toHaveLength(4);
      expect(scripted.stepCalls()[3]!.prompt).toEqual([checkpointOf(records[0]!), ...second.slice(14)]);
      expect(scripted.summaryCalls()).toHaveLength(2);
      expect(records).toHaveLength(1);
      // Ready: the first step after it sends it, covering the conversation of the step that started it.
      summary.open();
      await settled();
      const third = [...second, assistant('five'), user('six')];
      await wrapped.doGenerate({ prompt: third });
      expect(records).toHaveLength(2);
      expect(records[1]).toMatchObject({ messagesCovered: conversation.length, prepared: true });
      expect(scripted.stepCalls()[4]!.prompt).toEqual([checkpointOf(records[1]!), ...third.slice(conversation.length)]);
      expect(estimatePrompt(scripted.stepCalls()[4]!.prompt)).toBeLessThan(estimatePrompt(scripted.stepCalls()[3]!.prompt));
      expect(scripted.summaryCalls()).toHaveLength(2);
    });

    it('should start no second catch-up when the one sent leaves the prompt over the budget again', async () => {
      const { scripted, records, wrapped, conversation, settled } = await sentWithTail(() => Promise.resolve(textResult(SUMMARY, 100, 200)));
      await settled();
      expect(scripted.summaryCalls()).toHaveLength(2);
      // the step that sends it brings 5,000 tokens more: with them the prompt is over the budget
      // (a quarter of the 17,000-token room) by more than a quarter of it, as after the first one
      const next = [...conversation, assistant(tokens(2_500, 'e')), user(tokens(2_500, 'f'))];
      await wrapped.doGenerate({ prompt: next });
      await settled();
      expect(records).toHaveLength(2);
      expect(records[1]).toMatchObject({ messagesCovered: conversation.length, prepared: true });
      expect(estimatePrompt(scripted.stepCalls().at(-1)!.prompt)).toBeGreaterThan(17_000 / 4 + 17_000 / 16);
      expect(scripted.summaryCalls()).toHaveLength(2);
    });

    /** A summary whose request read `cached` of its 12,000 input tokens from the provider's prompt cache. */
    const readFromCache = (cached: number) => ({
      ...textResult(SUMMARY, 12_000, 200),
      usage: { inputTokens: { total: 12_000, noCache: 12_000 - cached, cacheRead: cached, cacheWrite: undefined }, outputTokens: { total: 200, text: 200, reasoning: undefined } },
    });

    it('should start from a summarizer whose latest request read half its input from the prompt cache', async () => {
      const { scripted, settled } = await sentWithTail(() => Promise.resolve(textResult(SUMMARY, 100, 200)), {}, readFromCache(6_000));
      await settled();
      expect(scripted.summaryCalls()).toHaveLength(2);
    });

    it('should start none from a summarizer that read less than half (a model of its own: it would pay for the whole conversation again)', async () => {
      const { scripted, records, wrapped, conversation, settled } = await sentWithTail(() => Promise.resolve(textResult(SUMMARY, 100, 200)), {}, readFromCache(5_999));
      await settled();
      expect(scripted.summaryCalls()).toHaveLength(1);
      // the first checkpoint stays in force, the conversation after it live
      const next = [...conversation, assistant('one'), user('two')];
      await wrapped.doGenerate({ prompt: next });
      expect(records).toHaveLength(1);
      expect(scripted.stepCalls().at(-1)!.prompt).toEqual([checkpointOf(records[0]!), ...next.slice(14)]);
    });

    it('should change nothing when it fails: the first checkpoint stays in force, and nothing waits', async () => {
      const log = recordingLogger();
      const { scripted, records, wrapped, conversation, settled, middleware } = await sentWithTail(() => Promise.reject(new Error('summarizer down')), { logger: log.logger });
      await settled();
      expect(log.warn.some((line) => /preparing the next checkpoint in the background failed/.test(line))).toBe(true);
      const next = [...conversation, assistant('one'), user('two')];
      await wrapped.doGenerate({ prompt: next });
      expect(records).toHaveLength(1);
      expect(middleware.last()).toEqual(records[0]);
      expect(scripted.stepCalls()[2]!.prompt).toEqual([checkpointOf(records[0]!), ...next.slice(14)]);
    });

    it('should be held in state() as prepared, so that an instance continuing from it sends it', async () => {
      const { records, settled, middleware, conversation } = await sentWithTail(() => Promise.resolve(textResult(SUMMARY, 100, 200)));
      await settled();
      const state = middleware.state();
      const other = scriptedModel();
      const continuing = collecting({ state });
      const next = [...conversation, assistant('one'), user('two')];
      await wrap(other.model, continuing.middleware).doGenerate({ prompt: next });
      expect(other.summaryCalls()).toHaveLength(0);
      expect(continuing.records).toEqual([expect.objectContaining({ messagesCovered: conversation.length, prepared: true })]);
      expect(records).toHaveLength(1);
    });
  });

  describe('a catch-up timed to the summary', () => {
    afterEach(() => vi.useRealTimers());

    /**
     * band() prepared with a summary that takes 2 s (the clock moved while it is written), then
     * atCeiling() `gap` ms after band() went out: it sends the prepared checkpoint with a tail over
     * the budget. Returns the summary requests once the background work has settled.
     */
    async function timed(gap: number): Promise<number> {
      vi.useFakeTimers({ toFake: ['Date'] });
      const scripted = scriptedModel({
        summary: () => {
          vi.setSystemTime(Date.now() + 2_000);
          return undefined;
        },
      });
      const { middleware, records, settled } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      // the clock stands still but for the summaries: band() goes out when it arrives
      const wentOut = Date.now();
      await wrapped.doGenerate({ prompt: band() });
      await settled();
      vi.setSystemTime(wentOut + gap);
      await wrapped.doGenerate({ prompt: atCeiling() });
      await settled();
      expect(records).toEqual([expect.objectContaining({ prepared: true })]);
      return scripted.summaryCalls().length;
    }

    it('should start when a summary begun now is ready before the conversation reaches the ceiling', async () => {
      // a step a minute: the steps left to the ceiling take minutes, a summary 2 s
      expect(await timed(60_000)).toBe(2);
    });

    it('should not start when the conversation reaches the ceiling before a summary begun now is ready', async () => {
      // a step every 10 ms: the ceiling is a step or so away, under a second; a catch-up would be
      // ready only after it, covering what the step there sends live
      expect(await timed(10)).toBe(1);
    });
  });

  describe('overflow recovery', () => {
    it('should send a prepared checkpoint of the prefix it compacts, reported on that step as an overflow, and promote it', async () => {
      let steps = 0;
      const scripted = scriptedModel({
        reply: () => {
          // The second step is rejected as too long: the provider's window is smaller than told.
          if (++steps === 2) {
            throw new APICallError({
              message: "This model's maximum context length is 13000 tokens. However, your messages resulted in 14100 tokens. Please reduce the length of the messages.",
              url: 'https://api.openai.com/v1/chat/completions',
              requestBodyValues: {},
              statusCode: 400,
              responseBody: JSON.stringify({ error: { code: 'context_length_exceeded' } }),
              isRetryable: false,
            });
          }
          return undefined;
        },
      });
      const { middleware, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      await settled();
      expect(scripted.summaryCalls()).toHaveLength(1);
      // The same conversation again, rejected: the recovery covers the very prefix prepared.
      await wrapped.doGenerate({ prompt: band() });
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(records).toEqual([expect.objectContaining({ reason: 'overflow', messagesCovered: 14, prepared: true })]);
      expect(scripted.stepCalls()[2]!.prompt).toEqual([checkpointOf(records[0]!), user('next')]);
      // Promoted: the next step finds it like any checkpoint.
      const next = [...band(), assistant('ok'), user('then')];
      await wrapped.doGenerate({ prompt: next });
      expect(scripted.stepCalls()[3]!.prompt).toEqual([checkpointOf(records[0]!), ...next.slice(14)]);
      expect(records).toHaveLength(1);
    });
  });

  describe('failure', () => {
    it('should hold the conversation as a failed compaction does when the background compaction fails: the step at the ceiling, grown past the hold, compacts as before', async () => {
      const log = recordingLogger();
      const scripted = scriptedModel({ summary: (_prompt, index) => (index === 0 ? Promise.reject(new Error('summarizer down')) : undefined) });
      const { middleware, settled, records } = collecting({ logger: log.logger });
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      await settled();
      expect(log.warn).toHaveLength(1);
      expect(log.warn[0]).toMatch(/^ai-compaction: preparing the next checkpoint in the background failed; the step at the ceiling goes on as after a failed compaction \(summarizer-failed: .*summarizer down.*\)\. Not compacting this conversation on its own again until its prompt grows by 1700 tokens \(from 13994 to 15694\)/);
      expect(middleware.last()).toBeUndefined();
      // The next step in the band goes out whole and does not try again in the background.
      await wrapped.doGenerate({ prompt: under() });
      await settled();
      expect(scripted.stepCalls()[1]!.prompt).toEqual(under());
      expect(scripted.summaryCalls()).toHaveLength(1);
      // The step at the ceiling compacts on the spot, as without prepare.
      const conversation = atCeiling();
      await wrapped.doGenerate({ prompt: conversation });
      expect(scripted.summaryCalls()).toHaveLength(2);
      expect(records).toEqual([expect.objectContaining({ reason: 'auto', messagesCovered: 18 })]);
      expect(records[0]!.prepared).toBeUndefined();
      expect(scripted.stepCalls()[2]!.prompt).toEqual([checkpointOf(records[0]!), conversation[18]]);
    });

    it('should run detached without waitUntil, and log its failure', async () => {
      const log = recordingLogger();
      const failed = gate();
      const scripted = scriptedModel({
        summary: () => {
          setTimeout(failed.open, 0);
          return Promise.reject(new Error('outage'));
        },
      });
      const middleware = compaction({ contextWindow: WINDOW, logger: log.logger });
      await wrap(scripted.model, middleware).doGenerate({ prompt: band() });
      await failed.opened;
      await settle(() => log.warn.some((line) => line.includes('preparing the next checkpoint in the background failed')));
      expect(log.warn.some((line) => line.includes('preparing the next checkpoint in the background failed'))).toBe(true);
      expect(scripted.stepCalls()[0]!.prompt).toEqual(band());
    });

    it('should go on detached when waitUntil throws', async () => {
      const log = recordingLogger();
      const scripted = scriptedModel();
      const middleware = compaction({
        contextWindow: WINDOW,
        logger: log.logger,
        waitUntil: () => {
          throw new Error('`after` was called outside a request scope');
        },
      });
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      expect(log.warn).toEqual([expect.stringMatching(/^ai-compaction: waitUntil refused the background compaction \(`after` was called outside a request scope\); it runs detached$/)]);
      await settle(() => Object.values(middleware.state().threads).some((thread) => ((thread as { prepared?: unknown[] }).prepared ?? []).length === 1));
      await wrapped.doGenerate({ prompt: atCeiling() });
      // Beside it a catch-up (an update of the checkpoint it sent) may have begun: none from scratch.
      expect(fromScratch(scripted.summaryCalls())).toHaveLength(1);
      expect(middleware.last()!.prepared).toBe(true);
    });
  });

  describe('waitUntil', () => {
    it('should receive the background work, a promise that settles once the checkpoint is stored, and nothing else', async () => {
      const summary = gate();
      const scripted = scriptedModel({ summary: () => summary.opened.then(() => textResult(SUMMARY, 100, 200)) });
      const handed: Promise<unknown>[] = [];
      const middleware = compaction({ contextWindow: WINDOW, waitUntil: (promise) => void handed.push(promise) });
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: [user(tokens(100))] });
      expect(handed).toHaveLength(0);
      await wrapped.doGenerate({ prompt: band() });
      expect(handed).toHaveLength(1);
      expect(handed[0]).toBeInstanceOf(Promise);
      let settled = false;
      void handed[0]!.then(() => (settled = true));
      await turns();
      expect(settled).toBe(false);
      summary.open();
      await expect(handed[0]).resolves.toBeUndefined();
      // Stored: another instance sharing the store finds it in state() (below) and at the ceiling.
      const state = middleware.state();
      expect(Object.values(state.threads).some((thread) => ((thread as { prepared?: unknown[] }).prepared ?? []).length === 1)).toBe(true);
    });
  });

  describe('one background compaction per conversation', () => {
    it('should start one for concurrent steps of the same conversation', async () => {
      const summary = gate();
      const scripted = scriptedModel({ summary: () => summary.opened.then(() => textResult(SUMMARY, 100, 200)) });
      const { middleware, background, settled } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      await Promise.all([wrapped.doGenerate({ prompt: band() }), wrapped.doGenerate({ prompt: band() }), wrapped.doGenerate({ prompt: under() })]);
      // A later step while it is still being written: nothing more.
      await wrapped.doGenerate({ prompt: under() });
      summary.open();
      await settled();
      expect(background).toHaveLength(1);
      expect(scripted.summaryCalls()).toHaveLength(1);
    });

    it('should prepare separately for two conversations, and never send one the other\'s checkpoint', async () => {
      const scripted = scriptedModel();
      const { middleware, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      const other = (messages: Message[]) => messages.map((message) => (message.role === 'user' ? { ...message, content: [{ type: 'text' as const, text: `other ${textOf(message)}` }] } : message));
      await Promise.all([wrapped.doGenerate({ prompt: band() }), wrapped.doGenerate({ prompt: other(band()) })]);
      await settled();
      expect(scripted.summaryCalls()).toHaveLength(2);
      await wrapped.doGenerate({ prompt: other(atCeiling()) });
      await wrapped.doGenerate({ prompt: atCeiling() });
      expect(records).toHaveLength(2);
      const [otherStep, ownStep] = scripted.stepCalls().slice(2).map((call) => call.prompt);
      expect(otherStep!.slice(1)).toEqual(other(atCeiling()).slice(14));
      expect(ownStep!.slice(1)).toEqual(atCeiling().slice(14));
      expect(otherStep![0]).toEqual(checkpointOf(records[0]!));
      expect(ownStep![0]).toEqual(checkpointOf(records[1]!));
    });

    it('should prepare the next one once a prepared checkpoint is sent and the conversation nears the ceiling again', async () => {
      const scripted = scriptedModel();
      const { middleware, background, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      let conversation = band();
      await wrapped.doGenerate({ prompt: conversation });
      await settled();
      conversation = atCeiling();
      await wrapped.doGenerate({ prompt: conversation });
      expect(records).toHaveLength(1);
      // Over the budget with it, that step prepared the catch-up; the next step sends it.
      expect(background).toHaveLength(2);
      await settled();
      // Grow until the prompt with the catch-up is in the band again.
      let index = 0;
      while (background.length < 3 && index < 20) {
        // a person's turn takes time (where none passes, the step ahead of the ceiling prepares instead of the band)
        vi.setSystemTime(Date.now() + 30_000);
        conversation = [...conversation, assistant(tokens(1_000, 'e')), user(`more ${index++}`)];
        await wrapped.doGenerate({ prompt: conversation });
        await settled();
      }
      expect(records).toHaveLength(2);
      expect(background).toHaveLength(3);
      expect(scripted.summaryCalls()).toHaveLength(3);
      // Its summary request updates the checkpoint in force, the prefix the step itself sent.
      const request = scripted.summaryCalls()[2]!.prompt;
      expect(request[0]).toEqual(checkpointOf(records[1]!));
      expect(textOf(request[request.length - 1])).toBe(UPDATE_PROMPT);
      const sent = scripted.stepCalls()[scripted.stepCalls().length - 1]!.prompt;
      expect(request.slice(0, -1)).toEqual(sent.slice(0, -1));
    });
  });

  describe('after a compaction that leaves the prompt in the band', () => {
    interface LoopStep {
      size: number;
      prepared: boolean;
      compacted: boolean;
    }

    /**
     * A tool loop of `count` steps behind an `systemTokens`-token system prompt; each step adds 203
     * tokens (a call and a 200-token result). `instanceOf(index)` serves step `index`. Returns the
     * size each step went out with, and whether it started a background compaction or compacted.
     */
    async function toolLoop(count: number, systemTokens: number, instanceOf: (index: number) => ReturnType<typeof collecting>, counted = false): Promise<{ steps: LoopStep[]; conversation: Message[] }> {
      const scripted = toolCallingModel({ counted });
      const big: Message = { role: 'system', content: tokens(systemTokens, 's') };
      const conversation: Message[] = [user('Fix the build.')];
      const steps: LoopStep[] = [];
      for (let index = 0; index < count; index++) {
        // A second between steps, as a model takes to answer: the band is there to hide a summary's
        // time behind the conversation's (where no time passes, the step ahead prepares: policy.test.ts).
        vi.setSystemTime(Date.now() + 1_000);
        const { middleware, background, records, settled } = instanceOf(index);
        const before = { background: background.length, records: records.length };
        const result = await wrap(scripted.model, middleware).doGenerate({ prompt: [big, ...conversation] });
        await settled();
        const sent = scripted.stepCalls()[scripted.stepCalls().length - 1]!;
        steps.push({ size: estimatePrompt(sent.prompt, sent.tools), prepared: background.length > before.background, compacted: records.length > before.records });
        // The model's own call: after the compaction's parts on a step that compacted (hooks/part.ts).
        const call = result.content.at(-1) as unknown as { toolCallId: string; input: string };
        conversation.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: call.toolCallId, toolName: 'run', input: JSON.parse(call.input) }] });
        conversation.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: call.toolCallId, toolName: 'run', output: { type: 'text', value: tokens(200, 't') } }] });
      }
      return { steps, conversation };
    }

    /** Where a compaction left the prompt in the band (13,600 to 17,000): nothing is prepared under halfway to the ceiling, the first step past it prepares. Returns how many such compactions there were. */
    function expectHalfway(steps: LoopStep[]): number {
      let checked = 0;
      steps.forEach((each, index) => {
        if (!each.compacted || each.size < 13_600) return;
        const halfway = (each.size + 17_000) / 2;
        let next = index + 1;
        while (next < steps.length && !steps[next]!.prepared && !steps[next]!.compacted) expect(steps[next++]!.size).toBeLessThan(halfway);
        if (next < steps.length && steps[next]!.prepared) expect(steps[next]!.size).toBeGreaterThanOrEqual(halfway);
        checked++;
      });
      return checked;
    }

    const preparedAt = (steps: LoopStep[]) => steps.map((each, index) => (each.prepared ? index : -1)).filter((index) => index >= 0);
    const compactedAt = (steps: LoopStep[]) => steps.map((each, index) => (each.compacted ? index : -1)).filter((index) => index >= 0);

    it('should prepare the next checkpoint only halfway from where that compaction left the prompt to the ceiling', async () => {
      // A 13,000-token system prompt leaves a room of 4,000, and with no provider counts the summary
      // request cannot carry the whole conversation: the record takes up to half the room, and every
      // compaction leaves the prompt at 14,892, over 13,600 (prepare x the 17,000 ceiling). Each step
      // adds 203.
      const instance = collecting();
      const { steps } = await toolLoop(80, 13_000, () => instance);
      // Step 3 (13,611) prepares at the band; step 19 (16,853: the next step reaches the ceiling)
      // prepares the next step's compaction, leaving room for what the conversation adds up to the
      // ceiling (147) beside a step like its own (203); step 20 sends it: 14,678, in the band already.
      // Halfway to the ceiling is 15,839: steps 21 to 25 (14,881 to 15,692) prepare nothing, step 26
      // (15,895) prepares, step 31 (16,908) prepares the next step's, step 32 sends it: 14,892. And so
      // on, every 11 steps.
      expect(preparedAt(steps)).toEqual([3, 19, 26, 31, 38, 42, 49, 53, 60, 64, 71, 75]);
      expect(compactedAt(steps)).toEqual([20, 32, 43, 54, 65, 76]);
      expect(steps[20]).toEqual({ size: 14_678, prepared: false, compacted: true });
      expect(steps.slice(21, 26).map((each) => each.size)).toEqual([14_881, 15_084, 15_286, 15_489, 15_692]);
      expect(steps[26]).toEqual({ size: 15_895, prepared: true, compacted: false });
      expect(steps[32]).toEqual({ size: 14_892, prepared: false, compacted: true });
      expect(expectHalfway(steps)).toBe(6);
      // Every compaction sent the next step's, prepared one step ahead, none the one of the band.
      expect(instance.records.map((record) => record.messagesCovered)).toEqual([39, 63, 85, 107, 129, 151]);
      for (const record of instance.records) expect(record.prepared).toBe(true);
    });

    it('should find where a prepared checkpoint left the prompt on every instance: a fresh instance per step prepares where one instance does', async () => {
      // The loop of the test above with the provider's counts, each step served by a new instance
      // sharing one store: the thread names the conversation of the step that first sent each
      // prepared checkpoint, and the count of the step before gives the growth.
      const one = collecting();
      const single = await toolLoop(80, 13_000, () => one, true);
      const store = memoryStore();
      const fresh = await toolLoop(80, 13_000, () => collecting({ store }), true);
      expect(preparedAt(fresh.steps)).toEqual(preparedAt(single.steps));
      expect(compactedAt(fresh.steps)).toEqual(compactedAt(single.steps));
      expect(preparedAt(fresh.steps)).toEqual(preparedAt(single.steps));
      expect(preparedAt(fresh.steps).length).toBeGreaterThanOrEqual(8);
      expect(expectHalfway(fresh.steps)).toBeGreaterThanOrEqual(4);
    });

    it('should read the pace from the store on a fresh instance a step: the step before the ceiling prepares the next step\'s compaction', async () => {
      // A fresh instance a step, no counts: the conversation's pace is in the store every instance
      // reads, so step 44 (89 messages), whose growth says the next step reaches the ceiling,
      // prepares the next step's compaction of its whole conversation, and step 45 sends it (step 28
      // prepared one at the band, 55 messages, never sent).
      const store = memoryStore();
      const { steps } = await toolLoop(46, 8_000, () => collecting({ store }));
      expect(preparedAt(steps)).toEqual([28, 44]);
      expect(compactedAt(steps)).toEqual([45]);
      // Where the checkpoint left the prompt for a branch that does not extend the step that sent it: prepare-from.test.ts.
    });

    it('should find where the compaction left the prompt on another instance, from the live part its checkpoint was made for', async () => {
      // One instance compacts at the ceiling and waits for it (prepare: false): with a 13,000-token
      // system prompt that leaves the prompt in the band. The next steps go to another instance
      // sharing the store, which never saw that step.
      const store = memoryStore();
      const first = collecting({ store, prepare: false });
      const second = collecting({ store });
      let handedOver = -1;
      const { steps } = await toolLoop(60, 13_000, (index) => {
        if (handedOver < 0 && first.records.length > 0) handedOver = index;
        return handedOver < 0 ? first : second;
      });
      const compacted = steps.findIndex((each) => each.compacted);
      expect(handedOver).toBe(compacted + 1);
      expect(steps[compacted]!.size).toBeGreaterThanOrEqual(13_600);
      expect(second.background.length).toBeGreaterThan(0);
      expect(expectHalfway(steps.slice(compacted))).toBeGreaterThanOrEqual(1);
      // The first step of the second instance is in the band, under halfway: it prepares nothing.
      expect(steps[handedOver]!.size).toBeGreaterThanOrEqual(13_600);
      expect(steps[handedOver]!.prepared).toBe(false);
    });

    it('should prepare from prepare x the ceiling when the compaction left the prompt under it', async () => {
      // The same loop with a 2,000-token system prompt: every compaction leaves the prompt under 13,600.
      const instance = collecting();
      const { steps } = await toolLoop(120, 2_000, () => instance);
      expect(instance.records.length).toBeGreaterThanOrEqual(1);
      for (const [index, each] of steps.entries()) {
        if (each.compacted) expect(each.size).toBeLessThan(13_600);
        // The first step at or over 13,600 after each compaction (or from the start) prepares.
        const previous = steps[index - 1];
        if (previous !== undefined && each.size >= 13_600 && previous.size < 13_600) expect(each.prepared).toBe(true);
        if (each.prepared) expect(each.size).toBeGreaterThanOrEqual(13_600);
      }
    });
  });

  describe('timed to the summary', () => {
    afterEach(() => vi.useRealTimers());

    /**
     * A chat in the 20,000-token window: each turn adds 600 tokens, `gap` ms after the one before;
     * each summary takes 2 s (the clock is moved while it is written). Returns the sizes at which a
     * background compaction was started, after the first compaction (whose summary is measured),
     * and whether each compaction was prepared ahead. `userTokens`: the size of each turn's user
     * message (a paste now and then), 299 by default.
     */
    async function paced(gap: number, userTokens: (turn: number) => number = () => 299, system: Message[] = []): Promise<{ startedAt: number[]; compacted: number; prepared: boolean[] }> {
      vi.useFakeTimers({ toFake: ['Date'] });
      const scripted = scriptedModel({
        summary: (prompt) => {
          vi.setSystemTime(Date.now() + 2_000);
          return textResult(SUMMARY, estimatePrompt(prompt), 200);
        },
      });
      const { middleware, background, settled, records } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      let conversation: Message[] = [];
      const startedAt: number[] = [];
      for (let turn = 0; turn < 80; turn++) {
        vi.setSystemTime(Date.now() + gap);
        conversation = [...conversation, user(`${turn} ${tokens(userTokens(turn))}`)];
        const before = background.length;
        await wrapped.doGenerate({ prompt: [...system, ...conversation] });
        await settled();
        const sent = scripted.stepCalls().at(-1)!.prompt;
        if (records.length > 0 && background.length > before) startedAt.push(estimatePrompt(sent));
        conversation = [...conversation, assistant(`${turn} ${tokens(299, 'a')}`)];
      }
      return { startedAt, compacted: records.length, prepared: records.map((record) => record.prepared === true) };
    }

    it('should start preparing at prepare x the ceiling when turns come faster than a summary is written, and it runs from a compaction to the ceiling slower', async () => {
      // 100 ms a turn: each compaction leaves the prompt at about 3,900 tokens, some 22 turns (2.2 s)
      // from the ceiling, longer than a summary (2 s); the band (from 13,600) is within a summary of
      // the ceiling: a turn in it starts one, before the turn whose next one reaches the ceiling
      // (16,400 or more)
      const { startedAt, compacted } = await paced(100);
      expect(compacted).toBeGreaterThanOrEqual(2);
      expect(startedAt.some((size) => size >= 13_600 && size < 16_400)).toBe(true);
    });

    it('should prepare one turn ahead only, not in the band, when it runs from a compaction to the ceiling faster than a summary is written', async () => {
      // 80 ms a turn: the 22 turns from a compaction to the ceiling take 1.76 s, a summary 2 s; one
      // begun in the band would not be ready by the ceiling either, and would leave what came after
      // it live: only the turn whose next one reaches the ceiling (16,400 or more) starts one
      const { startedAt, compacted, prepared } = await paced(80);
      expect(compacted).toBeGreaterThanOrEqual(2);
      expect(startedAt.length).toBeGreaterThanOrEqual(1);
      for (const size of startedAt) expect(size).toBeGreaterThanOrEqual(16_400);
      expect(prepared.slice(1)).toEqual(prepared.slice(1).map(() => true));
    });

    it('should start no earlier than a summary\'s writing time before the ceiling when turns come 10 s apart', async () => {
      const { startedAt, compacted } = await paced(10_000);
      expect(compacted).toBeGreaterThanOrEqual(2);
      expect(startedAt.length).toBeGreaterThanOrEqual(1);
      // 2 s before the ceiling is less than one turn: only the turn whose next one reaches the
      // ceiling (16,400 or more) starts one, that next turn's compaction
      for (const size of startedAt) expect(size).toBeGreaterThanOrEqual(17_000 - 600);
    });

    it('should not prepare sooner than what comes before the ceiling fits in the budget, where a summary outlasts the turns to it', async () => {
      // an 8,000-token system prompt leaves a budget of about 2,500 tokens; at 250 ms a turn the
      // band (from 13,600, under 6 turns, 1.4 s, from the ceiling) is within a summary (2 s) of the
      // ceiling, but one begun there would leave some 4,000 tokens live after its checkpoint, over
      // the budget, and a catch-up would follow each compaction; begun once what comes before the
      // ceiling fits (from about 15,500), before the turn whose next one reaches it (16,400 or more)
      const { startedAt, compacted, prepared } = await paced(250, () => 299, [{ role: 'system', content: tokens(8_000, 's') }]);
      expect(compacted).toBeGreaterThanOrEqual(5);
      expect(compacted).toBeLessThanOrEqual(7);
      expect(prepared.slice(1)).toEqual(prepared.slice(1).map(() => true));
      // the first start after the first compaction is its catch-up (its summary was not yet measured)
      expect(startedAt.length).toBeGreaterThanOrEqual(4);
      for (const size of startedAt.slice(1)) {
        expect(size).toBeGreaterThanOrEqual(15_500);
        expect(size).toBeLessThan(16_400);
      }
    });

    it('should prepare one turn ahead by the largest recent turn when a turn 60 s later may be a long paste', async () => {
      // every third turn pastes 3,000 tokens: the mean growth (1,300 to 1,600 with the replies) says
      // the next turn stays under the ceiling where a paste (3,300 with its reply) does not; a turn
      // a minute after the one before finds the summary begun a turn ahead ready
      const { compacted, prepared } = await paced(60_000, (turn) => (turn % 3 === 2 ? 3_000 : 299));
      expect(compacted).toBeGreaterThanOrEqual(4);
      // the first compaction measures the summary: every one after it was prepared ahead
      expect(prepared.slice(1)).toEqual(prepared.slice(1).map(() => true));
    });
  });

  describe('abort', () => {
    it('should not tie the background compaction to the step\'s abort signal', async () => {
      const summary = gate();
      const scripted = scriptedModel({ summary: () => summary.opened.then(() => textResult(SUMMARY, 100, 200)) });
      const { middleware, settled } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      const controller = new AbortController();
      await wrapped.doGenerate({ prompt: band(), abortSignal: controller.signal });
      controller.abort();
      summary.open();
      await settled();
      const calls = (scripted.model as unknown as { doGenerateCalls: Array<{ abortSignal?: AbortSignal; prompt: Message[] }> }).doGenerateCalls;
      const request = calls.find((call) => isSummaryPrompt(call.prompt))!;
      // Its own signal: the summary's deadline (summaryTimeout), not the step's.
      expect(request.abortSignal).not.toBe(controller.signal);
      expect(request.abortSignal?.aborted).toBe(false);
      await wrapped.doGenerate({ prompt: atCeiling() });
      // Beside it a catch-up (an update of the checkpoint it sent) may have begun: none from scratch.
      expect(fromScratch(scripted.summaryCalls())).toHaveLength(1);
      expect(middleware.last()).toMatchObject({ messagesCovered: 14, prepared: true });
    });

    it('should let a step at the ceiling that waits for it be aborted, and leave the compaction running', async () => {
      const summary = gate();
      const scripted = scriptedModel({ summary: () => summary.opened.then(() => textResult(SUMMARY, 100, 200)) });
      const { middleware, settled } = collecting();
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      const controller = new AbortController();
      const step = wrapped.doGenerate({ prompt: atCeiling(), abortSignal: controller.signal });
      await turns();
      controller.abort();
      await expect(step).rejects.toThrow();
      summary.open();
      await settled();
      await wrapped.doGenerate({ prompt: atCeiling() });
      // Beside it a catch-up (an update of the checkpoint it sent) may have begun: none from scratch.
      expect(fromScratch(scripted.summaryCalls())).toHaveLength(1);
      expect(middleware.last()).toMatchObject({ messagesCovered: 14, prepared: true });
    });
  });

  describe('with clearing old tool results on', () => {
    /** A task and `steps` tool calls each answered with a 2,000-token output, ending with tool results. */
    const toolLoop = (steps: number): Message[] => {
      const messages: Message[] = [user('Read every file.')];
      for (let index = 0; index < steps; index++) {
        messages.push(toolCall(`call-${index}`, 'read_file', { path: `src/file-${index}.ts` }), toolResult(`call-${index}`, 'read_file', tokens(2_000, 'r')));
      }
      return messages;
    };

    it('should prepare nothing while clearing alone would bring the prompt under its target, and clear at the ceiling', async () => {
      const scripted = scriptedModel();
      const { middleware, background, settled, records } = collecting({ clearToolResults: true });
      const wrapped = wrap(scripted.model, middleware);
      // ~14,100 tokens, in the band: almost all of it old tool output.
      await wrapped.doGenerate({ prompt: toolLoop(7) });
      await settled();
      expect(background).toHaveLength(0);
      expect(scripted.summaryCalls()).toHaveLength(0);
      // At the ceiling it clears, with no model call.
      await wrapped.doGenerate({ prompt: toolLoop(9) });
      expect(scripted.summaryCalls()).toHaveLength(0);
      expect(records).toEqual([expect.objectContaining({ kind: 'clear' })]);
    });

    it('should clear instead of waiting at the ceiling while the prepared summary is still being written', async () => {
      const summary = gate();
      const scripted = scriptedModel({ summary: () => summary.opened.then(() => textResult(SUMMARY, 100, 200)) });
      const { middleware, settled, records } = collecting({ clearToolResults: true });
      const wrapped = wrap(scripted.model, middleware);
      // 8,0xx tokens of words and three 2,000-token tool steps (14,1xx, in the band): clearing the old
      // outputs (the newest ones are kept) would leave the prompt over half the ceiling, so a summary is prepared.
      const read = (index: number, letter: string): Message[] => [toolCall(`c${index}`, 'read_file', { path: `f${index}.ts` }), toolResult(`c${index}`, 'read_file', tokens(2_000, letter))];
      const inBand = [user(tokens(4_000, 'w')), assistant(tokens(4_000, 'v')), user('Read the files.'), ...read(0, 'p'), ...read(1, 'q'), ...read(2, 'r')];
      await wrapped.doGenerate({ prompt: inBand });
      await settle(() => scripted.summaryCalls().length === 1);
      expect(scripted.summaryCalls()).toHaveLength(1);
      // At the ceiling (18,1xx) with the summary still being written: the old outputs are cleared, which
      // brings the prompt under the ceiling; the step does not wait.
      const atTheCeiling = [...inBand, ...read(3, 's'), ...read(4, 't')];
      expect(estimatePrompt(atTheCeiling)).toBeGreaterThanOrEqual(17_000);
      const step = wrapped.doGenerate({ prompt: atTheCeiling });
      let outcome = 'waiting';
      void step.then(() => (outcome = 'sent'));
      // The summary is never opened before the step is sent: a step that waited for it would never be.
      await settle(() => outcome === 'sent');
      expect(outcome).toBe('sent');
      expect(records).toEqual([expect.objectContaining({ kind: 'clear' })]);
      const sent = scripted.stepCalls()[1]!.prompt;
      expect(estimatePrompt(sent)).toBeLessThan(17_000);
      expect(sent.slice(-2)).toEqual(atTheCeiling.slice(-2));
      // Once written, the summary is sent at the next step that reaches the ceiling; no second one is asked for.
      summary.open();
      await settled();
      let later = atTheCeiling;
      for (let index = 5; records.length < 2 && index < 12; index++) {
        later = [...later, ...read(index, 'x')];
        await wrapped.doGenerate({ prompt: later });
      }
      // The next summary is made from the one written meanwhile (it updates it), which is not written for nothing.
      expect(records.at(-1)).toMatchObject({ kind: 'summary', prepared: true });
      expect(scripted.summaryCalls()).toHaveLength(2);
      expect(textOf(scripted.summaryCalls()[1]!.prompt[0]).startsWith('<conversation-checkpoint>')).toBe(true);
      expect(textOf(scripted.summaryCalls()[1]!.prompt.at(-1))).toBe(UPDATE_PROMPT);
    });

    it('should prepare a summary when clearing would not be enough', async () => {
      const scripted = scriptedModel();
      const { middleware, background, settled, records } = collecting({ clearToolResults: true });
      const wrapped = wrap(scripted.model, middleware);
      // No tool output at all: nothing to clear.
      await wrapped.doGenerate({ prompt: band() });
      await settled();
      expect(background).toHaveLength(1);
      await wrapped.doGenerate({ prompt: atCeiling() });
      // Beside it a catch-up (an update of the checkpoint it sent) may have begun: none from scratch.
      expect(fromScratch(scripted.summaryCalls())).toHaveLength(1);
      expect(records).toEqual([expect.objectContaining({ kind: 'summary', prepared: true, messagesCovered: 14 })]);
    });
  });

  describe('state()', () => {
    it('should hold the prepared checkpoint, held back there too, for an instance that continues from it', async () => {
      const scripted = scriptedModel();
      const { middleware, settled } = collecting();
      await wrap(scripted.model, middleware).doGenerate({ prompt: band() });
      await settled();
      const state = middleware.state();
      expect(Object.keys(state.checkpoints)).toHaveLength(1);

      const next = scriptedModel();
      const restored = compaction({ contextWindow: WINDOW, state });
      const wrapped = wrap(next.model, restored);
      await wrapped.doGenerate({ prompt: under() });
      expect(next.stepCalls()[0]!.prompt).toEqual(under());
      await wrapped.doGenerate({ prompt: atCeiling() });
      // Beside it a catch-up (an update of the checkpoint it sent) may have begun: none from scratch.
      expect(fromScratch(next.summaryCalls())).toHaveLength(0);
      expect(restored.last()).toMatchObject({ messagesCovered: 14, prepared: true });
      expect(next.stepCalls()[1]!.prompt).toEqual([checkpointOf(restored.last()!), ...atCeiling().slice(14)]);
    });
  });

  describe('turned off', () => {
    it.each([
      ['prepare: false', { prepare: false as const }],
      ['auto: false', { auto: false }],
    ])('should prepare nothing with %s', async (_name, options) => {
      const scripted = scriptedModel();
      const { middleware, background } = collecting(options);
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      await wrapped.doGenerate({ prompt: under() });
      expect(background).toHaveLength(0);
      expect(scripted.summaryCalls()).toHaveLength(0);
      expect(scripted.stepCalls().map((call) => call.prompt)).toEqual([band(), under()]);
    });

    it('should make the step at the ceiling wait for its summary with prepare: false', async () => {
      const summary = gate();
      const scripted = scriptedModel({ summary: () => summary.opened.then(() => textResult(SUMMARY, 100, 200)) });
      const { middleware } = collecting({ prepare: false });
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      let sent = false;
      const step = wrapped.doGenerate({ prompt: atCeiling() }).then(() => (sent = true));
      await settle(() => scripted.summaryCalls().length === 1);
      expect(sent).toBe(false);
      summary.open();
      await step;
      expect(middleware.last()!.prepared).toBeUndefined();
    });
  });

  describe('options', () => {
    it('should default to 0.8 and accept a share or false', () => {
      expect(resolveOptions({}).prepare).toBe(0.8);
      expect(resolveOptions({ prepare: 0.5 }).prepare).toBe(0.5);
      expect(resolveOptions({ prepare: false }).prepare).toBe(false);
      const waitUntil = () => undefined;
      expect(resolveOptions({ waitUntil }).waitUntil).toBe(waitUntil);
    });

    it.each([
      [0, '0'],
      [1, '1'],
      [1.5, '1.5'],
      [-0.2, '-0.2'],
      [Number.NaN, 'NaN'],
      [true, 'true'],
      ['80%', '"80%"'],
      [null, 'null'],
    ])('should refuse prepare: %s with an error naming the option and the value', (value, shown) => {
      expect(() => compaction({ prepare: value as never })).toThrow(
        new TypeError(`ai-compaction: option prepare must be a share of the ceiling above 0 and below 1 (0.8 prepares at 80 % of it), or false, got ${shown}`),
      );
    });

    it('should refuse a waitUntil that is not a function', () => {
      expect(() => compaction({ waitUntil: 'after' as never })).toThrow(
        new TypeError('ai-compaction: option waitUntil must be a function taking a promise (after() of next/server, waitUntil of a host), got "after"'),
      );
    });
  });

  describe('end to end', () => {
    it('should keep a 64-step tool loop under the ceiling with every compaction prepared ahead', async () => {
      const agent = readFileAgent();
      const records: CompactionRecord[] = [];
      const background: Promise<unknown>[] = [];
      const middleware = compaction({ contextWindow: WINDOW, onCompaction: (record) => void records.push(record), waitUntil: (promise) => void background.push(promise) });
      const model = wrapLanguageModel({ model: agent.model as never, middleware });
      // Each step a second after the one before, as a model takes to answer (where no time passes,
      // nothing is prepared in the band: the step ahead of the ceiling prepares).
      const prepareStep = () => void vi.setSystemTime(Date.now() + 1_000);
      const result = await generateText({ model, tools: readFileTools, stopWhen: stepCountIs(69), prepareStep, system: 'You are a coding agent.', prompt: 'Read every file of the project.' });
      await Promise.all(background);
      expect(result.text).toBe('All 64 files read.');
      expect(agent.prompts).toHaveLength(64);
      agent.prompts.forEach((prompt, index) => expect(estimatePrompt(prompt, agent.stepTools[index] as never)).toBeLessThan(17_000));
      // Each step adds ~2,000 tokens (ceiling 17,000, prepared from 13,600). Step 8 (14,120) prepares
      // the checkpoint of all before its newest step; step 9 (16,128), whose growth says the next step
      // reaches the ceiling, prepares the next step's compaction (its whole conversation); step 10
      // (18,148 whole) sends that one: 3,299, the checkpoint and the newest step, as waiting at the
      // ceiling would. The next cycle starts lower: its first step in the band (step 16, 15,350) is
      // also the one whose next step reaches the ceiling, so it prepares only the whole conversation,
      // which step 17 sends (2,322). The cycles alternate: 8 compactions, every one prepared ahead and
      // none waited for (8 when each waits at the ceiling, tool-loop.test.ts); the 4 prepared at the
      // band are not sent when the next step's is ready (here every summary is: they take no time),
      // so 12 summary requests.
      expect(records).toHaveLength(8);
      for (const record of records) expect(record).toMatchObject({ prepared: true, tokensBefore: expect.any(Number) });
      for (const record of records) expect(record.tokensAfter).toBeLessThan(4_250);
      expect(background).toHaveLength(agent.summaries());
      expect(agent.summaries()).toBe(12);
      // After every compaction the model continues from its own newest step.
      for (const prompt of agent.prompts) {
        const [call, results] = prompt.slice(-2);
        if (prompt.length > 3) {
          expect(call!.role).toBe('assistant');
          expect(results!.role).toBe('tool');
        }
      }
    });

    it('should bound summary requests over 50 steps of a 16k window with a 6,000-token system prompt: at most one per step', async () => {
      const scripted = toolCallingModel();
      const { middleware, settled, records } = collecting({ contextWindow: 16_000 });
      const wrapped = wrap(scripted.model, middleware);
      const big: Message = { role: 'system', content: tokens(6_000, 's') };
      const conversation: Message[] = [user('Fix the build.')];
      for (let index = 0; index < 50; index++) {
        const result = await wrapped.doGenerate({ prompt: [big, ...conversation] });
        await settled();
        // The model's own call: after the compaction's parts on a step that compacted (hooks/part.ts).
        const call = result.content.at(-1) as unknown as { toolCallId: string; input: string };
        conversation.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: call.toolCallId, toolName: 'run', input: JSON.parse(call.input) }] });
        conversation.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: call.toolCallId, toolName: 'run', output: { type: 'text', value: tokens(3_000, 't') } }] });
      }
      for (const call of scripted.stepCalls()) expect(estimatePrompt(call.prompt, call.tools)).toBeLessThan(13_600);
      // 13,600 ceiling; the 6,000-token system prompt leaves a room of 7,600 and a budget of 1,900.
      // A step after a compaction is about 8,200, the next 11,200 (in the band, and its growth says
      // the next step reaches the ceiling): it prepares the next step's compaction, its whole
      // conversation, which that step sends (14,200 whole). A compaction every other step, the floor
      // with a 3,000-token step, every one prepared one step ahead and none prepared twice: 24
      // summary requests, as many as with prepare off (conversations.test.ts), each beside the
      // step before the one that sends it.
      expect(scripted.summaryCalls()).toHaveLength(24);
      expect(records).toHaveLength(24);
      for (const record of records) expect(record.prepared).toBe(true);
      expect(scripted.calls.map((call) => (call.summary ? 'S' : 's')).join('')).toBe(`sss${'Sss'.repeat(23)}Ss`);
      expect(scripted.calls.map((call) => (call.summary ? 'S' : 's')).join('')).not.toContain('SSS');
    });
  });
});
