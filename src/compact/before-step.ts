import type { Engine } from '../engine';
import { CompactionError, isAbort, messageOf } from '../errors';
import type { Model } from '../prompt/types';
import { estimatePrompt } from '../sizing/estimate';
import { type StepView, outgoingPrompt, totalSize } from '../view';
import { compact } from './compact';
import type { Plan } from './decide';
import { placeHold } from './holds';

/**
 * Compacts a step before it goes out (SPEC 6.7). A failure leaves the step as it was: it goes out
 * unchanged when its estimate still fits the window, else the `CompactionError` is thrown.
 */
export async function compactBeforeStep(engine: Engine, view: StepView, model: Model, plan: Plan & { reason: 'auto' | 'manual' }): Promise<StepView> {
  const { reason, window, limit } = plan;
  try {
    return await compact(engine, { view, reason, model, window, target: limit, limit });
  } catch (error) {
    if (isAbort(error, view.params.abortSignal)) throw error;
    const failure = CompactionError.isInstance(error)
      ? error
      : new CompactionError({ reason: 'summarizer-failed', message: messageOf(error), cause: error });
    if (failure.reason === 'nothing-to-compact' && limit !== undefined && reason === 'auto') {
      await placeHold(engine, view, totalSize(view), limit, 'there is nothing older to compact');
    } else {
      engine.warn(`ai-compaction: compaction failed (${failure.reason}): ${failure.message}`);
    }
    if (window !== undefined && estimatePrompt(outgoingPrompt(view), view.params.tools, view.estimator) > window) throw failure;
    return view;
  }
}
