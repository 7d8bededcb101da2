import { type Engine, warnOnce } from '../engine';
import { messageOf } from '../errors';
import type { Usage } from '../prompt/types';
import type { Thread } from '../store/format';
import { type Measure, measurePrompt, toTokens } from '../sizing/estimate';
import { countCannotBeRight } from '../sizing/learned';
import { type StepView, frameChars, frameDigest, outgoingPrompt, supersededCounts } from '../view';

/**
 * Keeps the provider's usage of a step as the counted baseline of the prompt it measured, and
 * learns the model's characters a token from it (docs/design.md, "The size of a prompt"). A failure
 * to keep it is only logged: a lost count means the next step estimates.
 */
export async function learnFromUsage(engine: Engine, view: StepView, usage: Usage | undefined): Promise<void> {
  const input = usage?.inputTokens?.total;
  // No prompt is 0 tokens: some OpenAI-compatible servers say 0 for a cached prompt. No count,
  // but the step's pace is kept all the same; likewise a count that cannot be right.
  // What went out, measured once: the count is checked against it and learned from.
  const measure = typeof input === 'number' && input > 0 ? measurePrompt(outgoingPrompt(view), view.params.tools) : undefined;
  if (measure === undefined || cannotBeRight(engine, view, input!, measure)) {
    if ((view.pace !== undefined || usedEntry(view) !== undefined) && view.threadDigest !== undefined) {
      await engine.keeper.saveMeasures(view.threadDigest, view.pace === undefined ? {} : { pace: view.pace }, view.budget, usedEntry(view)).catch(() => undefined);
    }
    return;
  }
  try {
    await Promise.all([saveCount(engine, view, input!, usage?.outputTokens?.total), learn(engine, view, input!, measure)]);
  } catch (error) {
    engine.warn(`ai-compaction: recording usage failed: ${messageOf(error)}`);
  }
}

/**
 * A count under what the prompt's text could take (`countCannotBeRight`) is not the baseline: the
 * estimate stays in force, and the log says so once per model (docs/design.md, "The size of a prompt").
 */
function cannotBeRight(engine: Engine, view: StepView, input: number, measure: Measure): boolean {
  if (!countCannotBeRight(input, measure.chars, frameChars(view))) return false;
  warnOnce(
    engine,
    `implausible-count:${view.modelKey}`,
    `ai-compaction: the provider counted ${input} input tokens for a prompt of ${view.modelKey} estimated at ${toTokens(measure)}; a count that cannot be right is not the baseline: the estimate stays in force for its steps`,
  );
  return true;
}

async function saveCount(engine: Engine, view: StepView, input: number, output: number | undefined): Promise<void> {
  if (view.digests === undefined || view.threadDigest === undefined) return;
  const length = view.conversation.length;
  const count = {
    length,
    digest: await view.digests.of(length),
    checkpoint: view.checkpoint?.digest ?? null,
    frame: await frameDigest(view),
    frameChars: frameChars(view),
    input,
    output: typeof output === 'number' ? output : 0,
  };
  await engine.keeper.saveCount(view.threadDigest, count, await supersededCounts(view), view.budget, view.pace, usedEntry(view));
}

/** The thread's entry of the checkpoint the step went out with: marked as used by the step's write. */
function usedEntry(view: StepView): Thread['checkpoints'][number] | undefined {
  const digest = view.checkpoint?.digest;
  return digest === undefined ? undefined : view.thread?.checkpoints.find((ref) => ref.digest === digest);
}

/**
 * The count against the characters of the prompt that went out: its system messages, the
 * conversation as sent and its tool definitions, files at their fixed figures. With the `estimate`
 * option, also against the tokenizer's figure when the step's size was that estimate (measuring the
 * whole prompt again by the tokenizer would cost every step what a whole estimate costs once).
 * A prompt holding a provider's compaction item (opaque, of unknown size) teaches nothing.
 */
async function learn(engine: Engine, view: StepView, input: number, measure: Measure): Promise<void> {
  if (view.boundary >= 0 || view.checkpoint?.native !== undefined) return;
  const { measured } = view;
  const tokenized = measured !== undefined && measured.chars === measure.chars && measured.tokens === measure.tokens && view.estimator.tokenizer !== undefined ? measured.tokenized : undefined;
  await engine.sizing.learn(view.modelKey, view.scope, { chars: measure.chars, tokenized, fixed: measure.tokens }, input, view.budget);
}
