import { LRUCache } from 'lru-cache';
import { afterCheckpoint } from '../checkpoint/live';
import { type Engine, modelKey, ownState } from '../engine';
import { CompactionError, failureDetail, messageOf } from '../errors';
import { liveEnd, liveStart } from '../prompt/conversation';
import type { CallOptions, Message, Model } from '../prompt/types';
import { estimateMessages, estimatePrompt } from '../sizing/estimate';
import { type StoredCheckpoint, readableBy } from '../store/format';
import { liveLeases } from '../store/merge';
import { PREPARING_PER_THREAD, PREPARING_THREADS } from '../tunables';
import { type StepView, coveredUpTo, totalSize, withCheckpoint } from '../view';
import { compactOnce, summaryFitsWhole, writerOf } from './compact';
import { summaryDeadline } from './deadline';
import { untilAborted } from './flight';
import { holdAfterFailure } from './holds';
import { awaitLease, summaryBound } from './lease';

/**
 * Preparing the next checkpoint ahead (docs/design.md, "Preparing ahead"): what this instance
 * prepares in the background for each conversation, and what a step finds of it. When to prepare,
 * and what a step does with what it finds, is the policy's (policy.ts); this module starts a
 * preparation, lists what is ready or being written, and makes a longer one the catch-up.
 *
 * A prepared checkpoint is held back: it is listed apart from the checkpoints steps find
 * (`Thread.prepared`), so the steps under the ceiling go out whole; the step that first sends it
 * promotes it to the conversation's checkpoint and reports it.
 */

/** A checkpoint this instance started preparing in the background for a prefix of a conversation. */
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
  /** When its summary is aborted (`summaryTimeout`), in the clock's milliseconds; `Infinity` without a bound. */
  until: number;
}

/** What this instance prepares for the conversations of one thread. */
interface PreparingThread {
  /** Newest first. */
  entries: Preparing[];
  /** The steps of the thread check and start one at a time: this settles when the last has. */
  turn: Promise<void>;
}

/**
 * Checkpoints an instance prepares in the background, by the thread digest of their conversation:
 * while one covers more than a conversation's checkpoint, it is not prepared again (a failed one
 * included, so a failing summarizer costs one background request, not one per step).
 */
const preparingOf = ownState(() => new LRUCache<string, PreparingThread>({ max: PREPARING_THREADS }));

/** What to prepare: up to the live part, or the whole conversation (`whole`), as a catch-up or not. */
export interface PrepareKind {
  whole: boolean;
  catchUp: boolean;
}

/**
 * Starts one background compaction of this conversation, unless one that would serve is prepared
 * already (by this or another instance): concurrent steps of one conversation check and start in
 * turn, so that one starts it. Never waits for it (handed to `waitUntil` when there is one); its
 * failure is logged and holds the conversation as a failed compaction does (docs/design.md, "No
 * progress").
 */
