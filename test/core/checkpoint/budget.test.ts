// One budget for what a compaction keeps (docs/design.md, "One budget"): the room is the ceiling
// less the frame; the checkpoint and the live part after it take at most a share of it (at most
// half); in order the live part, the summary (at most a quarter of the room), the identifiers (a
// twentieth of the ceiling, at most 2,000), then the record the rest, at most `keep`.
import { describe, expect, it } from 'vitest';
import { CompactionError, compaction } from '../../../src';
import { DEFAULT_BUDGET_SHARE, MAX_BUDGET_SHARE, identifiersRoom, keepBudget, recordRoom, summaryRoom, userWordsRoom } from '../../../src/checkpoint/budget';
import { afterCheckpoint } from '../../../src/checkpoint/live';
import { expectedSummary, liveAfter, planCompaction, sizedFor } from '../../../src/compact/plan';
import { worthCatchingUp } from '../../../src/compact/policy';
import { CATCH_UP_SHARE } from '../../../src/tunables';
import type { Message } from '../../../src/prompt/types';
import { FIXED_ESTIMATOR, estimatePrompt } from '../../../src/sizing/estimate';
import { assistant, filler, scriptedModel, system, textOf, toolCall, toolResult, user, wrap } from '../../support/harness';
import { textResult } from '../../support/models';

