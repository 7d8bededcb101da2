import { CATCH_UP_CACHED_SHARE, CATCH_UP_SHARE, MEASURED_SUMMARY_MS } from '../tunables';

/**
 * The policy (docs/design.md, "The policy"): what a step does, decided once by one pure function
 * of explicit inputs. The same facts give the same action, whatever the machine's load: time
 * enters only as numbers (`now`, the measured times). Each rule is a row of the table in the
 * design document; its name is on the action, on the compaction's record and in the log line.
 */

/** How fast a conversation grows as of a step: the most it grew in one recent step, the mean growth and the mean interval between steps, and the time since its checkpoint last changed. */
export interface Pace {
  growth: number;
  meanGrowth: number;
  meanInterval: number;
  sinceShrunk?: number;
  /** The time since the step before went out: a pause longer than the provider's cache lifetime empties its cache. */
  idle?: number;
}

/** A checkpoint prepared for this conversation, ready: the prompt's size with it in place, and what would follow sending it. */
export interface ReadyFacts {
  /** The prompt's size with it in place (estimated). */
  size: number;
  /**
   * With it in place, the prompt is over the budget of what a compaction keeps by at least
   * `CATCH_UP_SHARE` of the budget, with at least as much between it and the live part: a catch-up
   * would bring it back under the budget.
   */
  overBudget: boolean;
  /** A longer one is being prepared by this instance (it becomes the catch-up: no new request). */
  longerPreparing: boolean;
}

/** Everything the policy reads of a step: gathered once, before it decides (facts.ts). */
export interface StepFacts {
  /** The clock's reading, in milliseconds. */
  now: number;
  auto: boolean;
  /** The `prepare` option: a share of the ceiling, or `false`. */
  prepare: number | false;
  /** `compactNext()` or the call's `compact` option. */
  manual: boolean;
  /** The window and the ceiling; `undefined` without a window. */
  window: number | undefined;
  ceiling: number | undefined;
  /**
   * Where an automatic compaction is due below the ceiling (`compactAt`, docs/design.md, "Compaction
   * timed by what it costs"): the trigger that costs least, or a share of the ceiling. `undefined`:
   * at the ceiling.
   */
  trigger?: number | undefined;
  /** The pause before this step was longer than the provider's cache lifetime: its prompt is read uncached whatever goes out. */
  cold?: boolean;
  /** False while a provider item's size is unknown (until the provider counts a prompt holding it). */
  sizeKnown: boolean;
  /** The prompt's size: the provider's count it rests on plus what is estimated on top. */
  size: number;
  counted: number;
  estimated: number;
  /**
   * Before its model has a count, the prompt measured as dense as code reaches the window less the
   * reply (`maxOutputTokens`): it is due like a prompt at the ceiling (docs/design.md, "The size of a prompt").
   */
  denseReach: boolean;
  /** A hold stands on this conversation (no progress, nothing older, a failure: docs/design.md, "No progress"). */
  held: boolean;
  /** There is something older than the live part to cover (not covered yet by the checkpoint). */
  olderToCover: boolean;
  /** The step's conversation extends beyond where a checkpoint would cover up to the live part (a checkpoint of the whole conversation is possible). */
  wholeToCover: boolean;
  /** Clearing old tool outputs alone brings the prompt to its target (docs/design.md, "Clearing old tool results"); `instead`: under the ceiling at all. */
  clearing: { meets: boolean; instead: boolean };
  /** A catch-up of this conversation is ready (a prepared checkpoint the first step after it is ready sends). */
  catchUp: ReadyFacts | undefined;
  /** The longest checkpoint prepared for this conversation that is ready (and this model reads). */
  ready: ReadyFacts | undefined;
  /**
   * A summary of this conversation being written (by this instance in the background or by another
   * under its lease): the latest deadline of those with which the prompt could fit under the
   * ceiling (`Infinity` without `summaryTimeout`), and whether there is one (`couldFit`).
   */
  writing: { until: number; couldFit: boolean } | undefined;
  /**
   * This step already waited for the summary being written, and how that ended (a new fact): the
   * checkpoint came (then it is `ready`), its writer failed or is gone (a lease that ran out), or
   * its deadline passed (`summaryTimeout`). It never waits twice.
   */
  waited: WaitOutcome | undefined;
  /** A checkpoint is already prepared (or being prepared, here or elsewhere) that a preparation now would repeat: `live` for one up to the live part, `whole` for one of the whole conversation. */
  prepared: { live: boolean; whole: boolean };
  /** The size from which a step prepares: `prepare` x the ceiling, or halfway from where the last compaction left the prompt to the ceiling when that was over it. */
  prepareFrom: number;
  /** A checkpoint of the whole conversation can be requested without shortening the request where one up to the live part would not need it. */
  coverWhole: boolean;
  /** What could still come before the ceiling, with a live step like this one, fits in the budget after a checkpoint prepared now. */
  tailFits: boolean;
  /** How fast the conversation grows (`undefined` when this step does not extend the one before). */
  pace: Pace | undefined;
  /** The longest recent summary of the model that writes them, in milliseconds (`undefined` before one was measured). */
  summaryMs: number | undefined;
  /** The share of its input the latest summary request read from the prompt cache (`undefined`: not reported). */
  cachedShare: number | undefined;
}

