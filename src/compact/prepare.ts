import { afterCheckpoint } from '../checkpoint/live';
import { type Engine, type Preparing, type PreparingThread, modelKey } from '../engine';
import { CompactionError, failureDetail, messageOf } from '../errors';
import { liveEnd, liveStart } from '../prompt/conversation';
import type { CallOptions, Model } from '../prompt/types';
import { estimateMessages, estimatePrompt } from '../sizing/estimate';
import { type StoredCheckpoint, liveLeases, readableBy } from '../store/records';
import { type StepView, coveredUpTo, totalSize, withCheckpoint } from '../view';
import { compactBeforeStep } from './before-step';
import { planClearing } from './clear';
import { compactOnce, sendPrepared, writerOf } from './compact';
import type { Plan } from './decide';
import { untilAborted } from './flight';
import { awaitLease } from './lease';

/**
 * Preparing the next checkpoint ahead (SPEC 14): no step waits for a summary.
 *
 * - A step that goes out as it is, at or over `prepare` x the ceiling, starts the compaction of the
 *   conversation up to its live part in the background (`prepareAhead`): the very compaction the
 *   step at the ceiling would make for it (`compactOnce`, the step's own request, so a cache hit),
 *   stored as a prepared checkpoint. The step does not wait for it.
 * - A prepared checkpoint is held back: it is listed apart from the checkpoints steps find
 *   (`Thread.prepared`), so the steps under the ceiling go out whole.
 * - The first step at the ceiling (`compactAtCeiling`) sends it at once when the prompt with it fits
 *   under the ceiling; otherwise it compacts now, from it (updating it). The step that first sends
 *   it promotes it to the conversation's checkpoint and reports it.
 */

/** Background compactions remembered per thread (conversations sharing an opening share one). */
const PREPARING_PER_THREAD = 8;

/**
 * Starts preparing the next checkpoint of a step, as it goes out, when its size is at or over
 * `prepare` x the ceiling (and under it) and nothing is being prepared for its conversation: a step
 * under the ceiling, or one that has just sent a checkpoint and is there already. After a
 * compaction that left the prompt in that band, from halfway to the ceiling (`preparingFrom`). Never
 * waits for the compaction: it runs in the background, handed to `waitUntil` when there is one;
 * its failure is logged and changes nothing (SPEC 6.7).
 */