describe('keepBudget', () => {
  it('should leave a small window with a large system prompt half its room or less: 16k window, 6,000-token frame', () => {
    // ceiling 13,600 (15 % buffer): room 7,600, the default share a quarter of it
    expect(keepBudget({ ceiling: 13_600, frame: 6_000, keep: 15_000, summaryOutputTokens: 4_096 })).toEqual({
      room: 7_600,
      total: 1_900,
      // half the room
      most: 3_800,
      step: 1_900,
      summary: 1_900,
      identifiers: 680,
      // the user's earlier messages: an eighth of the total
      userWords: 237,
      record: 15_000,
      userMessage: 475,
    });
  });

  it('should give a large window the summary limit and the identifiers their caps: 200k window, 2,000-token frame', () => {
    // ceiling 170,000: room 168,000
    expect(keepBudget({ ceiling: 170_000, frame: 2_000, keep: 15_000, summaryOutputTokens: 4_096 })).toEqual({
      room: 168_000,
      total: 42_000,
      most: 84_000,
      step: 42_000,
      summary: 4_096,
      identifiers: 2_000,
      // the user's earlier messages: an eighth of the total (5,250) over their cap
      userWords: 2_000,
      record: 15_000,
      userMessage: 3_750,
    });
  });

  it('should cap the summary at a quarter of the room: a 4,000-token window asked for 1,500-token summaries', () => {
    // ceiling 3,400, frame 100: room 3,300, a quarter 825
    const budget = keepBudget({ ceiling: 3_400, frame: 100, keep: 15_000, summaryOutputTokens: 1_500 });
    expect(budget.summary).toBe(825);
    expect(budget.total).toBe(825);
    expect(budget.identifiers).toBe(170);
  });

  it('should leave a large summary its quarter and give the record what the parts before it leave: 200k window, 32,000-token summaries', () => {
    // ceiling 170,000, frame 2,000: room 168,000, total 42,000; the summary's limit is its option
    // (32,000), under a quarter of the room (42,000)
    const budget = keepBudget({ ceiling: 170_000, frame: 2_000, keep: 15_000, summaryOutputTokens: 32_000 });
    expect(budget.summary).toBe(32_000);
    // a summary of its whole limit after a 1,000-token live step: 42,000 - 1,000 - 32,000 = 9,000
    // left, the identifiers their cap of 2,000, the user's earlier messages their cap of 2,000
    expect(identifiersRoom(budget, { live: 1_000, summary: 32_000, wrapper: 50, record: 0 })).toBe(2_000);
    expect(userWordsRoom(budget, { live: 1_000, summary: 32_000, identifiers: 2_000, wrapper: 50, record: 1_000 })).toBe(2_000);
    // the record: 9,000 - 2,000 - 2,000 - a 50-token wrapper = 4,950, under keep (15,000)
    expect(recordRoom(budget, { live: 1_000, summary: 32_000, identifiers: 2_000, userWords: 2_000, wrapper: 50 })).toBe(4_950);
    // a summary 3,000 tokens longer leaves the record 3,000 less; one of 38,000 leaves it nothing
    expect(recordRoom(budget, { live: 1_000, summary: 35_000, identifiers: 2_000, userWords: 2_000, wrapper: 50 })).toBe(1_950);
    expect(recordRoom(budget, { live: 1_000, summary: 38_000, identifiers: 2_000, userWords: 2_000, wrapper: 50 })).toBe(0);
  });

  it('should take at most half the room, whatever share is asked for', () => {
    expect(DEFAULT_BUDGET_SHARE).toBeLessThanOrEqual(MAX_BUDGET_SHARE);
    expect(keepBudget({ ceiling: 13_600, frame: 6_000, keep: 15_000, summaryOutputTokens: 4_096, share: 0.5 }).total).toBe(3_800);
    expect(keepBudget({ ceiling: 13_600, frame: 6_000, keep: 15_000, summaryOutputTokens: 4_096, share: 0.9 }).total).toBe(3_800);
  });

  it('should lower the record with keep, never raise the total', () => {
    const budget = keepBudget({ ceiling: 170_000, frame: 2_000, keep: 4_000, summaryOutputTokens: 4_096 });
    expect(budget.total).toBe(42_000);
    expect(budget.record).toBe(4_000);
    expect(budget.userMessage).toBe(1_000);
    expect(recordRoom(budget, { live: 1_000, summary: 3_000, identifiers: 2_000, wrapper: 50 })).toBe(4_000);
  });

  it('should lower the summary\'s limit to what half the room leaves beside the live part, the fixed text and the turn\'s user message', () => {
    // 16k window, 6,000-token frame: most 3,800, the summary's quarter 1,900, the turn's user message at most 475
    const budget = keepBudget({ ceiling: 13_600, frame: 6_000, keep: 15_000, summaryOutputTokens: 4_096 });
    expect(budget.userMessage).toBe(475);
    // a small live step leaves the summary its quarter: 3,800 - 400 - 60 - 475 = 2,865 is more
    expect(summaryRoom(budget, { live: 400, wrapper: 60, record: 475 })).toBe(1_900);
    // a live step at its quarter, the turn's user message at its longest: 3,800 - 1,900 - 60 - 475
    expect(summaryRoom(budget, { live: 1_900, wrapper: 60, record: 475 })).toBe(1_365);
    // the same beside a short user message (30 tokens): 3,800 - 1,900 - 60 - 30 = 1,810
    expect(summaryRoom(budget, { live: 1_900, wrapper: 60, record: 30 })).toBe(1_810);
    // a tool step its outputs' shortening left at 2,000 by the estimate: 3,800 - 2,000 - 60 - 475
    expect(summaryRoom(budget, { live: 2_000, wrapper: 60, record: 475 })).toBe(1_265);
    // a summary needs a few tokens whatever the room: a 200-token room (most 100, step 50, the
    // turn's user message at most 12) leaves it nothing beside a 61-token fixed text, and gets 1
    const tiny = keepBudget({ ceiling: 200, frame: 0, keep: 15_000, summaryOutputTokens: 4_096 });
    expect({ most: tiny.most, step: tiny.step, userMessage: tiny.userMessage }).toEqual({ most: 100, step: 50, userMessage: 12 });
    expect(summaryRoom(tiny, { live: 50, wrapper: 61, record: 12 })).toBe(1);
  });

  it('should give the parts what is left in order: the live part, the summary, the identifiers, the record', () => {
    const budget = keepBudget({ ceiling: 13_600, frame: 6_000, keep: 15_000, summaryOutputTokens: 4_096 });
    // 1,900: live 400, summary 600, identifiers 680 (their cap), the record 1,900 - 400 - 600 - 680 - 20 = 200
    expect(identifiersRoom(budget, { live: 400, summary: 600, wrapper: 50, record: 0 })).toBe(680);
    expect(recordRoom(budget, { live: 400, summary: 600, identifiers: 680, wrapper: 20 })).toBe(200);
    // a live step of the whole quarter leaves the summary's share to nothing else
    expect(identifiersRoom(budget, { live: 1_900, summary: 600, wrapper: 50, record: 0 })).toBe(0);
    expect(recordRoom(budget, { live: 1_900, summary: 600, identifiers: 0, wrapper: 20 })).toBe(0);
  });
});

