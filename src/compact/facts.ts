import { keepBudget } from '../checkpoint/budget';
import { type Engine, modelKey, warnOnce } from '../engine';
import { modelFacts, windowFor } from '../model';
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
import { type CompactionPlan, expectedSummary, frameTokens, planOf } from './plan';
import { type Candidate, alreadyPrepared, coverWhole, findPrepared, fitsAfter, leftAt, longerPreparing, preparingFrom, readyCatchUp, writing } from './prepare';
import { noteUnpriced } from './report';
import { type Economy, type SummaryTokens, cacheExpired, compactionCost, costTrigger } from './trigger';

/** What the facts of a step point to: the checkpoints they speak of, placed in the step's view, and the summary being written. */
export interface Found {
  window: number | undefined;
  /** Where an automatic compaction is due: the trigger (`compactAt`) or the ceiling. */
  limit: number | undefined;
  /** What a compaction costs and saves in this conversation, where the model's prices and its growth are known: what the policy expected it to save (`last()`). */
  economy?: Economy;
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
  const windowCeiling = window === undefined ? undefined : ceiling(window, settings.buffer, view.params.maxOutputTokens);
  if (windowCeiling !== undefined && windowCeiling <= 0) {
    const key = modelKey(model);
    warnOnce(engine, `ceiling:${key}`, `ai-compaction: the ceiling for ${key} is ${windowCeiling} tokens (the window less the room kept free); not compacting on its own`);
  }
  // Measured once, and handed to whatever reads them: the prompt's size, what a compaction would
  // cover, and the frame (system messages and tool definitions).
  const size = totalSize(view);
  const from = coveredUpTo(view);
  const end = liveStart(view.conversation);
  const frame = frameTokens(view.system, view.params.tools, view.estimator);
  const left = await leftAt(view, size);
  const summaries = conversationSummaries(view);
  const due = windowCeiling === undefined || windowCeiling <= 0 || !settings.auto ? undefined : dueOf(engine, model, windowCeiling, { size, frame, left, pace: context.pace, measured: summaries.tokens });
  const limit = due?.trigger ?? windowCeiling;
  const facts: StepFacts = {
    now: engine.clock.now(),
    auto: settings.auto,
    prepare: settings.prepare,
    manual: context.manual,
    window,
    ceiling: windowCeiling,
    ...(due?.trigger === undefined ? {} : { trigger: due.trigger }),
    ...(due?.cold === true ? { cold: true } : {}),
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
  const found: Found = { window, limit, plan: undefined, pending: [], ownDeadline: false, ...(due?.economy === undefined ? {} : { economy: due.economy }) };
  if (!settings.auto || context.manual || limit === undefined || limit <= 0 || !view.sizeKnown || view.digests === undefined || view.threadDigest === undefined) return { facts, found };
  const plan = planOf(engine, view, limit, { measured: { from, frame } });
  found.plan = plan;
  const clearingRequest = { view, reason: 'auto' as const, model, limit, target: undefined, from, end };
  facts.clearing.meets = end > from && planClearing(settings, clearingRequest) !== undefined;
  facts.coverWhole = coverWhole(view, window, end);
  const being = await writing(engine, view, model, plan, found.pending, (length) => fitsAfter(view, length, plan.budget?.step, limit));
  facts.writing = being === undefined ? undefined : { until: being.until, couldFit: being.couldFit };
  found.ownDeadline = being?.own === true;
  const catchUp = await readyCatchUp(engine, view, model, plan);
  if (catchUp !== undefined) {
    found.catchUp = catchUp;
    facts.catchUp = await readyFacts(engine, view, catchUp, limit, frame);
  }
  const atLimit = Math.min(size, facts.catchUp?.size ?? size) >= limit || (facts.catchUp === undefined && facts.denseReach);
  // After a pause longer than the cache lifetime, a ready checkpoint may go out over half the trigger (rule `cold-cache`).
  // Under a trigger below the window's ceiling a checkpoint prepared against it goes out once ready
  // (policy.ts, rule `prepared`), and a step prepares before the trigger: a hold counts there too.
  const underTrigger = settings.prepare !== false && windowCeiling !== undefined && limit < windowCeiling && size < windowCeiling;
  if (atLimit || (facts.cold === true && size * 2 > limit) || underTrigger) {
    facts.held = facts.catchUp === undefined && (await held(view, limit, window));
    const prepared = await findPrepared(engine, view, model, plan, limit);
    let placed = prepared?.ready ?? prepared?.tooLarge;
    // What the step waited for: written by another instance, it may be no prepared one (a step's own compaction under its lease).
    const { awaited } = context;
    if (awaited !== undefined && readableBy(awaited, modelKey(model)) && awaited.length > from && (placed === undefined || awaited.length > placed.checkpoint!.length || totalSize(placed) >= limit)) {
      const candidate = withCheckpoint(view, awaited);
      if (placed === undefined || totalSize(candidate) < limit || totalSize(placed) >= limit) placed = candidate;
    }
    if (placed !== undefined) {
      found.ready = placed;
      facts.ready = await readyFacts(engine, view, placed, limit, frame);
    }
    if (atLimit && facts.writing !== undefined) facts.clearing.instead = planClearing(settings, { ...clearingRequest, instead: true }) !== undefined;
  }
  // Over a trigger under the window's ceiling the step may still prepare (policy.ts, rule `over-trigger`).
  if (settings.prepare !== false && (!atLimit || underTrigger)) {
    facts.prepared = await alreadyPrepared(engine, view, from, end);
    facts.prepareFrom = preparingFrom(left, settings.prepare * limit, limit);
    facts.tailFits = plan.budget === undefined || plan.live + (limit - size) <= plan.budget.total;
  }
  return { facts, found };
}

/** The facts of a checkpoint prepared for this conversation (`placed`: the step's view with it): the prompt's size with it, whether that leaves it over the budget, and whether a longer one is being prepared. */
async function readyFacts(engine: Engine, view: StepView, placed: StepView, limit: number, frame: number): Promise<ReadyFacts> {
  const size = totalSize(placed);
  const from = placed.checkpoint!.length;
  const end = liveStart(placed.conversation);
  const { budget } = planOf(engine, placed, limit, { measured: { from, frame } });
  const overBudget = budget !== undefined && end > from && worthCatchingUp(size - frame, estimateMessages(placed.conversation, from, end, placed.estimator), budget.total);
  return { size, overBudget, longerPreparing: await longerPreparing(engine, view, placed.checkpoint!.length) };
}

/**
 * Where this step's automatic compaction is due (docs/design.md, "Compaction timed by what it
 * costs"): with `compactAt: 'cost'`, the trigger that costs least, from the model's prices, the
 * conversation's growth (`pace`), where its last compaction left the prompt (`left`; before one,
 * what the budget keeps at the ceiling) and what its compactions cost (the latest one's requests as
 * measured; before one, a request reading this prompt from the cache and writing half the summary's
 * limit); with a share, that share of the ceiling; else (or prices unknown) the ceiling. And
 * whether the pause before this step outlived the provider's cache.
 */
function dueOf(
  engine: Engine,
  model: Model,
  limit: number,
  { size, frame, left, pace, measured }: { size: number; frame: number; left: number | undefined; pace: Pace | undefined; measured: SummaryTokens | undefined },
): { trigger?: number; economy?: Economy; cold: boolean } {
  const { compactAt, keep, summaryOutputTokens, budgetShare } = engine.settings;
  if (compactAt === 'ceiling') return { cold: false };
  const prices = modelFacts(engine, model).pricing;
  const cold = cacheExpired(prices, pace?.idle);
  if (typeof compactAt === 'number') return { trigger: Math.round(compactAt * limit), cold };
  if (prices === undefined) {
    noteUnpriced(engine, modelKey(model));
    return { cold };
  }
  if (pace === undefined) return { cold };
  const budget = keepBudget({ ceiling: limit, frame, keep, summaryOutputTokens, ...(budgetShare === undefined ? {} : { share: budgetShare }) });
  const after = left ?? frame + budget.total;
  const summary = measured ?? { input: size, cached: size, output: expectedSummary(budget.summary, undefined) };
  const economy: Economy = { prices, growth: pace.meanGrowth, cost: compactionCost(prices, summary, after) };
  return { trigger: costTrigger(economy, after, frame, limit), economy, cold };
}
