import type { Engine } from '../engine';
import { messageOf } from '../errors';
import type { CompactionRecord } from '../types';

/** Makes a compaction known: `last()`, one info line, `onCompaction` (whose failure is only logged). */
export function report(engine: Engine, record: CompactionRecord): void {
  engine.last = record;
  const what =
    record.cleared === undefined
      ? `compacted ${record.messagesCovered} messages`
      : `cleared ${record.cleared.toolResults} old tool results in ${record.messagesCovered} messages`;
  engine.info(`ai-compaction: ${what} (${record.reason}${record.prepared === true ? ', prepared ahead' : ''}): ${record.tokensBefore} -> ${record.tokensAfter} estimated tokens`);
  try {
    const returned: unknown = engine.settings.onCompaction?.(record as never);
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
      (returned as PromiseLike<unknown>).then(undefined, (error: unknown) => engine.warn(`ai-compaction: onCompaction failed: ${messageOf(error)}`));
    }
  } catch (error) {
    engine.warn(`ai-compaction: onCompaction failed: ${messageOf(error)}`);
  }
}
