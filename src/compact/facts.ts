import { type Engine, modelKey, warnOnce } from '../engine';
import { windowFor } from '../model';
import { liveStart } from '../prompt/conversation';
import type { Model } from '../prompt/types';
import { ceiling } from '../sizing/ceiling';
import { estimateMessages } from '../sizing/estimate';
import { type StoredCheckpoint, readableBy } from '../store/format';
import { type StepView, coveredUpTo, totalSize, windowSize, withCheckpoint } from '../view';
import { planClearing } from './clear';
import { held } from './holds';
import { conversationSummaries } from './measured';
import { type Pace, type ReadyFacts, type StepFacts, type WaitOutcome, worthCatchingUp } from './policy';
import { type CompactionPlan, planOf } from './plan';
import { type Candidate, alreadyPrepared, coverWhole, findPrepared, fitsAfter, longerPreparing, preparingFrom, readyCatchUp, writing } from './prepare';

/** What the facts of a step point to: the checkpoints they speak of, placed in the step's view, and the summary being written. */
export interface Found {
  window: number | undefined;
  limit: number | undefined;
  plan: CompactionPlan | undefined;
  catchUp?: StepView;
  ready?: StepView;
  /** The summaries being written for this conversation, longest first: what a wait waits for. */
  pending: Candidate[];
  /** One of them is this instance's: its deadline (`summaryTimeout`) is the wait's bound. */
  ownDeadline: boolean;
}

/** What the step brings: whether a manual compaction is asked, whether it waited already, its conversation's pace. */
export interface StepContext {
  manual: boolean;
  waited: WaitOutcome | undefined;
  pace: Pace | undefined;
  /** What the step waited for came out as this checkpoint (a wait's outcome, a new fact). */
  awaited?: StoredCheckpoint | undefined;
}

/**
 * Gathers the facts the policy decides a step on (policy.ts), once: its size and ceiling, the
 * holds, the checkpoints prepared for it and the summary being written, clearing, its pace and the
 * measured summaries. The checkpoints are read here, so that the executor acts on what was decided.
 */
export async function gatherFacts(engine: Engine, view: StepView, model: Model, context: StepContext): Promise<{ facts: StepFacts; found: Found }> {
  const { settings } = engine;
  const window = windowFor(engine, model);
  const limit = window === undefined ? undefined : ceiling(window, settings.buffer, view.params.maxOutputTokens);
  if (limit !== undefined && limit <= 0) {
    const key = modelKey(model);
    warnOnce(engine, `ceiling:${key}`, `ai-compaction: the ceiling for ${key} is ${limit} tokens (the window less the room kept free); not compacting on its own`);
  }
  const size = totalSize(view);
  const from = coveredUpTo(view);
  const end = liveStart(view.conversation);
  const summaries = conversationSummaries(view);
  const facts: StepFacts = {
    now: engine.clock.now(),
    auto: settings.auto,
    prepare: settings.prepare,
    manual: context.manual,
    window,
    ceiling: limit,
    sizeKnown: view.sizeKnown,
    size,
    counted: view.size.counted,
    estimated: view.size.estimated,
    denseReach: window !== undefined && windowSize(view) >= window - (view.params.maxOutputTokens ?? 0),
    held: false,
    olderToCover: end > from,
    wholeToCover: view.conversation.length > from,
    clearing: { meets: false, instead: false },
    catchUp: undefined,
    ready: undefined,
    writing: undefined,
    waited: context.waited,
    prepared: { live: false, whole: false },
    prepareFrom: 0,
    coverWhole: false,
    tailFits: false,
    pace: context.pace,
    summaryMs: summaries.longest,
    cachedShare: summaries.cached,
  };
  const found: Found = { window, limit, plan: undefined, pending: [], ownDeadline: false };
  if (!settings.auto || context.manual || limit === undefined || limit <= 0 || !view.sizeKnown || view.digests === undefined || view.threadDigest === undefined) return { facts, found };
  const plan = planOf(engine, view, limit);
  found.plan = plan;
  const clearingRequest = { view, reason: 'auto' as const, model, limit, target: undefined, from, end };
  facts.clearing.meets = end > from && planClearing(settings, clearingRequest) !== undefined;
  facts.coverWhole = coverWhole(view, window, end);
  const being = await writing(engine, view, model, found.pending, (length) => fitsAfter(view, length, plan.budget?.step, limit));
  facts.writing = being === undefined ? undefined : { until: being.until, couldFit: being.couldFit };
  found.ownDeadline = being?.own === true;
  const catchUp = await readyCatchUp(engine, view, model);
  if (catchUp !== undefined) {
    found.catchUp = catchUp;
    facts.catchUp = await readyFacts(engine, view, catchUp, limit);
  }
  if (Math.min(size, facts.catchUp?.size ?? size) >= limit || (facts.catchUp === undefined && facts.denseReach)) {
    facts.held = facts.catchUp === undefined && (await held(view, limit, window));
    const prepared = await findPrepared(engine, view, model, plan, limit);
    let placed = prepared?.ready ?? prepared?.tooLarge;
    // What the step waited for: written by another instance, it may be no prepared one (a step's own compaction under its lease).
    const { awaited } = context;
    if (awaited !== undefined && readableBy(awaited, modelKey(model)) && awaited.length > coveredUpTo(view) && (placed === undefined || awaited.length > placed.checkpoint!.length || totalSize(placed) >= limit)) {
      const candidate = withCheckpoint(view, awaited);
      if (placed === undefined || totalSize(candidate) < limit || totalSize(placed) >= limit) placed = candidate;
    }
    if (placed !== undefined) {
      found.ready = placed;
      facts.ready = await readyFacts(engine, view, placed, limit);
    }
    if (facts.writing !== undefined) facts.clearing.instead = planClearing(settings, { ...clearingRequest, instead: true }) !== undefined;
  } else if (settings.prepare !== false) {
    facts.prepared = await alreadyPrepared(engine, view, from, end);
    facts.prepareFrom = await preparingFrom(view, settings.prepare * limit, limit);
    facts.tailFits = plan.budget === undefined || plan.live + (limit - size) <= plan.budget.total;
  }
  return { facts, found };
}

/** The facts of a checkpoint prepared for this conversation (`placed`: the step's view with it): the prompt's size with it, whether that leaves it over the budget, and whether a longer one is being prepared. */
async function readyFacts(engine: Engine, view: StepView, placed: StepView, limit: number): Promise<ReadyFacts> {
  const size = totalSize(placed);
  const from = coveredUpTo(placed);
  const end = liveStart(placed.conversation);
  const { budget, frame } = planOf(engine, placed, limit);
  const overBudget = budget !== undefined && end > from && worthCatchingUp(size - frame, estimateMessages(placed.conversation, from, end, placed.estimator), budget.total);
  return { size, overBudget, longerPreparing: await longerPreparing(engine, view, placed.checkpoint!.length) };
}
