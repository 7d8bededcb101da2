import { describe, expect, it } from 'vitest';
import { type Decision, type StepFacts, decideStep } from '../../../src/compact/policy';

// The policy (docs/design.md, "The policy"): one pure decision a step, a table of exact inputs and
// exact actions. Window 20,000 -> ceiling 17,000; `prepare` 0.8 -> the band from 13,600. Time is a
// number handed in.

const CEILING = 17_000;

/** A step under the band, nothing prepared, nothing measured: each row changes what it names. */
function facts(overrides: Partial<StepFacts> = {}): StepFacts {
  return {
    now: 1_000_000,
    auto: true,
    prepare: 0.8,
    manual: false,
    window: 20_000,
    ceiling: CEILING,
    sizeKnown: true,
    size: 10_000,
    counted: 9_000,
    estimated: 1_000,
    denseReach: false,
    held: false,
    olderToCover: true,
    wholeToCover: true,
    clearing: { meets: false, instead: false },
    catchUp: undefined,
    ready: undefined,
    writing: undefined,
    waited: undefined,
    prepared: { live: false, whole: false },
    prepareFrom: 13_600,
    coverWhole: true,
    tailFits: true,
    pace: undefined,
    summaryMs: undefined,
    cachedShare: undefined,
    ...overrides,
  };
}

const ready = (size: number, more: { overBudget?: boolean; longerPreparing?: boolean } = {}) => ({ size, overBudget: more.overBudget ?? false, longerPreparing: more.longerPreparing ?? false });

