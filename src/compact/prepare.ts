import { LRUCache } from 'lru-cache';
import { afterCheckpoint } from '../checkpoint/live';
import { type Engine, modelKey, ownState } from '../engine';
import { CompactionError, failureDetail, messageOf } from '../errors';
import { liveEnd, liveStart } from '../prompt/conversation';
import type { CallOptions, Message, Model } from '../prompt/types';
import { estimateMessages, estimatePrompt } from '../sizing/estimate';
import { type StoredCheckpoint, liveLeases, readableBy } from '../store/format';
import { type StepView, coveredUpTo, totalSize, withCheckpoint } from '../view';
import { planClearing } from './clear';
import { compactOnce, sendPrepared, summaryFitsWhole, writerOf } from './compact';
import type { Decision } from './decide';
import { untilAborted } from './flight';
import { type CompactionPlan, planOf } from './plan';
import { awaitLease } from './lease';
import { longestSummary, summaryCachedShare } from './measured';

/**
 * Preparing the next checkpoint ahead (docs/design.md, "Preparing ahead"): no step waits for a
 * summary where the conversation leaves time to write one, and none waits for a second one.
 *
 * - A step that goes out as it is, at or over `prepare` x the ceiling, starts the compaction of the
 *   conversation up to its live part in the background (`prepareAhead`): the very compaction the
 *   step at the ceiling would make for it (`compactOnce`, the step's own request, so a cache hit),
 *   stored as a prepared checkpoint. The step does not wait for it. Once its model's summaries have
 *   been measured, it starts only when one begun now would be ready about when the ceiling is
 *   reached (the steps left at the conversation's mean growth, each its mean interval apart), and
 *   no sooner than what comes before the ceiling fits in the budget after its checkpoint; not at all
 *   where the conversation runs from its last compaction to the ceiling faster than a summary is
 *   written (only one step ahead then).
 * - A step whose growth says the next step will reach the ceiling starts the compaction that next
 *   step will make: of this step's whole conversation (the next step's live part is what this
 *   step's reply adds). At the ceiling it leaves the prompt where waiting for a summary would.
 * - A prepared checkpoint is held back: it is listed apart from the checkpoints steps find
 *   (`Thread.prepared`), so the steps under the ceiling go out whole.
 * - The first step at the ceiling (`compactAtCeiling`, before-step.ts) sends the longest one ready
 *   at once when the prompt with it fits under the ceiling; one still being written is waited for
 *   only when none is ready; otherwise it compacts now, from it (updating it). The step that first
 *   sends it promotes it to the conversation's checkpoint and reports it.
 * - A checkpoint prepared ahead leaves room in the budget for what may come after it before the
 *   ceiling (`liveAfter`, plan.ts). Sent with more than that live after it, it can leave the prompt
 *   over the budget: when by enough (`worthCatchingUp`), a catch-up (a longer one still being
 *   written, or a new one of the whole conversation, begun only where it would be ready before the
 *   ceiling) is sent by the first step after it is ready, under the ceiling too.
 */

/** A checkpoint this instance started preparing in the background for a prefix of a conversation (docs/design.md, "Preparing ahead"). */
interface Preparing {
  /** The prefix it covers: its length and digest. */
  length: number;
  digest: string;
  /** The prepared checkpoint, or `undefined` when the background compaction failed. */
  made: Promise<StoredCheckpoint | undefined>;
  /** Whether `made` has settled. */
  settled: boolean;
  /** Covers its step's whole conversation: the compaction the next step makes, prepared one step ahead. */
  whole: boolean;
  /** A catch-up: the first step after it is ready sends it, not held back until the ceiling. */
  catchUp: boolean;
}

/** What this instance prepares for the conversations of one thread. */
interface PreparingThread {
  /** Newest first. */
  entries: Preparing[];
  /** The steps of the thread check and start one at a time: this settles when the last has. */
  turn: Promise<void>;
}

/** Threads whose background compactions and pace an instance remembers (docs/design.md, "Preparing ahead"). */
const PREPARING_THREADS = 512;

