import { clearToolOutputs, clearingEnd, clearingThresholds } from '../checkpoint/clear';
import { recordBudget } from '../checkpoint/record';
import { type Engine, modelKey } from '../engine';
import type { ResolvedOptions } from '../options';
import type { Model } from '../prompt/types';
import { estimateMessages } from '../sizing/estimate';
import { FORMAT_VERSION, type StoredCheckpoint, readableBy } from '../store/format';
import type { CompactionReason, CompactionRecord, CompactionRule } from '../types';
import { startCompactionSpan } from '../telemetry/spans';
import { type StepView, arrange, totalSize, withCheckpoint } from '../view';
import { recallToolName } from '../recall/marker';
import { noUsage } from './cost';
import { type Made, singleFlight } from './flight';
import { announce } from './report';

/** A clearing that meets its thresholds: the checkpoint to store (its digest still to fill in), and what it frees. */
export interface ClearingPlan {
  checkpoint: Omit<StoredCheckpoint, 'digest'>;
  /** Estimated tokens it frees. */
  freed: number;
  /** The step's size after it: its size less what it frees. */
  after: number;
}

/** When a clearing is tried: the step, why it compacts, the ceiling, and what a summary would cover up to. */
export interface ClearingRequest {
  view: StepView;
  reason: CompactionReason;
  model: Model;
  /** The ceiling; without one nothing is cleared (the thresholds are shares of it). */
  limit: number | undefined;
  /** The size the compacted prompt must stay under (overflow recovery). */
  target: number | undefined;
  /** Where what a compaction covers begins: the end of what the conversation's checkpoint covers. */
  from: number;
  /** Where the live part begins: nothing from there on is cleared. */
  end: number;
  /**
   * Instead of waiting for a summary still being written at the ceiling: enough when it brings the
   * prompt under the ceiling at all (docs/design.md, "Preparing ahead").
   */
  instead?: boolean;
}

/**
 * The cheap tier of a compaction (docs/design.md, "Clearing old tool results"), decided without a
 * model call or a store: the clearing of old tool outputs this step would make, when it frees at
 * least `atLeast` tokens and brings the prompt to at most half the ceiling; `undefined` when a
 * summary is needed instead. A manual compaction (`compactNext()`) is a summary. Clearing never
 * follows a clearing that did not make room: when the conversation is back at the ceiling having
 * grown by less than `atLeast` since the last clearing (the provider counted the cleared prompt
 * larger than its estimate), or when the provider rejected the cleared prompt, a summary is made.
 */
export function planClearing(settings: ResolvedOptions, { view, reason, limit, target, from, end, instead = false }: ClearingRequest): ClearingPlan | undefined {
  const setting = settings.clearToolResults;
  if (setting === false || reason === 'manual' || limit === undefined || limit <= 0) return undefined;
  const { atLeast, atMost } = instead ? { atLeast: 1, atMost: limit - 1 } : clearingThresholds(limit, setting.atLeast);
  const current = view.checkpoint;
  if (current?.clear !== undefined) {
    if (reason === 'overflow') return undefined;
    const grown = estimateMessages(view.conversation, Math.min(current.clear.at, view.conversation.length), view.conversation.length, view.estimator);
    if (grown < atLeast) return undefined;
  }
  const length = clearingEnd(view.conversation, from, end, setting.keep ?? recordBudget(settings.keep, limit), view.estimator);
  if (length <= from) return undefined;
  const { outputs, characters } = clearToolOutputs(view.conversation, from, length);
  if (outputs === 0) return undefined;
  // It goes out as the checkpoint in force (a summary or a provider's item) over the cleared
  // messages; a clearing made on a clearing sits on the same checkpoint and clears from the same place.
  const base = current !== undefined && (current.clear === undefined || current.clear.base) ? current : undefined;
  const checkpoint: Omit<StoredCheckpoint, 'digest'> = {
    v: FORMAT_VERSION,
    length,
    summary: base?.summary ?? '',
    record: base?.record ?? '',
    reason,
    tokensBefore: totalSize(view),
    tokensAfter: 0,
    createdAt: 0,
    ...(base?.identifiers === undefined ? {} : { identifiers: base.identifiers }),
    ...(base?.step === undefined ? {} : { step: base.step }),
    ...(base?.native === undefined ? {} : { native: base.native }),
    clear: { from, base: base !== undefined, at: view.conversation.length, outputs, characters },
  };
  const { sent } = arrange(view.conversation, { ...checkpoint, digest: '' }, view.boundary, recallToolName(view.params.tools));
  const freed = estimateMessages(view.sent, 0, view.sent.length, view.estimator) - estimateMessages(sent, 0, sent.length, view.estimator);
  const after = totalSize(view) - freed;
  if (freed < atLeast || after > atMost || (target !== undefined && after >= target)) return undefined;
  return { checkpoint, freed, after };
}

/**
 * Clears old tool outputs in place of a summary when that is enough (docs/design.md, "Clearing old
 * tool results"): stored like a checkpoint, found by the content of the messages it clears,
 * reported as a compaction of kind `clear`. Returns the view to send, or `undefined` when a summary
 * is needed.
 */
export async function clearFirst(engine: Engine, request: ClearingRequest): Promise<StepView | undefined> {
  const { view } = request;
  if (view.digests === undefined) return undefined;
  const plan = planClearing(engine.settings, request);
  if (plan === undefined) return undefined;
  const digest = await view.digests.of(plan.checkpoint.length);
  const made = await singleFlight(engine, `clear:${digest}`, view.params.abortSignal, async () => {
    // Another step (of this instance or another) may have stored this very one a moment ago.
    const existing = digest === view.checkpoint?.digest ? undefined : await engine.keeper.checkpoint(digest, plan.checkpoint.length, view.budget);
    if (existing !== undefined && readableBy(existing, modelKey(request.model))) return { checkpoint: existing };
    return store(engine, view, { ...plan.checkpoint, digest, createdAt: engine.clock.now() }, request.instead === true ? 'clear-instead' : 'clear');
  });
  const next = withCheckpoint(view, made.checkpoint);
  if (made.report !== undefined) next.compaction = made.report;
  return next;
}

async function store(engine: Engine, view: StepView, made: StoredCheckpoint, rule: CompactionRule): Promise<Made> {
  // A compaction like any other in a trace (docs/observability.md), with no model call under it.
  const span = startCompactionSpan({ reason: made.reason, prepared: false, tokensBefore: made.tokensBefore });
  const next = withCheckpoint(view, made);
  const checkpoint: StoredCheckpoint = { ...made, rule, tokensAfter: next.size.estimated };
  if (view.threadDigest !== undefined) {
    const saved = await engine.keeper.saveCheckpoint(view.threadDigest, checkpoint, view.budget);
    if (!saved) engine.warn('ai-compaction: the cleared tool results could not be stored; this step uses them, later steps may compact again');
  }
  const record: CompactionRecord = {
    reason: checkpoint.reason,
    rule,
    kind: 'clear',
    messagesCovered: checkpoint.length,
    tokensBefore: checkpoint.tokensBefore,
    tokensAfter: checkpoint.tokensAfter,
    summary: '',
    record: '',
    cleared: { toolResults: checkpoint.clear!.outputs, characters: checkpoint.clear!.characters },
    usage: noUsage(),
  };
  span?.end({ kind: 'clear', messagesCovered: record.messagesCovered, tokensAfter: record.tokensAfter, usage: record.usage });
  const report = announce(engine, record, view.modelKey);
  return { checkpoint, report };
}
