import { type Engine, modelKey } from '../engine';
import { windowFor } from '../model';
import { CompactionError, isAbort, messageOf } from '../errors';
import { contextOverflowKind, contextOverflowLimit, isContextOverflowError, promptTokensFromOverflow } from '../overflow/recognize';
import type { Model } from '../prompt/types';
import { ceiling } from '../sizing/ceiling';
import { OVERFLOW_TARGET_SHARE } from '../tunables';
import { type StepView, totalSize } from '../view';
import { compact } from './compact';

/** Whether a step's error is one overflow recovery takes on (docs/design.md, "Overflow recovery"): a rejection as too long, not an abort. */
export function recoverable(step: StepView | undefined, error: unknown): step is StepView {
  return step !== undefined && isContextOverflowError(error) && !isAbort(error, step.params.abortSignal);
}

/** A rejected step: learn the window, compact aimed at 85 % of its size, return what to send once more. */
export async function recover(engine: Engine, step: StepView, error: unknown, model: Model): Promise<StepView> {
  const limit = contextOverflowLimit(error);
  if (limit !== undefined) engine.learnedWindows.set(modelKey(model), limit);
  const what = contextOverflowKind(error) === 'request-size' ? 'the request as too large' : 'the prompt as too long';
  engine.warn(`ai-compaction: the provider rejected ${what} (${messageOf(error)}); compacting and retrying once`);
  // The rejected prompt is larger than the real window, whatever the window was thought to be:
  // the summary request's room is measured against that too, so it is not rejected in turn.
  // Where the provider states the rejected prompt's size, the window it states is scaled to this
  // package's estimate (which can read far less than the provider counts: code, PDFs, CJK text).
  const rejected = totalSize(step);
  const stated = promptTokensFromOverflow(error);
  const scaled = limit !== undefined && stated !== undefined && stated > 0 ? Math.floor((rejected * limit) / stated) : rejected;
  const window = Math.min(windowFor(engine, model) ?? scaled, scaled, rejected);
  const target = Math.floor(Math.min(rejected * OVERFLOW_TARGET_SHARE, window));
  try {
    const limitOfWindow = ceiling(window, engine.settings.buffer, step.params.maxOutputTokens);
    return await compact(engine, { view: step, reason: 'overflow', model, window, target, limit: limitOfWindow });
  } catch (failure) {
    if (CompactionError.isInstance(failure) || isAbort(failure, step.params.abortSignal)) throw failure;
    throw new CompactionError({ reason: 'summarizer-failed', message: messageOf(failure), cause: failure });
  }
}
