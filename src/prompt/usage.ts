import type { Usage } from './types';

/** The token counts a provider's usage reports (`LanguageModelV3Usage` / `V4Usage`), each `undefined` where it reported none. */
export function tokenCounts(usage: Usage | undefined): { input?: number; cached?: number; output?: number } {
  return { input: count(usage?.inputTokens?.total), cached: count(usage?.inputTokens?.cacheRead), output: count(usage?.outputTokens?.total) };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
