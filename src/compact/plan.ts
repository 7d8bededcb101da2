import { type BudgetInput, type KeepBudget, identifiersRoom, keepBudget, recordRoom, summaryRoom, userWordsRoom } from '../checkpoint/budget';
import { afterCheckpoint } from '../checkpoint/live';
import { identifierBudget } from '../checkpoint/identifiers';
import { checkpointMessage } from '../checkpoint/message';
import { recallToolName } from '../recall/marker';
import { openingText } from '../checkpoint/record';
import { liveStart } from '../prompt/conversation';
import type { Engine } from '../engine';
import { summaryOutputTokensFor } from '../model';
import type { CallOptions, Message, SystemMessage } from '../prompt/types';
import { type Estimator, estimateMessages, estimatePrompt } from '../sizing/estimate';
import { EXPECTED_SUMMARY_DIVISOR, EXPECTED_SUMMARY_GROWTH, MAX_BUDGET_SHARE, USER_MESSAGE_DIVISOR, USER_WORDS_MAX_TOKENS } from '../tunables';
import { type StepView, coveredUpTo } from '../view';

/**
 * A compaction decided once (docs/design.md, "One budget"): what it covers, what stays live, and
 * what each part of the checkpoint may take. The summary request, the record, the identifiers and
 * the live part are all made from it.
 */
export interface CompactionPlan {
  /** What the checkpoint covers: `conversation[from, end)`. `end` is where the live part begins. */
  from: number;
  end: number;
  /** Tokens of the system messages and tool definitions. */
  frame: number;
  /** The budget; `undefined` without a ceiling (no window known): the record takes `keep`, the newest step goes out whole. */
  budget: KeepBudget | undefined;
  /** Tokens of what goes out live after the checkpoint, the newest step shortened to the budget's `step`. */
  live: number;
  /**
   * Tokens of the live step alone (`live` less what a checkpoint prepared ahead reserves for what
   * comes after it) as the summary's limit counts them: a tool step as it goes out (its outputs
   * shortened at 4 characters a token, which a learned estimate may count past the budget's `step`),
   * a new user turn at most the budget's `step` (it is never shortened).
   */
  step: number;
  /** Tokens of the checkpoint message's fixed text (its tags and its opening line). */
  wrapper: number;
  /**
   * The budget at the most a compaction may keep (half the room), with the live part it reserves:
   * what a compaction whose summary request cannot carry the whole conversation sizes its record by
   * (docs/design.md, "One budget"). The plan's own where there is no ceiling.
   */
  widest: Pick<CompactionPlan, 'budget' | 'live'>;
}

/** What a plan is made from: the step (its conversation, frame and estimator), the ceiling and the options. */
export interface PlanInput {
  conversation: readonly Message[];
  system: readonly SystemMessage[];
  tools: CallOptions['tools'];
  estimator: Estimator;
  /** Where what is covered begins: the end of what the conversation's checkpoint covers. */
  from: number;
  /** The ceiling; `undefined` without a window. */
  ceiling: number | undefined;
  keep: number;
  summaryOutputTokens: number;
  /** Share of the room the budget takes (at most half). */
  share?: number;
  /** Where what is covered ends; by default where the live part begins (a new user turn, or the newest step). */
  end?: number;
  /** Tokens of the system messages and tool definitions, where the step's facts measured them already. */
  frame?: number;
  /**
   * Prepared ahead: what the conversation may still add before the step that sends the checkpoint
   * (the ceiling less this step's size). It goes out live after the checkpoint, so the checkpoint
   * leaves room for it within the budget.
   */
  ahead?: number;
}