/** What goes out: the step as it is, a prepared checkpoint, a clearing, a compaction now, or a wait for the summary being written. */
export type StepAction =
  | { kind: 'send'; rule: SendRule }
  | { kind: 'send-prepared'; rule: 'prepared' | 'catch-up' | 'cold-cache'; which: 'ready' | 'catch-up' }
  | { kind: 'clear'; rule: 'clear' | 'clear-instead' }
  | { kind: 'compact'; rule: 'ceiling' | 'cost' | 'manual' | 'from-prepared'; from?: 'ready' | 'catch-up' }
  | { kind: 'wait'; rule: 'being-written'; until: number }
  | { kind: 'give-up'; rule: 'summary-failed' };

export type WaitOutcome = 'made' | 'failed' | 'deadline';

export type SendRule = 'auto-off' | 'no-window' | 'size-unknown' | 'under-ceiling' | 'held' | 'over-trigger';

/** What is prepared in the background beside the step: a checkpoint up to the live part, of the whole conversation, or a catch-up; or an existing one made the catch-up. */
export type PrepareAction =
  | { kind: 'start'; rule: 'band' | 'timed' | 'step-ahead' | 'catch-up'; whole: boolean; catchUp: boolean }
  | { kind: 'adopt-catch-up'; rule: 'catch-up' };

export interface Decision {
  step: StepAction;
  prepare: PrepareAction | undefined;
}

/** The one decision of a step. */
export function decideStep(facts: StepFacts): Decision {
  const step = stepAction(facts);
  return { step, prepare: prepareAction(facts, step) };
}

/**
 * Where a step's automatic compaction is due: the trigger (`compactAt`) where there is one below
 * the ceiling, else the ceiling. Every rule below reads it as "the ceiling"; the window's ceiling
 * still bounds it.
 */
export function dueAt(facts: Pick<StepFacts, 'ceiling' | 'trigger'>): number | undefined {
  const { ceiling, trigger } = facts;
  return ceiling === undefined || trigger === undefined ? ceiling : Math.min(ceiling, trigger);
}

/** What goes out (rules `manual`, `catch-up`, `cold-cache`, `ceiling`, `cost`, `prepared`, `clear-instead`, `being-written`, `from-prepared`, `clear`). */
export function stepAction(facts: StepFacts): StepAction {
  const { size } = facts;
  const ceiling = dueAt(facts);
  if (facts.manual) return { kind: 'compact', rule: 'manual' };
  if (!facts.auto) return { kind: 'send', rule: 'auto-off' };
  if (ceiling === undefined || ceiling <= 0) return { kind: 'send', rule: 'no-window' };
  if (!facts.sizeKnown) return { kind: 'send', rule: 'size-unknown' };
  // A catch-up ready is sent by the first step after it is ready, under the ceiling too, when it lowers the prompt.
  const catchUp = facts.catchUp !== undefined && facts.catchUp.size < size ? facts.catchUp : undefined;
  const current = catchUp?.size ?? size;
  if (current < ceiling && !(catchUp === undefined && facts.denseReach)) {
    if (catchUp !== undefined) return { kind: 'send-prepared', rule: 'catch-up', which: 'catch-up' };
    // A ready checkpoint that lowers the prompt, no hold standing.
    const lowers = !facts.held && facts.ready !== undefined && facts.ready.size < size;
    // After a pause longer than the cache lifetime the prompt is read uncached anyway: a ready checkpoint goes out free of a cache miss.
    if (lowers && facts.cold === true && size * 2 > ceiling) return { kind: 'send-prepared', rule: 'cold-cache', which: 'ready' };
    // Under a trigger below the window's ceiling the first step after a checkpoint is ready sends it, wherever the trigger has moved since:
    // its request is spent and it lowers the prompt (one begun against the trigger, or in the band while the trigger stood at the ceiling).
    if (lowers && overTrigger(facts)) return { kind: 'send-prepared', rule: 'prepared', which: 'ready' };
    return { kind: 'send', rule: 'under-ceiling' };
  }
  if (facts.held && catchUp === undefined) return { kind: 'send', rule: 'held' };
  // At the ceiling: the longest prepared checkpoint ready, sent at once when the prompt with it fits.
  const ready = facts.ready;
  if (ready !== undefined && ready.size < ceiling) return { kind: 'send-prepared', rule: 'prepared', which: 'ready' };
  // At a trigger under the window's ceiling the step fits whole: it goes out whole while its
  // compaction is written beside it (one request a compaction, no wait), and the step after the
  // summary is ready sends it.
  if (overTrigger(facts) && (facts.writing !== undefined || (ready === undefined && catchUp === undefined && !facts.clearing.meets && ahead(facts) !== undefined))) return { kind: 'send', rule: 'over-trigger' };
  // One being written with which the prompt could fit: a clearing that alone brings the prompt under
  // the ceiling goes instead of waiting; otherwise the step waits for the rest of it (never for a
  // second one), until its deadline. One that could not fit is no help: the step compacts now.
  if (facts.writing?.couldFit === true && facts.waited === undefined) {
    if (facts.clearing.instead) return { kind: 'clear', rule: 'clear-instead' };
    return { kind: 'wait', rule: 'being-written', until: facts.writing.until };
  }
  // Waited for until its deadline: the step goes on as after a failed compaction (no second summary).
  if (facts.waited === 'deadline' && ready === undefined && catchUp === undefined) return { kind: 'give-up', rule: 'summary-failed' };
  if (ready !== undefined) return { kind: 'compact', rule: 'from-prepared', from: 'ready' };
  if (catchUp !== undefined) return { kind: 'compact', rule: 'from-prepared', from: 'catch-up' };
  if (facts.clearing.meets) return { kind: 'clear', rule: 'clear' };
  return { kind: 'compact', rule: facts.ceiling !== undefined && ceiling < facts.ceiling && size < facts.ceiling && !facts.denseReach ? 'cost' : 'ceiling' };
}

