import type { CompactionMetadata } from 'ai-compaction';

const number = new Intl.NumberFormat('en-US');
const plural = (count: number, word: string) => `${number.format(count)} ${word}${count === 1 ? '' : 's'}`;

/** Milliseconds as a person reads them: `840 ms`, `3.1 s` (in tenths of a second from what rounds to 1.0 s). */
export function duration(ms: number): string {
  const tenths = Math.round(ms / 100);
  return tenths < 10 ? `${Math.round(ms)} ms` : `${(tenths / 10).toFixed(1)} s`;
}

/**
 * The tokens of a compaction's model calls as the provider reported them, what it did not report
 * left out: `412 tokens written (2,310 read, 2,048 from cache)`; `undefined` when it reported none.
 */
function tokens({ inputTokens, cachedInputTokens, outputTokens }: NonNullable<CompactionMetadata['usage']>): string | undefined {
  const read = inputTokens === undefined ? undefined : `${number.format(inputTokens)} read`;
  const cached = cachedInputTokens === undefined ? undefined : `${number.format(cachedInputTokens)} ${read === undefined ? 'read ' : ''}from cache`;
  const details = [read, cached].filter((part) => part !== undefined).join(', ');
  if (outputTokens !== undefined) return `${plural(outputTokens, 'token')} written${details === '' ? '' : ` (${details})`}`;
  if (inputTokens !== undefined) return `${plural(inputTokens, 'token')} read${cached === undefined ? '' : ` (${cached})`}`;
  if (cachedInputTokens !== undefined) return `${plural(cachedInputTokens, 'token')} read from cache`;
  return undefined;
}

/**
 * What a compaction's model calls cost, for the notice: `Summary: 1 request, 412 tokens written
 * (2,310 read, 2,048 from cache), 3.1 s`. The tokens are the provider's own count (not the
 * middleware's estimates), summed over the summary request, its reminder and its shortened retries
 * (docs/observability.md). A checkpoint prepared ahead was written in the background: no reply
 * waited for that time. `undefined` when the metadata has no `usage` (a notice kept from an older
 * version of the package).
 */
export function costLine(compaction: Pick<CompactionMetadata, 'kind' | 'usage' | 'prepared'>): string | undefined {
  const { usage } = compaction;
  if (usage === undefined) return undefined;
  if (compaction.kind === 'clear') return 'No model call: old tool outputs cleared';
  const what = compaction.kind === 'native' ? "The provider's compaction" : 'Summary';
  // a checkpoint prepared by an older version of the package kept no count of its requests
  if (usage.requests === 0) return `${what}: its cost was not recorded`;
  const time = `${duration(usage.durationMs)}${compaction.prepared === true ? ' in the background' : ''}`;
  return [`${what}: ${plural(usage.requests, 'request')}`, tokens(usage), time].filter((part) => part !== undefined).join(', ');
}