/** Plans the compaction of a conversation: it covers everything before its live part (a new user turn, or the newest step). */
export function planCompaction({ conversation, system, tools, estimator, from, ceiling, keep, summaryOutputTokens, share, end = liveStart(conversation), ahead = 0, frame = frameTokens(system, tools, estimator) }: PlanInput): CompactionPlan {
  const budget = ceiling === undefined ? undefined : budgetAt({ ceiling, frame, keep, summaryOutputTokens, share });
  // A compaction of the whole conversation is made for the next step, whose live part is not there
  // yet: it leaves room for one as large as this step's. The live step's share of the room (a
  // quarter) does not depend on the budget's share.
  const start = end === conversation.length ? liveStart(conversation) : end;
  const step = liveTokens(conversation, start, budget?.step, estimator);
  const live = liveAfter(step, ahead, budget?.total);
  const wide = ceiling === undefined ? undefined : budgetAt({ ceiling, frame, keep, summaryOutputTokens, share: MAX_BUDGET_SHARE });
  return {
    from,
    end,
    frame,
    budget,
    live,
    step: budget !== undefined && conversation[start]?.role === 'user' ? Math.min(step, budget.step) : step,
    wrapper: estimateMessages([checkpointMessage('', '', [], wrapperMention(tools))], 0, 1, estimator),
    widest: wide === undefined ? { budget, live } : { budget: wide, live: liveAfter(step, ahead, wide.total) },
  };
}

/** The recall tool's sentence as a checkpoint of this frame carries it (docs/design.md, "Recall"), for the wrapper's size. */
function wrapperMention(tools: CallOptions['tools']) {
  const name = recallToolName(tools);
  return name === undefined ? undefined : { name, conversation: [], covered: 0 };
}

/**
 * What a plan reserves for the live part: a live step like this step's, and for a checkpoint
 * prepared ahead what the conversation may add before the step that sends it, which goes out live
 * after it (docs/design.md, "One budget"): up to the ceiling, and the step that crosses it, taken
 * as large as this one. The reserve takes at most the budget's total, so the record shrinks first.
 */
export function liveAfter(step: number, ahead: number, total: number | undefined): number {
  if (ahead <= 0 || total === undefined) return step;
  return Math.max(step, Math.min(step + ahead, total));
}

/** The budget of a compaction made at this ceiling with this frame, at `share` of the room (by default the instance's). */
function budgetAt({ share, ...input }: Omit<BudgetInput, 'share'> & { share: number | undefined }): KeepBudget {
  return keepBudget({ ...input, ...(share === undefined ? {} : { share }) });
}

/** Tokens of the system messages and tool definitions. */
export function frameTokens(system: readonly SystemMessage[], tools: CallOptions['tools'], estimator: Estimator): number {
  return estimatePrompt([...system], tools, estimator);
}

/** Tokens of what goes out after a checkpoint covering `conversation[0, end)`: the newest step within `step` tokens, and what follows it. */
export function liveTokens(conversation: readonly Message[], end: number, step: number | undefined, estimator: Estimator): number {
  const after = afterCheckpoint(conversation as Message[], end, step);
  return estimateMessages(after, 0, after.length, estimator);
}

/**
 * Tokens of what the record opens with when it starts inside the turn that `conversation[0, end)`
 * ends in (the turn's user message and the note on the steps between), at most the plan's
 * `userMessage`: never cut, so the parts before the record leave room for it (docs/design.md, "One
 * budget"). No turn, or no budget: 0. Measured when a compaction is made, not in every step's plan.
 */
export function openingTokens(plan: CompactionPlan, conversation: readonly Message[], end: number, estimator: Estimator): number {
  if (plan.budget === undefined) return 0;
  const text = openingText(conversation, end);
  if (text === '') return 0;
  return Math.min(plan.budget.userMessage, estimateMessages([{ role: 'user', content: [{ type: 'text', text }] }], 0, 1, estimator));
}

/**
 * The summary's output limit (before the room the request leaves in the window lowers it further):
 * its quarter of the room, within what half the room leaves beside the live step, the fixed text and
 * the least the record holds, `record` tokens: what it opens with, or the record it will never hold
 * less than once that is chosen (docs/design.md, "One budget").
 */
