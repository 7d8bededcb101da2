import type { Clock } from '../clock';
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

/** A meter for one compaction, whose calls go under `span` when there is one. */
export function meter(span: CompactionSpan | undefined, clock: Pick<Clock, 'now'>): Meter {
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
          const start = clock.now();
          try {
            const result = await (span === undefined ? send(options) : span.call(model, options, () => send(options)));
            const counts = tokenCounts(result.usage);
            input = plus(input, counts.input);
            cached = plus(cached, counts.cached);
            output = plus(output, counts.output);
            return result;
          } finally {
            milliseconds += clock.now() - start;
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