/**
 * Checkpoints an instance prepares in the background, by the thread digest of their conversation:
 * while one covers more than a conversation's checkpoint, it is not prepared again (a failed one
 * included, so a failing summarizer costs one background request, not one per step). The least
 * recently used threads are forgotten first.
 */
const preparingOf = ownState(() => new LRUCache<string, PreparingThread>({ max: PREPARING_THREADS }));

/** How fast the conversation of each thread an instance serves grows (`stepPace`). */
const pacesOf = ownState(() => new LRUCache<string, Pace>({ max: PREPARING_THREADS }));

/** What an instance remembers of the steps of a thread it served: how fast its conversation grows. */
interface Pace {
  /** When the last step went out, how long its conversation was and how large its prompt. */
  at: number;
  length: number;
  size: number;
  /** The growths of the recent steps, and the times between them spent outside the middleware (newest first). */
  growths: number[];
  intervals: number[];
  /** The checkpoint the last step went out with (its digest), and when the conversation's checkpoint last changed. */
  checkpoint?: string;
  shrunkAt?: number;
}

/** Background compactions remembered per thread (conversations sharing an opening share one). */
const PREPARING_PER_THREAD = 8;

/**
 * Once its model's summaries have been measured (`MEASURED_MS` or more: a summary written in less
 * than a quarter of a second, a local test double or a cache, leaves preparing to the band),
 * preparing starts when the time left to the ceiling is within `SUMMARY_MARGIN` times the longest
 * recent one (chosen on the benchmarks: docs/benchmarks.md).
 */
const MEASURED_MS = 250;
const SUMMARY_MARGIN = 1;

/**
 * Starts preparing the next checkpoint of a step, as it goes out, in the background: never waits
 * for it (handed to `waitUntil` when there is one; its failure is logged and changes nothing).
 * - a catch-up, when this step sent a prepared checkpoint and the prompt with it is over the budget
 *   (a new one only where it would be ready before the ceiling, `readyBeforeCeiling`, from a
 *   summarizer that reads the conversation from its prompt cache, `readsFromCache`, and none after
 *   a catch-up);
 * - the next step's compaction (this step's whole conversation), when this step's growth says the
 *   next step reaches the ceiling;
 * - the compaction up to its live part, when its size is at or over `prepare` x the ceiling (and
 *   under it) and nothing is being prepared for its conversation; after a compaction that left the
 *   prompt in that band, from halfway to the ceiling (`preparingFrom`).
 */