describe('planCompaction', () => {
  const frame: Message[] = [system(filler(6_000, 's'))];
  const plan = (conversation: Message[], end?: number) =>
    planCompaction({ conversation, system: frame as never, tools: undefined, estimator: FIXED_ESTIMATOR, from: 0, ceiling: 13_600, keep: 15_000, summaryOutputTokens: 4_096, ...(end === undefined ? {} : { end }) });

  it('should cover everything before a new user turn, which stays live whole', () => {
    const conversation = [user(filler(3_000, 'a')), assistant(filler(3_000, 'b')), user(filler(2_500, 'c'))];
    const made = plan(conversation);
    expect(made.from).toBe(0);
    expect(made.end).toBe(2);
    expect(made.frame).toBe(estimatePrompt(frame));
    // user words are never shortened, even past the step's quarter (1,900)
    expect(made.live).toBe(estimatePrompt([conversation[2]!]));
    expect(made.live).toBeGreaterThan(made.budget!.step);
  });

  it('should count a huge newest step as its quarter of the room: its tool outputs are shortened', () => {
    // an 8,000-token output (32,000 characters) after a 3-token call, in a step of at most 1,900
    // tokens (a quarter of the 7,600 room): the output keeps 1,900 x 4 - 12 (the call) - 32 (room
    // for the note) = 7,556 characters, its first and last 3,778, and a note of the 24,444 cut
    const conversation = [user('Fix the build.'), toolCall('c1', 'run', { n: 1 }), toolResult('c1', 'run', filler(8_000, 'r'))];
    const made = plan(conversation);
    expect(made.end).toBe(1);
    expect(made.budget!.step).toBe(1_900);
    const live = afterCheckpoint(conversation, made.end, made.budget!.step);
    expect(live[0]).toBe(conversation[1]);
    const output = (live[1] as unknown as { content: { output: { type: string; value: string } }[] }).content[0]!.output;
    expect(output).toEqual({ type: 'text', value: `${'r'.repeat(3_778)}\n[24444 characters cut]\n${'r'.repeat(3_778)}` });
    // 3 tokens of the call and 7,580 characters of output (1,895 tokens): 1,898
    expect(made.live).toBe(1_898);
    // the caller's messages are not changed
    expect((conversation[2] as unknown as { content: { output: { value: string } }[] }).content[0]!.output.value).toHaveLength(32_000);
  });

  it('should leave a compaction of the whole conversation room for a live part like this step\'s', () => {
    const conversation = [user(filler(3_000, 'a')), assistant(filler(3_000, 'b')), user(filler(500, 'c'))];
    const whole = plan(conversation, conversation.length);
    expect(whole.end).toBe(3);
    expect(whole.live).toBe(plan(conversation).live);
  });
});

