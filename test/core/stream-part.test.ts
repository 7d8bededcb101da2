// The compaction shown as the AI SDK's agent harnesses show one (docs/design.md, "Compaction in the
// stream"): a provider-executed, dynamic `compaction` tool call and its result, first in the content
// of the step that sends a new checkpoint and right after `stream-start` in its stream; dropped
// from a prompt that brings it back.
import { APICallError, type ModelMessage, type UIMessage, convertToModelMessages, generateText, readUIMessageStream, streamText, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { type CompactionRecord, compaction, compactionOf, withoutCompaction } from '../../src';
import { COMPACTION_CALL_ID_PREFIX, withoutOwnParts } from '../../src/prompt/own-parts';
import type { CallOptions, Message, Part } from '../../src/prompt/types';
import { estimatePrompt } from '../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, convertArrayToReadableStream, convertReadableStreamToArray, finish, isSummaryPrompt, textResult, usage } from '../support/models';
import { assistant, chat, toolCall, toolResult, user, wrap } from '../support/harness';

const ID = /^ai-compaction-[0-9a-f]{16}$/;

/** The text part of a reply, as a stream sends it. */
function textStream(text: string, input: number | undefined, withStart = true) {
  return [
    ...(withStart ? [{ type: 'stream-start', warnings: [] }] : []),
    { type: 'text-start', id: '1' },
    { type: 'text-delta', id: '1', delta: text },
    { type: 'text-end', id: '1' },
    { type: 'finish', finishReason: finish('stop'), usage: usage(input, 10) },
  ];
}

/**
 * A model that writes the summary template when asked for one and answers `ok` to a step, by
 * `doGenerate` and `doStream`; `overflowOver`: it rejects a step whose estimate is over that many
 * tokens as too long, as OpenAI does. Records each step's prompt.
 */
function provider({ overflowOver, withStart = true }: { overflowOver?: number; withStart?: boolean } = {}) {
  const steps: Message[][] = [];
  let summaries = 0;
  const step = (params: CallOptions) => {
    const estimate = estimatePrompt(params.prompt, params.tools);
    if (isSummaryPrompt(params.prompt)) {
      summaries++;
      return undefined;
    }
    steps.push(structuredClone(params.prompt));
    if (overflowOver !== undefined && estimate > overflowOver) throw overflowError(overflowOver, estimate);
    return estimate;
  };
  const model = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => {
      const estimate = step(params);
      return estimate === undefined ? textResult(SUMMARY, 500, 200) : textResult('ok', estimate, 10);
    },
    doStream: async (params: CallOptions) => ({ stream: convertArrayToReadableStream(textStream('ok', step(params), withStart)) }),
  });
  return { model, steps, summaries: () => summaries };
}

function overflowError(limit: number, sent: number) {
  const message = `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${sent} tokens. Please reduce the length of the messages.`;
  const body = { error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } };
  return new APICallError({ message, url: 'https://api.openai.com/v1/chat/completions', requestBodyValues: {}, statusCode: 400, responseHeaders: {}, responseBody: JSON.stringify(body), data: body, isRetryable: false });
}

/** A conversation of 18,000 estimated tokens ending with a new user turn: over the ceiling of a 20,000 window (17,000). */
const long = (): Message[] => [...chat(10, 900), user('and now?')];

/** The two parts a step that compacted starts with, as the model's content or stream carries them. */
function shown(record: CompactionRecord | undefined) {
  const result = output(record!);
  return [
    { type: 'tool-call', toolCallId: expect.stringMatching(ID), toolName: 'compaction', input: '{}', providerExecuted: true, dynamic: true, providerMetadata: { compaction: callMetadata(record!) } },
    { type: 'tool-result', toolCallId: expect.stringMatching(ID), toolName: 'compaction', result, dynamic: true },
  ];
}

/** The step's `providerMetadata.compaction`. */
function metadata({ reason, rule, kind, messagesCovered, tokensBefore, tokensAfter, summary, usage }: CompactionRecord) {
  return { reason, rule, kind, messagesCovered, tokensBefore, tokensAfter, summary, usage };
}

/** What the call carries of it: all but the summary, which its result holds once. */
function callMetadata(record: CompactionRecord) {
  const { summary, ...rest } = metadata(record);
  return rest;
}