export async function prepareAhead(engine: Engine, view: StepView, model: Model, decision: Decision, arrived: Arrival): Promise<void> {
  const { auto, prepare } = engine.settings;
  const { limit } = decision;
  if (!auto || prepare === false || limit === undefined || limit <= 0 || !view.sizeKnown) return;
  const { digests, threadDigest } = view;
  if (digests === undefined || threadDigest === undefined) return;
  const size = totalSize(view);
  const pace = stepPace(engine, view, arrived);
  // At the ceiling or over it a step compacts, or is held: nothing to prepare.
  if (size >= limit) return;
  const from = coveredUpTo(view);
  const end = liveStart(view.conversation);
  if (view.compaction?.prepared === true) {
    // A catch-up (a prepared checkpoint sent by a step under the ceiling: `sendCatchUp`) that leaves
    // the prompt over the budget again starts none: the conversation grows by more than the budget
    // leaves while a summary is written, and every catch-up after it would too.
    const caughtUp = decision.reason === undefined;
    return catchUpAfter(
      engine,
      view,
      model,
      decision,
      !caughtUp && end > from && overBudget(engine, view, limit, from, end) && readyBeforeCeiling(engine, model, pace, limit, size) && readsFromCache(engine, model),
    );
  }
  if (view.compaction !== undefined) return;
  // With clearing old tool results on, nothing is prepared while clearing alone would bring the
  // prompt under its target: it needs no model call, the step at the ceiling clears.
  if (end > from && planClearing(engine.settings, { view, reason: 'auto', model, limit, target: undefined, from, end }) !== undefined) return;
  // The most it grew in a step lately (as this instance served its steps, or else since the
  // provider's count the size rests on, which every instance sharing the store reads).
  const grown = pace?.growth ?? (view.size.counted > 0 ? view.size.estimated : 0);
  const summary = longestSummary(engine, writerOf(engine, model));
  if (pace !== undefined && summary !== undefined && summary >= MEASURED_MS && grown > 0) {
    // Summaries measured: preparing starts once a summary begun now is ready about when the ceiling
    // is reached, not before, so that less of the conversation comes after it: in the band, when the
    // time left to the ceiling (the steps left at the recent mean growth, each as long as the recent
    // mean interval) is within a summary's writing time; and at the latest one step ahead, when the
    // next step, growing as much as the most it grew in a step lately, reaches the ceiling (the step
    // there then waits at most for the rest of it; a chat's next turn may be a long paste, and at a
    // person's pace a summary begun one turn ahead is ready when the next one comes). It covers
    // this step's whole conversation where it can: the steps after it are live.
    if (size + pace.growth < limit) {
      if (size < prepare * limit || size < (await preparingFrom(view, prepare * limit, limit))) return;
      const left = timeLeft(pace, limit, size);
      if (left > summary * SUMMARY_MARGIN) return;
      // Where the conversation runs from its last compaction to the ceiling in less time than a
      // summary takes, no summary begun in the band is ready by the ceiling: the step there waits
      // whenever it began, and what came after the point it began at would go out live after it (a
      // higher prompt, the next compaction sooner). Not in the band then: one step ahead only.
      if (pace.sinceShrunk !== undefined && pace.sinceShrunk + left < summary * SUMMARY_MARGIN) return;
      // Where a summary takes longer than the conversation runs to the ceiling, beginning sooner
      // only shortens the wait at the ceiling, and what comes before it goes out live after the
      // checkpoint: not before that fits in the room the budget leaves after it (else the prompt
      // right after it is over the budget and a catch-up follows, a second summary and cache miss).
      if (!tailFits(engine, view, limit, size)) return;
    }
    if (view.conversation.length > from && coverWhole(view, decision, end)) return start(engine, view, model, decision, { through: view.conversation.length, whole: true, catchUp: false });
    if (end > from) return start(engine, view, model, decision, { whole: false, catchUp: false });
    return;
  }
  // Unmeasured: the next step, as large as the most it grew in a step lately, reaches the ceiling.
  if (grown > 0 && size + grown >= limit && view.conversation.length > from && coverWhole(view, decision, end)) {
    return start(engine, view, model, decision, { through: view.conversation.length, whole: true, catchUp: false });
  }
  if (size < prepare * limit || end <= from) return;
  if (size < (await preparingFrom(view, prepare * limit, limit))) return;
  return start(engine, view, model, decision, { whole: false, catchUp: false });
}

/**
 * Whether a compaction prepared for the next step covers this step's whole conversation: not where
 * its summary request would have to go out shortened while the one up to the live part (`end`)
 * would not (a small window and a large live part: a long paste in a chat), since a shortened
 * request loses what the summary should keep.
 */
function coverWhole(view: StepView, decision: Decision, end: number): boolean {
  if (summaryFitsWhole(view, view.size, decision.window)) return true;
  // Shortened only in its tool outputs (the first rungs of the transcript's ladder): the words all go.
  const words = view.conversation.filter((message) => message.role !== 'tool').map((message) => (typeof message.content === 'string' ? message : { ...message, content: message.content.filter((part) => part.type !== 'tool-result') }) as Message);
  if (summaryFitsWhole(view, { counted: 0, estimated: estimatePrompt([...view.system, ...words], view.params.tools, view.estimator) }, decision.window)) return true;
  const live = estimateMessages(view.conversation, end, view.conversation.length, view.estimator);
  const { counted, estimated } = view.size;
  const upToLive = { counted: Math.max(0, counted - Math.max(0, live - estimated)), estimated: Math.max(0, estimated - live) };
  return !summaryFitsWhole(view, upToLive, decision.window);
}

