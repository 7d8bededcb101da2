import { APICallError } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompactionError, compaction } from '../../../src';
import type { CallOptions, Message } from '../../../src/prompt/types';
import { UNTAUGHT_CHARS_PER_TOKEN, denseTokens, estimatePrompt } from '../../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, isSummaryPrompt, textResult, usage } from '../../support/models';
import { system, toolCall, toolResult, user, assistant, wrap } from '../../support/harness';

// The first step of a model (docs/design.md, "The size of a prompt"): before the model has any
// count, a prompt of code and JSON runs at 2.6 to 3 characters a token, not 4. Whatever the
// conversation and the window, no prompt the middleware lets out on its own exceeds the window by
// a provider that counts 3 characters a token; the provider here rejects any prompt over its window
// (a summary request too), as one would.

/** What the provider counts: every character of text at 3 characters a token. */
const counted = (params: CallOptions) => estimatePrompt(params.prompt, params.tools, { charsPerToken: 3 });

/** A provider with a window of `window` tokens, whose summaries fail when `failing`. */
function provider(window: number, failing: boolean) {
  const steps: number[] = [];
  const model = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => {
      const tokens = counted(params);
      const summary = isSummaryPrompt(params.prompt);
      if (!summary) steps.push(tokens);
      if (tokens > window) {
        throw new APICallError({
          message: `prompt is too long: ${tokens} tokens > ${window} maximum`,
          url: 'https://api.example.com/v1/messages',
          requestBodyValues: {},
          statusCode: 400,
          responseBody: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${window} maximum` } }),
          isRetryable: false,
        });
      }
      if (summary) {
        if (failing) throw new Error('summarizer outage');
        return textResult(SUMMARY, tokens, 200);
      }
      return { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(tokens, 10), warnings: [] };
    },
  });
  return { model, steps };
}

/**
 * Code and JSON as a file read returns them: pieces a third or more of whose characters are not
 * letters or whitespace, which a provider counts at about 3 characters a token.
 */
const code = (length: number) =>
  fc
    .array(fc.constantFrom('{"id":42}', 'f(a,b);', '[0,1,2]', 'x=>y', 'a.b', 'if(x){', '}\n', '"k": 7,', '// x\n', 'i++;'), { minLength: 1, maxLength: 8 })
    .map((pieces) => {
      const unit = pieces.join('');
      return unit.repeat(Math.floor(length / unit.length) + 1);
    });

/** A tool loop of code: a system prompt, then exchanges whose tool calls read files. */
const conversation = fc
  .record({
    systemChars: fc.integer({ min: 0, max: 40_000 }),
    exchanges: fc.array(fc.record({ ask: fc.integer({ min: 1, max: 2_000 }), output: fc.integer({ min: 0, max: 60_000 }) }), { minLength: 1, maxLength: 6 }),
  })
  .chain(({ systemChars, exchanges }) =>
    fc.tuple(code(systemChars), fc.tuple(...exchanges.map(({ ask, output }) => fc.tuple(code(ask), code(output), code(20))))),
  )
  .map(([systemText, exchanges]) => {
    const messages: Message[] = systemText === '' ? [] : [system(systemText)];
    exchanges.forEach(([ask, output, reply], index) => {
      messages.push(user(ask), toolCall(`c${index}`, 'x:y', { path: `s/${index}.ts` }), toolResult(`c${index}`, 'x:y', output), assistant(reply));
    });
    return [...messages, user('{go();}')];
  });

describe('the first step of a model without counts', () => {
  it('should take letters and whitespace at 4 characters a token and every other character at 2', () => {
    expect(UNTAUGHT_CHARS_PER_TOKEN).toEqual({ plain: 4, other: 2 });
    expect(denseTokens('word '.repeat(100))).toBe(125);
    // JSON: 9 letters and 15 others in 24 characters, 2.5 characters a token (4 would say 6 tokens).
    expect(denseTokens('{"path":"a/b.ts","n":12}')).toBe(9 / 4 + 15 / 2);
    expect(denseTokens('')).toBe(0);
  });

  it('should let out no prompt over the window by a provider counting 3 characters a token, whatever the conversation and window', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, fc.integer({ min: 4_000, max: 64_000 }), fc.boolean(), async (prompt, window, failing) => {
        const { model, steps } = provider(window, failing);
        const middleware = compaction({ contextWindow: window, prepare: false });
        try {
          await wrap(model, middleware).doGenerate({ prompt });
        } catch (error) {
          // A compaction that cannot bring the prompt under the window refuses the step: nothing went out.
          if (!CompactionError.isInstance(error) && !APICallError.isInstance(error)) throw error;
        }
        // The first attempt of each step (overflow recovery sends a second): never over the window.
        expect(steps[0] === undefined || steps[0] <= window).toBe(true);
      }),
      { numRuns: 200, seed: 44 },
    );
  });
});
