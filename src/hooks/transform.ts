import { isSummaryRequest } from '../checkpoint/summarize';
import { noteForfeit } from '../compact/forfeit';
import { runStep } from '../compact/step';
import { type Engine, modelKey, whenReady } from '../engine';
import { ownPartIds, withoutOwnParts } from '../prompt/own-parts';
import type { CallOptions, Model } from '../prompt/types';
import { paramsFor, resolveView, totalSize } from '../view';
import type { StepView } from '../view';
import { takeCallOptions } from './call-options';

/** What `transformParams` sends for a step, and the step's view when it is one of the middleware's. */
export interface Transformed {
  params: CallOptions;
  step?: StepView;
}

/**
 * `transformParams`: the step as it goes out. Its view (the checkpoint and the count it rests on,
 * read from the store), then one decision and its execution (compact/step.ts, docs/design.md, "The
 * policy"): what goes out, and what is prepared beside it. A pending `compactNext()` is taken once
 * the step is known to be one of the middleware's. A summary request of this package passes
 * unchanged.
 */
export async function transformStep(engine: Engine, params: CallOptions, model: Model, manual: () => boolean): Promise<Transformed> {
  // When the step arrived: the time it spends here (a summary waited for) is no part of its conversation's pace.
  const at = engine.clock.now();
  await whenReady(engine);
  if (isSummaryRequest(params)) return { params };
  const { clean, call } = takeCallOptions(withoutOwnParts(params));
  const key = modelKey(model);
  // Every store call of this step, to the count written after its reply, draws on one budget.
  const budget = engine.keeper.budget();
  const view = await resolveView(engine.keeper, clean, { scope: call.scope ?? '', conversation: call.conversation }, key, engine.sizing.estimator(key, call.scope ?? '', budget), budget);
  const arrival = { at, length: view.conversation.length, size: totalSize(view), counted: view.size.counted > 0, sinceCount: view.size.estimated, checkpoint: view.checkpoint?.digest };
  const { step } = await runStep(engine, view, model, manual() || call.compact === true, arrival);
  step.heldParts = ownPartIds(params.prompt);
  noteForfeit(engine, view, step, call.conversation !== undefined);
  // The caller's own params when nothing changed.
  return { params: step.sent === view.conversation && view.params === params ? params : paramsFor(step), step };
}
