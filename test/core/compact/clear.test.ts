import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { compaction, compactionOf, memoryStore } from '../../../src';
import { clearToolOutputs, clearedNote, clearingEnd, clearingThresholds } from '../../../src/checkpoint/clear';
import { UPDATE_PROMPT } from '../../../src/checkpoint/prompts';
import { planClearing } from '../../../src/compact/clear';
import { resolveOptions } from '../../../src/options';
import { liveStart } from '../../../src/prompt/conversation';
import type { CallOptions, Message, Part } from '../../../src/prompt/types';
import { FIXED_ESTIMATOR, estimatePrompt } from '../../../src/sizing/estimate';
import { buildState, parseState } from '../../../src/state';
import { Keeper } from '../../../src/store/keeper';
import type { StoredCheckpoint } from '../../../src/store/format';
import { coveredUpTo, resolveView, withCheckpoint } from '../../../src/view';
import { MockLanguageModel, SUMMARY, isSummaryPrompt, lastText, textResult } from '../../support/models';
import { assistant, recordingLogger, scriptedModel, textOf, toolResult, user, wrap } from '../../support/harness';

/** A call of `ls` with no input: 4 characters, one token. */
const call = (id: string): Message => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'ls', input: {} }] });
const result = (id: string, chars: number, letter = 'r'): Message => toolResult(id, 'ls', letter.repeat(chars));

/** A tool loop: the task, then one call and its result per output length. The last step is live. */
function loop(outputs: number[], task = 'task'): Message[] {
  return [user(task), ...outputs.flatMap((chars, index) => [call(`c${index + 1}`), result(`c${index + 1}`, chars, String.fromCharCode(97 + (index % 26)))])];
}

const partsOf = (message: Message | undefined): Part[] => (message === undefined || message.role === 'system' ? [] : message.content);
const outputOf = (message: Message | undefined) => (partsOf(message)[0] as unknown as { output: { type: string; value: unknown } }).output;

/** Every tool call of a prompt has exactly one result of the same id and tool, right after its message. */
function expectPairsWhole(prompt: readonly Message[]): void {
  prompt.forEach((message, index) => {
    for (const part of partsOf(message)) {
      if (part.type !== 'tool-call' || message.role !== 'assistant') continue;
      const answers = partsOf(prompt[index + 1]).filter((answer) => answer.type === 'tool-result' && answer.toolCallId === part.toolCallId);
      expect(answers).toHaveLength(1);
      expect(answers[0]!.toolName).toBe(part.toolName);
    }
  });
}

const toolCallIds = (prompt: readonly Message[]) => prompt.flatMap((message) => partsOf(message).filter((part) => part.type === 'tool-call').map((part) => part.toolCallId));

async function viewOf(conversation: Message[], checkpoint?: StoredCheckpoint) {
  const keeper = new Keeper(memoryStore(), { warn: () => {} });
  const view = await resolveView(keeper, { prompt: conversation }, { scope: '' }, 'mock-provider:mock-model-id', FIXED_ESTIMATOR, keeper.budget());
  return checkpoint === undefined ? view : withCheckpoint(view, checkpoint);
}

function plan(conversation: Message[], options: { limit: number; clearToolResults?: unknown; reason?: 'auto' | 'overflow' | 'manual' }, view?: Awaited<ReturnType<typeof viewOf>>) {
  return (async () => {
    const step = view ?? (await viewOf(conversation));
    const settings = resolveOptions({ clearToolResults: options.clearToolResults ?? true });
    return planClearing(settings, { view: step, reason: options.reason ?? 'auto', model: {} as never, limit: options.limit, target: undefined, from: coveredUpTo(step), end: liveStart(step.conversation) });
  })();
}