/** What is prepared beside the step (rules `catch-up`, `step-ahead`, `timed`, `band`); `undefined`: nothing. */
export function prepareAction(facts: StepFacts, step: StepAction): PrepareAction | undefined {
  const { prepare } = facts;
  const ceiling = dueAt(facts);
  if (!facts.auto || prepare === false || ceiling === undefined || ceiling <= 0 || !facts.sizeKnown) return undefined;
  if (step.kind === 'send-prepared') return afterPrepared(facts, step);
  if (step.kind !== 'send') return undefined;
  // A hold stands over the trigger: nothing is compacted, in the background either.
  if (overTrigger(facts)) return step.rule === 'held' ? undefined : ahead(facts);
  if (facts.size >= ceiling) return undefined;
  const start = unprepared(facts);
  if (start === undefined) return undefined;
  const { size, pace, summaryMs } = facts;
  const { whole, live, grown } = start;
  // No time passes between this conversation's steps (a clock standing still): a summary begun at
  // the step ahead of the ceiling is ready as soon as one begun in the band, and covers more.
  if (pace !== undefined && pace.meanInterval === 0 && grown > 0) {
    return size + grown < ceiling ? undefined : started('step-ahead', start);
  }
  if (pace !== undefined && summaryMs !== undefined && summaryMs >= MEASURED_SUMMARY_MS && grown > 0) {
    // Summaries measured: a summary begun now should be ready about when the ceiling is reached.
    if (size + pace.growth < ceiling) {
      if (size < prepare * ceiling || size < facts.prepareFrom) return undefined;
      const left = timeLeft(pace, ceiling, size);
      if (left > summaryMs) return undefined;
      if (pace.sinceShrunk !== undefined && pace.sinceShrunk + left < summaryMs) return undefined;
      if (!facts.tailFits) return undefined;
      return started('timed', start);
    }
    return started('step-ahead', start);
  }
  // Unmeasured: the next step, as large as the most it grew in a step lately, reaches the ceiling.
  if (grown > 0 && size + grown >= ceiling && whole) return { kind: 'start', rule: 'step-ahead', whole: true, catchUp: false };
  if (size < prepare * ceiling || size < facts.prepareFrom || !live) return undefined;
  return { kind: 'start', rule: 'band', whole: false, catchUp: false };
}

/**
 * Whether the step is decided against a trigger under the window's ceiling with preparing on
 * (docs/design.md, "Preparing ahead"): no step there must wait for a summary (it fits whole), so
 * nothing is prepared in the band and the whole compaction starts one step ahead of the trigger.
 */
function overTrigger(facts: StepFacts): boolean {
  const { ceiling, trigger } = facts;
  return facts.prepare !== false && ceiling !== undefined && trigger !== undefined && trigger < ceiling && facts.size < ceiling && !facts.denseReach;
}

