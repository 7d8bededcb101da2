// A step that cannot go out (docs/design.md, "Failure"): the CompactionError says what fills the
// window, in its message and its fields, and reaches the caller of generateText and of streamText
// (whose results reject with it, not with a bare "No output generated").
import { NoOutputGeneratedError, generateText, streamText, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { CompactionError, compaction } from '../../../src';
import { MockLanguageModel, textResult } from '../../support/models';

/** A system prompt of 3,000 estimated tokens (4 characters a token, 12,000 characters). */
const SYSTEM = 'You are a helpful assistant. '.repeat(400).slice(0, 12_000);

/** A model that answers every step: it is never reached. */
function model() {
  const calls: unknown[] = [];
  const inner = new MockLanguageModel({
    doGenerate: async (params: unknown) => {
      calls.push(params);
      return textResult('ok', 10, 1);
    },
  });
  return { model: wrapLanguageModel({ model: inner as never, middleware: compaction({ contextWindow: 1000 }) }), calls };
}

const EXPECTED =
  'ai-compaction: there is no older conversation to compact; the step cannot go out: its prompt takes about 3001 tokens, over the window of 1000 ' +
  '(compaction starts at 850); its system prompt and tool definitions alone take 3000 tokens, which no compaction makes smaller: shorten them, ' +
  "or check that contextWindow (1000) is the model's real window";

describe('a step that cannot go out', () => {
  it('should throw from generateText a CompactionError naming the sizes and the likely cause, its fields carrying them', async () => {
    const { model: wrapped, calls } = model();
    const error = await generateText({ model: wrapped, system: SYSTEM, prompt: 'hi' }).catch((thrown: unknown) => thrown);
    expect(CompactionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ message: EXPECTED, reason: 'nothing-to-compact', promptTokens: 3001, systemTokens: 3000, ceiling: 850, contextWindow: 1000 });
    expect(calls).toEqual([]);
  });

  it("should reject streamText's text and steps with that CompactionError, and give it to onError", async () => {
    const { model: wrapped, calls } = model();
    const errors: unknown[] = [];
    const result = streamText({ model: wrapped, system: SYSTEM, prompt: 'hi', onError: ({ error }) => void errors.push(error) });
    const text = await Promise.resolve(result.text).catch((thrown: unknown) => thrown);
    expect(CompactionError.isInstance(text)).toBe(true);
    expect((text as Error).message).toBe(EXPECTED);
    // It is a NoOutputGeneratedError too: nothing went out.
    expect(NoOutputGeneratedError.isInstance(text)).toBe(true);
    await expect(Promise.resolve(result.steps)).rejects.toBe(text);
    expect(errors).toEqual([text]);
    expect(calls).toEqual([]);
  });

  it('should name a window too small for the newest turn when the system prompt is small', async () => {
    const { model: wrapped } = model();
    const error = await generateText({ model: wrapped, system: 'Be brief.', prompt: 'x'.repeat(8_000) }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ reason: 'nothing-to-compact', promptTokens: 2003, systemTokens: 3, ceiling: 850, contextWindow: 1000 });
    expect((error as Error).message).toBe(
      'ai-compaction: there is no older conversation to compact; the step cannot go out: its prompt takes about 2003 tokens, over the window of 1000 ' +
        "(compaction starts at 850); the newest turn (kept whole) with the system prompt and tools (3) fills it: check that contextWindow (1000) is the model's real window, or shorten the newest message",
    );
  });
});