export function summaryLimit(plan: CompactionPlan, summaryOutputTokens: number, record: number): number {
  return plan.budget === undefined ? summaryOutputTokens : summaryRoom(plan.budget, { live: plan.step, wrapper: plan.wrapper, record });
}

/**
 * The summary size a record is first sized for, before the summary is written (docs/design.md,
 * "One budget"): a quarter more than the conversation's last summary (`previous` tokens), or half
 * the output limit; at most the limit.
 */
export function expectedSummary(outputLimit: number, previous: number | undefined): number {
  return Math.min(outputLimit, previous === undefined ? Math.floor(outputLimit / EXPECTED_SUMMARY_DIVISOR) : Math.ceil(previous * EXPECTED_SUMMARY_GROWTH));
}

/**
 * The plan a compaction sizes its parts by: its own, or, when its summary request cannot carry the
 * whole conversation (`squeezed`: under 1,024 tokens of room for the reply, a small window) and
 * goes out without what the record holds, the one at the most a compaction may keep (half the
 * room), so that less must be shortened out of the request.
 */
export function sizedFor(plan: CompactionPlan, squeezed: boolean): CompactionPlan {
  return squeezed ? { ...plan, ...plan.widest } : plan;
}

/** The most the identifier list may take once the summary is `summary` tokens and the record holds at least `record` (without a ceiling, its cap). */
export function identifierAllowance(plan: CompactionPlan, summary: number, record: number): number {
  return plan.budget === undefined ? identifierBudget(undefined) : identifiersRoom(plan.budget, { live: plan.live, summary, wrapper: plan.wrapper, record });
}

/** The most the user's messages before the record may take once the summary and identifiers are `summary` and `identifiers` tokens and the record holds at least `record`. */
export function userWordsAllowance(plan: CompactionPlan, summary: number, identifiers: number, record: number): number {
  return plan.budget === undefined ? USER_WORDS_MAX_TOKENS : userWordsRoom(plan.budget, { live: plan.live, summary, identifiers, wrapper: plan.wrapper, record });
}

/** The most the record may take once the summary, identifiers and user's messages are `summary`, `identifiers` and `userWords` tokens. */
export function recordAllowance(plan: CompactionPlan, summary: number, identifiers: number, keep: number, userWords = 0): number {
  return plan.budget === undefined ? keep : recordRoom(plan.budget, { live: plan.live, summary, identifiers, userWords, wrapper: plan.wrapper });
}

/** How long a turn's user message may open the record verbatim. */
export function userMessageAllowance(plan: CompactionPlan, keep: number): number {
  return plan.budget?.userMessage ?? Math.floor(keep / USER_MESSAGE_DIVISOR);
}

/** What a step's plan may be handed instead of measuring it again: where its checkpoint ends (`from`) and its frame, as its facts measured them. */
export interface Measured {
  from?: number;
  frame?: number;
}

/** The plan of a step's compaction at `ceiling`, with the instance's options, covering up to `end` (by default up to the live part). */
export function planOf(
  engine: Pick<Engine, 'settings' | 'summarizer'>,
  view: StepView,
  ceiling: number | undefined,
  { end, ahead, measured = {} }: { end?: number | undefined; ahead?: number | undefined; measured?: Measured } = {},
): CompactionPlan {
  const { keep, budgetShare: share } = engine.settings;
  const summaryOutputTokens = summaryOutputTokensFor(engine, view.modelKey);
  return planCompaction({
    conversation: view.conversation,
    system: view.system,
    tools: view.params.tools,
    estimator: view.estimator,
    from: measured.from ?? coveredUpTo(view),
    ceiling,
    keep,
    summaryOutputTokens,
    share,
    ...(end === undefined ? {} : { end }),
    ...(ahead === undefined ? {} : { ahead }),
    ...(measured.frame === undefined ? {} : { frame: measured.frame }),
  });
}
