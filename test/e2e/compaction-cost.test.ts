// What compaction costs, end to end (docs/observability.md): a 120-step tool loop through the real
// `@ai-sdk/openai` chat client against the local provider server, in a 32,000-token window, with
// every compaction prepared in the background (`prepare: 0.95`), and with every one made at the step
// that reaches the ceiling (`prepare: false`). The `usage` of every compaction, summed over `onCompaction`, must be exactly
// what the server counted for the summary requests it answered: requests, prompt tokens, tokens read
// from its prompt cache, output tokens. The server counts with its own tokenizer (gpt-tokenizer), not
// the middleware's estimate, so the two sides are counted apart.
import { createOpenAI } from '@ai-sdk/openai';
import * as ai from 'ai';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type CompactionRecord, compaction } from '../../src';
import { realClock } from '../../src/clock';
import { type ProviderServer, startProviderServer } from '../support/provider-server/index';
import { isSummary, projectTools } from './scenario';

const WINDOW = 32_000;
const STEPS = 120;

let server: ProviderServer | undefined;
afterAll(async () => {
  await server?.close();
});

describe('the usage of compactions over a run', () => {
  // The clock stands still (only `Date`): a summary of the local server, measured to take time,
  // would time preparing to it, and this run would depend on how busy the machine is.
  afterEach(() => vi.useRealTimers());
  it.each([
    ['prepared ahead', 0.95],
    ['made at the step', false],
  ] as const)(
    'should sum to what the provider counted for the summary requests, compactions %s',
    async (_how, prepare) => {
      vi.useFakeTimers({ toFake: ['Date'] });
      await server?.close();
      server = await startProviderServer({ contextWindow: WINDOW, seed: 1, agent: { toolCallsPerTurn: 100_000 }, keepBodies: 100_000 });
      const records: CompactionRecord[] = [];
      const background: Promise<unknown>[] = [];
      const middleware = compaction({
        contextWindow: WINDOW,
        prepare,
        // every compaction sent within the run (one prepared and never sent would be in usage() only,
        // checked below): at the ceiling, as the test's schedule assumes, not where it costs least
        compactAt: 'ceiling',
        waitUntil: (promise) => void background.push(promise),
        onCompaction: (record) => void records.push(record),
      });
      const openai = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' });
      const result = await ai.generateText({
        model: ai.wrapLanguageModel({ model: openai.chat('gpt-4.1'), middleware }),
        system: 'You are a careful coding agent working in a TypeScript repository.',
        prompt: 'The test suite is failing. Find out why and tell me how to fix it.',
        tools: projectTools(ai),
        stopWhen: ai.stepCountIs(STEPS),
        maxRetries: 0,
      });
      await Promise.all(background);
      expect(result.steps).toHaveLength(STEPS);

      // Several compactions: every one prepared in the background (the next step's, one step ahead)
      // and sent later, or every one made at the step.
      expect(records.length).toBeGreaterThanOrEqual(4);
      expect(records.filter((record) => record.prepared === true)).toHaveLength(prepare === false ? 0 : records.length);
      expect(records.every((record) => record.kind === 'summary' && record.usage.requests >= 1)).toBe(true);

      const summaries = server.requests.filter(isSummary);
      const answered = summaries.filter((request) => !request.rejected);
      const sum = (values: (number | undefined)[]) => values.reduce<number>((total, value) => total + (value ?? 0), 0);
      const reported = {
        requests: sum(records.map((record) => record.usage.requests)),
        inputTokens: sum(records.map((record) => record.usage.inputTokens)),
        cachedInputTokens: sum(records.map((record) => record.usage.cachedInputTokens)),
        outputTokens: sum(records.map((record) => record.usage.outputTokens)),
      };
      const counted = {
        requests: summaries.length,
        inputTokens: sum(answered.map((request) => request.promptTokens)),
        cachedInputTokens: sum(answered.map((request) => request.cachedTokens)),
        outputTokens: sum(answered.map((request) => request.outputTokens)),
      };
      expect(counted.requests).toBeGreaterThanOrEqual(records.length);
      expect(counted.cachedInputTokens).toBeGreaterThan(0);
      expect(reported).toEqual(counted);
      // usage(): every request the instance made, as the server counted them.
      const { durationMs, ...totals } = middleware.usage();
      expect(totals).toEqual(counted);
      expect(durationMs).toBe(sum(records.map((record) => record.usage.durationMs)));
      // Waiting for the model is measured, in whole milliseconds.
      expect(records.every((record) => Number.isInteger(record.usage.durationMs) && record.usage.durationMs >= 0)).toBe(true);
    },
    240_000,
  );

  /** A tool loop against the local server: what the instance reported (`usage()`, its records) and what the server counted for summary requests. */
  async function loop(options: Parameters<typeof compaction>[0], stop: (state: { started: number; sent: number; step: number }) => boolean, summarizer?: ai.LanguageModelMiddleware) {
    await server?.close();
    server = await startProviderServer({ contextWindow: WINDOW, seed: 1, agent: { toolCallsPerTurn: 100_000 }, keepBodies: 100_000 });
    const records: CompactionRecord[] = [];
    const background: Promise<unknown>[] = [];
    const openai = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' });
    const middleware = compaction({
      contextWindow: WINDOW,
      waitUntil: (promise) => void background.push(promise),
      onCompaction: (record) => void records.push(record),
      ...(summarizer === undefined ? {} : { summarizer: ai.wrapLanguageModel({ model: openai.chat('gpt-4.1'), middleware: summarizer }) }),
      ...options,
    });
    await ai.generateText({
      model: ai.wrapLanguageModel({ model: openai.chat('gpt-4.1'), middleware }),
      system: 'You are a careful coding agent working in a TypeScript repository.',
      prompt: 'The test suite is failing. Find out why and tell me how to fix it.',
      tools: projectTools(ai),
      stopWhen: ({ steps }) => steps.length >= STEPS || stop({ started: background.length, sent: records.filter((record) => record.prepared === true).length, step: steps.length }),
      maxRetries: 0,
    });
    await Promise.all(background);
    const summaries = server.requests.filter(isSummary);
    const answered = summaries.filter((request) => !request.rejected);
    const sum = (values: (number | undefined)[]) => values.reduce<number>((total, value) => total + (value ?? 0), 0);
    const counted = {
      requests: summaries.length,
      inputTokens: sum(answered.map((request) => request.promptTokens)),
      cachedInputTokens: sum(answered.map((request) => request.cachedTokens)),
      outputTokens: sum(answered.map((request) => request.outputTokens)),
    };
    const { durationMs: _durationMs, ...totals } = middleware.usage();
    const onRecords = sum(records.map((record) => record.usage.requests));
    return { records, counted, totals, onRecords, started: background.length };
  }

  it('should count a checkpoint prepared in the background and never sent: usage() equals the server, the records do not', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // The loop ends once a preparation was started and not yet sent: the conversation ends before its ceiling.
    const run = await loop({ prepare: 0.8 }, ({ started, sent }) => started > sent);
    expect(run.started).toBeGreaterThanOrEqual(1);
    expect(run.totals).toEqual(run.counted);
    expect(run.onRecords).toBe(run.counted.requests - 1);
  }, 240_000);

  it('should count the summary requests of compactions that failed: usage() equals the server', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // The first three summaries come back empty (the provider answered and billed them): those compactions fail.
    let summaries = 0;
    const emptyFirst: ai.LanguageModelMiddleware = {
      specificationVersion: 'v3',
      wrapGenerate: async ({ doGenerate }) => {
        const result = await doGenerate();
        return ++summaries <= 3 ? { ...result, content: [] } : result;
      },
    };
    const run = await loop({ prepare: false }, () => false, emptyFirst);
    expect(summaries).toBeGreaterThan(3);
    expect(run.records.length).toBeGreaterThanOrEqual(1);
    expect(run.totals).toEqual(run.counted);
    expect(run.onRecords).toBe(run.counted.requests - 3);
  }, 240_000);

  it('should count a catch-up like every other request: usage() and the records equal the server', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // Under a trigger at 0.7 of the ceiling (11,200 of 16,000), the first summary (begun one step
    // ahead of the trigger, at 9,754 tokens) is held until the step at the window's ceiling waits
    // for it (the middleware's second sleep: the first is that summary's deadline); the steps over
    // the trigger go out whole meanwhile. That step sends it with every step since 9,754 live after
    // it, over the budget, and a catch-up follows. (Under the default cost trigger this loop sends
    // each checkpoint the step after it is ready, before a catch-up is needed.)
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let sleeps = 0;
    const clock = { now: () => 0, sleep: (ms: number, signal?: AbortSignal) => (++sleeps === 2 && release(), realClock.sleep(ms, signal)) };
    let first = true;
    const holdFirst: ai.LanguageModelMiddleware = {
      specificationVersion: 'v3',
      wrapGenerate: async ({ doGenerate }) => {
        if (first) {
          first = false;
          await held;
        }
        return doGenerate();
      },
    };
    const run = await loop({ prepare: 0.5, compactAt: 0.7, [Symbol.for('ai-compaction.clock')]: clock } as Parameters<typeof compaction>[0], () => false, holdFirst);
    expect(run.records.some((record) => record.rule === 'catch-up')).toBe(true);
    expect(run.totals).toEqual(run.counted);
  }, 240_000);
});
