// The chat benchmark's pieces (bench/chat.ts), with exact figures: a person's pace from a seed,
// the recall tally, the waits, the cache's cold turns, the
// benchmark's own test (it can fail), and short chats through the real client and middleware.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  chatStrategies,
  type ChatRun,
  coldRequests,
  LARGE_WINDOW,
  NEVER_EXPIRES,
  PACE,
  pauses,
  printTarget,
  recallOf,
  runChat,
  SPEED,
  tallyRecall,
  waitedForSummary,
} from '../../bench/chat';
import { hostKeepsTimers } from '../../bench/clock';
import { baselineAt } from '../../bench/baseline';
import { compacting, noMiddleware, quantile } from '../../bench/strategies';
import { chatSession } from '../support/provider-server';

describe('a person\'s pace', () => {
  it('is the same pauses for a seed: 20 to 120 s, now and then a break of 6 to 30 minutes, whole seconds', () => {
    expect(pauses(1, 10)).toEqual([0, 49_000, 1_231_000, 20_000, 34_000, 63_000, 78_000, 71_000, 52_000, 59_000]);
    expect(pauses(2, 6)).toEqual([0, 750_000, 53_000, 50_000, 22_000, 54_000]);
    const seed1 = pauses(1, 150);
    expect(seed1.map((ms, turn) => (ms >= 360_000 ? turn : -1)).filter((turn) => turn >= 0)).toEqual([2, 19, 28, 29, 32, 40, 43, 75, 78, 90, 102, 137]);
    expect(seed1.reduce((sum, ms) => sum + ms, 0)).toBe(23_379_000);
    expect(pauses(1, 150)).toEqual(seed1);
    for (let seed = 1; seed <= 50; seed++) {
      for (const ms of pauses(seed, 150).slice(1)) {
        expect(ms % 1_000).toBe(0);
        const pause = ms >= PACE.pauseMs[0] && ms <= PACE.pauseMs[1];
        const stepAway = ms >= PACE.breakMs[0] && ms <= PACE.breakMs[1];
        expect(pause || stepAway, String(ms)).toBe(true);
      }
    }
    expect(PACE).toEqual({ pauseMs: [20_000, 120_000], breakShare: 0.06, breakMs: [360_000, 1_800_000] });
    expect(pauses(1, 0)).toEqual([]);
    expect(() => pauses(1, 1.5)).toThrow('pauses: turns must be a non-negative whole number, got 1.5');
  });
});

