import { isSummaryRequest } from '../checkpoint/summarize';
import { compactAtCeiling } from '../compact/before-step';
import { decide } from '../compact/decide';
import { prepareAhead, sendCatchUp } from '../compact/prepare';
import { type Engine, modelKey, whenReady } from '../engine';
import { withoutOwnParts } from '../prompt/own-parts';
import type { CallOptions, Model } from '../prompt/types';
import { type StepView, paramsFor, resolveView, totalSize } from '../view';
import { takeCallOptions } from './call-options';

/** What `transformParams` sends for a step, and the step's view when it is one of the middleware's. */
export interface Transformed {
  params: CallOptions;
  step?: StepView;
}

/**
 * `transformParams`: the step as it goes out. Its view (the checkpoint and the count it rests on,
 * read from the store), a catch-up that is ready, the decision, the compaction at the ceiling or
 * asked for (`manual`, read once the step is decided: a pending `compactNext()`, taken), and the
 * next checkpoint prepared beside it. A summary request of this package passes unchanged.
 */
export async function transformStep(engine: Engine, params: CallOptions, model: Model, manual: () => boolean): Promise<Transformed> {
  // When the step arrived: the time it spends here (a summary waited for) is no part of its conversation's pace.
  const at = Date.now();
  await whenReady(engine);
  if (isSummaryRequest(params)) return { params };
  const { clean, call } = takeCallOptions(withoutOwnParts(params));
  const key = modelKey(model);
  // Every store call of this step, to the count written after its reply, draws on one budget.
  const budget = engine.keeper.budget();
  const view = await resolveView(engine.keeper, clean, call.scope ?? '', key, engine.sizing.estimator(key, budget), budget);
  // A catch-up prepared in the background after a checkpoint that left the prompt over the
  // budget is sent by the first step after it is ready.
  const current = await sendCatchUp(engine, view, model);
  // What the conversation brought with this step, before anything it compacts.
  const arrived = { at, size: totalSize(view) };
  const decision = await decide(engine, current, model, manual() || call.compact === true);
  const step = decision.reason === undefined ? current : await compactAtCeiling(engine, current, model, { ...decision, reason: decision.reason });
  // Near the ceiling (also right after a prepared checkpoint was sent): the next checkpoint is
  // prepared beside this step, which does not wait for it.
  await prepareAhead(engine, step, model, decision, arrived);
  // The caller's own params when nothing changed.
  return { params: step.sent === view.conversation && view.params === params ? params : paramsFor(step), step };
}
