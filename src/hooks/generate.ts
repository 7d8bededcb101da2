import { recover, recoverable } from '../compact/recover';
import type { Engine } from '../engine';
import type { GenerateResult, Model } from '../prompt/types';
import { type StepView, paramsFor } from '../view';
import { shownBy, withCompaction } from './part';
import { learnFromUsage } from './usage';

/**
 * `doGenerate` with overflow recovery: a rejection as too long is compacted and sent once more. The
 * compaction the step made is shown in its result (hooks/part.ts).
 */
export async function generateWithRecovery(
  engine: Engine,
  step: StepView | undefined,
  model: Model,
  doGenerate: () => PromiseLike<GenerateResult>,
): Promise<GenerateResult> {
  let result: GenerateResult;
  try {
    result = await doGenerate();
  } catch (error) {
    if (!recoverable(step, error)) throw error;
    const next = await recover(engine, step, error, model);
    const retried = await model.doGenerate(paramsFor(next));
    await learnFromUsage(engine, next, retried.usage);
    return withCompaction(retried, next, shownBy(next, engine.settings.streamPart));
  }
  if (step === undefined) return result;
  await learnFromUsage(engine, step, result.usage);
  return withCompaction(result, step, shownBy(step, engine.settings.streamPart));
}
