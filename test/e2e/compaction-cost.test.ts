// What compaction costs, end to end (docs/observability.md): a 120-step tool loop through the real
// `@ai-sdk/openai` chat client against the local provider server, in a 32,000-token window. With
// `prepare: 0.95` some compactions are prepared in the background and some made at the step that
// reaches the ceiling. The `usage` of every compaction, summed over `onCompaction`, must be exactly
// what the server counted for the summary requests it answered: requests, prompt tokens, tokens read
// from its prompt cache, output tokens. The server counts with its own tokenizer (gpt-tokenizer), not
// the middleware's estimate, so the two sides are counted apart.
import { createOpenAI } from '@ai-sdk/openai';
import * as ai from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { type CompactionRecord, compaction } from '../../src';
import { type ProviderServer, startProviderServer } from '../support/provider-server/index';
import { isSummary, projectTools } from './scenario';

const WINDOW = 32_000;
const STEPS = 120;

let server: ProviderServer | undefined;
afterAll(async () => {
  await server?.close();
});

describe('the usage of compactions over a run', () => {
  it(
    'should sum to what the provider counted for the summary requests, prepared ones included',
    async () => {
      server = await startProviderServer({ contextWindow: WINDOW, seed: 1, agent: { toolCallsPerTurn: 100_000 }, keepBodies: 100_000 });
      const records: CompactionRecord[] = [];
      const background: Promise<unknown>[] = [];
      const middleware = compaction({
        contextWindow: WINDOW,
        prepare: 0.95,
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

      // Several compactions, made both ways: in the background and sent later, and at the step.
      expect(records.filter((record) => record.prepared === true).length).toBeGreaterThanOrEqual(2);
      expect(records.filter((record) => record.prepared !== true).length).toBeGreaterThanOrEqual(2);
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
      // Waiting for the model is measured, in whole milliseconds.
      expect(records.every((record) => Number.isInteger(record.usage.durationMs) && record.usage.durationMs >= 0)).toBe(true);
    },
    240_000,
  );
});
