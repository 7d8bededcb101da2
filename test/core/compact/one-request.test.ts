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
    // The whole compaction starts one step ahead of the trigger and the next step sends it: 10
    // compactions, 10 requests (the first at step 56, then every 15 to 19 steps). Preparing in the
    // band of the trigger as well made 20 compactions and 39 requests here (with a compaction's cost
    // counted once in the trigger: "Compaction timed by what it costs").
    expect(records).toHaveLength(10);
    expect(agent.summaries()).toBe(10);
    expect(middleware.usage().requests).toBe(10);
    expect(records.map(({ step }) => step)).toEqual([56, 75, 92, 108, 123, 138, 153, 168, 183, 198]);
    for (const { record } of records) expect(record).toMatchObject({ prepared: true, rule: 'prepared', usage: { requests: 1 } });
    // Each request comes once the step before the one that sends it is answered.
    expect(records.map(({ step }) => step)).toEqual(requested);
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
      // Step 55 (108,519 tokens), whose next step reaches the trigger, starts the compaction of its
      // whole conversation; step 56 sends it, and no catch-up follows: one request for the
      // compaction. (Before, step 43 prepared in the band; its checkpoint, held until step 50, went
      // out at step 51 with steps 43 to 50 live after it, 23,507 tokens, and a catch-up followed.)
      expect(requested).toEqual([56]);
      expect(records.map(({ step, record }) => [step, record.rule, record.tokensBefore, record.tokensAfter])).toEqual([[56, 'prepared', 110_539, 17_208]]);
      expect(waits).toBe(0);
      for (const size of sizes) expect(size).toBeLessThan(CEILING);
    });
  }
});