export async function startPreparing(engine: Engine, view: StepView, model: Model, window: number | undefined, limit: number, kind: PrepareKind): Promise<void> {
  const { digests, threadDigest } = view;
  if (digests === undefined || threadDigest === undefined) return;
  const from = coveredUpTo(view);
  const through = kind.whole ? view.conversation.length : undefined;
  const end = through ?? liveStart(view.conversation);
  if (end <= from) return;
  const thread = threadOf(engine, threadDigest);
  const previous = thread.turn;
  let done!: () => void;
  thread.turn = new Promise<void>((resolve) => (done = resolve));
  await previous;
  try {
    const already = await alreadyPrepared(engine, view, from, liveStart(view.conversation));
    if (kind.whole ? already.whole : already.live) return;
    const digest = await digests.of(end);
    const until = summaryDeadline(engine);
    const entry: Preparing = { length: end, digest, settled: false, made: Promise.resolve(undefined), whole: kind.whole, catchUp: kind.catchUp, until };
    // One prepared here for a shorter prefix and never sent (a clearing went out instead of waiting
    // for it): this one is made from it, so that its summary is not written for nothing.
    const base = view.checkpoint?.clear === undefined ? undefined : await longestReady(view, thread.entries, from, end - 1);
    const detachedView = detached(engine, base === undefined ? view : withCheckpoint(view, base));
    const request = { view: detachedView, reason: 'auto' as const, model, window, target: undefined, limit, prepare: true, deadline: until, ...(through === undefined ? {} : { through }) };
    entry.made = compactOnce(engine, { ...request, catchUp: kind.catchUp })
      // A compaction of this prefix made by a step meanwhile was joined: that one is no prepared checkpoint.
      .then(async (made) => {
        if (made.prepared !== true) return undefined;
        // Made a catch-up while it was being written: listed so that every instance sends it.
        if (entry.catchUp && !kind.catchUp) await engine.keeper.markPrepared(threadDigest, made.checkpoint, engine.keeper.budget(), true);
        return made.checkpoint;
      })
      .catch(async (error: unknown) => {
        const failure = CompactionError.isInstance(error) ? error : new CompactionError({ reason: 'summarizer-failed', message: messageOf(error), cause: error });
        // Held like a failed compaction: a summarizer that fails costs a few requests, not one per step.
        const what = 'preparing the next checkpoint in the background failed; the step at the ceiling goes on as after a failed compaction';
        if (failure.reason === 'nothing-to-compact') engine.warn(`ai-compaction: ${what} (${failure.reason}: ${failureDetail(failure)})`);
        else await holdAfterFailure(engine, detachedView, limit, failure, undefined, error, what).catch(() => undefined);
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
 * After a step sent a prepared checkpoint: the longer one this instance is preparing for the
 * conversation becomes the catch-up (its request is made already: the first step after it is
 * ready sends it). Listed as one for every instance once ready.
 */
export async function adoptCatchUp(engine: Engine, view: StepView): Promise<void> {
  const from = coveredUpTo(view);
  for (const entry of threadOf(engine, view.threadDigest!).entries) {
    if (entry.length <= from || !(await view.digests!.hasPrefix(entry))) continue;
    entry.catchUp = true;
    if (entry.settled) {
      const made = await entry.made;
      if (made !== undefined) await engine.keeper.markPrepared(view.threadDigest!, made, view.budget, true);
    }
    return;
  }
}

/** Whether this instance is preparing, or prepared, a checkpoint of this conversation longer than `length` messages. */
export async function longerPreparing(engine: Engine, view: StepView, length: number): Promise<boolean> {
  for (const entry of preparingOf(engine).peek(view.threadDigest!)?.entries ?? []) {
    if (entry.length > length && (await view.digests!.hasPrefix(entry))) return true;
  }
  return false;
}

/** The part of a step's conversation a compaction would cover: from where its checkpoint ends to where its live part begins. */
export interface Span {
  from: number;
  end: number;
}

/** Whether a prepared checkpoint's prefix ends inside the span a compaction would cover and is a prefix of this conversation. */
function inSpan(view: StepView, { from, end }: Span): (ref: { length: number; digest: string }) => Promise<boolean> {
  return async (ref) => ref.length > from && ref.length <= end && (await view.digests!.hasPrefix(ref));
}

/** A summary being written for a prefix of this conversation, waited for by a step at the ceiling. */
export interface Candidate {
  length: number;
  get: () => Promise<StoredCheckpoint | undefined>;
}

/**
 * The summaries being written for a prefix of this conversation past its checkpoint and before its
 * live part, by this instance in the background or by another under its lease (docs/stores.md),
 * longest first, added to `pending`; and the latest of their deadlines (`undefined`: none). Another
 * instance's is waited for until its lease ends, and no longer than this instance's own bound from
 * now (`summaryBound`, within `summaryTimeout`). `own`: the latest deadline is this instance's (its
 * summary's, or its own bound on waiting for another's); past it the step goes on as after a failure.
 */
export async function writing(engine: Engine, view: StepView, model: Model, span: Span, pending: Candidate[], fits: (length: number) => boolean): Promise<{ until: number; own: boolean; couldFit: boolean } | undefined> {
  const eligible = inSpan(view, span);
  let until: number | undefined;
  let own = false;
  let couldFit = false;
  for (const entry of preparingOf(engine).peek(view.threadDigest!)?.entries ?? []) {
    if (entry.settled || !(await eligible(entry))) continue;
    if (!fits(entry.length)) {
      until ??= entry.until;
      continue;
    }
    pending.push({ length: entry.length, get: () => untilAborted(entry.made, view.params.abortSignal) });
    until = Math.max(until ?? 0, entry.until);
    own = couldFit = true;
  }
  const writer = writerOf(engine, model);
  const bound = engine.clock.now() + summaryBound(engine, writer);
  for (const held of liveLeases(view.thread, engine.keeper.owner, engine.clock.now())) {
    if (!(await eligible(held))) continue;
    const ends = Math.min(held.until, bound);
    if (!fits(held.length)) {
      until ??= ends;
      continue;
    }
    pending.push({ length: held.length, get: () => awaitLease(engine, view, held, writer) });
    until = Math.max(until ?? 0, ends);
    // Cut to this instance's bound, it is the latest deadline (every lease ends by the bound).
    if (ends < held.until) own = true;
    couldFit = true;
  }
  pending.sort((a, b) => b.length - a.length);
  return until === undefined ? undefined : { until, own, couldFit };
}

/** The first of `candidates` that comes out as a checkpoint this model reads, waiting for each in turn. */
export async function firstReadable(candidates: Candidate[], model: Model): Promise<StoredCheckpoint | undefined> {
  for (const candidate of candidates) {
    const checkpoint = await candidate.get();
    if (checkpoint !== undefined && readableBy(checkpoint, modelKey(model))) return checkpoint;
  }
  return undefined;
}

/** A catch-up of this conversation ready (this instance's, or listed by another), placed in the step's view. */
export async function readyCatchUp(engine: Engine, view: StepView, model: Model, { from, end }: Span): Promise<StepView | undefined> {
  const eligible = inSpan(view, { from, end });
  let found = await longestReady(view, preparingOf(engine).peek(view.threadDigest!)?.entries ?? [], from, end, (entry) => entry.catchUp);
  for (const ref of view.thread?.prepared ?? []) {
    if (ref.catchUp !== true || (found !== undefined && ref.length <= found.length) || !(await eligible(ref))) continue;
    const made = await engine.keeper.checkpoint(ref.digest, ref.length, view.budget);
    if (made !== undefined) found = made;
  }
  if (found === undefined || !readableBy(found, modelKey(model))) return undefined;
  return withCheckpoint(view, found);
}

/**
 * The checkpoints prepared and ready for a prefix of this conversation, past its checkpoint and
 * before its live part, that this model reads: the longest with which the prompt fits under the
 * ceiling (`ready`), else the longest (`tooLarge`: the step compacts from it), placed in the view.
 */
export async function findPrepared(engine: Engine, view: StepView, model: Model, plan: Span, limit: number): Promise<{ ready?: StepView; tooLarge?: StepView } | undefined> {
  const eligible = inSpan(view, plan);
  const candidates: { length: number; get: () => Promise<StoredCheckpoint | undefined> }[] = [];
  for (const entry of preparingOf(engine).peek(view.threadDigest!)?.entries ?? []) {
    if (entry.settled && (await eligible(entry))) candidates.push({ length: entry.length, get: () => entry.made });
  }
  for (const ref of view.thread?.prepared ?? []) {
    if (await eligible(ref)) candidates.push({ length: ref.length, get: () => engine.keeper.checkpoint(ref.digest, ref.length, view.budget) });
  }
  if (candidates.length === 0) return undefined;
  candidates.sort((a, b) => b.length - a.length);
  let tooLarge: StepView | undefined;
  for (const candidate of candidates) {
    const checkpoint = await candidate.get();
    if (checkpoint === undefined || !readableBy(checkpoint, modelKey(model))) continue;
    const placed = withCheckpoint(view, checkpoint);
    if (totalSize(placed) < limit) return { ready: placed };
    tooLarge ??= placed;
  }
  return tooLarge === undefined ? undefined : { tooLarge };
}

/**
 * Whether a checkpoint is prepared, or being prepared, for a prefix of this conversation beyond
 * what its checkpoint covers: by this instance (a failed one too, so that a failing summarizer
 * costs one background request, not one per step), or by any instance sharing the store (listed,
 * or under another instance's lease). `live`: one that would serve a preparation up to the live
 * part (`end`); `whole`: one of the whole conversation, which a preparation at the band does not
 * stand for (the next step sends it).
 */
export async function alreadyPrepared(engine: Engine, view: StepView, from: number, end: number): Promise<{ live: boolean; whole: boolean }> {
  const found = { live: false, whole: false };
  for (const entry of preparingOf(engine).peek(view.threadDigest!)?.entries ?? []) {
    if (entry.length <= from || !(await view.digests!.hasPrefix(entry))) continue;
    found.live = true;
    if (entry.whole) found.whole = true;
  }
  for (const ref of [...(view.thread?.prepared ?? []), ...liveLeases(view.thread, engine.keeper.owner, engine.clock.now())]) {
    if (ref.length <= from || ref.length > end || !(await view.digests!.hasPrefix(ref))) continue;
    found.live = true;
    if (ref.length >= end || (ref as { whole?: true }).whole === true) found.whole = true;
  }
  return found;
}

/**
 * Whether a compaction prepared for the next step may cover this step's whole conversation: not
 * where its summary request would have to go out shortened while the one up to the live part
 * (`end`) would not (a small window and a large live part: a long paste in a chat), since a
 * shortened request loses what the summary should keep.
 */
export function coverWhole(view: StepView, window: number | undefined, end: number): boolean {
  if (summaryFitsWhole(view, view.size, window)) return true;
  // Shortened only in its tool outputs (the first rungs of the transcript's ladder): the words all go.
  const words = view.conversation
    .filter((message) => message.role !== 'tool')
    .map((message) => (typeof message.content === 'string' ? message : { ...message, content: message.content.filter((part) => part.type !== 'tool-result') }) as Message);
  if (summaryFitsWhole(view, { counted: 0, estimated: estimatePrompt([...view.system, ...words], view.params.tools, view.estimator) }, window)) return true;
  const live = estimateMessages(view.conversation, end, view.conversation.length, view.estimator);
  const { counted, estimated } = view.size;
  const upToLive = { counted: Math.max(0, counted - Math.max(0, live - estimated)), estimated: Math.max(0, estimated - live) };
  return !summaryFitsWhole(view, upToLive, window);
}

/**
 * The size from which a step prepares: `prepare` x the ceiling (`band`). When the compaction that
 * made the conversation's checkpoint left the prompt (`left`, `leftAt`) at or over it already, a
 * checkpoint prepared at once would cover a step or so more than the one just sent and free next
 * to nothing at the ceiling: the next one is prepared once the prompt has grown halfway from where
 * that compaction left it to the ceiling.
 */
export function preparingFrom(left: number | undefined, band: number, limit: number): number {
  return left === undefined || left < band ? band : (left + limit) / 2;
}

/**
 * Where the compaction that made the conversation's checkpoint left the prompt: this prompt less
 * what was added after the step that first sent it: for a prepared checkpoint, the step its thread
 * names (`sent`) when this conversation extends that step's; else the end of the live part the
 * checkpoint was made for. `undefined` without a checkpoint, or after a clearing (which keeps the
 * messages it covers in the prompt, so nothing marks where it left it).
 */
export async function leftAt(view: StepView, size: number): Promise<number | undefined> {
  const { checkpoint, conversation, estimator } = view;
  if (checkpoint === undefined || checkpoint.clear !== undefined) return undefined;
  const end = (await sentEnd(view, checkpoint)) ?? liveEnd(conversation, checkpoint.length);
  return size - estimateMessages(conversation, end, conversation.length, estimator);
}

/** The length of the conversation of the step that first sent `checkpoint`, as its thread names it, when this conversation extends that one. */
async function sentEnd(view: StepView, checkpoint: StoredCheckpoint): Promise<number | undefined> {
  const sent = view.thread?.checkpoints.find((ref) => ref.digest === checkpoint.digest)?.sent;
  return sent !== undefined && (await view.digests?.hasPrefix(sent)) === true ? sent.length : undefined;
}

/** The step's params with no abort signal and a store budget of its own: a background compaction outlives the step that started it. */
function detached(engine: Engine, view: StepView): StepView {
  const { abortSignal: _abortSignal, ...params } = view.params;
  return { ...view, params: params as CallOptions, budget: engine.keeper.budget() };
}

/** What this instance prepares for a thread, made the most recently used. */
function threadOf(engine: Engine, threadDigest: string): PreparingThread {
  const threads = preparingOf(engine);
  let thread = threads.get(threadDigest);
  if (thread === undefined) threads.set(threadDigest, (thread = { entries: [], turn: Promise.resolve() }));
  return thread;
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

/** Whether the prompt could fit under the ceiling with a checkpoint covering `length` messages, the live step within `step` tokens: what goes out after it does. */
export function fitsAfter(view: StepView, length: number, step: number | undefined, limit: number): boolean {
  const after = afterCheckpoint(view.conversation, length, step);
  return estimatePrompt([...view.system, ...after], view.params.tools, view.estimator) < limit;
}
