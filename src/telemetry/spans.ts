import type { Attributes, Span } from '@opentelemetry/api';
import { CompactionError } from '../errors';
import type { CallOptions, GenerateResult, Model } from '../prompt/types';
import { tokenCounts } from '../prompt/usage';
import type { CompactionKind, CompactionReason, CompactionUsage } from '../types';
import { telemetry, withSpan } from './registry';

/**
 * The spans of a compaction (docs/observability.md): `ai-compaction.compact` under the active span
 * (the AI SDK's step span when its telemetry is on), and each model call it makes as a child span
 * named and attributed after the OpenTelemetry GenAI conventions. Sizes, counts and names only: no
 * message, summary or provider error text is ever set on a span. Nothing is made without a registered
 * tracer provider.
 */

/** The name of a compaction's span. */
export const COMPACTION_SPAN = 'ai-compaction.compact';

// The API's enums, by value: the package is read through its registry, not imported (registry.ts).
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

/** What a compaction did, set on its span as it ends. */
export interface CompactionOutcome {
  kind: CompactionKind;
  messagesCovered: number;
  tokensAfter: number;
  usage: CompactionUsage;
}

/** The span of one compaction under way. */
export interface CompactionSpan {
  /** Sends one model call of the compaction (`send`) as a child span: `chat <model id>`, a GenAI inference span. */
  call(model: Model, request: CallOptions, send: () => PromiseLike<GenerateResult>): Promise<GenerateResult>;
  /** Ends the span with what the compaction did. */
  end(outcome: CompactionOutcome): void;
  /** Ends the span as failed: status error, with the `CompactionError` reason. */
  fail(error: unknown): void;
}

/** Starts the span of a compaction; `undefined` when no tracer provider is registered. */
export function startCompactionSpan(start: { reason: CompactionReason; prepared: boolean; tokensBefore: number }): CompactionSpan | undefined {
  const otel = telemetry();
  if (otel === undefined) return undefined;
  const span = otel.tracer.startSpan(
    COMPACTION_SPAN,
    {
      kind: SPAN_KIND_INTERNAL,
      attributes: { 'ai_compaction.reason': start.reason, 'ai_compaction.prepared': start.prepared, 'ai_compaction.tokens_before': start.tokensBefore },
    },
    otel.active,
  );
  const parent = withSpan(otel.active, span);
  let model: string | undefined;
  return {
    async call(called, request, send) {
      model = called.modelId;
      const child = otel.tracer.startSpan(`chat ${called.modelId}`, { kind: SPAN_KIND_CLIENT, attributes: requestAttributes(called, request) }, parent);
      try {
        const result = await otel.within(withSpan(parent, child), send);
        child.setAttributes(resultAttributes(result));
        return result;
      } catch (error) {
        failed(child, errorType(error));
        throw error;
      } finally {
        child.end();
      }
    },
    end({ kind, messagesCovered, tokensAfter, usage }) {
      span.setAttributes({
        'ai_compaction.kind': kind,
        'ai_compaction.messages_covered': messagesCovered,
        'ai_compaction.tokens_after': tokensAfter,
        'ai_compaction.requests': usage.requests,
        ...(model === undefined ? {} : { 'gen_ai.request.model': model }),
      });
      span.end();
    },
    fail(error) {
      if (model !== undefined) span.setAttribute('gen_ai.request.model', model);
      failed(span, failureReason(error));
      span.end();
    },
  };
}

function requestAttributes(model: Model, request: CallOptions): Attributes {
  return {
    'gen_ai.operation.name': 'chat',
    // The AI SDK's provider id up to its first dot: `openai.responses` -> `openai`.
    'gen_ai.provider.name': model.provider.split('.')[0]!,
    'gen_ai.request.model': model.modelId,
    ...(typeof request.maxOutputTokens === 'number' ? { 'gen_ai.request.max_tokens': request.maxOutputTokens } : {}),
  };
}

function resultAttributes({ usage, finishReason, response }: GenerateResult): Attributes {
  const attributes: Attributes = {};
  const numbers = tokenCounts(usage);
  if (numbers.input !== undefined) attributes['gen_ai.usage.input_tokens'] = numbers.input;
  if (numbers.cached !== undefined) attributes['gen_ai.usage.cache_read.input_tokens'] = numbers.cached;
  if (numbers.output !== undefined) attributes['gen_ai.usage.output_tokens'] = numbers.output;
  const finish = typeof finishReason === 'string' ? finishReason : finishReason?.unified;
  if (typeof finish === 'string') attributes['gen_ai.response.finish_reasons'] = [finish];
  const responseModel = (response as { modelId?: unknown } | undefined)?.modelId;
  if (typeof responseModel === 'string') attributes['gen_ai.response.model'] = responseModel;
  return attributes;
}

function failed(span: Span, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: STATUS_ERROR, message: type });
}

/** Why a compaction failed, as its `CompactionError` says; an abort is `aborted`. */
function failureReason(error: unknown): string {
  if (CompactionError.isInstance(error)) return error.reason;
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError' ? 'aborted' : 'summarizer-failed';
}

/** A failed request's error type: the HTTP status the provider answered with, or the error's name; never its message. */
function errorType(error: unknown): string {
  const { statusCode, name } = (error ?? {}) as { statusCode?: unknown; name?: unknown };
  if (typeof statusCode === 'number') return String(statusCode);
  return typeof name === 'string' && name !== '' ? name : '_OTHER';
}