export async function prepareAhead(engine: Engine, view: StepView, model: Model, plan: Plan): Promise<void> {
  const { auto, prepare } = engine.settings;
  const { limit, window } = plan;
  if (!auto || prepare === false || limit === undefined || limit <= 0 || !view.sizeKnown) return;
  const { digests, threadDigest } = view;
  if (digests === undefined || threadDigest === undefined) return;
  const size = totalSize(view);
  // At the ceiling or over it a step compacts, or is held (SPEC 6.8): nothing to prepare.
  if (size < prepare * limit || size >= limit) return;
  if (size < (await preparingFrom(view, prepare * limit, limit))) return;
  const from = coveredUpTo(view);
  const end = liveStart(view.conversation);
  if (end <= from) return;
  // With clearing old tool results on (SPEC 13), nothing is prepared while clearing alone would
  // bring the prompt under its target: it needs no model call, the step at the ceiling clears.
  if (planClearing(engine.settings, { view, reason: 'auto', model, limit, target: undefined, end }) !== undefined) return;

  // Concurrent steps of one conversation check and start in turn, so that one starts it.
  const thread = threadOf(engine, threadDigest);
  const previous = thread.turn;
  let done!: () => void;
  thread.turn = new Promise<void>((resolve) => (done = resolve));
  await previous;
  try {
    if (await alreadyPrepared(engine, view, thread.entries, from, end)) return;
    const digest = await digests.of(end);
    const entry: Preparing = { length: end, digest, settled: false, made: Promise.resolve(undefined) };
    entry.made = compactOnce(engine, { view: detached(engine, view), reason: 'auto', model, window, target: undefined, limit, prepare: true })
      // A compaction of this prefix made by a step meanwhile was joined: that one is no prepared checkpoint.
      .then((made) => (made.prepared === true ? made.checkpoint : undefined))
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
 * Compacts a step that is due (SPEC 6, 14). An auto compaction first looks for a checkpoint prepared
 * for a prefix of this conversation (waiting for one still being prepared, when the prompt with it
 * could fit): the step sends it at once when the prompt with it fits under the ceiling; otherwise
 * it compacts now from it. Without one it compacts as in 6.
 */
export async function compactAtCeiling(engine: Engine, view: StepView, model: Model, plan: Plan & { reason: 'auto' | 'manual' }): Promise<StepView> {
  const prepared = plan.reason === 'auto' && plan.limit !== undefined ? await findPrepared(engine, view, model, plan.limit) : undefined;
  if (prepared === undefined) return compactBeforeStep(engine, view, model, plan);
  const placed = withCheckpoint(view, prepared);
  if (totalSize(placed) < plan.limit!) return sendPrepared(engine, view, prepared);
  // Made from it, the new checkpoint is what goes out: the prepared one's cost is reported on its record.
  const step = await compactBeforeStep(engine, placed, model, { ...plan, carried: prepared.usage });
  // The compaction from it failed and the step goes out with the prepared checkpoint: it is sent now.
  return step === placed ? sendPrepared(engine, view, prepared) : step;
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
  if (sent === undefined || sent.length > view.conversation.length) return undefined;
  return (await view.digests?.of(sent.length)) === sent.digest ? sent.length : undefined;
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
  let thread = engine.preparing.get(threadDigest);
  if (thread === undefined) engine.preparing.set(threadDigest, (thread = { entries: [], turn: Promise.resolve() }));
  return thread;
}

/**
 * Whether a checkpoint is prepared, or being prepared, for a prefix of this conversation beyond
 * what its checkpoint covers: by this instance (a failed one too, so that a failing summarizer
 * costs one background request, not one per step), or by any instance sharing the store (listed,
 * or under another instance's lease: docs/stores.md).
 */
async function alreadyPrepared(engine: Engine, view: StepView, entries: Preparing[], from: number, end: number): Promise<boolean> {
  for (const entry of entries) {
    if (entry.length > from && (await covers(view, entry))) return true;
  }
  for (const ref of [...(view.thread?.prepared ?? []), ...liveLeases(view.thread, engine.keeper.owner)]) {
    if (ref.length > from && ref.length <= end && (await covers(view, ref))) return true;
  }
  return false;
}

/** Whether `ref` names a prefix of this step's conversation. */
async function covers(view: StepView, ref: { length: number; digest: string }): Promise<boolean> {
  return ref.length <= view.conversation.length && (await view.digests!.of(ref.length)) === ref.digest;
}

/**
 * The longest checkpoint prepared for a prefix of this conversation, past its checkpoint and
 * before its live part, that this model reads. One still being prepared by this instance, or by
 * another under its lease, is waited for (the wait is shorter than a summary of its own, and its
 * request was a cache hit), unless the prompt could not fit under the ceiling with it anyway.
 */
async function findPrepared(engine: Engine, view: StepView, model: Model, limit: number): Promise<StoredCheckpoint | undefined> {
  const { digests, threadDigest } = view;
  if (digests === undefined || threadDigest === undefined) return undefined;
  const from = coveredUpTo(view);
  const end = liveStart(view.conversation);
  const eligible = async (ref: { length: number; digest: string }) => ref.length > from && ref.length <= end && (await covers(view, ref));
  const candidates: { length: number; get: () => Promise<StoredCheckpoint | undefined> }[] = [];
  for (const entry of engine.preparing.peek(threadDigest)?.entries ?? []) {
    if (!(await eligible(entry))) continue;
    if (!entry.settled && !couldFit(view, entry.length, limit)) continue;
    candidates.push({ length: entry.length, get: () => untilAborted(entry.made, view.params.abortSignal) });
  }
  for (const ref of view.thread?.prepared ?? []) {
    if (await eligible(ref)) candidates.push({ length: ref.length, get: () => engine.keeper.checkpoint(ref.digest, ref.length, view.budget) });
  }
  // Being written by another instance (its lease): waited for like one of this instance's own.
  for (const held of liveLeases(view.thread, engine.keeper.owner)) {
    if ((await eligible(held)) && couldFit(view, held.length, limit)) candidates.push({ length: held.length, get: () => awaitLease(engine, view, held, writerOf(engine, model)) });
  }
  candidates.sort((a, b) => b.length - a.length);
  for (const candidate of candidates) {
    const checkpoint = await candidate.get();
    if (checkpoint !== undefined && readableBy(checkpoint, modelKey(model))) return checkpoint;
  }
  return undefined;
}

/** Whether the prompt could fit under the ceiling with a checkpoint covering `length` messages: what goes out after it does. */
function couldFit(view: StepView, length: number, limit: number): boolean {
  const after = afterCheckpoint(view.conversation, length, Math.max(0, Math.floor(limit / 4)));
  return estimatePrompt([...view.system, ...after], view.params.tools, view.estimator) < limit;
}