/**
 * Whether what the conversation may add before the ceiling (`limit - size`), with a live step like
 * this one, fits in the budget's total: the room a checkpoint prepared now leaves after it
 * (`liveAfter`, plan.ts) is not cut short.
 */
function tailFits(engine: Engine, view: StepView, limit: number, size: number): boolean {
  const { budget, live } = planOf(engine, view, limit);
  return budget === undefined || live + (limit - size) <= budget.total;
}

/** The time left to the ceiling: the steps left at the conversation's recent mean growth, each as long as the recent mean interval. */
function timeLeft(pace: PaceNow, limit: number, size: number): number {
  return ((limit - size) / pace.meanGrowth) * pace.meanInterval;
}

/**
 * Whether a catch-up begun now would be ready before the conversation reaches the ceiling: once its
 * model's summaries are measured (`MEASURED_MS`), the time left to it (`timeLeft`) is longer than
 * `SUMMARY_MARGIN` times the longest recent summary. A catch-up ready only at the ceiling covers the
 * conversation as it was a summary's time before: the step there sends it with all that came since
 * live after it, the prompt high again, and it cost a summary request and a cache miss for nothing
 * the step at the ceiling would not have done itself (docs/design.md, "A catch-up keeps the budget").
 */
function readyBeforeCeiling(engine: Engine, model: Model, pace: PaceNow | undefined, limit: number, size: number): boolean {
  const summary = longestSummary(engine, writerOf(engine, model));
  if (pace === undefined || summary === undefined || summary < MEASURED_MS) return true;
  return timeLeft(pace, limit, size) > summary * SUMMARY_MARGIN;
}

/**
 * Whether a catch-up's summary request reads the conversation from the prompt cache: the step's own
 * model does (the request is the step's own prompt up to its live part), at a tenth of the price. A
 * summarizer whose latest request read less than `CATCH_UP_CACHED_SHARE` of its input from a cache
 * (a model of its own, whose cache never saw this conversation) pays for the whole conversation
 * again, more than the lower prompt saves before the next compaction (docs/design.md, "A catch-up
 * keeps the budget"). Where the provider reports no cache reads, it is taken to read from one.
 */
function readsFromCache(engine: Engine, model: Model): boolean {
  const share = summaryCachedShare(engine, writerOf(engine, model));
  return share === undefined || share >= CATCH_UP_CACHED_SHARE;
}

/** A catch-up starts only from a summarizer whose latest request read at least this share of its input from the prompt cache (chosen on the benchmarks: docs/benchmarks.md). */
const CATCH_UP_CACHED_SHARE = 0.5;

/** Whether the prompt of a step is over the budget of what a compaction keeps by enough to be worth a catch-up (`worthCatchingUp`). */
function overBudget(engine: Engine, view: StepView, limit: number, from: number, end: number): boolean {
  const { budget, frame } = planOf(engine, view, limit);
  if (budget === undefined) return false;
  return worthCatchingUp(totalSize(view) - frame, estimateMessages(view.conversation, from, end, view.estimator), budget.total);
}

/**
 * Whether a catch-up is worth its summary request (and the cache miss of the prompt it sends): the
 * checkpoint and everything live after it (`kept`, the prompt less its frame) are over the budget's
 * `total` by at least a quarter of it (`CATCH_UP_SHARE`), and the messages between the checkpoint
 * and the live part (`tail`) are at least as much, for it to cover. Less is left live: a checkpoint
 * prepared ahead leaves room for what comes after it, and every step over the budget by its live
 * part alone would start another (docs/design.md, "Preparing ahead").
 */
export function worthCatchingUp(kept: number, tail: number, total: number): boolean {
  const worth = total * CATCH_UP_SHARE;
  return kept - total >= worth && tail >= worth;
}

/** A catch-up starts when the prompt is over the budget by this share of it (chosen on the benchmarks: docs/benchmarks.md). */
export const CATCH_UP_SHARE = 0.25;