describe('decideStep: what goes out', () => {
  const rows: [string, Partial<StepFacts>, Decision['step']][] = [
    ['asked to compact (compactNext), whatever its size', { manual: true, size: 100 }, { kind: 'compact', rule: 'manual' }],
    ['auto: false', { auto: false, size: 30_000 }, { kind: 'send', rule: 'auto-off' }],
    ['no window', { window: undefined, ceiling: undefined, size: 300_000 }, { kind: 'send', rule: 'no-window' }],
    ['a ceiling at or below 0', { ceiling: 0 }, { kind: 'send', rule: 'no-window' }],
    ["a provider item's size unknown", { sizeKnown: false, size: 30_000 }, { kind: 'send', rule: 'size-unknown' }],
    ['16,999 tokens: under the ceiling', { size: 16_999 }, { kind: 'send', rule: 'under-ceiling' }],
    ['17,000 tokens: at the ceiling', { size: 17_000 }, { kind: 'compact', rule: 'ceiling' }],
    ['at the ceiling, held', { size: 17_500, held: true }, { kind: 'send', rule: 'held' }],
    ['10,000 tokens, but 19,000 as dense as code before a count (window 20,000 less no reply)', { size: 10_000, denseReach: true }, { kind: 'compact', rule: 'ceiling' }],
    ['at the ceiling, a prepared checkpoint ready with which it is 12,000', { size: 17_500, ready: ready(12_000) }, { kind: 'send-prepared', rule: 'prepared', which: 'ready' }],
    ['at the ceiling, the prepared one leaves 17,000: compacted from it', { size: 18_000, ready: ready(17_000) }, { kind: 'compact', rule: 'from-prepared', from: 'ready' }],
    ['at the ceiling, one being written that could fit: waits until its deadline', { size: 17_500, writing: { until: 1_120_000, couldFit: true } }, { kind: 'wait', rule: 'being-written', until: 1_120_000 }],
    ['the same, with clearing alone enough to go under the ceiling', { size: 17_500, writing: { until: 1_120_000, couldFit: true }, clearing: { meets: false, instead: true } }, { kind: 'clear', rule: 'clear-instead' }],
    ['at the ceiling, one being written that could not fit: compacts now', { size: 17_500, writing: { until: 1_120_000, couldFit: false } }, { kind: 'compact', rule: 'ceiling' }],
    ['waited, and its deadline passed: goes on as after a failed compaction', { size: 17_500, writing: { until: 1_120_000, couldFit: true }, waited: 'deadline' }, { kind: 'give-up', rule: 'summary-failed' }],
    ['waited, and its writer failed: compacts now, once', { size: 17_500, writing: { until: 1_120_000, couldFit: true }, waited: 'failed' }, { kind: 'compact', rule: 'ceiling' }],
    ['waited, and it came: sent', { size: 17_500, waited: 'made', ready: ready(12_000) }, { kind: 'send-prepared', rule: 'prepared', which: 'ready' }],
    ['under the ceiling, a catch-up ready that lowers the prompt', { size: 15_000, catchUp: ready(12_000) }, { kind: 'send-prepared', rule: 'catch-up', which: 'catch-up' }],
    ['under the ceiling, a catch-up that would not lower it', { size: 15_000, catchUp: ready(15_000) }, { kind: 'send', rule: 'under-ceiling' }],
    ['over the ceiling even with the catch-up: compacted from it, holds or not', { size: 19_000, held: true, catchUp: ready(17_200) }, { kind: 'compact', rule: 'from-prepared', from: 'catch-up' }],
    ['at the ceiling, clearing old tool outputs enough', { size: 17_000, clearing: { meets: true, instead: true } }, { kind: 'clear', rule: 'clear' }],
    // compactAt: the trigger below the ceiling is where the step compacts (docs/design.md, "Compaction timed by what it costs")
    ['12,000 tokens, the trigger at 12,000, prepare: false: compacts where it costs least', { size: 12_000, trigger: 12_000, prepare: false }, { kind: 'compact', rule: 'cost' }],
    // under the window's ceiling the step fits whole: it goes out while its compaction is written (docs/design.md, "Preparing ahead")
    ['12,000 tokens, the trigger at 12,000: goes out whole, its compaction prepared beside it', { size: 12_000, trigger: 12_000 }, { kind: 'send', rule: 'over-trigger' }],
    ['12,500 tokens, the trigger at 12,000, its summary being written', { size: 12_500, trigger: 12_000, writing: { until: 1_120_000, couldFit: true } }, { kind: 'send', rule: 'over-trigger' }],
    ['12,500 tokens, the trigger at 12,000, one prepared already that is not ready (failed): compacts now', { size: 12_500, trigger: 12_000, prepared: { live: true, whole: true } }, { kind: 'compact', rule: 'cost' }],
    ['12,500 tokens, the trigger at 12,000, clearing alone would do: clears', { size: 12_500, trigger: 12_000, clearing: { meets: true, instead: true } }, { kind: 'clear', rule: 'clear' }],
    ['11,999 tokens, the trigger at 12,000', { size: 11_999, trigger: 12_000 }, { kind: 'send', rule: 'under-ceiling' }],
    ['at the trigger, a prepared checkpoint ready with which it is 5,000', { size: 12_500, trigger: 12_000, ready: ready(5_000) }, { kind: 'send-prepared', rule: 'prepared', which: 'ready' }],
    ['a trigger above the ceiling: the ceiling bounds it', { size: 17_000, trigger: 20_000 }, { kind: 'compact', rule: 'ceiling' }],
    ['over the ceiling with a trigger under it: the ceiling decided', { size: 17_500, trigger: 12_000 }, { kind: 'compact', rule: 'ceiling' }],
    // a cold cache: the pause before the step outlived the provider's cache
    ['a cold cache, 6,001 tokens (over half the trigger of 12,000), a checkpoint ready', { size: 6_001, trigger: 12_000, cold: true, ready: ready(3_000) }, { kind: 'send-prepared', rule: 'cold-cache', which: 'ready' }],
    ['a cold cache, 8,500 tokens: half the ceiling, not over it', { size: 8_500, cold: true, ready: ready(3_000) }, { kind: 'send', rule: 'under-ceiling' }],
    ['a cold cache, nothing ready', { size: 9_000, trigger: 12_000, cold: true }, { kind: 'send', rule: 'under-ceiling' }],
    ['a warm cache, a checkpoint prepared in the band ready under the ceiling: held back', { size: 14_000, ready: ready(3_000) }, { kind: 'send', rule: 'under-ceiling' }],
    // under a trigger below the window's ceiling a checkpoint is prepared only against the trigger: sent once ready, wherever the trigger has moved
    ['a checkpoint ready under a trigger below the ceiling (11,999 of 12,000)', { size: 11_999, trigger: 12_000, ready: ready(3_000) }, { kind: 'send-prepared', rule: 'prepared', which: 'ready' }],
    ['a cold cache, 6,000 tokens (half the trigger), a checkpoint ready under it', { size: 6_000, trigger: 12_000, cold: true, ready: ready(3_000) }, { kind: 'send-prepared', rule: 'prepared', which: 'ready' }],
    ['a checkpoint ready under a trigger that does not lower the prompt', { size: 9_000, trigger: 12_000, ready: ready(9_000) }, { kind: 'send', rule: 'under-ceiling' }],
    ['a checkpoint ready under a trigger, a hold stands', { size: 9_000, trigger: 12_000, ready: ready(3_000), held: true }, { kind: 'send', rule: 'under-ceiling' }],
    ['a checkpoint ready under a trigger, preparing off', { size: 9_000, trigger: 12_000, ready: ready(3_000), prepare: false }, { kind: 'send', rule: 'under-ceiling' }],
    ['a cold cache at the ceiling, no trigger: over half the ceiling', { size: 9_000, cold: true, ready: ready(3_000) }, { kind: 'send-prepared', rule: 'cold-cache', which: 'ready' }],
  ];
  for (const [name, given, expected] of rows) {
    it(`should decide ${expected.kind} (${expected.rule}): ${name}`, () => {
      expect(decideStep(facts(given)).step).toEqual(expected);
    });
  }
});

