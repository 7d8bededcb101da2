import { describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { type CompactionRecord, compaction } from '../../../src';
import { estimatePrompt } from '../../../src/sizing/estimate';
import { gate, waitWatchingClock } from '../../support/prepare-fixtures';
import { readFileAgent, readFileTools } from '../../support/read-file-agent';

// One summary request a compaction (docs/design.md, "Preparing ahead"): a tool loop of 2,000-token
// steps in a 128,000-token window (ceiling 108,800), compacting where it costs least (`compactAt`
// 'cost', the default, with OpenAI's prices), through the AI SDK's own loop.

const OPENAI = { cachedInput: 0.1, cacheWrite: 1, output: 8, cacheTtl: 300_000 };
const CEILING = 108_800;

interface Hooks {
  /** Runs as the agent is asked for a summary (`index` from 0). */
  summary?: (index: number) => Promise<void> | void;
  /** Runs as step `step` is answered, its prompt `size` estimated tokens. */
  answered?: (step: number, size: number) => void;
  onWait?: () => void;
}

async function loop(mode: 'generateText' | 'streamText', steps: number, { summary, answered, onWait }: Hooks = {}) {
  let step = 0;
  const requested: number[] = [];
  const agent = readFileAgent({
    steps,
    summary: async (index) => {
      // The first step not answered yet when the request came.
      requested.push(step + 1);
      await summary?.(index);
    },
    answered: (at) => {
      step = at;
      answered?.(at, estimatePrompt(agent.prompts[at - 1]!, agent.stepTools[at - 1] as never));
    },
  });
  const clock = waitWatchingClock(onWait);
  const records: { step: number; record: CompactionRecord }[] = [];
  const background: Promise<unknown>[] = [];
  const middleware = compaction({ contextWindow: 128_000, pricing: OPENAI, waitUntil: (work) => void background.push(work), onCompaction: (record) => void records.push({ step: step + 1, record }), ...clock.options });
  const model = wrapLanguageModel({ model: agent.model as never, middleware });
  const options = { model, tools: readFileTools, stopWhen: stepCountIs(steps + 5), system: 'You are a coding agent.', prompt: 'Read every file of the project.' };
  const result = mode === 'generateText' ? await generateText(options) : streamText(options);
  expect(await result.text).toBe(`All ${steps} files read.`);
  await Promise.all(background);
  const sizes = agent.prompts.map((prompt, index) => estimatePrompt(prompt, agent.stepTools[index] as never));
  return { agent, records, requested, sizes, waits: clock.waits(), middleware };
}

describe('one summary request a compaction', () => {
  it('should make one summary request a compaction in a 200-step tool loop, no step waiting', async () => {
    const { agent, records, requested, sizes, waits, middleware } = await loop('generateText', 200);
    // The whole compaction starts one step ahead of the trigger and the next step sends it: 17
    // compactions, 18 requests (the last, beside step 200, comes after the loop's last step).
    // Preparing in the band of the trigger as well made 20 compactions and 39 requests here.
    expect(records).toHaveLength(17);
    expect(agent.summaries()).toBe(18);
    expect(middleware.usage().requests).toBe(18);
    for (const { record } of records) expect(record).toMatchObject({ prepared: true, rule: 'prepared', usage: { requests: 1 } });
    // Each request comes once the step before the one that sends it is answered.
    expect(records.map(({ step }) => step)).toEqual(requested.slice(0, 17));
    expect(waits).toBe(0);
    for (const size of sizes) expect(size).toBeLessThan(CEILING);
  });

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`should make exactly one summary request before the first checkpoint when the summary comes back at 90 % of the ceiling (${mode})`, async () => {
      // The first summary is written only once the agent has answered a step of 97,920 tokens or
      // more (90 % of the ceiling); a step that waits for it lets it go.
      const ninety = gate();
      const { records, requested, sizes, waits } = await loop(mode, 60, {
        summary: async (index) => {
          if (index === 0) await ninety.opened;
        },
        answered: (_step, size) => {
          if (size >= 0.9 * CEILING) ninety.open();
        },
        onWait: () => ninety.open(),
      });
      // Step 52 (102,493 tokens), whose next step reaches the trigger, starts the compaction of its
      // whole conversation; step 53 sends it, and no catch-up follows: one request for the
      // compaction. (Before, step 43 prepared in the band; its checkpoint, held until step 50, went
      // out at step 51 with steps 43 to 50 live after it, 23,507 tokens, and a catch-up followed.)
      expect(requested).toEqual([53]);
      expect(records.map(({ step, record }) => [step, record.rule, record.tokensBefore, record.tokensAfter])).toEqual([[53, 'prepared', 104_513, 17_196]]);
      expect(waits).toBe(0);
      for (const size of sizes) expect(size).toBeLessThan(CEILING);
    });
  }
});