/**
 * After a step sent a prepared checkpoint: one prepared for more of this conversation, still being
 * written or ready, becomes the catch-up (its request is made: the first step after it is ready
 * sends it, and a stale one never blocks the next preparing). Without one, when the prompt is over
 * the budget with messages between the checkpoint and the live part (`needed`), a catch-up of the
 * whole conversation is started. One catch-up at a time; a failed one changes nothing.
 */
async function catchUpAfter(engine: Engine, view: StepView, model: Model, decision: Decision, needed: boolean): Promise<void> {
  const thread = threadOf(engine, view.threadDigest!);
  const from = coveredUpTo(view);
  for (const entry of thread.entries) {
    if (entry.length <= from || !(await view.digests!.hasPrefix(entry))) continue;
    entry.catchUp = true;
    // Ready already, and listed as held back: listed as a catch-up, for every instance.
    if (entry.settled) {
      const made = await entry.made;
      if (made !== undefined) await engine.keeper.markPrepared(view.threadDigest!, made, view.budget, true);
    }
    return;
  }
  if (!needed) return;
  const whole = coverWhole(view, decision, liveStart(view.conversation));
  return start(engine, view, model, decision, { ...(whole ? { through: view.conversation.length } : {}), whole, catchUp: true });
}

/** Starts one background compaction of this conversation, unless one that would serve is prepared already (by this or another instance). */
async function start(engine: Engine, view: StepView, model: Model, decision: Decision, kind: { through?: number; whole: boolean; catchUp: boolean }): Promise<void> {
  const { digests, threadDigest } = view;
  const from = coveredUpTo(view);
  const end = kind.through ?? liveStart(view.conversation);
  if (end <= from) return;
  // Concurrent steps of one conversation check and start in turn, so that one starts it.
  const thread = threadOf(engine, threadDigest!);
  const previous = thread.turn;
  let done!: () => void;
  thread.turn = new Promise<void>((resolve) => (done = resolve));
  await previous;
  try {
    if (await alreadyPrepared(engine, view, thread.entries, from, end, kind.whole)) return;
    const digest = await digests!.of(end);
    const entry: Preparing = { length: end, digest, settled: false, made: Promise.resolve(undefined), whole: kind.whole, catchUp: kind.catchUp };
    // One prepared here for a shorter prefix and never sent (a clearing went out instead of waiting
    // for it): this one is made from it, so that its summary is not written for nothing.
    const base = view.checkpoint?.clear === undefined ? undefined : await longestReady(view, thread.entries, from, end - 1);
    const request = { view: detached(engine, base === undefined ? view : withCheckpoint(view, base)), reason: 'auto' as const, model, window: decision.window, target: undefined, limit: decision.limit, prepare: true, ...(kind.through === undefined ? {} : { through: kind.through }) };
    entry.made = compactOnce(engine, { ...request, catchUp: kind.catchUp })
      // A compaction of this prefix made by a step meanwhile was joined: that one is no prepared checkpoint.
      .then(async (made) => {
        if (made.prepared !== true) return undefined;
        // Made a catch-up while it was being written: listed so that every instance sends it.
        if (entry.catchUp && !kind.catchUp) await engine.keeper.markPrepared(threadDigest!, made.checkpoint, engine.keeper.budget(), true);
        return made.checkpoint;
      })
      .catch((error: unknown) => {
        const detail = CompactionError.isInstance(error) ? `${error.reason}: ${failureDetail(error)}` : messageOf(error);
        engine.warn(`ai-compaction: preparing the next checkpoint in the background failed (${detail}); the step at the ceiling compacts as usual`);
        return undefined;
      })
      .finally(() => {
        entry.settled = true;
      });
    thread.entries = [entry, ...thread.entries].slice(0, PREPARING_PER_THREAD);
    const work = entry.made.then(() => undefined);
    try {
      engine.settings.waitUntil?.(work);
    } catch (error) {
      engine.warn(`ai-compaction: waitUntil refused the background compaction (${messageOf(error)}); it runs detached`);
    }
  } finally {
    done();
  }
}

