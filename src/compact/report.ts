import { type Engine, modelOfKey, ownState } from '../engine';
import { messageOf } from '../errors';
import { modelFacts } from '../model';
import type { StoredCheckpoint } from '../store/format';
import type { CompactionReason, CompactionRecord, CompactionRule, CompactionUsage } from '../types';
import { type Economy, expectedSaving } from './trigger';

/** The last compaction an instance made known, for `last()`. */
const reported = ownState((): { last?: CompactionRecord } => ({}));

/**
 * Models whose prices are unknown, not said yet (docs/design.md, "Compaction timed by what it
 * costs"): the first summary made at the ceiling because of it says so in its line, once per model.
 */
const unpriced = ownState(() => ({ pending: new Set<string>(), said: new Set<string>() }));

/** Notes that `model` (`provider:modelId`) has no known prices, so its conversations compact at the ceiling: said once, in the next compaction's line. */
export function noteUnpriced(engine: Engine, model: string): void {
  const notes = unpriced(engine);
  if (!notes.said.has(model)) notes.pending.add(model);
}

/** What a compaction's line adds about unknown prices: once per model, on an automatic summary at the ceiling. */
function unpricedNote(engine: Engine, report: CompactionRecord): string {
  const notes = unpriced(engine);
  if (notes.pending.size === 0 || report.reason !== 'auto' || report.kind !== 'summary' || !['ceiling', 'prepared', 'from-prepared'].includes(report.rule)) return '';
  const models = [...notes.pending];
  notes.pending.clear();
  for (const model of models) notes.said.add(model);
  return `; at the ceiling: no prices known for ${models.join(', ')} (compactAt 'cost' needs them: give the option pricing)`;
}

/** The last compaction, for `last()`; `undefined` before the first. */
export function lastReport(engine: Engine): CompactionRecord | undefined {
  return reported(engine).last;
}

/**
 * Makes a compaction of a step of the model `modelKey` known: `last()`, one info line,
 * `onCompaction` (whose failure is only logged). Both say the model's window and where it came
 * from (docs/design.md, "The window"). Returns the record as made known.
 */
export function announce(engine: Engine, made: CompactionRecord, modelKey: string): CompactionRecord {
  const { window, windowSource } = modelFacts(engine, modelOfKey(modelKey));
  const report: CompactionRecord = window === undefined || windowSource === undefined ? made : { ...made, window: { tokens: window, source: windowSource } };
  reported(engine).last = report;
  const what =
    report.cleared === undefined
      ? `compacted ${report.messagesCovered} messages`
      : `cleared ${report.cleared.toolResults} old tool results in ${report.messagesCovered} messages`;
  engine.info(
    `ai-compaction: ${what} (${report.reason}, rule ${report.rule}${report.prepared === true ? ', prepared ahead' : ''}): ${report.tokensBefore} -> ${report.tokensAfter} estimated tokens; ${costOf(report.usage)}${report.expectedSaving === undefined ? '' : `; expected to save ${report.expectedSaving} input-price tokens`}; ${report.window === undefined ? 'no window known' : `window ${report.window.tokens} tokens (${report.window.source})`}${unpricedNote(engine, report)}`,
  );
  try {
    const returned: unknown = engine.settings.onCompaction?.(report);
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
      (returned as PromiseLike<unknown>).then(undefined, (error: unknown) => engine.warn(`ai-compaction: onCompaction failed: ${messageOf(error)}`));
    }
  } catch (error) {
    engine.warn(`ai-compaction: onCompaction failed: ${messageOf(error)}`);
  }
  return report;
}

/** What the info line says a compaction cost: `2 model requests, 41200 input tokens (38000 cached), 950 output tokens, 8400 ms`. */
function costOf(usage: CompactionUsage): string {
  if (usage.requests === 0) return 'no model request';
  const parts = [`${usage.requests} model request${usage.requests === 1 ? '' : 's'}`];
  if (usage.inputTokens !== undefined) {
    parts.push(`${usage.inputTokens} input tokens${usage.cachedInputTokens === undefined ? '' : ` (${usage.cachedInputTokens} cached)`}`);
  }
  if (usage.outputTokens !== undefined) parts.push(`${usage.outputTokens} output tokens`);
  if (usage.inputTokens === undefined && usage.outputTokens === undefined) parts.push('no tokens reported');
  parts.push(`${usage.durationMs} ms`);
  return parts.join(', ');
}

/** The rule a compaction asked for without one is named after (overflow recovery, a manual compaction, the ceiling). */
export function ruleOf(reason: CompactionReason): CompactionRule {
  return reason === 'auto' ? 'ceiling' : reason;
}

/** What a checkpoint made by a summary request or by the provider is. */
export function kindOf(checkpoint: StoredCheckpoint): 'summary' | 'native' {
  return checkpoint.native === undefined ? 'summary' : 'native';
}

/**
 * What `last()` returns and `onCompaction` receives for a summary (or a provider's item) that a
 * step sent; with `economy` (the model's prices and the conversation's growth known), what the
 * policy expected it to save (docs/design.md, "Compaction timed by what it costs").
 */
export function reportOf(checkpoint: StoredCheckpoint, reason: CompactionReason, rule: CompactionRule, tokensBefore: number, tokensAfter: number, usage: CompactionUsage, economy?: Economy): CompactionRecord {
  const { native } = checkpoint;
  return {
    reason,
    rule,
    kind: kindOf(checkpoint),
    messagesCovered: checkpoint.length,
    tokensBefore,
    tokensAfter,
    summary: checkpoint.summary,
    record: checkpoint.record,
    ...(native === undefined ? {} : { native: { provider: native.provider, item: native.part } }),
    usage,
    ...(economy === undefined ? {} : { expectedSaving: expectedSaving(economy, tokensBefore, tokensAfter) }),
  };
}
