import type { Engine } from '../engine';
import type { CompactionReason, CompactionRecord, CompactionRule } from '../types';
import { type StepView, totalSize } from '../view';
import { noUsage } from './cost';
import { announce, reportOf } from './report';
import type { Economy } from './trigger';

/**
 * A checkpoint prepared ahead, sent by a step for the first time (docs/design.md, "Preparing
 * ahead"): promoted to the conversation's checkpoint and reported on that step.
 */

/**
 * Makes a checkpoint prepared ahead (docs/design.md, "Preparing ahead") this conversation's
 * checkpoint, as the step about to send it for the first time: it is listed among the checkpoints
 * steps find; `placed` is this step's view with it. Reported by `reportPrepared` once it is sure
 * to go out.
 */
async function promotePrepared(engine: Engine, view: StepView, placed: StepView): Promise<StepView> {
  const { conversation, digests } = view;
  const checkpoint = placed.checkpoint!;
  // Where it left the prompt: the next one is prepared from there (`preparingFrom`, docs/design.md,
  // "Preparing ahead").
  const sent = digests === undefined ? undefined : { length: conversation.length, digest: await digests.of(conversation.length) };
  if (view.threadDigest !== undefined && !(await engine.keeper.promote(view.threadDigest, checkpoint, sent, view.budget))) {
    engine.warn('ai-compaction: the checkpoint prepared ahead could not be stored as sent; this step uses it, later steps may compact again');
  }
  return placed;
}

/**
 * Reports a prepared checkpoint on the step that first sends it (`next`, placed from `view`), with
 * why that step compacted: `last()`, `onCompaction`, its metadata.
 */
function reportPrepared(engine: Engine, view: StepView, next: StepView, rule: CompactionRule, { reason = next.checkpoint!.reason, economy }: SendOptions): StepView {
  const checkpoint = next.checkpoint!;
  // What it cost in the background; a checkpoint prepared by an older version kept no count.
  const usage = checkpoint.usage ?? noUsage();
  next.compaction = announce(engine, { ...reportOf(checkpoint, reason, rule, totalSize(view), totalSize(next), usage, economy), prepared: true }, view.modelKey);
  return next;
}

/**
 * A prepared checkpoint sent by this step for the first time (`placed`: this step's view with it in
 * place, `withCheckpoint`): promoted, and reported here.
 */
export async function sendPrepared(engine: Engine, view: StepView, placed: StepView, rule: CompactionRule, options: SendOptions = {}): Promise<StepView> {
  return reportPrepared(engine, view, await promotePrepared(engine, view, placed), rule, options);
}

/** Why it is sent (by default, why it was made) and what a compaction costs and saves in this conversation (its expected saving). */
interface SendOptions {
  reason?: CompactionReason | undefined;
  economy?: Economy | undefined;
}

