import { type Engine, modelKey, warnOnce, windowFor } from '../engine';
import type { Model } from '../prompt/types';
import { ceiling } from '../sizing/ceiling';
import { type StepView, totalSize, windowSize } from '../view';
import { held } from './holds';

/** Whether a step compacts before it goes out, and against what window and ceiling. */
export interface Decision {
  /** Why it compacts; `undefined`: it goes out as it is. */
  reason: 'auto' | 'manual' | undefined;
  window: number | undefined;
  /** The ceiling (docs/design.md, "The ceiling"); `undefined` without a window. */
  limit: number | undefined;
}

/**
 * Decides a step (docs/design.md, "The ceiling", "No progress", "Manual compaction"): manual when
 * asked (`manual`: `compactNext()` or the call's `compact`, whatever holds stand), auto when its
 * size reaches the ceiling (or, before its model has a count, its size as dense as code reaches the
 * window less the reply) and no hold stands.
 */
export async function decide(engine: Engine, view: StepView, model: Model, manual: boolean): Promise<Decision> {
  const window = windowFor(engine, model);
  const limit = window === undefined ? undefined : ceiling(window, engine.settings.buffer, view.params.maxOutputTokens);
  if (limit !== undefined && limit <= 0) {
    const key = modelKey(model);
    warnOnce(engine, `ceiling:${key}`, `ai-compaction: the ceiling for ${key} is ${limit} tokens (the window less the room kept free); not compacting on its own`);
  }
  if (manual) return { reason: 'manual', window, limit };
  const due =
    engine.settings.auto &&
    view.sizeKnown &&
    limit !== undefined &&
    limit > 0 &&
    (totalSize(view) >= limit || windowSize(view) >= window! - (view.params.maxOutputTokens ?? 0)) &&
    !(await held(view, limit, window));
  return { reason: due ? 'auto' : undefined, window, limit };
}
