import type { Engine } from '../engine';
import { messageOf } from '../errors';
import type { Usage } from '../prompt/types';
import { type StepView, frameDigest, supersededCounts } from '../view';

/**
 * Records the provider's usage of a step as the counted baseline of the prompt it measured (SPEC 5).
 * A failure to record is only logged: a lost count means the next step estimates.
 */
export async function recordUsage(engine: Engine, view: StepView, usage: Usage | undefined): Promise<void> {
  try {
    await saveCount(engine, view, usage);
  } catch (error) {
    engine.warn(`ai-compaction: recording usage failed: ${messageOf(error)}`);
  }
}

async function saveCount(engine: Engine, view: StepView, usage: Usage | undefined): Promise<void> {
  const input = usage?.inputTokens?.total;
  // No prompt is 0 tokens: some OpenAI-compatible servers say 0 for a cached prompt. No count.
  if (typeof input !== 'number' || !(input > 0) || view.digests === undefined || view.threadDigest === undefined) return;
  const output = usage?.outputTokens?.total;
  const length = view.conversation.length;
  const count = {
    length,
    digest: await view.digests.of(length),
    checkpoint: view.checkpoint?.digest ?? null,
    frame: await frameDigest(view),
    input,
    output: typeof output === 'number' ? output : 0,
  };
  await engine.keeper.saveCount(view.threadDigest, count, await supersededCounts(view));
}