/**
 * A step that finds a catch-up of its conversation ready (prepared after a checkpoint that left the
 * prompt over the budget) sends it: promoted and reported here, under the ceiling too. The view
 * returned is this step's with it in place, or the view itself.
 */
export async function sendCatchUp(engine: Engine, view: StepView, model: Model): Promise<StepView> {
  const { digests, threadDigest } = view;
  if (!engine.settings.auto || digests === undefined || threadDigest === undefined) return view;
  const from = coveredUpTo(view);
  const end = liveStart(view.conversation);
  const eligible = async (ref: { length: number; digest: string }) => ref.length > from && ref.length <= end && (await view.digests!.hasPrefix(ref));
  let found = await longestReady(view, preparingOf(engine).peek(threadDigest)?.entries ?? [], from, end, (entry) => entry.catchUp === true);
  for (const ref of view.thread?.prepared ?? []) {
    if (ref.catchUp !== true || (found !== undefined && ref.length <= found.length) || !(await eligible(ref))) continue;
    const made = await engine.keeper.checkpoint(ref.digest, ref.length, view.budget);
    if (made !== undefined) found = made;
  }
  if (found === undefined || !readableBy(found, modelKey(model))) return view;
  const placed = withCheckpoint(view, found);
  return totalSize(placed) < totalSize(view) ? sendPrepared(engine, view, placed) : view;
}

/** When a step arrived at the middleware, and the size of its prompt then (with the conversation's checkpoint, before anything this step compacts). */
export interface Arrival {
  at: number;
  size: number;
}

/** How fast a conversation grows as of a step (`stepPace`): the most it grew in one recent step, their mean growth and mean interval, and the time since its checkpoint changed. */
interface PaceNow {
  growth: number;
  meanGrowth: number;
  meanInterval: number;
  sinceShrunk?: number;
}

/** Steps of a conversation remembered for its pace. */
const PACE_STEPS = 8;

/**
 * How fast this conversation has been growing, as this instance served its recent steps: the most
 * it grew in one step, its mean growth (what each step brought, as it `arrived`: what the step
 * itself compacts is no part of it), the mean time between two (from one step going out to the
 * next one arriving: the model's reply, its tools and the person, not the time a step spent in the
 * middleware, such as waiting for a summary) and the time since its checkpoint last changed (a
 * compaction, a clearing or a prepared checkpoint sent, by this instance or another); `undefined`
 * when this conversation does not extend the step before. Remembers this step, going out as `view`;
 * when its conversation does not extend the step before (a branch, a retry), its growth starts
 * anew, and when its checkpoint last changed is kept.
 */
export function stepPace(engine: Engine, view: StepView, arrived: Arrival): PaceNow | undefined {
  const now = engine.clock.now();
  const threadDigest = view.threadDigest!;
  const size = totalSize(view);
  const length = view.conversation.length;
  const checkpoint = view.checkpoint?.digest;
  const paces = pacesOf(engine);
  const before = paces.get(threadDigest);
  const extends_ = before !== undefined && before.length < length;
  const growths = extends_ ? [arrived.size - before.size, ...before.growths].slice(0, PACE_STEPS) : [];
  const intervals = extends_ ? [Math.max(0, arrived.at - before.at), ...before.intervals].slice(0, PACE_STEPS) : [];
  const changed = view.compaction !== undefined || (before !== undefined && checkpoint !== before.checkpoint);
  const shrunkAt = changed ? now : before?.shrunkAt;
  paces.set(threadDigest, { at: now, length, size, growths, intervals, ...(checkpoint === undefined ? {} : { checkpoint }), ...(shrunkAt === undefined ? {} : { shrunkAt }) });
  if (!extends_) return undefined;
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
  // A checkpoint another instance made between two steps shrinks the prompt: that is no growth.
  return {
    growth: Math.max(...growths),
    meanGrowth: Math.max(1, mean(growths.filter((growth) => growth > 0))),
    meanInterval: mean(intervals),
    ...(shrunkAt === undefined ? {} : { sinceShrunk: now - shrunkAt }),
  };
}