/** The part's output: `trigger` and `reason` the same value, and the rule that decided it. */
function output({ reason, rule, summary, tokensBefore, tokensAfter }: CompactionRecord) {
  return { trigger: reason, reason, rule, summary, tokensBefore, tokensAfter };
}

/** How many times a text is in a value as JSON carries it (over the wire, into a saved chat). */
const occurrences = (value: unknown, text: string) => JSON.stringify(value).split(JSON.stringify(text).slice(1, -1)).length - 1;

const ownParts = (prompt: readonly Message[]) =>
  prompt.flatMap((message) => (message.role === 'system' ? [] : message.content)).filter((part) => part.toolName === 'compaction');

/** A first turn through generateText over the ceiling of a 20,000-token window: it compacts. */
async function compactedTurn() {
  const real = provider();
  const middleware = compaction({ contextWindow: 20_000, prepare: false });
  const model = wrapLanguageModel({ model: real.model as never, middleware });
  const history = long();
  const first = await generateText({ model, messages: history as never });
  return { real, middleware, model, history, first, record: middleware.last()! };
}

const uiText = (id: string, role: 'user' | 'assistant', text: string): UIMessage => ({ id, role, parts: [{ type: 'text', text }] });

describe('the compaction part', () => {
  describe('wrapGenerate', () => {
    it('should put the compaction call and its result first in the content of the step that compacted', async () => {
      const real = provider();
      const middleware = compaction({ contextWindow: 20_000, prepare: false });
      const result = (await wrap(real.model, middleware).doGenerate({ prompt: long() })) as { content: Part[]; providerMetadata?: unknown };
      const record = middleware.last();
      expect(record).toMatchObject({ reason: 'auto', messagesCovered: 20, tokensBefore: 18_062, summary: expect.stringContaining(SUMMARY) });
      expect(result.content).toEqual([...shown(record), { type: 'text', text: 'ok' }]);
      expect(result.content[0]!.toolCallId).toBe(result.content[1]!.toolCallId);
      expect(result.content[1]!.result).toEqual({ trigger: 'auto', reason: 'auto', rule: 'ceiling', summary: record!.summary, tokensBefore: 18_062, tokensAfter: record!.tokensAfter });
      // The summary goes out once: in the result, not in the call's metadata.
      expect(occurrences(result.content, record!.summary)).toBe(1);
      // The metadata is there as before.
      expect(compactionOf(result.providerMetadata)).toMatchObject({ reason: 'auto', messagesCovered: 20, tokensBefore: 18_062 });
    });

    it('should add nothing to a step that did not compact', async () => {
      const real = provider();
      const result = await wrap(real.model, compaction({ contextWindow: 20_000, prepare: false })).doGenerate({ prompt: chat(2, 100) });
      expect(result.content).toEqual([{ type: 'text', text: 'ok' }]);
    });

    it('should show a compaction made on overflow, trigger overflow', async () => {
      const real = provider({ overflowOver: 10_000 });
      const middleware = compaction({ auto: false });
      const result = await wrap(real.model, middleware).doGenerate({ prompt: long() });
      expect(real.steps).toHaveLength(2);
      expect(middleware.last()!.reason).toBe('overflow');
      expect(result.content).toEqual([...shown(middleware.last()), { type: 'text', text: 'ok' }]);
    });

    it('should show no part with streamPart: false, and keep the metadata', async () => {
      const real = provider();
      const middleware = compaction({ contextWindow: 20_000, prepare: false, streamPart: false });
      const result = (await wrap(real.model, middleware).doGenerate({ prompt: long() })) as { content: Part[]; providerMetadata?: unknown };
      expect(middleware.last()!.reason).toBe('auto');
      expect(result.content).toEqual([{ type: 'text', text: 'ok' }]);
      expect(compactionOf(result.providerMetadata)).toMatchObject({ reason: 'auto', messagesCovered: 20 });
    });
  });

  describe('wrapStream', () => {
    it('should send the compaction call and its result right after stream-start', async () => {
      const real = provider();
      const middleware = compaction({ contextWindow: 20_000, prepare: false });
      const { stream } = await wrap(real.model, middleware).doStream({ prompt: long() });
      const parts = await convertReadableStreamToArray(stream);
      expect(parts.map((part) => part.type)).toEqual(['stream-start', 'tool-call', 'tool-result', 'text-start', 'text-delta', 'text-end', 'finish']);
      expect(parts.slice(1, 3)).toEqual(shown(middleware.last()));
      expect(compactionOf(parts[6]!.providerMetadata)).toMatchObject({ reason: 'auto', messagesCovered: 20 });
    });

    it('should send them first in a stream without stream-start', async () => {
      const real = provider({ withStart: false });
      const middleware = compaction({ contextWindow: 20_000, prepare: false });
      const { stream } = await wrap(real.model, middleware).doStream({ prompt: long() });
      const parts = await convertReadableStreamToArray(stream);
      expect(parts.map((part) => part.type)).toEqual(['tool-call', 'tool-result', 'text-start', 'text-delta', 'text-end', 'finish']);
    });

    it('should show a compaction made on overflow after the retried stream-start', async () => {
      const real = provider({ overflowOver: 10_000 });
      const middleware = compaction({ auto: false });
      const { stream } = await wrap(real.model, middleware).doStream({ prompt: long() });
      const parts = await convertReadableStreamToArray(stream);
      expect(middleware.last()!.reason).toBe('overflow');
      expect(parts.map((part) => part.type)).toEqual(['stream-start', 'tool-call', 'tool-result', 'text-start', 'text-delta', 'text-end', 'finish']);
      expect(parts.slice(1, 3)).toEqual(shown(middleware.last()));
    });

    it('should pass the stream through unchanged with streamPart: false', async () => {
      const real = provider();
      const middleware = compaction({ contextWindow: 20_000, prepare: false, streamPart: false });
      const { stream } = await wrap(real.model, middleware).doStream({ prompt: long() });
      const parts = await convertReadableStreamToArray(stream);
      expect(middleware.last()!.reason).toBe('auto');
      expect(parts.map((part) => part.type)).toEqual(['stream-start', 'text-start', 'text-delta', 'text-end', 'finish']);
    });
  });

  describe('through generateText and streamText, and back', () => {
    it("should be in generateText's content and steps, and dropped from response.messages sent back", async () => {
      const { real, model, history, first, record } = await compactedTurn();
      const call = { type: 'tool-call', toolCallId: expect.stringMatching(ID), toolName: 'compaction', input: {}, providerExecuted: true, dynamic: true, providerMetadata: { compaction: callMetadata(record) } };
      expect(first.content).toEqual([call, { type: 'tool-result', toolCallId: expect.stringMatching(ID), toolName: 'compaction', input: {}, output: output(record), providerExecuted: true, dynamic: true }, { type: 'text', text: 'ok' }]);
      // What a host saves holds the summary once.
      expect(occurrences(first.response.messages, record.summary)).toBe(1);
      expect(first.steps).toHaveLength(1);
      expect(first.steps[0]!.content).toEqual(first.content);
      expect(first.text).toBe('ok');
      // The host keeps the whole conversation and sends it back with a new turn.
      const back = [...history, ...first.response.messages, user('one more')];
      expect(ownParts(back as Message[])).toHaveLength(2);
      await generateText({ model, messages: back as never });
      expect(real.summaries()).toBe(1);
      // Found by content: the same checkpoint, then the reply and the new turn, without the parts.
      expect(real.steps[1]).toEqual([...real.steps[0]!, assistant('ok'), user('one more')]);
      expect(ownParts(real.steps[1]!)).toEqual([]);
    });

    it("should be in streamText's full stream and the UI message stream, a dynamic-tool part in useChat's message, and dropped when it comes back", async () => {
      const real = provider();
      const middleware = compaction({ contextWindow: 20_000, prepare: false });
      const model = wrapLanguageModel({ model: real.model as never, middleware });
      const history: UIMessage[] = long().map((message, index) => uiText(`m${index}`, message.role as 'user' | 'assistant', String((message.content as Part[])[0]!.text)));
      const result = streamText({ model, messages: await convertToModelMessages(history) });
      const full: { type: string }[] = [];
      for await (const part of result.fullStream) full.push(part);
      expect(full.map((part) => part.type)).toEqual(['start', 'start-step', 'tool-call', 'tool-result', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
      const record = middleware.last()!;
      const shownOutput = output(record);
      expect(full[3]).toMatchObject({ type: 'tool-result', toolName: 'compaction', output: shownOutput, providerExecuted: true, dynamic: true });

      // What toUIMessageStreamResponse() sends useChat.
      const body = await result.toUIMessageStreamResponse().text();
      const chunks = body
        .split('\n\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice('data: '.length)) as { type: string });
      const toolCallId = (full[2] as unknown as { toolCallId: string }).toolCallId;
      const providerMetadata = { compaction: callMetadata(record) };
      expect(chunks.slice(0, 4)).toEqual([
        { type: 'start' },
        { type: 'start-step' },
        { type: 'tool-input-available', toolCallId, toolName: 'compaction', input: {}, providerExecuted: true, providerMetadata, dynamic: true },
        { type: 'tool-output-available', toolCallId, output: shownOutput, providerExecuted: true, dynamic: true },
      ]);

      // useChat's message, as readUIMessageStream builds it from that stream.
      let reply: UIMessage | undefined;
      for await (const message of readUIMessageStream({ stream: result.toUIMessageStream() })) reply = message;
      // A page reads the whole compaction from the part, as from the step's metadata: the summary from its output.
      expect(compactionOf(reply!.parts[1])).toEqual(metadata(record));
      expect(occurrences(reply, record.summary)).toBe(1);
      expect(reply!.parts).toEqual([
        { type: 'step-start' },
        { type: 'dynamic-tool', toolName: 'compaction', toolCallId, state: 'output-available', input: {}, output: shownOutput, providerExecuted: true, callProviderMetadata: providerMetadata },
        { type: 'text', text: 'ok', state: 'done' },
      ]);

      // The page sends the conversation back with a new turn.
      const back = await convertToModelMessages([...history, { ...reply!, id: 'reply' }, uiText('next', 'user', 'one more')]);
      expect(ownParts(back as Message[])).toHaveLength(2);
      const second = streamText({ model, messages: back });
      await second.consumeStream();
      expect(real.summaries()).toBe(1);
      expect(real.steps[1]).toEqual([...real.steps[0]!, assistant('ok'), user('one more')]);
      expect(ownParts(real.steps[1]!)).toEqual([]);
    });
  });

  describe("a checkpoint the caller's messages show no part of", () => {
    it('should show its part again on a regenerated reply, and on another instance, and not on a turn that holds it', async () => {
      const { real, middleware, model, history, first, record } = await compactedTurn();
      const [call, result] = first.content as { toolCallId: string; output?: unknown }[];
      // The reply is regenerated: the same messages, without it. The checkpoint is sent, not made again...
      const again = await generateText({ model, messages: history as never });
      expect(real.summaries()).toBe(1);
      expect(real.steps[1]).toEqual(real.steps[0]);
      // ...and shown again: the same call id, the same output; the call's metadata has no cost of this step.
      const { usage: _paid, ...made } = callMetadata(record);
      expect(again.content).toEqual([
        { ...first.content[0], providerMetadata: { compaction: made } },
        first.content[1],
        { type: 'text', text: 'ok' },
      ]);
      expect(again.content[1]).toMatchObject({ toolCallId: call!.toolCallId, output: result!.output });
      // The step's own metadata says it made no compaction.
      expect(compactionOf(again.providerMetadata)).toBeUndefined();
      // A conversation reloaded on another instance (its state), without the part: shown there too.
      const other = wrapLanguageModel({ model: real.model as never, middleware: compaction({ contextWindow: 20_000, prepare: false, state: middleware.state() as never }) });
      const elsewhere = await generateText({ model: other, messages: [...history, assistant('ok'), user('one more')] as never });
      expect(elsewhere.content.slice(0, 2)).toEqual(again.content.slice(0, 2));
      expect(real.summaries()).toBe(1);
      // The next turn with the reply that holds it: nothing shown.
      const next = await generateText({ model, messages: [...history, ...again.response.messages, user('one more')] as never });
      expect(next.content).toEqual([{ type: 'text', text: 'ok' }]);
    });

    it("should be in a regenerated useChat reply", async () => {
      const real = provider();
      const middleware = compaction({ contextWindow: 20_000, prepare: false });
      const model = wrapLanguageModel({ model: real.model as never, middleware });
      const history: UIMessage[] = long().map((message, index) => uiText(`m${index}`, message.role as 'user' | 'assistant', String((message.content as Part[])[0]!.text)));
      const replyTo = async () => {
        let reply: UIMessage | undefined;
        const result = streamText({ model, messages: await convertToModelMessages(history) });
        for await (const message of readUIMessageStream({ stream: result.toUIMessageStream() })) reply = message;
        return reply!;
      };
      const first = await replyTo();
      const regenerated = await replyTo();
      expect(real.summaries()).toBe(1);
      expect(regenerated.parts.map((part) => part.type)).toEqual(['step-start', 'dynamic-tool', 'text']);
      expect(regenerated.parts[1]).toMatchObject({ toolCallId: (first.parts[1] as { toolCallId: string }).toolCallId, output: (first.parts[1] as { output: unknown }).output });
      expect(compactionOf(regenerated.parts[1])).toMatchObject({ reason: 'auto', rule: 'ceiling', messagesCovered: 20, summary: middleware.last()!.summary });
    });
  });

  describe('withoutCompaction', () => {
    const id = `${COMPACTION_CALL_ID_PREFIX}00112233aabbccdd`;
    it('should drop the parts from model messages, and a message they alone made', () => {
      const saved: ModelMessage[] = [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'compaction', input: {}, providerExecuted: true }, { type: 'tool-result', toolCallId: id, toolName: 'compaction', output: { type: 'json', value: {} } }, { type: 'text', text: 'ok' }] },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'compaction', input: {}, providerExecuted: true }] },
        { role: 'user', content: 'more' },
      ];
      expect(withoutCompaction(saved)).toEqual([saved[0], { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, saved[3]]);
      expect(saved[1]!.content).toHaveLength(3);
      const plain: ModelMessage[] = [saved[0]!, saved[3]!];
      expect(withoutCompaction(plain)).toBe(plain);
    });

    it("should drop the part from UI messages, a message left with nothing, and keep a host's own tool named compaction", () => {
      const part = { type: 'dynamic-tool', toolName: 'compaction', toolCallId: id, state: 'output-available', input: {}, output: {}, providerExecuted: true } as const;
      const host = { type: 'dynamic-tool', toolName: 'compaction', toolCallId: 'call-1', state: 'output-available', input: {}, output: {} } as const;
      const saved: UIMessage[] = [
        uiText('u1', 'user', 'hi'),
        { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, part, { type: 'text', text: 'ok' }] },
        { id: 'a2', role: 'assistant', parts: [{ type: 'step-start' }, part] },
        { id: 'a3', role: 'assistant', parts: [host] },
      ];
      expect(withoutCompaction(saved)).toEqual([saved[0], { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'ok' }] }, saved[3]]);
    });
  });

  describe('withoutOwnParts', () => {
    const own = (id = `${COMPACTION_CALL_ID_PREFIX}00112233aabbccdd`): Message => ({
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: id, toolName: 'compaction', input: {}, providerExecuted: true },
        { type: 'tool-result', toolCallId: id, toolName: 'compaction', output: { type: 'json', value: { trigger: 'auto' } } },
      ],
    });

    it('should return the same params when no part is its own', () => {
      const params = { prompt: [user('a'), toolCall('call-1', 'compaction', {}), toolResult('call-1', 'compaction', 'done'), assistant('b')] };
      expect(withoutOwnParts(params)).toBe(params);
    });

    it('should drop its parts from assistant and tool messages, and a message left empty', () => {
      const mixed: Message = { role: 'assistant', content: [...(own().content as Part[]), { type: 'text', text: 'ok' }] };
      const toolMessage: Message = {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: `${COMPACTION_CALL_ID_PREFIX}ffeeddccbbaa9988`, toolName: 'compaction', output: { type: 'json', value: {} } },
          { type: 'tool-result', toolCallId: 'call-1', toolName: 'run', output: { type: 'text', value: 'done' } },
        ],
      };
      const params = { prompt: [user('a'), own(), mixed, toolMessage, user('b')], maxOutputTokens: 100 };
      expect(withoutOwnParts(params)).toEqual({
        prompt: [user('a'), assistant('ok'), { role: 'tool', content: [toolMessage.content[1]] }, user('b')],
        maxOutputTokens: 100,
      });
      // The caller's messages are not changed.
      expect(mixed.content).toHaveLength(3);
    });

    it("should keep a host's own tool named compaction", () => {
      const params = { prompt: [user('a'), toolCall('call-9', 'compaction', {}), toolResult('call-9', 'compaction', 'x')] };
      expect(withoutOwnParts(params).prompt).toEqual(params.prompt);
    });
  });

  it('should refuse a streamPart that is not true or false', () => {
    expect(() => compaction({ streamPart: 'yes' as never })).toThrow('ai-compaction: option streamPart must be true or false, got "yes"');
  });
});
