import { type Engine, ownState } from '../engine';
import type { CallOptions, Model } from '../prompt/types';
import { tokenCounts } from '../prompt/usage';
import type { CompactionSpan } from '../telemetry/spans';
import type { CompactionUsage } from '../types';

/**
 * What a compaction's model calls cost (docs/observability.md): each call it makes through a
 * metered model is counted, timed and, with OpenTelemetry on, traced as a child of its span.
 */
export interface Meter {
  /** `model`, its calls counted and timed. */
  wrap(model: Model): Model;
  /** What the calls made so far cost. */
  usage(): CompactionUsage;
}

/** Every summary request an instance made (`usage()`): the totals of all its meters. */
interface Totals {
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  durationMs: number;
}

const totalsOf = ownState((): Totals => ({ requests: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, durationMs: 0 }));

/**
 * The totals of every summary request this instance made since it was built (docs/observability.md,
 * `usage()`): those of failed compactions, of preparations never sent or superseded, reminders and
 * shortened retries included, each counted once, as sent, with the tokens the provider reported.
 */
export function instanceUsage(engine: Engine): Totals {
  const totals = totalsOf(engine);
  return { ...totals, durationMs: Math.round(totals.durationMs) };
}

/** A meter for one compaction of `engine`, whose calls go under `span` when there is one. */
export function meter(span: CompactionSpan | undefined, engine: Engine): Meter {
  const { clock } = engine;
  const totals = totalsOf(engine);
  let requests = 0;
  let milliseconds = 0;
  let input: number | undefined;
  let cached: number | undefined;
  let output: number | undefined;
  const plus = (sum: number | undefined, value: number | undefined) => (value === undefined ? sum : (sum ?? 0) + value);
  return {
    wrap(model) {
      const send = (options: CallOptions) => model.doGenerate(options);
      return {
        specificationVersion: model.specificationVersion,
        provider: model.provider,
        modelId: model.modelId,
        async doGenerate(options) {
          // Counted as sent: a request the provider rejects (too long, say) was still made.
          requests++;
          totals.requests++;
          const start = clock.now();
          try {
            const result = await (span === undefined ? send(options) : span.call(model, options, () => send(options)));
            const counts = tokenCounts(result.usage);
            input = plus(input, counts.input);
            cached = plus(cached, counts.cached);
            output = plus(output, counts.output);
            totals.inputTokens += counts.input ?? 0;
            totals.cachedInputTokens += counts.cached ?? 0;
            totals.outputTokens += counts.output ?? 0;
            return result;
          } finally {
            const took = clock.now() - start;
            milliseconds += took;
            totals.durationMs += took;
          }
        },
        doStream: (options) => model.doStream(options),
      };
    },
    usage: () => usageOf(requests, input, cached, output, milliseconds),
  };
}

/** What a clearing costs: no model call. */
export function noUsage(): CompactionUsage {
  return { requests: 0, durationMs: 0 };
}

/** Two compactions' usage as one: a prepared checkpoint's, carried into the compaction made from it. */
export function addUsage(a: CompactionUsage, b: CompactionUsage | undefined): CompactionUsage {
  if (b === undefined) return a;
  const plus = (x: number | undefined, y: number | undefined) => (x === undefined ? y : y === undefined ? x : x + y);
  return usageOf(a.requests + b.requests, plus(a.inputTokens, b.inputTokens), plus(a.cachedInputTokens, b.cachedInputTokens), plus(a.outputTokens, b.outputTokens), a.durationMs + b.durationMs);
}

function usageOf(requests: number, input: number | undefined, cached: number | undefined, output: number | undefined, milliseconds: number): CompactionUsage {
  return {
    requests,
    ...(input === undefined ? {} : { inputTokens: input }),
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(output === undefined ? {} : { outputTokens: output }),
    durationMs: Math.round(milliseconds),
  };
}
