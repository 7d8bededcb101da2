import type { Engine } from '../engine';
import { CompactionError, failureDetail, isAbort, messageOf } from '../errors';
import type { Model } from '../prompt/types';
import type { CompactionUsage } from '../types';
import type { StepView } from '../view';
import { compact } from './compact';
import type { Plan } from './decide';
import { fitsWindow, holdAfterFailure, holdNothingOlder } from './holds';

/**
 * Compacts a step before it goes out (SPEC 6.7). A failure leaves the step as it was: it goes out
 * unchanged when its estimate still fits the window, else the `CompactionError` is thrown. A failed
 * compaction holds the conversation from compacting on its own until it has grown (SPEC 6.8).
 */
export async function compactBeforeStep(
  engine: Engine,
  view: StepView,
  model: Model,
  plan: Plan & { reason: 'auto' | 'manual'; carried?: CompactionUsage },
): Promise<StepView> {
  const { reason, window, limit, carried } = plan;
  try {
    return await compact(engine, { view, reason, model, window, target: limit, limit, ...(carried === undefined ? {} : { carried }) });
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