describe('a checkpoint prepared ahead keeps the budget', () => {
  // The 16k window with a 6,000-token frame: a budget of 1,900 (keepBudget above).
  it('should reserve for the live part what the conversation may add before the step that sends it, within the total', () => {
    // made at the step: the live part as it is
    expect(liveAfter(400, 0, 1_900)).toBe(400);
    // prepared 1,000 under the ceiling: the step that sends it has up to 1,000 more live
    expect(liveAfter(400, 1_000, 1_900)).toBe(1_400);
    // prepared far under the ceiling: the reserve takes the whole total, the record shrinks first
    expect(liveAfter(400, 5_000, 1_900)).toBe(1_900);
    // a live part larger than the total keeps its size (the step's own shortening bounds it)
    expect(liveAfter(2_500, 5_000, 1_900)).toBe(2_500);
    // no ceiling, no budget: nothing reserved
    expect(liveAfter(400, 1_000, undefined)).toBe(400);
  });

  it('should plan a checkpoint prepared ahead with that reserve as its live part', () => {
    const frame: Message[] = [system(filler(6_000, 's'))];
    const conversation = [user(filler(3_000, 'a')), assistant(filler(3_000, 'b')), user(filler(500, 'c'))];
    const plan = (ahead?: number) =>
      planCompaction({ conversation, system: frame as never, tools: undefined, estimator: FIXED_ESTIMATOR, from: 0, ceiling: 13_600, keep: 15_000, summaryOutputTokens: 4_096, ...(ahead === undefined ? {} : { ahead }) });
    const step = plan().live;
    expect(step).toBe(estimatePrompt([conversation[2]!]));
    expect(plan(800).live).toBe(step + 800);
    expect(plan(10_000).live).toBe(1_900);
    // the reserve leaves the record less of the same total
    expect(plan(800).budget).toEqual(plan().budget);
  });

  it('should plan the budget at half the room beside its own, for a summary request too large for the window', () => {
    const frame: Message[] = [system(filler(6_000, 's'))];
    const conversation = [user(filler(3_000, 'a')), assistant(filler(3_000, 'b')), user(filler(500, 'c'))];
    const plan = (ahead: number, ceiling: number | undefined) =>
      planCompaction({ conversation, system: frame as never, tools: undefined, estimator: FIXED_ESTIMATOR, from: 0, ceiling, keep: 15_000, summaryOutputTokens: 4_096, ahead });
    const step = plan(0, 13_600).live;
    // a room of 7,600: a quarter is 1,900, half is 3,800; the live step's quarter is 1,900 in both
    expect(plan(0, 13_600).budget!.total).toBe(1_900);
    expect(plan(0, 13_600).widest.budget!.total).toBe(3_800);
    expect(plan(0, 13_600).widest.budget!.step).toBe(1_900);
    expect(plan(0, 13_600).widest.budget!.summary).toBe(1_900);
    expect(plan(0, 13_600).widest.live).toBe(step);
    // prepared far under the ceiling: each reserve takes its own total
    expect(plan(10_000, 13_600).live).toBe(1_900);
    expect(plan(10_000, 13_600).widest.live).toBe(3_800);
    expect(plan(1_000, 13_600).widest.live).toBe(step + 1_000);
    // no ceiling: no budget at either share
    expect(plan(0, undefined).widest).toEqual({ budget: undefined, live: step });
  });

  it('should size the record first for a quarter more than the last summary, or half the output limit', () => {
    // the 16k window with a 6,000-token frame: an output limit of 1,900
    expect(expectedSummary(1_900, undefined)).toBe(950);
    expect(expectedSummary(1_900, 800)).toBe(1_000);
    expect(expectedSummary(1_900, 801)).toBe(1_002);
    expect(expectedSummary(1_900, 1_800)).toBe(1_900);
    expect(expectedSummary(4_096, undefined)).toBe(2_048);
  });

  it('should size a squeezed compaction by the budget at half the room, and an ordinary one by its own', () => {
    const frame: Message[] = [system(filler(6_000, 's'))];
    const conversation = [user(filler(3_000, 'a')), assistant(filler(3_000, 'b')), user(filler(500, 'c'))];
    const plan = planCompaction({ conversation, system: frame as never, tools: undefined, estimator: FIXED_ESTIMATOR, from: 0, ceiling: 13_600, keep: 15_000, summaryOutputTokens: 4_096, ahead: 10_000 });
    expect(sizedFor(plan, false)).toBe(plan);
    const squeezed = sizedFor(plan, true);
    expect(squeezed.budget!.total).toBe(3_800);
    expect(squeezed.live).toBe(3_800);
    expect({ from: squeezed.from, end: squeezed.end, frame: squeezed.frame, wrapper: squeezed.wrapper }).toEqual({ from: plan.from, end: plan.end, frame: plan.frame, wrapper: plan.wrapper });
  });

  it('should start a catch-up only over the budget by a quarter of it, with at least as much to cover', () => {
    expect(CATCH_UP_SHARE).toBe(0.25);
    // a budget of 1,900: worth a catch-up at 475 over it (2,375 kept), with a 475-token tail
    expect(worthCatchingUp(2_375, 475, 1_900)).toBe(true);
    expect(worthCatchingUp(2_374, 475, 1_900)).toBe(false);
    expect(worthCatchingUp(9_000, 474, 1_900)).toBe(false);
    expect(worthCatchingUp(1_900, 1_900, 1_900)).toBe(false);
  });
});

