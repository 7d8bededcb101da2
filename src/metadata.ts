import type { CompactionMetadata, CompactionRecord, CompactionRule, CompactionUsage } from './types';

/** The rules a compaction's metadata may name (types.ts, `CompactionRule`). */
const RULES: ReadonlySet<string> = new Set<CompactionRule>(['ceiling', 'cost', 'cold-cache', 'prepared', 'catch-up', 'from-prepared', 'clear', 'clear-instead', 'manual', 'overflow']);

/**
 * The compaction a step made, read from its `providerMetadata` (a `generateText` step, or the
 * `finish-step` part of `streamText`); `undefined` when that step did not compact.
 */
export function compactionOf(providerMetadata: unknown): CompactionMetadata | undefined {
  const value = (providerMetadata as { compaction?: unknown } | undefined)?.compaction;
  if (typeof value !== 'object' || value === null) return undefined;
  const { reason, rule, kind, messagesCovered, tokensBefore, tokensAfter, summary, usage, prepared, expectedSaving } = value as Record<string, unknown>;
  if (reason !== 'auto' && reason !== 'overflow' && reason !== 'manual') return undefined;
  if (typeof messagesCovered !== 'number' || typeof tokensBefore !== 'number' || typeof tokensAfter !== 'number') return undefined;
  // Metadata kept from an older version of this package (a stored chat) has no kind: it summarized.
  const known = kind === 'clear' || kind === 'native' ? kind : 'summary';
  const cost = usageOf(usage);
  return { reason, ...(typeof rule === 'string' && RULES.has(rule) ? { rule: rule as CompactionRule } : {}), kind: known, messagesCovered, tokensBefore, tokensAfter, summary: typeof summary === 'string' ? summary : '', ...(cost === undefined ? {} : { usage: cost }), ...(prepared === true ? { prepared } : {}), ...(typeof expectedSaving === 'number' && Number.isFinite(expectedSaving) ? { expectedSaving } : {}) };
}

/**
 * A result (or `finish` stream part) of a step that compacted, with the compaction in
 * `providerMetadata.compaction`, so a host can show it (e.g. as message metadata in `useChat`).
 */
export function withCompactionMetadata<T extends object>(result: T, report: CompactionRecord | undefined): T {
  if (report === undefined) return result;
  const providerMetadata = ((result as { providerMetadata?: unknown }).providerMetadata ?? {}) as Record<string, unknown>;
  return { ...result, providerMetadata: { ...providerMetadata, compaction: metadataOf(report) } };
}

/** What a step's `providerMetadata.compaction` holds of a compaction's record (no record text, no native item). */
export function metadataOf(report: CompactionRecord): CompactionMetadata {
  const { reason, rule, kind, messagesCovered, tokensBefore, tokensAfter, summary, usage, prepared, expectedSaving } = report;
  return { reason, rule, kind, messagesCovered, tokensBefore, tokensAfter, summary, usage, ...(prepared === true ? { prepared } : {}), ...(expectedSaving === undefined ? {} : { expectedSaving }) };
}

/** A compaction's usage as metadata carries it; `undefined` when absent (an older version wrote it) or malformed. */
function usageOf(value: unknown): CompactionUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { requests, inputTokens, cachedInputTokens, outputTokens, durationMs } = value as Record<string, unknown>;
  if (!isCount(requests) || !isCount(durationMs)) return undefined;
  return {
    requests,
    ...(isCount(inputTokens) ? { inputTokens } : {}),
    ...(isCount(cachedInputTokens) ? { cachedInputTokens } : {}),
    ...(isCount(outputTokens) ? { outputTokens } : {}),
    durationMs,
  };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
