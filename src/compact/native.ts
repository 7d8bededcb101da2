import { type Engine, modelKey, ownState, warnOnce } from '../engine';
import { isAbort, messageOf } from '../errors';
import { isContextOverflowError } from '../overflow/recognize';
import type { GenerateResult, Message, Model, Part } from '../prompt/types';
import { type Estimator, FIXED_ESTIMATOR, estimateMessages } from '../sizing/estimate';
import type { StepView } from '../view';
import { nativeProviderFor } from './native-providers';

/** Models whose provider refused native compaction or answered it without an item. */
const unavailableOf = ownState(() => new Set<string>());

/**
 * Asks the provider to compact the step's own request, `covered` being what it sent up to the live
 * part (docs/native.md). `undefined` (after one warning per model) when the model has no native
 * compaction or returned no item: ordinary compaction follows.
 */
export async function nativeItem(
  engine: Engine,
  view: StepView,
  model: Model,
  covered: Message[],
): Promise<{ provider: 'openai' | 'anthropic'; part: Part } | undefined> {
  const key = modelKey(model);
  const unavailable = unavailableOf(engine);
  const provider = unavailable.has(key) ? undefined : nativeProviderFor(model);
  if (provider !== undefined) {
    // The item stands for what it is asked about: everything but the live part (the new user
    // messages, or the newest step), which goes out after it (and not twice).
    const prompt = [...view.system, ...covered];
    let result: GenerateResult;
    try {
      result = await model.doGenerate(provider.trigger({ ...view.params, prompt }));
    } catch (error) {
      if (isAbort(error, view.params.abortSignal)) throw error;
      // The trigger carries the whole prompt: when the provider rejects it as too long, ordinary
      // compaction (which can send less) takes over for this compaction.
      if (isContextOverflowError(error)) {
        engine.warn(`ai-compaction: the native compaction request was rejected as too long (${messageOf(error)}); using ordinary compaction`);
        return undefined;
      }
      // Refused outright (a model without on-demand compaction, options the client rejects):
      // ordinary compaction from now on. A transient failure falls back for this compaction only.
      const transient = (error as { isRetryable?: unknown } | null)?.isRetryable === true;
      if (!transient) unavailable.add(key);
      engine.warn(
        `ai-compaction: the native compaction request failed (${messageOf(error)}); using ordinary compaction` +
          (transient ? '' : ` for ${key} from now on`),
      );
      return undefined;
    }
    const part = provider.extract(result.content);
    if (part !== undefined) return { provider: provider.name, part };
    // A model that answers the trigger without an item (an older client, a model without native
    // compaction) is not asked again: each try costs a whole generation.
    unavailable.add(key);
  }
  warnOnce(engine, `native:${key}`, `ai-compaction: native compaction is not available for ${key}; using ordinary compaction`);
  return undefined;
}

/**
 * The newest user messages among the covered ones, within `keep` tokens (by `estimator`: the
 * model's learned ratio: docs/design.md, "The size of a prompt"), oldest first (their indexes).
 */
export function keptUserMessages(conversation: Message[], from: number, end: number, keep: number, estimator: Estimator = FIXED_ESTIMATOR): number[] {
  const kept: number[] = [];
  let tokens = 0;
  for (let index = end - 1; index >= from; index--) {
    if (conversation[index]!.role !== 'user') continue;
    tokens += estimateMessages(conversation, index, index + 1, estimator);
    if (tokens > keep) break;
    kept.unshift(index);
  }
  return kept;
}
