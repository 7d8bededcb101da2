import type { Engine } from '../engine';
import { CompactionError, failureDetail, isAbort, messageOf } from '../errors';
import type { Model } from '../prompt/types';
import type { CompactionUsage } from '../types';
import { type StepView, totalSize, withCheckpoint } from '../view';
import { clearFirst } from './clear';
import { compact, sendPrepared } from './compact';
import type { Decision } from './decide';
import { fitsWindow, holdAfterFailure, holdNothingOlder } from './holds';
import { type CompactionPlan, planOf } from './plan';
import { findPrepared, firstReadable } from './prepare';

/**
 * Compacts a step that is due, decided once as a plan (docs/design.md, "One budget"): what it
 * covers, what stays live and what each part of the checkpoint may take. An auto compaction first
 * looks for a checkpoint prepared for a prefix of this conversation: the step sends it at once when
 * the prompt with it fits under the ceiling (the longest ready one; one still being written is
 * waited for only when none is); otherwise it compacts now from it. Without one it compacts by the
 * plan.
 */
export async function compactAtCeiling(engine: Engine, view: StepView, model: Model, decision: Decision & { reason: 'auto' | 'manual' }): Promise<StepView> {
  const plan = planOf(engine, view, decision.limit);
  const prepared = decision.reason === 'auto' && decision.limit !== undefined ? await findPrepared(engine, view, model, plan, decision.limit) : undefined;
  if (prepared === undefined) return compactBeforeStep(engine, view, model, { ...decision, plan });
  if (prepared.ready !== undefined) return sendPrepared(engine, view, prepared.ready);
  let placed = prepared.tooLarge;
  if (prepared.pending.length > 0) {
    // With clearing on, a step that would wait for the rest of a summary clears instead when that
    // alone brings it under the ceiling; the summary is sent at the next compaction point.
    const cleared = await clearFirst(engine, { view, reason: 'auto', model, limit: decision.limit, target: undefined, from: plan.from, end: plan.end, instead: true });
    if (cleared !== undefined) return cleared;
    const checkpoint = await firstReadable(prepared.pending, model);
    if (checkpoint !== undefined) placed = withCheckpoint(view, checkpoint);
  }
  if (placed === undefined) return compactBeforeStep(engine, view, model, { ...decision, plan });
  if (totalSize(placed) < decision.limit!) return sendPrepared(engine, view, placed);
  // Made from it, the new checkpoint is what goes out (planned anew: it covers from where the
  // prepared one ends): the prepared one's cost is reported with it.
  const step = await compactBeforeStep(engine, placed, model, { ...decision, carried: placed.checkpoint!.usage });
  // The compaction from it failed and the step goes out with the prepared checkpoint: it is sent now.
  return step === placed ? sendPrepared(engine, view, placed) : step;
}

/**
 * Compacts a step before it goes out (docs/design.md, "Failure"). A failure leaves the step as it
 * was: it goes out unchanged when its estimate still fits the window, else the `CompactionError` is
 * thrown. A failed compaction holds the conversation from compacting on its own until it has grown
 * (docs/design.md, "No progress").
 */
export async function compactBeforeStep(
  engine: Engine,
  view: StepView,
  model: Model,
  decision: Decision & { reason: 'auto' | 'manual'; carried?: CompactionUsage; plan?: CompactionPlan },
): Promise<StepView> {
  const { reason, window, limit, carried, plan } = decision;
  try {
    return await compact(engine, { view, reason, model, window, target: limit, limit, ...(carried === undefined ? {} : { carried }), ...(plan === undefined ? {} : { plan }) });
  } catch (error) {
    if (isAbort(error, view.params.abortSignal)) throw error;
    const failure = CompactionError.isInstance(error)
      ? error
      : new CompactionError({ reason: 'summarizer-failed', message: messageOf(error), cause: error });
    const thrown = window !== undefined && !fitsWindow(view, window) ? { window } : undefined;
    if (failure.reason === 'nothing-to-compact') {
      if (limit !== undefined && reason === 'auto') await holdNothingOlder(engine, view, limit);
      else engine.warn(`ai-compaction: compaction failed (${failure.reason}): ${failureDetail(failure)}`);
    } else if (limit !== undefined && limit > 0) {
      await holdAfterFailure(engine, view, limit, failure, thrown, error);
    } else {
      engine.warn(`ai-compaction: compaction failed (${failure.reason}): ${failureDetail(failure)}`);
    }
    if (thrown !== undefined) throw failure;
    return view;
  }
}