describe('the tally', () => {
  it('counts right, stale, forgotten, wrong and unanswered, recall the share right', () => {
    const tally = tallyRecall(['right', 'stale', undefined, 'forgotten', 'right', 'wrong', undefined, 'right']);
    expect(tally).toEqual({ questions: 8, right: 3, stale: 1, forgotten: 1, wrong: 1, unanswered: 2 });
    expect(recallOf(tally)).toBe(0.375);
    expect(recallOf(tallyRecall([]))).toBe(0);
  });

  it('takes the nearest-rank quantile', () => {
    expect(quantile([5, 1, 3, 2], 0.5)).toBe(2);
    expect(quantile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(quantile([5, 1, 3, 2], 1)).toBe(5);
    expect(quantile([], 0.5)).toBeUndefined();
  });

  it('says a compacting step waited when a summary request ended during it', () => {
    const step = { start: 100, end: 200 };
    expect(waitedForSummary(step, [{ start: 50, end: 150 }])).toBe(true);
    expect(waitedForSummary(step, [{ start: 120, end: 200 }])).toBe(true);
    // prepared before the step: ready when it came
    expect(waitedForSummary(step, [{ start: 10, end: 100 }])).toBe(false);
    // started by it, for the next one
    expect(waitedForSummary(step, [{ start: 150, end: 260 }])).toBe(false);
    expect(waitedForSummary(step, [])).toBe(false);
  });

  it('counts the cold turns: a prompt of 1,024 tokens or more with nothing read from the cache', () => {
    const request = (promptTokens: number, cachedTokens: number, more: { rejected?: boolean; isSummaryRequest?: boolean } = {}) => ({ promptTokens, cachedTokens, rejected: false, isSummaryRequest: false, ...more });
    expect(coldRequests([request(900, 0), request(1_024, 0), request(5_000, 4_096), request(6_000, 0), request(7_000, 0, { rejected: true }), request(8_000, 0, { isSummaryRequest: true })])).toBe(2);
  });
});

describe('the benchmark\'s own test', () => {
  const run = (strategy: string, summaries: 'honest' | 'amnesiac', right: number, more: Partial<ChatRun> = {}): ChatRun => ({
    strategy,
    summaries,
    summarizes: true,
    window: 16_000,
    seed: 1,
    turns: 150,
    recall: { questions: 50, right, stale: 0, forgotten: 50 - right, wrong: 0, unanswered: 0 },
    overflows: 0,
    compactions: 3,
    compactingMs: [],
    waited: 0,
    summaryRequests: 3,
    usage: { input: 100_000, cached: 50_000, output: 1_000 },
    cold: 0,
    promptsAfter: [],
    maxPrompt: 13_000,
    simulatedMs: 0,
    ...more,
  });
  const bare = run('no middleware', 'honest', 10, { summarizes: false, overflows: 1, turns: 40, recall: { questions: 50, right: 10, stale: 0, forgotten: 0, wrong: 0, unanswered: 40 } });
  const control = run('no middleware', 'honest', 50, { window: LARGE_WINDOW, summarizes: false });
  const expiring = run('ai-compaction', 'honest', 50);
  const never = run(NEVER_EXPIRES, 'honest', 50, { usage: { input: 100_000, cached: 90_000, output: 1_000 } });
  const quiet = <T,>(make: () => T): T => {
    const log = console.log;
    console.log = () => undefined;
    try {
      return make();
    } finally {
      console.log = log;
    }
  };

  it('is met when the amnesiac run answers 20 points less, the expiry costs more, and no middleware overflows', () => {
    expect(quiet(() => printTarget([expiring, run('ai-compaction', 'amnesiac', 40), never, bare], control))).toEqual([]);
  });

  it('fails when it is not: an amnesiac run nearly as good, a cache that does not expire, no overflow, a control that loses', () => {
    expect(quiet(() => printTarget([expiring, run('ai-compaction', 'amnesiac', 41), never, bare], control))).toEqual([
      'ai-compaction, window 16,000: amnesiac recall 82 % is not clearly under honest 100 %',
    ]);
    expect(quiet(() => printTarget([expiring, never, { ...bare, overflows: 0 }], { ...control, recall: { ...control.recall, right: 49, wrong: 1 } }))).toEqual([
      'no middleware, window 16,000: it did not overflow, or its recall 20 % is not under the control\'s',
      'the control (no middleware, window 1,000,000) answered 98 % right: the session or the judge is wrong',
    ]);
    expect(quiet(() => printTarget([expiring, { ...never, usage: expiring.usage }], control))).toEqual([
      'window 16,000: the input cost with a cache that never expires (55,000) is not under the one with the expiry (55,000): the breaks do not empty the cache',
    ]);
  });
});

describe('the strategies', () => {
  it('side by side at one ceiling, this middleware and the amnesiac variants first, no middleware last', () => {
    const entries = chatStrategies(baselineAt('HEAD', 'ai-compaction @ HEAD'));
    expect(entries.map((entry) => [entry.strategy.name, entry.modes.join(' '), entry.cacheIdleMs])).toEqual([
      ['ai-compaction', 'honest amnesiac', undefined],
      [NEVER_EXPIRES, 'honest', false],
      ['ai-compaction, prepare: false', 'honest', undefined],
      ['ai-compaction @ HEAD', 'honest', undefined],
      ['summarize all but 20 (tokenizer)', 'honest amnesiac', undefined],
      ['the first message and the last 20 (tokenizer)', 'honest', undefined],
      ['no middleware', 'honest', undefined],
    ]);
  });
});

describe('a short chat through the real client', () => {
  // 50 turns of smaller pastes at an 8,000 window: it compacts twice; each run on a virtual clock
  const options = { window: 8_000, turns: 50, pasteChars: [1_500, 3_000] as [number, number], seed: 1 };
  const questions = chatSession({ seed: 1, turns: 50, pasteChars: [1_500, 3_000] }).filter((turn) => turn.kind === 'question').length;
  beforeAll(() => hostKeepsTimers());

  it('the control, no middleware in a window nothing fills, answers every question right', async () => {
    const run = await runChat(noMiddleware, { ...options, window: LARGE_WINDOW, pauses: new Array(50).fill(60_000) });
    expect(questions).toBe(18);
    expect(run.recall).toEqual({ questions: 18, right: 18, stale: 0, forgotten: 0, wrong: 0, unanswered: 0 });
    expect(run.turns).toBe(50);
    expect(run.compactions).toBeUndefined();
    expect(run.summaryRequests).toBe(0);
    // every pause, the first one too; no speed: the replies take no time
    expect(run.simulatedMs).toBe(50 * 60_000);
  });

  it('this middleware answers from its summaries; an amnesiac summarizer loses what they held; no middleware overflows', async () => {
    // at a real model's speed: a summary request's span and the step's have a length
    const honest = await runChat(compacting('ai-compaction', { prepare: false }), { ...options, speed: SPEED });
    const amnesiac = await runChat(compacting('ai-compaction', { prepare: false }), { ...options, summaries: 'amnesiac' });
    const bare = await runChat(noMiddleware, options);
    expect(honest.compactions).toBeGreaterThanOrEqual(1);
    expect(honest.summaryRequests).toBe(honest.compactions);
    expect(honest.waited).toBe(honest.compactions);
    expect(honest.promptsAfter).toHaveLength(honest.compactions!);
    expect(honest.recall).toEqual({ questions: 18, right: 18, stale: 0, forgotten: 0, wrong: 0, unanswered: 0 });
    expect(amnesiac.recall.right).toBeLessThan(18);
    expect(amnesiac.recall).toEqual({ questions: 18, right: amnesiac.recall.right, stale: 0, forgotten: 18 - amnesiac.recall.right, wrong: 0, unanswered: 0 });
    expect(bare.overflows).toBe(1);
    expect(bare.error).toMatch(/^This model's maximum context length is 8000 tokens\./);
    expect(bare.recall.unanswered).toBeGreaterThan(0);
    expect(bare.turns).toBeLessThan(50);
  });

  it('a break of 5 minutes empties the prompt cache, one of 4:59 does not', async () => {
    const at = (breaks: Record<number, number>) => Array.from({ length: 50 }, (_, turn) => (turn === 0 ? 0 : (breaks[turn] ?? 60_000)));
    const cold = async (pace: number[], cacheIdleMs?: false) => (await runChat(noMiddleware, { ...options, window: LARGE_WINDOW, pauses: pace, ...(cacheIdleMs === false ? { cacheIdleMs } : {}) })).cold;
    const base = await cold(at({}));
    expect(await cold(at({ 20: 300_000, 25: 300_000 }))).toBe(base + 2);
    expect(await cold(at({ 20: 299_999, 25: 299_999 }))).toBe(base);
    expect(await cold(at({ 20: 300_000, 25: 300_000 }), false)).toBe(base);
    await expect(runChat(noMiddleware, { ...options, pauses: [0] })).rejects.toThrow('runChat: 1 pauses for 50 turns');
  });
});
