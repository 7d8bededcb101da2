import { APICallError } from 'ai';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CompactionRecord, compaction, compactionOf, memoryStore } from '../../../src';
import { REMINDER_PROMPT, SUMMARY_FIRST_LINE } from '../../../src/checkpoint/prompts';
import type { CallOptions, Message } from '../../../src/prompt/types';
import { MockLanguageModel, SUMMARY, finish, isSummaryPrompt, lastText, textResult, usage } from '../../support/models';
import { atCeiling, band, gate, tokens } from '../../support/prepare-fixtures';
import { assistant, chat, recordingLogger, scriptedModel, system, textOf, user, wrap } from '../../support/harness';

// What a compaction costs (docs/observability.md): `usage` on its record, its metadata and the info
// line. Time is a counted clock: `Date.now()` (what the middleware's clock reads) reads `clock`, which only a model call moves.

let clock = 0;
beforeEach(() => {
  clock = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => clock);
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A model call that takes `ms` on the counted clock. */
const takes = <T>(ms: number, value: T): T => {
  clock += ms;
  return value;
};

function overflowError() {
  const body = { error: { message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } };
  return new APICallError({ message: body.error.message, url: 'https://api.openai.com/v1/chat/completions', requestBodyValues: {}, statusCode: 400, responseHeaders: {}, responseBody: JSON.stringify(body), data: body, isRetryable: false });
}

/** A reply of the provider reporting `input` tokens (`cached` of them from its cache) and `output`. */
function reply(text: string, input: number | undefined, output: number | undefined, cached?: number) {
  return { content: [{ type: 'text', text }], finishReason: finish('stop'), usage: { inputTokens: { total: input, noCache: input, cacheRead: cached, cacheWrite: undefined }, outputTokens: { total: output, text: output, reasoning: undefined } }, warnings: [] };
}

const metadataOf = (result: unknown) => (result as { providerMetadata?: Record<string, unknown> }).providerMetadata;

describe('usage of a compaction', () => {
  it('should sum the summary request, its shortened retry and its reminder, as the provider reported them, with the time each took', async () => {
    const log = recordingLogger();
    const records: CompactionRecord[] = [];
    const summaryPrompts: Message[][] = [];
    const model = new MockLanguageModel({
      doGenerate: async (params: CallOptions) => {
        if (!isSummaryPrompt(params.prompt)) return reply('ok', 4_000, 10);
        summaryPrompts.push(params.prompt);
        // Rejected as too long (1 s), answered without the template (2 s), then filled in after the reminder (3 s).
        if (summaryPrompts.length === 1) throw takes(1_000, overflowError());
        if (summaryPrompts.length === 2) return takes(2_000, reply('I could not summarize this.', 3_000, 40, 2_048));
        return takes(3_000, reply(SUMMARY, 3_100, 300));
      },
    });
    const middleware = compaction({ contextWindow: 200_000, logger: log.logger, onCompaction: (record) => void records.push(record) });
    middleware.compactNext();
    const result = await wrap(model, middleware).doGenerate({ prompt: [system('agent'), ...chat(3, 2_000), user('go on')] });

    // The second request is the shortened retry (a transcript), the third the reminder.
    expect(summaryPrompts).toHaveLength(3);
    expect(lastText(summaryPrompts[1]!).startsWith(SUMMARY_FIRST_LINE)).toBe(true);
    expect(summaryPrompts[1]!.length).toBeLessThan(summaryPrompts[0]!.length);
    expect(lastText(summaryPrompts[2]!)).toBe(REMINDER_PROMPT);
    const record = middleware.last()!;
    // The rejected request counts as a request; it reported no tokens.
    expect(record.usage).toEqual({ requests: 3, inputTokens: 6_100, cachedInputTokens: 2_048, outputTokens: 340, durationMs: 6_000 });
    expect(records).toEqual([record]);
    expect(metadataOf(result)?.compaction).toMatchObject({ usage: record.usage });
    expect(compactionOf(metadataOf(result))?.usage).toEqual(record.usage);
    expect(log.info).toEqual([
      `ai-compaction: compacted 6 messages (manual, rule manual): ${record.tokensBefore} -> ${record.tokensAfter} estimated tokens; 3 model requests, 6100 input tokens (2048 cached), 340 output tokens, 6000 ms; window 200000 tokens (option)`,
    ]);
  });

  it('should leave out the tokens a provider did not report, and say so', async () => {
    const log = recordingLogger();
    const model = new MockLanguageModel({
      doGenerate: async (params: CallOptions) => (isSummaryPrompt(params.prompt) ? takes(1_500, reply(SUMMARY, undefined, undefined)) : reply('ok', undefined, undefined)),
    });
    const middleware = compaction({ logger: log.logger });
    middleware.compactNext();
    await wrap(model, middleware).doGenerate({ prompt: [user('a'), assistant('b'), user('c')] });
    expect(middleware.last()!.usage).toEqual({ requests: 1, durationMs: 1_500 });
    expect(log.info[0]).toMatch(/; 1 model request, no tokens reported, 1500 ms; no window known$/);
  });

  it('should count the summarizer option the same way', async () => {
    const summarizer = new MockLanguageModel({ modelId: 'small-model', doGenerate: async () => takes(700, reply(SUMMARY, 900, 120, 800)) });
    const scripted = scriptedModel();
    const middleware = compaction({ summarizer: summarizer as never });
    middleware.compactNext();
    await wrap(scripted.model, middleware).doGenerate({ prompt: [user('a'), assistant('b'), user('c')] });
    expect(scripted.summaryCalls()).toHaveLength(0);
    expect(middleware.last()!.usage).toEqual({ requests: 1, inputTokens: 900, cachedInputTokens: 800, outputTokens: 120, durationMs: 700 });
  });

  describe('native compaction', () => {
    /** OpenAI Responses answering a triggered request with the compaction item (or rejecting it as too long). */
    function responsesModel(trigger: () => unknown) {
      return new MockLanguageModel({
        provider: 'openai.responses',
        doGenerate: async (params: CallOptions) => {
          if (params.providerOptions?.openai?.compactionTrigger === true) return trigger();
          return isSummaryPrompt(params.prompt) ? takes(2_000, reply(SUMMARY, 1_200, 250)) : reply('ok', 500, 10);
        },
      });
    }
    const item = () => ({
      content: [{ type: 'custom', kind: 'openai.compaction', providerMetadata: { openai: { type: 'compaction', itemId: 'cmp_1', encryptedContent: 'enc' } } }],
      finishReason: finish('stop'),
      usage: usage(1_000, 50),
      warnings: [],
    });

    it('should count the trigger request', async () => {
      const middleware = compaction({ native: true });
      middleware.compactNext();
      await wrap(responsesModel(() => takes(900, item())), middleware).doGenerate({ prompt: [user('a'), assistant('b'), user('c')] });
      expect(middleware.last()).toMatchObject({ kind: 'native', usage: { requests: 1, inputTokens: 1_000, outputTokens: 50, durationMs: 900 } });
    });

    it('should count a trigger the provider rejected, and the summary that followed', async () => {
      const middleware = compaction({ native: true, logger: recordingLogger().logger });
      middleware.compactNext();
      await wrap(
        responsesModel(() => {
          throw takes(300, overflowError());
        }),
        middleware,
      ).doGenerate({ prompt: [user('a'), assistant('b'), user('c')] });
      expect(middleware.last()).toMatchObject({ kind: 'summary', usage: { requests: 2, inputTokens: 1_200, outputTokens: 250, durationMs: 2_300 } });
    });
  });

  describe('a checkpoint prepared ahead', () => {
    const WINDOW = 20_000;

    it('should be counted on the record of the step that sends it, on another instance too, and on no other step', async () => {
      const store = memoryStore();
      const background: Promise<unknown>[] = [];
      // The summary request is answered in 2.5 s, its prefix read from the provider's cache.
      const preparing = scriptedModel({ summary: () => takes(2_500, reply(SUMMARY, 14_000, 200, 13_000)) });
      const ahead = compaction({ contextWindow: WINDOW, store, waitUntil: (promise) => void background.push(promise) });
      const first = await wrap(preparing.model, ahead).doGenerate({ prompt: band() });
      await Promise.all(background);
      expect(preparing.summaryCalls()).toHaveLength(1);
      expect(metadataOf(first)?.compaction).toBeUndefined();
      expect(ahead.last()).toBeUndefined();

      // Another instance sharing the store reaches the ceiling: it sends the prepared checkpoint, and its cost.
      const records: CompactionRecord[] = [];
      const sending = scriptedModel();
      const other = compaction({ contextWindow: WINDOW, store, onCompaction: (record) => void records.push(record), waitUntil: (promise) => void background.push(promise) });
      const conversation = atCeiling();
      const sent = await wrap(sending.model, other).doGenerate({ prompt: conversation });
      // Beside it a catch-up (an update of the checkpoint it sent) may have begun: none from scratch.
      expect(sending.summaryCalls().filter((call) => !textOf(call.prompt[0]).startsWith('<conversation-checkpoint>'))).toHaveLength(0);
      const usageOfIt = { requests: 1, inputTokens: 14_000, cachedInputTokens: 13_000, outputTokens: 200, durationMs: 2_500 };
      expect(records).toEqual([expect.objectContaining({ prepared: true, messagesCovered: 14, usage: usageOfIt })]);
      expect(compactionOf(metadataOf(sent))?.usage).toEqual(usageOfIt);

      // Sent with all that came after it live, it left the prompt over the budget (a quarter of the
      // room, 4,250): a catch-up of that step's whole conversation was prepared beside it, and the
      // next step sends it, reported with its own request, not the first one's again.
      await Promise.all(background);
      const later = await wrap(sending.model, other).doGenerate({ prompt: [...conversation, assistant('done'), user('thanks')] });
      expect(sending.summaryCalls()).toHaveLength(1);
      expect(records).toHaveLength(2);
      expect(records[1]).toMatchObject({ prepared: true, messagesCovered: conversation.length, usage: { requests: 1 } });
      expect(compactionOf(metadataOf(later))?.usage).toEqual(records[1]!.usage);
    });

    it('should be counted when the step at the ceiling waits for it to be written', async () => {
      const written = gate();
      const scripted = scriptedModel({ summary: () => written.opened.then(() => takes(4_000, reply(SUMMARY, 14_000, 200))) });
      const middleware = compaction({ contextWindow: WINDOW, waitUntil: () => undefined });
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      const step = wrapped.doGenerate({ prompt: atCeiling() });
      written.open();
      await step;
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(middleware.last()).toMatchObject({ prepared: true, usage: { requests: 1, inputTokens: 14_000, outputTokens: 200, durationMs: 4_000 } });
    });

    it('should be counted with the summary made from it when the prompt with it does not fit', async () => {
      const scripted = scriptedModel({ summary: (_prompt, index) => (index === 0 ? takes(2_000, reply(SUMMARY, 14_000, 200)) : takes(3_000, reply(SUMMARY, 6_000, 300, 5_000))) });
      const background: Promise<unknown>[] = [];
      const middleware = compaction({ contextWindow: WINDOW, waitUntil: (promise) => void background.push(promise) });
      const wrapped = wrap(scripted.model, middleware);
      await wrapped.doGenerate({ prompt: band() });
      await Promise.all(background);
      // With the prepared checkpoint the prompt is still over the ceiling: a summary is made from it,
      // and the prepared one is never sent itself.
      await wrapped.doGenerate({ prompt: [...band(), assistant(tokens(3_000, 'b')), user(tokens(13_000, 'd'))] });
      expect(scripted.summaryCalls()).toHaveLength(2);
      expect(middleware.last()).toMatchObject({ messagesCovered: 16, usage: { requests: 2, inputTokens: 20_000, cachedInputTokens: 5_000, outputTokens: 500, durationMs: 5_000 } });
      expect(middleware.last()!.prepared).toBeUndefined();
    });

    it('should read a prepared checkpoint an older version stored, without a count, and report zero requests for it', async () => {
      const inner = memoryStore();
      const keys = new Set<string>();
      const store = { get: (key: string) => inner.get(key), set: (key: string, value: string) => (keys.add(key), inner.set(key, value)), delete: (key: string) => inner.delete(key) };
      const background: Promise<unknown>[] = [];
      const ahead = compaction({ contextWindow: WINDOW, store, waitUntil: (promise) => void background.push(promise) });
      await wrap(scriptedModel().model, ahead).doGenerate({ prompt: band() });
      await Promise.all(background);
      // The stored checkpoint as an older version wrote it: the same, without `usage`.
      const stored = [...keys].filter((key) => key.startsWith('cp:'));
      expect(stored).toHaveLength(1);
      const checkpoint = JSON.parse((await inner.get(stored[0]!))!) as Record<string, unknown>;
      expect(checkpoint.usage).toEqual({ requests: 1, inputTokens: expect.any(Number), outputTokens: 200, durationMs: 0 });
      delete checkpoint.usage;
      await inner.set(stored[0]!, JSON.stringify(checkpoint));
      const other = compaction({ contextWindow: WINDOW, store });
      const scripted = scriptedModel();
      await wrap(scripted.model, other).doGenerate({ prompt: atCeiling() });
      expect(scripted.summaryCalls()).toHaveLength(0);
      expect(other.last()).toMatchObject({ prepared: true, messagesCovered: 14, usage: { requests: 0, durationMs: 0 } });
    });
  });

  describe('compactionOf', () => {
    const base = { reason: 'auto', kind: 'summary', messagesCovered: 3, tokensBefore: 100, tokensAfter: 40, summary: 'S' };

    it('should read the usage of the metadata, and none from metadata an older version wrote', () => {
      expect(compactionOf({ compaction: { ...base, usage: { requests: 2, inputTokens: 10, outputTokens: 5, durationMs: 7 } } })?.usage).toEqual({ requests: 2, inputTokens: 10, outputTokens: 5, durationMs: 7 });
      expect(compactionOf({ compaction: base })).toEqual(base);
    });

    it('should drop a malformed usage, and a malformed count in it', () => {
      expect(compactionOf({ compaction: { ...base, usage: { requests: 'two', durationMs: 1 } } })).toEqual(base);
      expect(compactionOf({ compaction: { ...base, usage: { requests: 1, inputTokens: -3, outputTokens: 5, durationMs: 1 } } })?.usage).toEqual({ requests: 1, outputTokens: 5, durationMs: 1 });
    });
  });
});
