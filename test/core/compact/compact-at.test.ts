import { describe, expect, it } from 'vitest';
import { type CompactionRecord, compaction, compactionOf } from '../../../src';
import type { Message } from '../../../src/prompt/types';
import { assistant, filler, recordingLogger, scriptedModel, user, wrap } from '../../support/harness';

// compactAt (docs/design.md, "Compaction timed by what it costs") through the middleware: a chat
// growing 2,000 estimated tokens a step in a 200,000 window (ceiling 170,000).

const OPENAI = { cachedInput: 0.1, cacheWrite: 1, output: 8, cacheTtl: 300_000 };

/** A clock that moves only when told: a step's time as a number. */
function countedClock() {
  let time = 1_000_000;
  return { now: () => time, sleep: async () => undefined, pass: (ms: number) => void (time += ms) };
}

async function converse(options: Record<string, unknown>, steps: number, pause?: (step: number) => number) {
  const log = recordingLogger();
  const records: CompactionRecord[] = [];
  const scripted = scriptedModel();
  const clock = countedClock();
  const middleware = compaction({ contextWindow: 200_000, prepare: false, logger: log.logger, onCompaction: (record: CompactionRecord) => void records.push(record), ...options, ...(pause === undefined ? {} : { [Symbol.for('ai-compaction.clock')]: clock }) } as never);
  const model = wrap(scripted.model, middleware);
  const conversation: Message[] = [user('Answer every question.')];
  const at: number[] = [];
  const metadata: unknown[] = [];
  const parts: unknown[] = [];
  for (let step = 0; step < steps; step++) {
    clock.pass(pause?.(step) ?? 0);
    const result = (await model.doGenerate({ prompt: conversation })) as { providerMetadata?: unknown; content: { type: string; toolName?: string; result?: unknown }[] };
    if (compactionOf(result.providerMetadata) !== undefined) {
      metadata.push(compactionOf(result.providerMetadata));
      at.push(step);
    }
    const part = result.content.find((item) => item.type === 'tool-result' && item.toolName === 'compaction');
    if (part !== undefined) parts.push(part.result);
    conversation.push(assistant(filler(1_000, `a${step}`)), user(filler(1_000, `u${step}`)));
  }
  return { log, records, metadata, parts, middleware, at };
}

describe('compactAt', () => {
  it("should compact under the ceiling where it costs least, and say what it expected to save", async () => {
    const { log, records, metadata, parts, middleware } = await converse({ pricing: OPENAI }, 150);
    expect(records.length).toBeGreaterThanOrEqual(2);
    const [first] = records;
    expect(first!.rule).toBe('cost');
    expect(first!.tokensBefore).toBeLessThan(170_000);
    expect(typeof first!.expectedSaving).toBe('number');
    expect(log.info[0]).toContain(`(auto, rule cost): ${first!.tokensBefore} -> ${first!.tokensAfter} estimated tokens;`);
    expect(log.info[0]).toContain(`; expected to save ${first!.expectedSaving} input-price tokens`);
    expect(metadata[0]).toMatchObject({ rule: 'cost', expectedSaving: first!.expectedSaving });
    expect(parts[0]).toEqual({ trigger: 'auto', reason: 'auto', rule: 'cost', summary: first!.summary, tokensBefore: first!.tokensBefore, tokensAfter: first!.tokensAfter, expectedSaving: first!.expectedSaving });
    expect(middleware.last()!.expectedSaving).toBe(records.at(-1)!.expectedSaving);
    expect(log.info.join('\n')).not.toContain('no prices known');
  });

  it("should compact at the ceiling with 'ceiling', prices known or not", async () => {
    const { records } = await converse({ pricing: OPENAI, compactAt: 'ceiling' }, 150);
    expect(records.length).toBeGreaterThanOrEqual(1);
    expect(records[0]!.rule).toBe('ceiling');
    expect(records[0]!.tokensBefore).toBeGreaterThanOrEqual(170_000);
  });

  it('should compact at a fixed share of the ceiling: 0.5 of 170,000', async () => {
    const { records } = await converse({ compactAt: 0.5 }, 100);
    expect(records[0]!.rule).toBe('cost');
    expect(records[0]!.tokensBefore).toBeGreaterThanOrEqual(85_000);
    expect(records[0]!.tokensBefore).toBeLessThan(87_100);
  });

  it('should compact at the ceiling without prices, and say so once, naming pricing', async () => {
    const { log, records } = await converse({}, 200);
    expect(records.length).toBeGreaterThanOrEqual(2);
    expect(records[0]!.rule).toBe('ceiling');
    expect(records[0]!.expectedSaving).toBeUndefined();
    const said = log.info.filter((line) => line.includes("no prices known for mock-provider:mock-model-id (compactAt 'cost' needs them: give the option pricing)"));
    expect(said).toHaveLength(1);
    expect(log.info[0]).toBe(said[0]);
  });
});

describe('a cold cache', () => {
  // A window of 100,000 (ceiling 85,000) and compactAt 1: the trigger at the ceiling, the band of
  // prepare 0.8 at 68,000; a step every 20 s (the clock moves only between steps: no summary
  // deadline, which it would pass at once). Under a trigger below the ceiling nothing is prepared in
  // the band (docs/design.md, "Preparing ahead"), so nothing is ready there before the step ahead
  // of the trigger.
  const options = { contextWindow: 100_000, compactAt: 1, prepare: 0.8, summaryTimeout: false, pricing: { cachedInput: 0.1, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 } };

  it('should send the ready checkpoint on the step after a pause longer than the cache lifetime, the prompt over half its trigger', async () => {
    // step 34 (about 69,000 tokens) prepares; step 36 comes after 300,001 ms
    const { records, at } = await converse(options, 38, (step) => (step === 36 ? 300_001 : 20_000));
    expect(records[0]).toMatchObject({ rule: 'cold-cache', prepared: true });
    expect(at[0]).toBe(36);
    expect(records[0]!.tokensBefore).toBeLessThan(85_000);
    expect(records[0]!.tokensBefore).toBeGreaterThan(42_500);
  });

  it('should hold it back after a pause of exactly the cache lifetime', async () => {
    const { records } = await converse(options, 38, (step) => (step === 36 ? 300_000 : 20_000));
    expect(records).toHaveLength(0);
  });

  it('should find nothing ready half way under a trigger below the ceiling: the checkpoint is prepared one step ahead of it', async () => {
    // compactAt 0.5 of a 200,000 window: the trigger at 85,000, under the ceiling of 170,000.
    const { records } = await converse({ ...options, contextWindow: 200_000, compactAt: 0.5 }, 38, (step) => (step === 36 ? 300_001 : 20_000));
    expect(records).toHaveLength(0);
  });

  it("should not with compactAt 'ceiling', which keeps compacting at the ceiling only", async () => {
    const { records } = await converse({ ...options, compactAt: 'ceiling' }, 38, (step) => (step === 36 ? 3_600_000 : 20_000));
    expect(records).toHaveLength(0);
  });
});
