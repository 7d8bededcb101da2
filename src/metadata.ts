import { isOwnUIPart } from './prompt/own-parts';
import type { StoredCheckpoint } from './store/format';
import type { CompactionMetadata, CompactionRecord, CompactionRule, CompactionUsage } from './types';

/** The rules a compaction's metadata may name (types.ts, `CompactionRule`). */
const RULES: ReadonlySet<string> = new Set<CompactionRule>(['ceiling', 'cost', 'cold-cache', 'prepared', 'catch-up', 'from-prepared', 'clear', 'clear-instead', 'manual', 'overflow']);

/**
 * The compaction a step made, read from its `providerMetadata` (a `generateText` step, or the
 * `finish-step` part of `streamText`), or the compaction a `useChat` message's `compaction` part
 * shows (its call's metadata, and the summary of its output); `undefined` when there is none.
 */
export function compactionOf(source: unknown): CompactionMetadata | undefined {
  if (!isOwnUIPart(source as { type?: unknown })) return fromMetadata(source);
  const { callProviderMetadata, output } = source as { callProviderMetadata?: unknown; output?: { summary?: unknown } };
  const found = fromMetadata(callProviderMetadata);
  const summary = output?.summary;
  return found === undefined || typeof summary !== 'string' ? found : { ...found, summary };
}

function fromMetadata(providerMetadata: unknown): CompactionMetadata | undefined {
  const value = (providerMetadata as { compaction?: unknown } | undefined)?.compaction;
  if (typeof value !== 'object' || value === null) return undefined;
  const { reason, rule, kind, messagesCovered, tokensBefore, tokensAfter, summary, usage, prepared, expectedSaving } = value as Record<string, unknown>;
  if (reason !== 'auto' && reason !== 'overflow' && reason !== 'manual') return undefined;
  if (typeof messagesCovered !== 'number' || typeof tokensBefore !== 'number' || typeof tokensAfter !== 'number') return undefined;
  // Metadata kept from an older version of this package (a stored chat) has no kind: it summarized.
  const known = kind === 'clear' || kind === 'native' ? kind : 'summary';
  const cost = usageOf(usage);
  return { reason, ...(isRule(rule) ? { rule } : {}), kind: known, messagesCovered, tokensBefore, tokensAfter, summary: typeof summary === 'string' ? summary : '', ...(cost === undefined ? {} : { usage: cost }), ...(prepared === true ? { prepared } : {}), ...(typeof expectedSaving === 'number' && Number.isFinite(expectedSaving) ? { expectedSaving } : {}) };
}

/**
 * A checkpoint a step sends without having made it, as its part shows it (hooks/part.ts): what it
 * is, what it covers, its sizes when it was made, and the rule that decided it (stored with it;
 * for one stored by an older version, the rule its reason and kind tell: a prepared one is the
 * one whose background cost it keeps). No usage: this step paid nothing for it.
 */
export function checkpointMetadata(checkpoint: StoredCheckpoint): CompactionMetadata {
  const { reason, tokensBefore, tokensAfter } = checkpoint;
  const kind = checkpoint.clear !== undefined ? 'clear' : checkpoint.native !== undefined ? 'native' : 'summary';
  const rule: CompactionRule = isRule(checkpoint.rule) ? checkpoint.rule : kind === 'clear' ? 'clear' : reason !== 'auto' ? reason : checkpoint.usage !== undefined ? 'prepared' : 'ceiling';
  return { reason, rule, kind, messagesCovered: checkpoint.length, tokensBefore, tokensAfter, summary: kind === 'summary' ? checkpoint.summary : '' };
}

function isRule(value: unknown): value is CompactionRule {
  return typeof value === 'string' && RULES.has(value);
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
