import type { Engine } from '../engine';
import { messageOf } from '../errors';
import type { CompactionRecord, CompactionUsage } from '../types';

/** Makes a compaction known: `last()`, one info line, `onCompaction` (whose failure is only logged). */
export function report(engine: Engine, record: CompactionRecord): void {
  engine.last = record;
  const what =
    record.cleared === undefined
      ? `compacted ${record.messagesCovered} messages`
      : `cleared ${record.cleared.toolResults} old tool results in ${record.messagesCovered} messages`;
  engine.info(
    `ai-compaction: ${what} (${record.reason}${record.prepared === true ? ', prepared ahead' : ''}): ${record.tokensBefore} -> ${record.tokensAfter} estimated tokens; ${costOf(record.usage)}`,
  );
  try {
    const returned: unknown = engine.settings.onCompaction?.(record as never);
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
      (returned as PromiseLike<unknown>).then(undefined, (error: unknown) => engine.warn(`ai-compaction: onCompaction failed: ${messageOf(error)}`));
    }
  } catch (error) {
    engine.warn(`ai-compaction: onCompaction failed: ${messageOf(error)}`);
  }
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