/**
 * Under a trigger below the window's ceiling: the compaction of the whole conversation (else up to
 * its live part) starts at the step whose next step, growing as much as the most a recent step
 * grew, reaches the trigger, or at a step over it (rule `step-ahead`); or, summaries measured, when
 * one begun now would not be ready before the window's ceiling otherwise (rule `timed`).
 */
function ahead(facts: StepFacts): PrepareAction | undefined {
  const start = unprepared(facts);
  if (start === undefined) return undefined;
  const { size, pace, summaryMs, ceiling } = facts;
  const trigger = dueAt(facts)!;
  const rule = size >= trigger || size + start.grown >= trigger ? 'step-ahead' : pace !== undefined && summaryMs !== undefined && summaryMs >= MEASURED_SUMMARY_MS && start.grown > 0 && timeLeft(pace, ceiling!, size) <= summaryMs ? 'timed' : undefined;
  return rule === undefined ? undefined : started(rule, start);
}

/** The compaction a preparation starts: of the whole conversation where it can cover it, else up to its live part; none where neither is left to prepare. */
function started(rule: 'timed' | 'step-ahead', { whole, live }: { whole: boolean; live: boolean }): PrepareAction | undefined {
  return whole || live ? { kind: 'start', rule, whole, catchUp: false } : undefined;
}

/** What a preparation begun now could cover, where one may begin: nothing in flight, clearing not enough, something not prepared yet; and the most the conversation grew in a step lately. */
function unprepared(facts: StepFacts): { whole: boolean; live: boolean; grown: number } | undefined {
  // One summary in flight per conversation: nothing is started, nor superseded, while one is written.
  if (facts.writing !== undefined) return undefined;
  // A hold stands (a failure, no progress, nothing older): nothing is compacted in the background either.
  if (facts.held) return undefined;
  // Clearing needs no model call: nothing is prepared while it alone would bring the prompt under its target.
  if (facts.olderToCover && facts.clearing.meets) return undefined;
  // The most it grew in a step lately, or else what came since the provider's count.
  const grown = facts.pace?.growth ?? (facts.counted > 0 ? facts.estimated : 0);
  return { whole: facts.wholeToCover && facts.coverWhole && !facts.prepared.whole, live: facts.olderToCover && !facts.prepared.live, grown };
}

/**
 * After a step sends a prepared checkpoint: a longer one this instance is preparing becomes the
 * catch-up (no new request); else, when the prompt with it is over the budget (`overBudget`) and a
 * catch-up would be ready before the ceiling from a summarizer that reads the conversation from its
 * prompt cache, one of the conversation is started, unless one is being written. A catch-up that
 * still leaves the prompt over the budget starts none.
 */
function afterPrepared(facts: StepFacts, step: Extract<StepAction, { kind: 'send-prepared' }>): PrepareAction | undefined {
  const sent = step.which === 'catch-up' ? facts.catchUp! : facts.ready!;
  if (sent.longerPreparing) return { kind: 'adopt-catch-up', rule: 'catch-up' };
  if (step.rule === 'catch-up' || facts.writing !== undefined || !sent.overBudget) return undefined;
  if (!readyBeforeCeiling(facts, sent.size) || !(facts.cachedShare === undefined || facts.cachedShare >= CATCH_UP_CACHED_SHARE)) return undefined;
  return { kind: 'start', rule: 'catch-up', whole: facts.coverWhole, catchUp: true };
}

/** The time left to the ceiling: the steps left at the recent mean growth, each as long as the recent mean interval. */
export function timeLeft(pace: Pace, ceiling: number, size: number): number {
  return ((ceiling - size) / pace.meanGrowth) * pace.meanInterval;
}

/** Whether a catch-up begun now would be ready before the conversation, at `size` after it, reaches the ceiling. */
function readyBeforeCeiling(facts: StepFacts, size: number): boolean {
  const { pace, summaryMs } = facts;
  if (pace === undefined || summaryMs === undefined || summaryMs < MEASURED_SUMMARY_MS) return true;
  return timeLeft(pace, dueAt(facts)!, size) > summaryMs;
}

/**
 * Whether a prompt is over the budget of what a compaction keeps by enough to be worth a catch-up:
 * the checkpoint and everything after it (`kept`) over the budget's `total` by at least
 * `CATCH_UP_SHARE` of it, and the messages between the checkpoint and the live part (`tail`) at
 * least as much, for it to cover.
 */
export function worthCatchingUp(kept: number, tail: number, total: number): boolean {
  const worth = total * CATCH_UP_SHARE;
  return kept - total >= worth && tail >= worth;
}
