import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { compaction } from '../../../src';
import type { CallOptions } from '../../../src/prompt/types';
import { estimatePrompt } from '../../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, isSummaryPrompt, textResult } from '../../support/models';
import { assistant, recordingLogger, system, user, wrap } from '../../support/harness';

const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);

function overflowError(limit: number, sent: number) {
  const message = `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${sent} tokens. Please reduce the length of the messages.`;
  const body = { error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } };
  return new APICallError({ message, url: 'https://api.openai.com/v1/chat/completions', requestBodyValues: {}, statusCode: 400, responseHeaders: {}, responseBody: JSON.stringify(body), data: body, isRetryable: false });
}

/**
 * A provider that reports 5 input tokens for every step (a proxy that counts only what it did not
 * cache, a broken gateway), and whose real window, `limit`, rejects a prompt whose 4-chars estimate
 * is over it, stating both.
 */
function fiveTokenProvider(limit = 20_000) {
  const steps: number[] = [];
  let summaries = 0;
  const model = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => {
      if (isSummaryPrompt(params.prompt)) {
        summaries++;
        return textResult(SUMMARY, 5, 200);
      }
      const estimate = estimatePrompt(params.prompt, params.tools);
      steps.push(estimate);
      if (estimate > limit) throw overflowError(limit, estimate);
      return textResult('ok', 5, 10);
    },
  });
  return { model, steps, summaries: () => summaries };
}

// docs/design.md, "The size of a prompt": a count that cannot be right is not the baseline.
describe('a provider count that cannot be right', () => {
  it('leaves the estimate in force: 5 input tokens never stop compaction, and the log says so once per model', async () => {
    const provider = fiveTokenProvider();
    const { warn, logger } = recordingLogger();
    const middleware = compaction({ contextWindow: 20_000, logger });
    const wrapped = wrap(provider.model, middleware);
    // About 12,000 tokens by estimate: under the ceiling of 17,000.
    const prompt = [user(tokens(6_000)), assistant(tokens(6_000, 'a')), user('go')];
    await wrapped.doGenerate({ prompt });
    expect(provider.summaries()).toBe(0);
    // About 18,000 by estimate: over the ceiling, whatever the provider said of the last step.
    const longer = [...prompt, assistant(tokens(3_000, 'b')), user(tokens(3_000, 'c'))];
    await wrapped.doGenerate({ prompt: longer });
    expect(provider.summaries()).toBe(1);
    expect(middleware.last()!.tokensBefore).toBeGreaterThanOrEqual(17_000);
    expect(Math.max(...provider.steps)).toBeLessThanOrEqual(17_000);
    await wrapped.doGenerate({ prompt: [...longer, assistant('done'), user('next')] });
    const said = warn.filter((line) => line.includes('cannot be right'));
    expect(said).toEqual([
      expect.stringMatching(/^ai-compaction: the provider counted 5 input tokens for a prompt of mock-provider:mock-model-id estimated at \d+; a count that cannot be right is not the baseline: the estimate stays in force for its steps$/),
    ]);
  });

  it('never rescales the window by it: the overflow of a prompt counted at 5 tokens compacts against the window the provider states', async () => {
    const provider = fiveTokenProvider();
    // No window: only the provider's overflow compacts.
    const middleware = compaction({ logger: recordingLogger().logger });
    const wrapped = wrap(provider.model, middleware);
    const prompt = [system('You are terse.'), user(tokens(8_000)), assistant(tokens(8_000, 'a')), user('go')];
    await wrapped.doGenerate({ prompt });
    // About 21,000 tokens: the provider rejects it, stating its window of 20,000.
    const longer = [...prompt, assistant(tokens(2_500, 'b')), user(tokens(2_500, 'c'))];
    await expect(wrapped.doGenerate({ prompt: longer })).resolves.toBeDefined();
    expect(middleware.last()!.reason).toBe('overflow');
    expect(provider.steps.at(-1)!).toBeLessThanOrEqual(20_000);
  });
});