function overflowError(limit: number, sent: number) {
  const body = { error: { message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${sent} tokens.`, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } };
  return new APICallError({ message: body.error.message, url: 'https://api.openai.com/v1/chat/completions', requestBodyValues: {}, statusCode: 400, responseHeaders: {}, responseBody: JSON.stringify(body), data: body, isRetryable: false });
}

describe('clearing old tool results', () => {
  describe('the option', () => {
    it('should be off by default, and read true, false and { keep, atLeast }', () => {
      expect(resolveOptions({}).clearToolResults).toBe(false);
      expect(resolveOptions({ clearToolResults: true }).clearToolResults).toEqual({ keep: undefined, atLeast: undefined });
      expect(resolveOptions({ clearToolResults: false }).clearToolResults).toBe(false);
      expect(resolveOptions({ clearToolResults: { keep: 0, atLeast: 5_000 } }).clearToolResults).toEqual({ keep: 0, atLeast: 5_000 });
      expect(resolveOptions({ clearToolResults: {} }).clearToolResults).toEqual({ keep: undefined, atLeast: undefined });
    });

    it.each([
      [{ keep: -1 }, '{ keep: -1 }'],
      [{ atLeast: 1.5 }, '{ atLeast: 1.5 }'],
      [{ keep: '15000' }, '{ keep: "15000" }'],
      [{ keepTokens: 100 }, '{ keepTokens: 100 }'],
      ['yes', '"yes"'],
      [1, '1'],
      [null, 'null'],
    ])('should refuse %j naming the option and the value', (value, shown) => {
      expect(() => compaction({ clearToolResults: value as never })).toThrow(
        `ai-compaction: option clearToolResults must be true, false, or { keep?, atLeast? } with whole numbers of tokens (0 or more), got ${shown}`,
      );
    });
  });

  describe('clearToolOutputs', () => {
    it('should replace each output by a note of its length, keeping every call, result part, id and word', () => {
      const conversation: Message[] = [user('Fix it.'), { role: 'assistant', content: [{ type: 'text', text: 'Reading.' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'ls', input: { path: 'a.ts' } }] }, result('c1', 5_000), assistant('Done reading.'), call('c2'), result('c2', 300)];
      const before = structuredClone(conversation);
      const cleared = clearToolOutputs(conversation, 0, 6);

      expect(cleared.outputs).toBe(2);
      expect(cleared.characters).toBe(5_300);
      expect(clearedNote(5_000)).toBe('[tool result cleared: 5000 characters]');
      expect(cleared.messages[2]).toEqual({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'ls', output: { type: 'text', value: '[tool result cleared: 5000 characters]' } }] });
      expect(outputOf(cleared.messages[5])).toEqual({ type: 'text', value: '[tool result cleared: 300 characters]' });
      // Only the tool messages are new objects; the caller's messages are not changed.
      for (const index of [0, 1, 3, 4]) expect(cleared.messages[index]).toBe(conversation[index]);
      expect(conversation).toEqual(before);
      expectPairsWhole(cleared.messages);
      expect(toolCallIds(cleared.messages)).toEqual(['c1', 'c2']);
    });

    it('should clear only the messages from `from` up to `to`, and give the same bytes for the same messages', () => {
      const conversation = loop([4_000, 4_000, 4_000, 4_000]);
      const cleared = clearToolOutputs(conversation, 3, 7);
      expect(cleared.outputs).toBe(2);
      expect(cleared.messages[2]).toBe(conversation[2]);
      expect(outputOf(cleared.messages[4]).value).toBe(clearedNote(4_000));
      expect(outputOf(cleared.messages[6]).value).toBe(clearedNote(4_000));
      expect(cleared.messages[8]).toBe(conversation[8]);
      expect(JSON.stringify(clearToolOutputs(structuredClone(conversation), 3, 7).messages)).toBe(JSON.stringify(cleared.messages));
      expect(clearToolOutputs(conversation, 3, 3).messages).toBe(conversation);
    });

    it('should count a JSON output by its JSON text, keep an error an error, and clear a content output with its files', () => {
      const output = (id: string, value: unknown): Message => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'ls', output: value as never }] });
      const json = { files: Array.from({ length: 50 }, (_, index) => `src/file-${index}.ts`) };
      const conversation = [
        output('j', { type: 'json', value: json }),
        output('e', { type: 'error-json', value: { error: 'e'.repeat(200) } }),
        output('t', { type: 'error-text', value: 'boom '.repeat(40) }),
        output('i', { type: 'content', value: [{ type: 'text', text: 'screenshot' }, { type: 'image-data', data: 'AAAA', mediaType: 'image/png' }] }),
      ];
      const cleared = clearToolOutputs(conversation, 0, 4).messages;
      expect(outputOf(cleared[0])).toEqual({ type: 'text', value: clearedNote(JSON.stringify(json).length) });
      expect(outputOf(cleared[1])).toEqual({ type: 'error-text', value: clearedNote(JSON.stringify({ error: 'e'.repeat(200) }).length) });
      expect(outputOf(cleared[2])).toEqual({ type: 'error-text', value: clearedNote(200) });
      // The text of a content output is its text items and a line per file: 10 + 1 + 24 characters.
      expect(outputOf(cleared[3])).toEqual({ type: 'text', value: clearedNote('screenshot\n[Attached image/png]'.length) });
    });

    it('should leave an output no longer than its note, an execution denial, and a provider-executed result in an assistant message', () => {
      const denied: Message = { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'd', toolName: 'rm', output: { type: 'execution-denied', reason: 'no' } }] };
      const provider: Message = { role: 'assistant', content: [{ type: 'tool-result', toolCallId: 'w', toolName: 'web_search', output: { type: 'json', value: { results: 'x'.repeat(500) } } }] };
      const conversation = [result('s', 30), denied, provider];
      const cleared = clearToolOutputs(conversation, 0, 3);
      expect(cleared.outputs).toBe(0);
      expect(cleared.messages).toBe(conversation);
    });
  });

  describe('clearingEnd', () => {
    // user 1 token, each call 1 token, each result 1,000 tokens (4,000 characters)
    const conversation = loop([4_000, 4_000, 4_000]);

    it('should keep the newest `keep` tokens whole messages, and stop before the live step', () => {
      expect(liveStart(conversation)).toBe(5);
      // keep 1,001: the live result and call only; clearing stops at the live step
      expect(clearingEnd(conversation, 0, 5, 1_001)).toBe(5);
      // keep 2,001: the second result too (1,000 + 1 + 1,000); its call (2,002) is older
      expect(clearingEnd(conversation, 0, 5, 2_001)).toBe(4);
      expect(clearingEnd(conversation, 0, 5, 2_002)).toBe(3);
      expect(clearingEnd(conversation, 0, 5, 100_000)).toBe(0);
    });

    it('should never go below where it starts', () => {
      expect(clearingEnd(conversation, 3, 5, 100_000)).toBe(3);
    });
  });

  describe('thresholds', () => {
    it('should be a quarter of the ceiling to free at least, and half the ceiling to come to at most', () => {
      expect(clearingThresholds(100_000, undefined)).toEqual({ atLeast: 25_000, atMost: 50_000 });
      expect(clearingThresholds(170_001, undefined)).toEqual({ atLeast: 42_501, atMost: 85_000 });
      expect(clearingThresholds(100_000, 7)).toEqual({ atLeast: 7, atMost: 50_000 });
    });

    // [task, c1, result of L characters, c2, 'done']: 16 characters besides the output. The note for
    // a 6-digit length is 40 characters, so the prompt after is 56 characters: 14 tokens.
    const freedFor = (length: number) => Math.round((length + 16) / 4) - Math.round((`[tool result cleared: ${length} characters]`.length + 16) / 4);
    const withOutput = (length: number) => [user('task'), call('c1'), result('c1', length), call('c2'), toolResult('c2', 'ls', 'done')];

    it('should clear when it frees exactly a quarter of the ceiling, not one token less', async () => {
      expect(freedFor(100_040)).toBe(25_000);
      expect(freedFor(100_036)).toBe(24_999);
      const enough = await plan(withOutput(100_040), { limit: 100_000 });
      expect(enough).toMatchObject({ freed: 25_000, after: 14, checkpoint: { length: 3, clear: { from: 0, base: false, at: 5, outputs: 1, characters: 100_040 } } });
      expect(await plan(withOutput(100_036), { limit: 100_000 })).toBeUndefined();
    });

    it('should take a given atLeast instead', async () => {
      expect(await plan(withOutput(100_040), { limit: 100_000, clearToolResults: { atLeast: 25_001 } })).toBeUndefined();
      // and a given keep: 0 clears every output before the live step, though this one is within 15,000 tokens
      expect(await plan(withOutput(40_000), { limit: 100_000, clearToolResults: { keep: 0, atLeast: freedFor(40_000) } })).toMatchObject({ freed: freedFor(40_000) });
      expect(await plan(withOutput(40_000), { limit: 100_000, clearToolResults: { atLeast: freedFor(40_000) } })).toBeUndefined();
    });

    // [task, c1, result of 200,000 characters, the assistant's W characters, c2, 'done']: the prompt
    // after is 56 + W characters, the words untouched.
    const withWords = (words: number) => [user('task'), call('c1'), result('c1', 200_000), assistant('w'.repeat(words)), call('c2'), toolResult('c2', 'ls', 'done')];

    it('should clear when the prompt comes to exactly half the ceiling, not one token more', async () => {
      const half = await plan(withWords(199_944), { limit: 100_000 });
      // The assistant's words are newer than `keep` allows, but never cleared: clearing stops at the live step.
      expect(half).toMatchObject({ after: 50_000, freed: 49_990, checkpoint: { length: 4, clear: { outputs: 1 } } });
      expect(await plan(withWords(199_948), { limit: 100_000 })).toBeUndefined();
    });

    it('should not clear without a ceiling, with the option off, on a manual compaction, or with nothing old to clear', async () => {
      const conversation = withOutput(400_000);
      expect(await plan(conversation, { limit: 100_000 })).toBeDefined();
      expect(await plan(conversation, { limit: undefined as never })).toBeUndefined();
      expect(await plan(conversation, { limit: 100_000, clearToolResults: false })).toBeUndefined();
      expect(await plan(conversation, { limit: 100_000, reason: 'manual' })).toBeUndefined();
      expect(await plan(conversation, { limit: 100_000, reason: 'overflow' })).toBeDefined();
      // keep larger than the conversation: nothing is old enough
      expect(await plan(conversation, { limit: 100_000, clearToolResults: { keep: 200_000 } })).toBeUndefined();
    });

    it('should not clear again on a conversation that grew by less than atLeast since it was cleared, or whose cleared prompt the provider rejected', async () => {
      const conversation = loop([100_000, 100_000, 120_000, 100_000, 4]);
      const first = (await plan(conversation.slice(0, 7), { limit: 100_000 }))!;
      expect(first.checkpoint).toMatchObject({ length: 5, clear: { at: 7 } });
      const cleared: StoredCheckpoint = { ...first.checkpoint, digest: 'f'.repeat(64) };
      // Grown by one call and a 25,000-token result: exactly atLeast. Clears again, from where the first started.
      const grown = await viewOf(conversation.slice(0, 9), cleared);
      expect(await plan(grown.conversation, { limit: 100_000 }, grown)).toMatchObject({ checkpoint: { length: 7, clear: { from: 0, at: 9 } } });
      // Grown by less: the cleared prompt did not make the room it was meant to; a summary is made.
      const short = await viewOf([...conversation.slice(0, 7), call('c4'), result('c4', 99_992)], cleared);
      expect(await plan(short.conversation, { limit: 100_000 }, short)).toBeUndefined();
      expect(await plan(grown.conversation, { limit: 100_000, reason: 'overflow' }, grown)).toBeUndefined();
    });
  });

  describe('the middleware', () => {
    // 100,000 window: ceiling 84,000. Clearing must free 21,000 and come to 42,000 at most; it keeps
    // the newest 15,000 tokens (the record's budget). 24 steps of 4,000-token outputs: ~96,000 tokens.
    const WINDOW = 100_000;
    const steps = (count: number) => loop(Array.from({ length: count }, () => 16_000), 'Fix the failing tests.');

    it('should clear old tool outputs at the ceiling without a model call, and keep the newest 15,000 tokens as they are', async () => {
      const scripted = scriptedModel();
      const log = recordingLogger();
      const middleware = compaction({ contextWindow: WINDOW, clearToolResults: true, logger: log.logger });
      const conversation = steps(24);
      const before = structuredClone(conversation);
      const response = (await wrap(scripted.model, middleware).doGenerate({ prompt: conversation })) as { providerMetadata?: Record<string, unknown> };

      expect(scripted.summaryCalls()).toHaveLength(0);
      const [sent] = scripted.stepCalls().map((step) => step.prompt);
      expect(conversation).toEqual(before);
      expect(sent).toHaveLength(conversation.length);
      expectPairsWhole(sent!);
      expect(toolCallIds(sent!)).toEqual(toolCallIds(conversation));
      // From the end: 4,000 + 1 + 4,000 + 1 + 4,000 + 1 = 12,003 tokens, the next result would
      // make 16,003. Results 1 to 21 are cleared, 22 to 24 go out as they are.
      sent!.forEach((message, index) => {
        if (message.role !== 'tool') return expect(message).toEqual(conversation[index]);
        const step = index / 2;
        if (step <= 21) expect(outputOf(message)).toEqual({ type: 'text', value: '[tool result cleared: 16000 characters]' });
        else expect(message).toEqual(conversation[index]);
      });
      const tokensBefore = estimatePrompt(conversation);
      expect(tokensBefore).toBeGreaterThanOrEqual(84_000);
      const record = middleware.last()!;
      expect(record).toEqual({
        reason: 'auto',
        rule: 'clear',
        kind: 'clear',
        messagesCovered: 43,
        tokensBefore,
        tokensAfter: estimatePrompt(sent!),
        summary: '',
        record: '',
        cleared: { toolResults: 21, characters: 21 * 16_000 },
        // No model call: nothing to pay for, no time spent.
        usage: { requests: 0, durationMs: 0 },
        window: { tokens: 100_000, source: 'option' },
      });
      expect(record.tokensAfter).toBeLessThanOrEqual(42_000);
      expect(compactionOf(response.providerMetadata)).toEqual({
        reason: 'auto',
        rule: 'clear',
        kind: 'clear',
        messagesCovered: 43,
        tokensBefore,
        tokensAfter: record.tokensAfter,
        summary: '',
        usage: { requests: 0, durationMs: 0 },
      });
      expect(log.info).toEqual([`ai-compaction: cleared 21 old tool results in 43 messages (auto, rule clear): ${tokensBefore} -> ${record.tokensAfter} estimated tokens; no model request; window 100000 tokens (option)`]);
    });

    it('should send the same cleared messages byte for byte on the steps after, without compacting again', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: WINDOW, clearToolResults: true });
      const wrapped = wrap(scripted.model, middleware);
      const conversation = steps(24);
      await wrapped.doGenerate({ prompt: conversation });
      const first = middleware.last();
      for (let step = 25; step <= 28; step++) {
        // A tool loop passes fresh objects of the same messages on every step.
        conversation.push(call(`c${step}`), result(`c${step}`, 400));
        await wrapped.doGenerate({ prompt: structuredClone(conversation) });
      }
      const prompts = scripted.stepCalls().map((step) => step.prompt);
      expect(prompts).toHaveLength(5);
      for (let index = 1; index < prompts.length; index++) {
        const previous = prompts[index - 1]!;
        expect(JSON.stringify(prompts[index]!.slice(0, previous.length))).toBe(JSON.stringify(previous));
      }
      expect(scripted.summaryCalls()).toHaveLength(0);
      expect(middleware.last()).toBe(first);
    });

    it('should summarize when clearing is not enough, over the cleared messages as they were sent (a cache hit)', async () => {
      const scripted = scriptedModel();
      // The loop stops at the first summary request, taken to be the compacting step's: off here, a
      // summary prepared in the background (docs/design.md, "Preparing ahead") would come a few
      // steps earlier.
      const middleware = compaction({ contextWindow: WINDOW, clearToolResults: true, prepare: false });
      const wrapped = wrap(scripted.model, middleware);
      const conversation = steps(24);
      await wrapped.doGenerate({ prompt: conversation });
      expect(middleware.last()!.kind).toBe('clear');
      // The conversation grows by the assistant's words, which are never cleared: steps of ~5,000 tokens.
      for (let step = 25; step <= 60; step++) {
        conversation.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${step}: ${'w'.repeat(20_000)}` }, { type: 'tool-call', toolCallId: `c${step}`, toolName: 'ls', input: {} }] }, result(`c${step}`, 40));
        await wrapped.doGenerate({ prompt: structuredClone(conversation) });
        if (scripted.summaryCalls().length > 0) break;
      }
      const [request] = scripted.summaryCalls();
      expect(request).toBeDefined();
      const prompts = scripted.stepCalls().map((step) => step.prompt);
      // The step before the summary went out with the cleared messages; the summary request sends
      // that same prompt, up to the live step, then its own message.
      const sentBefore = prompts[prompts.length - 2]!;
      expect(JSON.stringify(request!.prompt.slice(0, sentBefore.length))).toBe(JSON.stringify(sentBefore));
      expect(JSON.stringify(request!.prompt)).toContain('[tool result cleared: 16000 characters]');
      expect(isSummaryPrompt(request!.prompt)).toBe(true);
      const record = middleware.last()!;
      expect(record.kind).toBe('summary');
      expect(record.messagesCovered).toBe(liveStart(conversation));
      // The step then goes out as the checkpoint and the live step.
      const last = prompts[prompts.length - 1]!;
      expect(textOf(last[0]).startsWith('<conversation-checkpoint>')).toBe(true);
      expect(last.slice(1)).toEqual(conversation.slice(liveStart(conversation)));
      // What the checkpoint covers keeps its identifiers: the record opens with the task.
      expect(textOf(last[0])).toContain('[User]: Fix the failing tests.');
    });

    it('should clear the tool outputs after a summary checkpoint, and summarize both into one checkpoint next', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: WINDOW, clearToolResults: true });
      const wrapped = wrap(scripted.model, middleware);
      const conversation = steps(3);
      middleware.compactNext();
      await wrapped.doGenerate({ prompt: conversation });
      expect(middleware.last()).toMatchObject({ reason: 'manual', kind: 'summary', messagesCovered: 5 });
      const checkpoint = scripted.stepCalls()[0]!.prompt[0]!;
      // 24 more steps of 4,000 tokens: at the ceiling, the outputs after the checkpoint are cleared.
      for (let step = 4; step <= 30 && middleware.last()!.kind !== 'clear'; step++) {
        conversation.push(call(`c${step}`), result(`c${step}`, 16_000));
        await wrapped.doGenerate({ prompt: structuredClone(conversation) });
      }
      const record = middleware.last()!;
      expect(record).toMatchObject({ kind: 'clear', reason: 'auto' });
      const cleared = scripted.stepCalls().at(-1)!.prompt;
      expect(cleared[0]).toEqual(checkpoint);
      expect(cleared.slice(1)).toHaveLength(conversation.length - 5);
      expectPairsWhole(cleared);
      expect(outputOf(cleared[2])).toEqual({ type: 'text', value: '[tool result cleared: 16000 characters]' });
      expect(cleared.at(-1)).toEqual(conversation.at(-1));
      expect(scripted.summaryCalls()).toHaveLength(1);

      // The next step sends the same; asked to compact, it summarizes the checkpoint and the cleared messages together.
      conversation.push(call('c99'), result('c99', 40));
      middleware.compactNext();
      await wrapped.doGenerate({ prompt: structuredClone(conversation) });
      const update = scripted.summaryCalls()[1]!.prompt;
      expect(JSON.stringify(update.slice(0, cleared.length))).toBe(JSON.stringify(cleared));
      expect(lastText(update)).toBe(UPDATE_PROMPT);
      expect(middleware.last()).toMatchObject({ kind: 'summary', messagesCovered: liveStart(conversation) });
      const after = scripted.stepCalls().at(-1)!.prompt;
      expect(textOf(after[0]).startsWith('<conversation-checkpoint>')).toBe(true);
      expect(after.slice(1)).toEqual(conversation.slice(liveStart(conversation)));
    });

    it('should not clear twice in a row when the provider counts the cleared prompt still at the ceiling: it summarizes', async () => {
      // The provider counts every prompt at 7 times its estimate: the cleared prompt does not fit.
      const scripted = scriptedModel({ inputTokens: (prompt) => 7 * estimatePrompt(prompt) });
      const middleware = compaction({ contextWindow: WINDOW, clearToolResults: true });
      const wrapped = wrap(scripted.model, middleware);
      const conversation = steps(24);
      await wrapped.doGenerate({ prompt: conversation });
      expect(middleware.last()!.kind).toBe('clear');
      conversation.push(call('c25'), result('c25', 16_000));
      await wrapped.doGenerate({ prompt: structuredClone(conversation) });
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(middleware.last()).toMatchObject({ kind: 'summary', reason: 'auto' });
    });

    it('should recover an overflow by clearing when that is enough, and summarize when the cleared prompt is what was rejected', async () => {
      let rejectNext = false;
      const summaries: CallOptions[] = [];
      const prompts: Message[][] = [];
      const model = new MockLanguageModel({
        doGenerate: async (params: CallOptions) => {
          if (isSummaryPrompt(params.prompt)) {
            summaries.push(params);
            return textResult(SUMMARY, 500, 200);
          }
          prompts.push(structuredClone(params.prompt));
          const estimate = estimatePrompt(params.prompt);
          if (rejectNext || estimate > 80_000) {
            rejectNext = false;
            throw overflowError(80_000, estimate);
          }
          return textResult('ok', estimate, 10);
        },
      });
      // No window: the provider states its own (80,000) when it rejects.
      const middleware = compaction({ clearToolResults: true });
      const wrapped = wrap(model, middleware);
      const conversation = steps(24);
      await wrapped.doGenerate({ prompt: conversation });
      expect(summaries).toHaveLength(0);
      expect(middleware.last()).toMatchObject({ reason: 'overflow', kind: 'clear' });
      expect(JSON.stringify(prompts[1])).toContain('[tool result cleared: 16000 characters]');

      conversation.push(call('c25'), result('c25', 400));
      rejectNext = true;
      await wrapped.doGenerate({ prompt: structuredClone(conversation) });
      expect(summaries).toHaveLength(1);
      expect(middleware.last()).toMatchObject({ reason: 'overflow', kind: 'summary' });
      expect(textOf(prompts.at(-1)![0]).startsWith('<conversation-checkpoint>')).toBe(true);
    });

    it('should summarize as before with the option off', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: WINDOW, clearToolResults: false });
      await wrap(scripted.model, middleware).doGenerate({ prompt: steps(24) });
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(middleware.last()!.kind).toBe('summary');
    });
  });

  describe('state and stores', () => {
    const WINDOW = 100_000;
    const steps = (count: number) => loop(Array.from({ length: count }, () => 16_000), 'Fix the failing tests.');

    it('should carry a cleared checkpoint in state(): another instance sends the same cleared prompt without compacting', async () => {
      const first = scriptedModel();
      const a = compaction({ contextWindow: WINDOW, clearToolResults: true });
      const conversation = steps(24);
      await wrap(first.model, a).doGenerate({ prompt: conversation });
      const state = a.state();
      const stored = Object.values(state.checkpoints) as StoredCheckpoint[];
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ length: 43, summary: '', record: '', clear: { from: 0, base: false, at: 49, outputs: 21, characters: 336_000 } });
      expect(parseState(JSON.parse(JSON.stringify(state))).checkpoints).toEqual(state.checkpoints);

      const second = scriptedModel();
      const b = compaction({ contextWindow: WINDOW, clearToolResults: true, state: JSON.parse(JSON.stringify(state)) });
      const next = [...structuredClone(conversation), call('c25'), result('c25', 400)];
      await wrap(second.model, b).doGenerate({ prompt: next });
      expect(second.calls).toHaveLength(1);
      expect(b.last()).toBeUndefined();
      const sent = first.stepCalls()[0]!.prompt;
      expect(JSON.stringify(second.stepCalls()[0]!.prompt.slice(0, sent.length))).toBe(JSON.stringify(sent));
    });

    it('should share a cleared checkpoint through a store between instances', async () => {
      const store = memoryStore();
      const first = scriptedModel();
      const a = compaction({ contextWindow: WINDOW, clearToolResults: true, store });
      const conversation = steps(24);
      await wrap(first.model, a).doGenerate({ prompt: conversation });
      const second = scriptedModel();
      // The other instance need not have the option on to send what the first one stored.
      const b = compaction({ contextWindow: WINDOW, store });
      await wrap(second.model, b).doGenerate({ prompt: [...structuredClone(conversation), call('c25'), result('c25', 400)] });
      expect(second.summaryCalls()).toHaveLength(0);
      expect(JSON.stringify(second.stepCalls()[0]!.prompt.slice(0, conversation.length))).toBe(JSON.stringify(first.stepCalls()[0]!.prompt));
    });

    it('should refuse a state whose cleared checkpoint is inconsistent, saying where', () => {
      const digest = 'a'.repeat(64);
      const checkpoint = { v: 2, digest, length: 4, summary: '', record: '', reason: 'auto', tokensBefore: 90_000, tokensAfter: 9_000, createdAt: 1, clear: { from: 4, base: false, at: 6, outputs: 1, characters: 100 } };
      const state = buildState(new Map(), new Map([[digest, checkpoint as StoredCheckpoint]]));
      expect(() => parseState(state)).toThrow(`ai-compaction: option state is refused: checkpoints.${digest}.clear must start before the end of what it covers`);
      // A state made before clearing existed (no `clear`) is read as it was.
      const older = buildState(new Map(), new Map([[digest, { ...checkpoint, summary: SUMMARY, clear: undefined } as unknown as StoredCheckpoint]]));
      expect(parseState(JSON.parse(JSON.stringify(older))).checkpoints[digest]).not.toHaveProperty('clear');
    });
  });
});
