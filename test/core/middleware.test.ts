import { describe, expect, it } from 'vitest';
import * as aiTest from 'ai/test';
import { CompactionError, compaction, isSummaryRequest } from '../../src';
import { SUMMARY_FIRST_LINE, UPDATE_PROMPT } from '../../src/checkpoint/prompts';
import { checkpointText } from '../../src/checkpoint/message';
import { selectRecord } from '../../src/checkpoint/record';
import { withUserWords } from '../../src/checkpoint/user-words';
import type { Message } from '../../src/prompt/types';
import { estimateMessages } from '../../src/sizing/estimate';
import { AI_SDK_MAJOR, SUMMARY, finish, textResult, usage } from '../support/models';
import { assistant, chat, recordingLogger, scriptedModel, system, textOf, user, wrap } from '../support/harness';

const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);

describe('compaction', () => {
  describe('transformParams', () => {
    it('should send the prompt unchanged while it is under the ceiling', async () => {
      const { model, calls } = scriptedModel();
      const prompt = [system('be brief'), ...chat(3, 100)];
      await wrap(model, compaction({ contextWindow: 20_000 })).doGenerate({ prompt });
      expect(calls).toHaveLength(1);
      expect(calls[0]!.prompt).toEqual(prompt);
    });

    it('should never compact on its own without a context window', async () => {
      const { model, summaryCalls } = scriptedModel();
      const middleware = compaction();
      await wrap(model, middleware).doGenerate({ prompt: [user(tokens(500_000)), assistant('a'), user('b')] });
      expect(summaryCalls()).toHaveLength(0);
      expect(middleware.last()).toBeUndefined();
    });

    it('should compact when the estimate reaches the ceiling (200k window: 170,000)', async () => {
      const { model, calls, summaryCalls, stepCalls } = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000 });
      // 85,000 + 84,999 + 1 = 170,000 estimated tokens: exactly the ceiling.
      const atCeiling = [user(tokens(85_000)), assistant(tokens(84_999, 'a')), user('next')];
      await wrap(model, middleware).doGenerate({ prompt: atCeiling });
      expect(summaryCalls()).toHaveLength(1);
      // The covered turn is one long user message and its reply: the record keeps the task's ends.
      const record = selectRecord(atCeiling, 15_000, 0, 2).text;
      expect(record).toMatch(/^\[User\]: u+\n\[\d+ characters cut\]\nu+\n\n\[1 earlier steps of this turn are summarized above\]$/);
      expect(stepCalls()[0]!.prompt).toEqual([
        { role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, record) }] },
        user('next'),
      ]);
      expect(middleware.last()).toMatchObject({ reason: 'auto', messagesCovered: 2, tokensBefore: 170_000, summary: SUMMARY, record });
      expect(calls).toHaveLength(2);

      const { model: other, summaryCalls: otherSummaries } = scriptedModel();
      const below = [user(tokens(85_000)), assistant(tokens(84_998, 'a')), user('next')];
      // Just under the ceiling a checkpoint would be prepared in the background (docs/design.md,
      // "Preparing ahead"; compact/prepare.test.ts): off here.
      await wrap(other, compaction({ contextWindow: 200_000, prepare: false })).doGenerate({ prompt: below });
      expect(otherSummaries()).toHaveLength(0);
    });

    it('should compact on the provider count when the estimate is far lower', async () => {
      // window 160,000 -> ceiling 136,000. The text estimates at 50,000; the provider counts 150,000.
      const first = [user(tokens(50_000))];
      const second = [...first, assistant('reply'), user('next')];
      const { model, summaryCalls } = scriptedModel({ inputTokens: () => 150_000 });
      const middleware = compaction({ contextWindow: 160_000 });
      const wrapped = wrap(model, middleware);
      await wrapped.doGenerate({ prompt: first });
      expect(summaryCalls()).toHaveLength(0);
      await wrapped.doGenerate({ prompt: second });
      expect(summaryCalls()).toHaveLength(1);
      // counted 150,000 + 10 output + the new user message: 'next' at the characters a token this
      // very count taught (200,001 characters counted at 150,000 tokens: 1.33, bounded to 1.5), 3
      expect(middleware.last()!.tokensBefore).toBe(150_013);

      const fresh = scriptedModel();
      await wrap(fresh.model, compaction({ contextWindow: 160_000 })).doGenerate({ prompt: second });
      expect(fresh.summaryCalls()).toHaveLength(0);
    });

    it("should send the step's own request with one user message appended, for the prompt cache", async () => {
      const { model, summaryCalls, stepCalls } = scriptedModel({ inputTokens: () => 150_000 });
      const middleware = compaction({ contextWindow: 160_000 });
      const wrapped = wrap(model, middleware);
      const tools = [{ type: 'function', name: 'read_file', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }];
      const first = [system('You are a coding agent.'), user(tokens(50_000))];
      await wrapped.doGenerate({ prompt: first, tools, toolChoice: { type: 'auto' }, maxOutputTokens: 500 } as never);
      const second = [...first, assistant('reply'), user('next')];
      await wrapped.doGenerate({ prompt: second, tools, toolChoice: { type: 'auto' }, maxOutputTokens: 500 } as never);

      const request = summaryCalls()[0]!;
      const stepPrompt = stepCalls()[0]!.prompt;
      // Up to the end of what the checkpoint covers: never the new user message, which stays live.
      expect(request.prompt.slice(0, -1)).toEqual(second.slice(0, -1));
      expect(stepPrompt).toEqual(first);
      const appended = request.prompt[request.prompt.length - 1]!;
      expect(appended.role).toBe('user');
      expect(textOf(appended).startsWith(`${SUMMARY_FIRST_LINE}\n`)).toBe(true);
      expect(isSummaryRequest({ prompt: request.prompt })).toBe(true);
      expect(isSummaryRequest({ prompt: second })).toBe(false);
      // room = 160,000 - (150,010 counted + 1.15 x appended estimated): lower than 32,000, and not
      // bounded by the step's own maxOutputTokens of 500. The appended message is estimated at the
      // characters a token the first count taught (about 1.33, bounded to 1.5), not at 4
      // (docs/design.md, "The size of a prompt").
      const appendedTokens = estimateMessages([appended], 0, 1, { charsPerToken: 1.5 });
      expect(appendedTokens).toBeGreaterThan(estimateMessages([appended]));
      expect(request.maxOutputTokens).toBe(Math.floor(160_000 - (150_010 + 1.15 * appendedTokens)));
      expect(request.maxOutputTokens).toBeGreaterThan(500);
    });

    it('should not let a forced tool call, a response format or stop sequences keep the reply from being the summary', async () => {
      const calls: Array<Record<string, unknown>> = [];
      const { model } = scriptedModel();
      const spy = {
        specificationVersion: 'v3',
        transformParams: async ({ params }: { params: Record<string, unknown> }) => {
          calls.push(params);
          return params;
        },
      };
      const middleware = compaction();
      middleware.compactNext();
      const tools = [{ type: 'function', name: 'run', inputSchema: { type: 'object' } }];
      await wrap(model, [middleware, spy]).doGenerate({
        prompt: [...chat(2, 10), user('go')],
        tools,
        toolChoice: { type: 'required' },
        responseFormat: { type: 'json' },
        stopSequences: ['##'],
      } as never);
      const [summary, step] = calls;
      expect(summary).toMatchObject({ tools, toolChoice: { type: 'none' } });
      expect(summary!.responseFormat).toBeUndefined();
      expect(summary!.stopSequences).toBeUndefined();
      expect(step).toMatchObject({ toolChoice: { type: 'required' }, responseFormat: { type: 'json' }, stopSequences: ['##'] });
    });

    it('should give the summary 32,000 output tokens by default and summaryOutputTokens when set', async () => {
      for (const [options, expected] of [[{}, 32_000], [{ summaryOutputTokens: 4_000 }, 4_000]] as const) {
        const { model, summaryCalls } = scriptedModel();
        const middleware = compaction({ contextWindow: 200_000, ...options });
        middleware.compactNext();
        await wrap(model, middleware).doGenerate({ prompt: [...chat(2, 50), user('go')], maxOutputTokens: 500 });
        expect(summaryCalls()[0]!.maxOutputTokens).toBe(expected);
      }
    });

    it('should send the summary request through the middleware after this one', async () => {
      const { model, summaryCalls } = scriptedModel();
      const seen: boolean[] = [];
      const after = {
        specificationVersion: 'v3',
        transformParams: async ({ params }: { params: { prompt: Message[] } }) => {
          seen.push(isSummaryRequest(params));
          return params;
        },
      };
      const middleware = compaction({ contextWindow: 200_000 });
      middleware.compactNext();
      await wrap(model, [middleware, after]).doGenerate({ prompt: [...chat(2, 50), user('go')] });
      expect(summaryCalls()).toHaveLength(1);
      expect(seen).toEqual([true, false]);
    });

    it('should use the summarizer model when one is given', async () => {
      const step = scriptedModel();
      const summarizer = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000, summarizer: summarizer.model as never });
      middleware.compactNext();
      await wrap(step.model, middleware).doGenerate({ prompt: [...chat(2, 50), user('go')] });
      expect(step.summaryCalls()).toHaveLength(0);
      expect(summarizer.summaryCalls()).toHaveLength(1);
      expect(middleware.last()!.summary).toBe(SUMMARY);
    });

    it('should give a v3 summarizer the prompt in its own shape, whatever the step model is', async () => {
      // Under ai@7 the step's model (and so the middleware's params) is v4, whose file data is tagged.
      const bytes = new Uint8Array([137, 80, 78, 71]);
      const image = AI_SDK_MAJOR === 7 ? { type: 'file', mediaType: 'image/png', data: { type: 'data', data: bytes } } : { type: 'file', mediaType: 'image/png', data: bytes };
      const summarizer = new aiTest.MockLanguageModelV3({ doGenerate: async () => textResult(SUMMARY, 100, 100) as never });
      const step = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000, summarizer: summarizer as never });
      middleware.compactNext();
      const prompt = [{ role: 'user', content: [{ type: 'text', text: 'look' }, image] } as Message, assistant('seen'), user('go')];
      await wrap(step.model, middleware).doGenerate({ prompt });
      expect(summarizer.doGenerateCalls).toHaveLength(1);
      const file = summarizer.doGenerateCalls[0]!.prompt[0]!.content[1] as { type: string; data: unknown };
      expect(file.type).toBe('file');
      expect(file.data instanceof Uint8Array || typeof file.data === 'string').toBe(true);
      expect(middleware.last()!.summary).toBe(SUMMARY);
    });
  });

  describe('the reply', () => {
    const compactOnce = async (summary: (prompt: Message[], index: number) => unknown, window = 200_000) => {
      const log = recordingLogger();
      const scripted = scriptedModel({ summary });
      const middleware = compaction({ contextWindow: window, logger: log.logger });
      middleware.compactNext();
      const prompt = [...chat(2, 50), user('go')];
      const run = wrap(scripted.model, middleware).doGenerate({ prompt });
      return { ...scripted, middleware, log, prompt, run };
    };

    it('should drop <think> blocks and reasoning parts', async () => {
      const { middleware, run } = await compactOnce(() => ({
        content: [
          { type: 'reasoning', text: 'private reasoning' },
          { type: 'text', text: `<think>hidden plan</think>\n${SUMMARY}` },
        ],
        finishReason: finish('stop'),
        usage: usage(100, 100),
        warnings: [],
      }));
      await run;
      expect(middleware.last()!.summary).toBe(SUMMARY);
    });

    it('should remind once when no heading appears, then accept the summary', async () => {
      const { middleware, run, summaryCalls } = await compactOnce((_prompt, index) =>
        index === 0 ? textResult('Here is what happened: we fixed things.') : undefined,
      );
      await run;
      expect(summaryCalls()).toHaveLength(2);
      const reminder = textOf(summaryCalls()[1]!.prompt.at(-1));
      expect(reminder.startsWith('The previous response did not fill in the required summary template')).toBe(true);
      expect(middleware.last()!.summary).toBe(SUMMARY);
    });

    it.each([
      ['a second reply without headings', () => textResult('still no template'), 'template-missing'],
      ['a reply cut at the output limit', () => ({ ...textResult(SUMMARY), finishReason: finish('length') }), 'output-limit'],
      ['a refused reply', () => ({ ...textResult(''), finishReason: finish('content-filter') }), 'refused'],
      ['an empty reply', () => textResult('   '), 'empty'],
    ])('should fail the compaction on %s and send the step unchanged', async (_name, reply, reason) => {
      const { middleware, run, stepCalls, log, prompt } = await compactOnce(reply);
      await run;
      expect(middleware.last()).toBeUndefined();
      expect(stepCalls()[0]!.prompt).toEqual(prompt);
      expect(log.warn.some((line) => line.includes(`(${reason})`))).toBe(true);
      expect(log.info).toHaveLength(0);
    });

    it('should throw a CompactionError when the failed step does not fit the window', async () => {
      const log = recordingLogger();
      const scripted = scriptedModel({ summary: () => textResult('no template') });
      const middleware = compaction({ contextWindow: 20_000, logger: log.logger });
      const prompt = [user(tokens(10_000)), assistant(tokens(10_001, 'a')), user('go')];
      const error = await wrap(scripted.model, middleware).doGenerate({ prompt }).catch((caught: unknown) => caught);
      expect(CompactionError.isInstance(error)).toBe(true);
      expect((error as CompactionError).reason).toBe('template-missing');
      expect(scripted.stepCalls()).toHaveLength(0);
      expect(log.warn.some((line) => line.includes('(template-missing)'))).toBe(true);
    });

    it('should store nothing when a compaction fails, so a later step tries again once grown by a tenth of the ceiling', async () => {
      const scripted = scriptedModel({ summary: (_prompt, index) => (index < 2 ? textResult('nope') : undefined) });
      const middleware = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(scripted.model, middleware);
      const prompt = [user(tokens(85_000)), assistant(tokens(85_000, 'a')), user('go')];
      await wrapped.doGenerate({ prompt });
      expect(middleware.last()).toBeUndefined();
      // Grown by less than 17,000 (a tenth of the 170,000 ceiling): held (docs/design.md, "No
      // progress").
      await wrapped.doGenerate({ prompt: [...prompt, assistant('x'), user('y')] });
      expect(scripted.summaryCalls()).toHaveLength(2);
      await wrapped.doGenerate({ prompt: [...prompt, assistant('x'), user('y'), assistant('ok'), user(tokens(17_000, 'b'))] });
      expect(scripted.summaryCalls()).toHaveLength(3);
      expect(middleware.last()!.reason).toBe('auto');
      expect(scripted.stepCalls()[0]!.prompt).toEqual(prompt);
    });
  });

  describe('checkpoints', () => {
    it('should update the previous checkpoint at the next compaction', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(scripted.model, middleware);
      const first = [...chat(2, 50), user('one')];
      middleware.compactNext();
      await wrapped.doGenerate({ prompt: first });
      const second = [...first, assistant('done one'), user('two')];
      middleware.compactNext();
      await wrapped.doGenerate({ prompt: second });

      const update = scripted.summaryCalls()[1]!;
      expect(textOf(update.prompt.at(-1))).toBe(UPDATE_PROMPT);
      expect(textOf(update.prompt[0])).toBe(checkpointText(SUMMARY, firstRecord(first)));
      expect(update.prompt.slice(1, -1)).toEqual([user('one'), assistant('done one')]);
      expect(middleware.last()!.messagesCovered).toBe(6);
      expect(scripted.stepCalls()[1]!.prompt).toEqual([
        { role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, middleware.last()!.record) }] },
        user('two'),
      ]);
    });

    it('should keep sending the checkpoint on later steps without another summary', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(scripted.model, middleware);
      const first = [...chat(2, 50), user('one')];
      middleware.compactNext();
      await wrapped.doGenerate({ prompt: first });
      const later = [...first, assistant('answer'), user('again')];
      await wrapped.doGenerate({ prompt: later });
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(scripted.stepCalls()[1]!.prompt).toEqual([
        { role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, middleware.last()!.record) }] },
        user('one'),
        assistant('answer'),
        user('again'),
      ]);
    });

    it('should never change the messages the caller holds', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000 });
      const prompt = [system('s'), ...chat(3, 50), user('go')];
      const copy = structuredClone(prompt);
      middleware.compactNext();
      await wrap(scripted.model, middleware).doGenerate({ prompt });
      expect(prompt).toEqual(copy);
    });
  });
});

function firstRecord(messages: Message[]): string {
  // chat(2, 50) + user('one'): two exchanges plus the trailing user; all fit in keep, so the record
  // is the latest covered exchange (the second question and answer), opened with the user's first
  // question, which it does not hold otherwise (docs/design.md, "The user's words").
  const [first, , question, answer] = messages;
  return withUserWords([`[User]: ${textOf(first)}`], `[User]: ${textOf(question)}\n\n[Assistant]: ${textOf(answer)}`);
}