/**
 * The size from which a step prepares: `prepare` x the ceiling (`band`). When the compaction that
 * made the conversation's checkpoint left the prompt at or over it already, a checkpoint prepared
 * at once would cover a step or so more than the one just sent and free next to nothing at the
 * ceiling, and a conversation that ends before the ceiling would leave it unused: the next one is
 * prepared once the prompt has grown halfway from where that compaction left it to the ceiling.
 * Where it left it is this prompt less what was added after the step that first sent it: this
 * step, when it compacted; for a prepared checkpoint, the step its thread names (`sent`) when this
 * conversation extends that step's; else the end of the live part the checkpoint was made for.
 */
export async function preparingFrom(view: StepView, band: number, limit: number): Promise<number> {
  const { checkpoint, conversation, estimator } = view;
  // A clearing keeps the messages it covers in the prompt, so nothing marks where it left the prompt.
  if (checkpoint === undefined || checkpoint.clear !== undefined) return band;
  const end = view.compaction !== undefined ? conversation.length : ((await sentEnd(view, checkpoint)) ?? liveEnd(conversation, checkpoint.length));
  const after = totalSize(view) - estimateMessages(conversation, end, conversation.length, estimator);
  return after < band ? band : (after + limit) / 2;
}

/** The length of the conversation of the step that first sent `checkpoint`, as its thread names it, when this conversation extends that one. */
async function sentEnd(view: StepView, checkpoint: StoredCheckpoint): Promise<number | undefined> {
  const sent = view.thread?.checkpoints.find((ref) => ref.digest === checkpoint.digest)?.sent;
  return sent !== undefined && (await view.digests?.hasPrefix(sent)) === true ? sent.length : undefined;
}

/**
 * The step's params with no abort signal and a store budget of its own: a background compaction
 * outlives the step that started it, which does not wait for it.
 */
function detached(engine: Engine, view: StepView): StepView {
  const { abortSignal: _abortSignal, ...params } = view.params;
  return { ...view, params: params as CallOptions, budget: engine.keeper.budget() };
}

/** What this instance prepares for a thread, made the most recently used (the least recently used threads are forgotten). */
function threadOf(engine: Engine, threadDigest: string): PreparingThread {
  const threads = preparingOf(engine);
  let thread = threads.get(threadDigest);
  if (thread === undefined) threads.set(threadDigest, (thread = { entries: [], turn: Promise.resolve() }));
  return thread;
}

/**
 * Whether a checkpoint is prepared, or being prepared, for a prefix of this conversation beyond
 * what its checkpoint covers: by this instance (a failed one too, so that a failing summarizer
 * costs one background request, not one per step), or by any instance sharing the store (listed,
 * or under another instance's lease: docs/stores.md).
 */
async function alreadyPrepared(engine: Engine, view: StepView, entries: Preparing[], from: number, end: number, whole: boolean): Promise<boolean> {
  // One of the whole conversation is prepared once a checkpoint, whatever was prepared at the band:
  // it is the one the next step sends.
  for (const entry of entries) {
    if (entry.length > from && (!whole || entry.whole) && (await view.digests!.hasPrefix(entry))) return true;
  }
  const through = whole ? liveStart(view.conversation) : from + 1;
  for (const ref of [...(view.thread?.prepared ?? []), ...liveLeases(view.thread, engine.keeper.owner, engine.clock.now())]) {
    if (ref.length >= through && ref.length <= end && (await view.digests!.hasPrefix(ref))) return true;
  }
  return false;
}

/** The longest checkpoint of `entries` (this instance's, ready) for a prefix of this conversation of a length in `(from, through]`, among those `accept` takes. */
async function longestReady(view: StepView, entries: Preparing[], from: number, through: number, accept: (entry: Preparing) => boolean = () => true): Promise<StoredCheckpoint | undefined> {
  let found: StoredCheckpoint | undefined;
  for (const entry of entries) {
    if (!entry.settled || !accept(entry) || entry.length <= from || entry.length > through || (found !== undefined && entry.length <= found.length) || !(await view.digests!.hasPrefix(entry))) continue;
    const made = await entry.made;
    if (made !== undefined) found = made;
  }
  return found;
}