describe('decideStep: what is prepared beside the step', () => {
  // Summaries measured at 14 s; the conversation grows 1,000 tokens a step, a step every 5 s.
  const measured = { summaryMs: 14_000, pace: { growth: 1_000, meanGrowth: 1_000, meanInterval: 5_000 } };
  const rows: [string, Partial<StepFacts>, Decision['prepare']][] = [
    ['13,599 tokens: under the band', { size: 13_599 }, undefined],
    ['13,600 tokens: the band (0.8 x 17,000)', { size: 13_600 }, { kind: 'start', rule: 'band', whole: false, catchUp: false }],
    ['in the band, one already prepared up to the live part', { size: 14_000, prepared: { live: true, whole: false } }, undefined],
    ['in the band, a summary of it being written: one in flight a conversation', { size: 14_000, writing: { until: 1_120_000, couldFit: true } }, undefined],
    ['in the band, clearing alone would do', { size: 14_000, clearing: { meets: true, instead: true } }, undefined],
    ['in the band, under where the last compaction left it halfway to the ceiling', { size: 14_000, prepareFrom: 15_300 }, undefined],
    ['prepare: false', { size: 14_000, prepare: false }, undefined],
    ['nothing older than the live part to cover', { size: 14_000, olderToCover: false }, undefined],
    ['unmeasured: 16,800 tokens growing 203 a step, a step a second, the next step reaches the ceiling', { size: 16_800, pace: { growth: 203, meanGrowth: 203, meanInterval: 1_000 } }, { kind: 'start', rule: 'step-ahead', whole: true, catchUp: false }],
    ['unmeasured: the same, with a whole request that would be shortened', { size: 16_800, coverWhole: false, pace: { growth: 203, meanGrowth: 203, meanInterval: 1_000 } }, { kind: 'start', rule: 'band', whole: false, catchUp: false }],
    // where no time passes between steps the band hides no summary's time: only the step ahead prepares
    ['no time between steps: 14,000 tokens in the band, growing 203 a step', { size: 14_000, pace: { growth: 203, meanGrowth: 203, meanInterval: 0 } }, undefined],
    ['no time between steps: 16,800 tokens, the next step reaches the ceiling', { size: 16_800, pace: { growth: 203, meanGrowth: 203, meanInterval: 0 } }, { kind: 'start', rule: 'step-ahead', whole: true, catchUp: false }],
    ['no time between steps: the same, with a whole request that would be shortened', { size: 16_800, coverWhole: false, pace: { growth: 203, meanGrowth: 203, meanInterval: 0 } }, { kind: 'start', rule: 'step-ahead', whole: false, catchUp: false }],
    ['no time between steps: the next step reaches the ceiling, one prepared up to the live part already', { size: 16_800, coverWhole: false, prepared: { live: true, whole: false }, pace: { growth: 203, meanGrowth: 203, meanInterval: 0 } }, undefined],
    ['measured: 14,000 tokens, 15 s from the ceiling, a summary takes 14 s', { size: 14_000, ...measured }, undefined],
    ['measured: 15,000 tokens, 10 s from the ceiling: timed to it', { size: 15_000, ...measured }, { kind: 'start', rule: 'timed', whole: true, catchUp: false }],
    ['measured: 15,000, but the last compaction was 2 s ago: a conversation faster than a summary, one step ahead only', { size: 15_000, ...measured, pace: { ...measured.pace, sinceShrunk: 2_000 } }, undefined],
    ['measured: 15,000, what may come before the ceiling does not fit the budget after it', { size: 15_000, ...measured, tailFits: false }, undefined],
    ['measured: 16,500, the next step reaches the ceiling', { size: 16_500, ...measured }, { kind: 'start', rule: 'step-ahead', whole: true, catchUp: false }],
    // preparing aims at the trigger (compactAt), not the ceiling
    ['9,599 tokens, the trigger at 12,000: under its band', { size: 9_599, trigger: 12_000, prepareFrom: 9_600 }, undefined],
    // under a trigger below the window's ceiling no step waits at the trigger: no band, the whole compaction one step ahead
    ['9,600 tokens, the trigger at 12,000: no band under a trigger below the ceiling', { size: 9_600, trigger: 12_000, prepareFrom: 9_600 }, undefined],
    ['unmeasured: 11,800 growing 203 a step, the next step reaches the trigger', { size: 11_800, trigger: 12_000, prepareFrom: 9_600, pace: { growth: 203, meanGrowth: 203, meanInterval: 0 } }, { kind: 'start', rule: 'step-ahead', whole: true, catchUp: false }],
    ['12,500 tokens, over the trigger at 12,000 and going out whole: its compaction beside it', { size: 12_500, trigger: 12_000, prepareFrom: 9_600 }, { kind: 'start', rule: 'step-ahead', whole: true, catchUp: false }],
    ['12,500 tokens over the trigger, a whole one prepared already', { size: 12_500, trigger: 12_000, prepared: { live: true, whole: true } }, undefined],
    ['12,500 tokens over the trigger, held (no progress)', { size: 12_500, trigger: 12_000, held: true }, undefined],
    ['unmeasured: 11,800 growing 203 a step, the next step reaches the trigger, but a hold stands (a preparation failed)', { size: 11_800, trigger: 12_000, prepareFrom: 9_600, held: true, pace: { growth: 203, meanGrowth: 203, meanInterval: 0 } }, undefined],
    ['12,500 tokens over the trigger at 12,000 after a step that shrank by 600: its compaction beside it all the same', { size: 12_500, trigger: 12_000, prepareFrom: 9_600, pace: { growth: -600, meanGrowth: -600, meanInterval: 0 } }, { kind: 'start', rule: 'step-ahead', whole: true, catchUp: false }],
    ['measured: 10,000 tokens, 35 s from the ceiling, a summary takes 14 s: not yet', { size: 10_000, trigger: 12_000, prepareFrom: 9_600, ...measured }, undefined],
    ['measured: 14,500 tokens, the trigger at 16,000, 12.5 s from the ceiling: timed to the ceiling', { size: 14_500, trigger: 16_000, prepareFrom: 12_800, ...measured }, { kind: 'start', rule: 'timed', whole: true, catchUp: false }],
  ];
  for (const [name, given, expected] of rows) {
    it(`should ${expected === undefined ? 'prepare nothing' : `prepare (${expected.rule})`}: ${name}`, () => {
      expect(decideStep(facts(given)).prepare).toEqual(expected);
    });
  }

  describe('after a prepared checkpoint is sent', () => {
    const sent = { size: 17_500 };
    const rows: [string, Partial<StepFacts>, Decision['prepare']][] = [
      ['it leaves the prompt within the budget', { ...sent, ready: ready(12_000) }, undefined],
      ['it leaves the prompt over the budget: a catch-up of the whole conversation', { ...sent, ready: ready(12_000, { overBudget: true }) }, { kind: 'start', rule: 'catch-up', whole: true, catchUp: true }],
      ['over the budget, a longer one being prepared here: it becomes the catch-up', { ...sent, ready: ready(12_000, { overBudget: true, longerPreparing: true }) }, { kind: 'adopt-catch-up', rule: 'catch-up' }],
      ['over the budget, a summary of it being written elsewhere', { ...sent, ready: ready(12_000, { overBudget: true }), writing: { until: 1_120_000, couldFit: false } }, undefined],
      ['over the budget, a summarizer that read 20 % from its cache', { ...sent, ready: ready(12_000, { overBudget: true }), cachedShare: 0.2 }, undefined],
      ['over the budget, ready only after the ceiling (measured: 5 s left, 14 s a summary)', { ...sent, ready: ready(16_000, { overBudget: true }), summaryMs: 14_000, pace: { growth: 1_000, meanGrowth: 1_000, meanInterval: 5_000 } }, undefined],
      ['a catch-up sent that still leaves it over the budget: none after it', { size: 15_000, catchUp: ready(12_000, { overBudget: true }) }, undefined],
    ];
    for (const [name, given, expected] of rows) {
      it(`should ${expected === undefined ? 'prepare nothing' : expected.kind === 'adopt-catch-up' ? 'adopt the longer one' : 'start a catch-up'}: ${name}`, () => {
        expect(decideStep(facts(given)).prepare).toEqual(expected);
      });
    }
  });

  it('should prepare nothing beside a step that compacts, clears, waits or gives up', () => {
    for (const given of [{ size: 17_000 }, { size: 17_000, clearing: { meets: true, instead: true } }, { size: 17_500, writing: { until: 1, couldFit: true } }, { size: 17_500, waited: 'deadline' as const, writing: { until: 1, couldFit: true } }]) {
      expect(decideStep(facts(given)).prepare).toBeUndefined();
    }
  });
});

describe('decideStep: a function of its facts', () => {
  it('should give the same action for the same facts, whatever the clock reads', () => {
    const given = { size: 15_000, summaryMs: 14_000, pace: { growth: 1_000, meanGrowth: 1_000, meanInterval: 5_000 } };
    const first = decideStep(facts({ ...given, now: 0 }));
    expect(decideStep(facts({ ...given, now: 9_999_999 }))).toEqual(first);
    expect(decideStep(facts({ ...given, now: 0 }))).toEqual(first);
  });
});
