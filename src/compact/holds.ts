import type { Engine } from '../engine';
import type { Hold } from '../store/records';
import { type StepView, totalSize } from '../view';

/** Whether a compaction that made no progress holds this conversation until it grows by a tenth of the ceiling (SPEC 6.8). */
export async function held(view: StepView, limit: number): Promise<boolean> {
  const { digests } = view;
  if (digests === undefined) return false;
  const checkpoint = view.checkpoint?.digest ?? null;
  const size = totalSize(view);
  // Conversations sharing an opening share a thread: a hold is this conversation's when
  // the prefix it names is this conversation's.
  for (const hold of view.thread?.holds ?? []) {
    if (hold.checkpoint !== checkpoint || hold.length > view.conversation.length || size >= hold.size + limit / 10) continue;
    if ((await digests.of(hold.length)) === hold.digest) return true;
  }
  return false;
}

/** Holds the conversation at `size` (it is not compacted on its own again until it grows by a tenth of `limit`), and says why. */
export async function placeHold(engine: Engine, view: StepView, size: number, limit: number, why: string): Promise<void> {
  if (view.digests === undefined || view.threadDigest === undefined) return;
  const length = view.conversation.length;
  const hold: Hold = { length, digest: await view.digests.of(length), checkpoint: view.checkpoint?.digest ?? null, size };
  engine.warn(
    `ai-compaction: ${why}; the prompt stays at ${size} tokens, at or above the ceiling of ${limit}. ` +
      `Not compacting again until it grows by ${Math.ceil(limit / 10)} tokens.`,
  );
  await engine.keeper.saveHold(view.threadDigest, hold);
}