/** A checkpoint prepared ahead for a prefix of this conversation: ready, or still being written. */
export interface Candidate {
  length: number;
  ready: boolean;
  get: () => Promise<StoredCheckpoint | undefined>;
}

/**
 * The checkpoints prepared for a prefix of this conversation, past its checkpoint and before its
 * live part: the longest one ready, that this model reads, with which the prompt fits under the
 * ceiling (sent with no wait); those still being written, by this instance or by another under its
 * lease, with which it could fit, longest first (the step waits only for the rest of a summary
 * already being written); and the longest one ready that does not fit (the step compacts from it).
 * A ready one comes placed in this step's view (`withCheckpoint`).
 */
export async function findPrepared(
  engine: Engine,
  view: StepView,
  model: Model,
  plan: CompactionPlan,
  limit: number,
): Promise<{ ready?: StepView; pending: Candidate[]; tooLarge?: StepView } | undefined> {
  const { digests, threadDigest } = view;
  if (digests === undefined || threadDigest === undefined) return undefined;
  const { from, end } = plan;
  const couldFit = (length: number) => fitsAfter(view, length, plan.budget?.step, limit);
  const eligible = async (ref: { length: number; digest: string }) => ref.length > from && ref.length <= end && (await view.digests!.hasPrefix(ref));
  const candidates: Candidate[] = [];
  for (const entry of preparingOf(engine).peek(threadDigest)?.entries ?? []) {
    if (!(await eligible(entry))) continue;
    if (!entry.settled && !couldFit(entry.length)) continue;
    candidates.push({ length: entry.length, ready: entry.settled, get: () => untilAborted(entry.made, view.params.abortSignal) });
  }
  for (const ref of view.thread?.prepared ?? []) {
    if (await eligible(ref)) candidates.push({ length: ref.length, ready: true, get: () => engine.keeper.checkpoint(ref.digest, ref.length, view.budget) });
  }
  // Being written by another instance (its lease): waited for like one of this instance's own.
  for (const held of liveLeases(view.thread, engine.keeper.owner, engine.clock.now())) {
    if ((await eligible(held)) && couldFit(held.length)) candidates.push({ length: held.length, ready: false, get: () => awaitLease(engine, view, held, writerOf(engine, model)) });
  }
  if (candidates.length === 0) return undefined;
  candidates.sort((a, b) => b.length - a.length);
  let tooLarge: StepView | undefined;
  for (const candidate of candidates.filter((each) => each.ready)) {
    const checkpoint = await candidate.get();
    if (checkpoint === undefined || !readableBy(checkpoint, modelKey(model))) continue;
    const placed = withCheckpoint(view, checkpoint);
    if (totalSize(placed) < limit) return { ready: placed, pending: [] };
    tooLarge ??= placed;
  }
  return { pending: candidates.filter((each) => !each.ready), ...(tooLarge === undefined ? {} : { tooLarge }) };
}

/** The first of `candidates` that comes out as a checkpoint this model reads, waiting for each in turn. */
export async function firstReadable(candidates: Candidate[], model: Model): Promise<StoredCheckpoint | undefined> {
  for (const candidate of candidates) {
    const checkpoint = await candidate.get();
    if (checkpoint !== undefined && readableBy(checkpoint, modelKey(model))) return checkpoint;
  }
  return undefined;
}

/** Whether the prompt could fit under the ceiling with a checkpoint covering `length` messages, the live step within `step` tokens: what goes out after it does. */
function fitsAfter(view: StepView, length: number, step: number | undefined, limit: number): boolean {
  const after = afterCheckpoint(view.conversation, length, step);
  return estimatePrompt([...view.system, ...after], view.params.tools, view.estimator) < limit;
}
