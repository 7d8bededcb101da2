import { describe, expect, it } from 'vitest';
import { type CompactionRecord, compaction, memoryStore } from '../../../src';
import type { Message } from '../../../src/prompt/types';
import { estimatePrompt } from '../../../src/sizing/estimate';
import { scriptedModel, toolCall, toolResult, wrap } from '../../support/harness';
import { usage } from '../../support/models';
import { tokens } from '../../support/prepare-fixtures';

// Instances decide alike (docs/design.md, "The policy"): what the policy reads of a conversation (its
// pace, its summaries' times, what is being prepared) is in the store every instance reads, so a
// conversation whose steps alternate between two instances sharing a store is decided step for
// step as one instance decides it. Time is a clock handed in: each step comes 5 s after the one
// before, and a summary takes 14 s, so preparing is timed to the summary (docs/design.md,
// "Preparing ahead").

const WINDOW = 20_000;
const STEPS = 160;

/** One run of a tool loop (a 400-token result a step) over `instances` instances sharing one store, step `i` to instance `i % instances`. */
async function run(instances: number) {
  let now = 0;
  const clock = { now: () => now, sleep: () => new Promise<void>(() => {}) };
  const store = memoryStore();
  const records: { step: number; record: CompactionRecord }[] = [];
  const background: Promise<unknown>[] = [];
  let step = 0;
  const middlewares = Array.from({ length: instances }, () =>
    compaction({
      contextWindow: WINDOW,
      store,
      waitUntil: (work) => void background.push(work),
      onCompaction: (record) => void records.push({ step, record }),
      [Symbol.for('ai-compaction.clock')]: clock,
    } as Parameters<typeof compaction>[0]),
  );
  const summaries: number[] = [];
  const scripted = scriptedModel({
    summary: () => {
      summaries.push(step);
      now += 14_000;
      return undefined;
    },
    reply: (prompt) => ({ content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(estimatePrompt(prompt), 10), warnings: [] }),
  });
  const conversation: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Fix the build.' }] }];
  for (step = 0; step < STEPS; step++) {
    await wrap(scripted.model, middlewares[step % instances]).doGenerate({ prompt: [{ role: 'system', content: 'You are a coding agent.' }, ...conversation] });
    await Promise.all(background);
    conversation.push(toolCall(`c${step}`, 'run', { n: step }), toolResult(`c${step}`, 'run', tokens(400, 'r')));
    now += 5_000;
  }
  return { summaries, compacted: records.map(({ step: at, record }) => [at, record.rule, record.messagesCovered]), total: middlewares.reduce((sum, middleware) => sum + middleware.usage().requests, 0) };
}

describe('instances sharing a store', () => {
  it('should decide a conversation whose steps alternate between two instances as one instance decides it', async () => {
    const one = await run(1);
    const two = await run(2);
    expect(one.compacted.length).toBeGreaterThanOrEqual(3);
    // Timed to the summary: measured at 14 s, steps 5 s apart.
    expect(two.summaries).toEqual(one.summaries);
    expect(two.compacted).toEqual(one.compacted);
    expect(two.total).toBe(one.total);
    expect(one.total).toBe(one.summaries.length);
  });

  it('should decide alike over three instances too', async () => {
    const one = await run(1);
    const three = await run(3);
    expect(three.summaries).toEqual(one.summaries);
    expect(three.compacted).toEqual(one.compacted);
  });
});