describe('the window is never exceeded by the middleware\'s own estimate', () => {
  it('should fail with too-large before any summary request when what stays live cannot fit the window', async () => {
    const { model, summaryCalls, stepCalls } = scriptedModel();
    const prompt = [user(filler(1_500, 'a')), assistant(filler(1_500, 'b')), user(filler(4_200, 'n'))];
    const error = await wrap(model, compaction({ contextWindow: 4_000 })).doGenerate({ prompt }).catch((caught: unknown) => caught);
    expect(CompactionError.isInstance(error)).toBe(true);
    expect((error as CompactionError).reason).toBe('too-large');
    expect(summaryCalls()).toHaveLength(0);
    expect(stepCalls()).toHaveLength(0);
  });

  it('should ask a 4,000-token window for a summary within a quarter of its room and what half of it leaves, and never send a step over the window', async () => {
    // A summarizer that ignores its limit and writes 1,500 tokens: the checkpoint with it and the
    // live turn would be over the window; nothing is stored, the step goes out as it was if it fits.
    const { model, summaryCalls, stepCalls } = scriptedModel({
      summary: (prompt) => textResult(`## Objective\n- keep going\n\n## Active\n${filler(1_500, 'z')}`, estimatePrompt(prompt), 1_500),
    });
    const warnings: string[] = [];
    const middleware = compaction({ contextWindow: 4_000, summaryOutputTokens: 1_500, prepare: false, logger: { info: () => undefined, warn: (message) => void warnings.push(String(message)) } });
    // 3,500 tokens, over the 3,400 ceiling: the checkpoint with a 1,500-token summary and the 2,300-token turn is over the window
    const prompt = [user(filler(600, 'a')), assistant(filler(600, 'b')), user(filler(2_300, 'c'))];
    await wrap(model, middleware).doGenerate({ prompt });
    // the compaction failed as too large, after its summary was written
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^ai-compaction: compaction failed \(too-large\): .*; the step goes out unchanged\./);
    expect(summaryCalls()).toHaveLength(1);
    // ceiling 3,400, frame 0: a quarter of the room is 850, within what half the room (1,700) leaves
    // beside the live turn counted at its quarter (850), the checkpoint's fixed text (61) and the
    // least the record holds: the covered turn's 600-token user message at its longest (212), its
    // ends with the notes, 233 tokens: 556
    expect(summaryCalls()[0]!.maxOutputTokens).toBe(556);
    // the step went out as it was (3,500, under the window), nothing stored
    expect(stepCalls()).toHaveLength(1);
    expect(stepCalls()[0]!.prompt).toEqual(prompt);
    expect(middleware.last()).toBeUndefined();
  });

  it('should send a checkpoint whose summary keeps to its limit, the prompt after it within half the room', async () => {
    const { model, stepCalls } = scriptedModel();
    const middleware = compaction({ contextWindow: 4_000, summaryOutputTokens: 1_500, prepare: false });
    const prompt = [user(filler(1_600, 'a')), assistant(filler(1_600, 'b')), user(filler(300, 'c'))];
    await wrap(model, middleware).doGenerate({ prompt });
    const sent = stepCalls()[0]!.prompt;
    expect(textOf(sent[0]).startsWith('<conversation-checkpoint>')).toBe(true);
    expect(estimatePrompt(sent)).toBeLessThanOrEqual(1_700);
    expect(middleware.last()!.tokensAfter).toBe(estimatePrompt(sent));
  });
});
