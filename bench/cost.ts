/**
 * Cost at cache prices, the way providers bill a model call: input read from the provider's prompt
 * cache at a tenth of the price of uncached input, and output at five times that price. Every
 * benchmark's tables put these beside the raw input tokens; the figures are in tokens of uncached
 * input (multiply by a model's price per input token for money).
 *
 *   const usage = usageOf(server.requests);   // every answered request, summary requests included
 *   costOf(usage);                            // { input: ..., full: ... }
 *
 * The weights are stated once, in `COST_WEIGHTS` and `COST_NOTE`; providers differ a little
 * (OpenAI reads its cache at a tenth to a half, Anthropic at a tenth and bills a cache write at
 * 1.25 times; output is four to eight times input), and the ratios between strategies move far
 * less than the weights do.
 */
import type { RecordedRequest } from '../test/support/provider-server';

/** The weights, in prices of one uncached input token. */
export const COST_WEIGHTS = { cachedInput: 0.1, output: 5 } as const;

/** The formula as every benchmark prints it once. */
export const COST_NOTE = `input cost = uncached input + ${COST_WEIGHTS.cachedInput} x cached input; full cost = input cost + ${COST_WEIGHTS.output} x output tokens; both in tokens of uncached input, summary requests included`;

/** Tokens of a set of model calls, as the provider reported them. */
export interface Usage {
  /** Prompt tokens, cached ones included. */
  input: number;
  /** Of those, the tokens read from the prompt cache. */
  cached: number;
  output: number;
}

export interface Cost {
  /** Uncached input + 0.1 x cached input. */
  input: number;
  /** Input cost + 5 x output. */
  full: number;
}

/** The cost of `usage` at cache prices. Cached tokens beyond the input (a bad report) are an error, not a discount. */
export function costOf({ input, cached, output }: Usage): Cost {
  if (![input, cached, output].every((value) => Number.isFinite(value) && value >= 0)) throw new Error(`costOf: tokens must be non-negative numbers, got input ${input}, cached ${cached}, output ${output}`);
  if (cached > input) throw new Error(`costOf: ${cached} cached tokens of ${input} input tokens`);
  const inputCost = input - cached + COST_WEIGHTS.cachedInput * cached;
  return { input: inputCost, full: inputCost + COST_WEIGHTS.output * output };
}

/** The usage of every request the provider answered (a rejected request is not billed), summary requests included. */
export function usageOf(requests: readonly Pick<RecordedRequest, 'rejected' | 'promptTokens' | 'cachedTokens' | 'outputTokens'>[]): Usage {
  const usage: Usage = { input: 0, cached: 0, output: 0 };
  for (const request of requests) {
    if (request.rejected) continue;
    usage.input += request.promptTokens;
    usage.cached += request.cachedTokens ?? 0;
    usage.output += request.outputTokens;
  }
  return usage;
}

/** Usages added up. */
export function addUsage(...usages: readonly Usage[]): Usage {
  return usages.reduce((sum, usage) => ({ input: sum.input + usage.input, cached: sum.cached + usage.cached, output: sum.output + usage.output }), { input: 0, cached: 0, output: 0 });
}

/** The three columns every table puts side by side: raw input, input cost, full cost. */
export const COST_COLUMNS = ['input', 'input cost', 'full cost'] as const;

/** The cells of `COST_COLUMNS` for `usage`, rounded, with thousands separators. */
export function costCells(usage: Usage): string[] {
  const cost = costOf(usage);
  return [usage.input, cost.input, cost.full].map((value) => Math.round(value).toLocaleString('en-US'));
}
