import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import * as ai from 'ai';
import { APICallError, generateText } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { compaction } from '../../../src';
import type { CallOptions, Message } from '../../../src/prompt/types';
import { AI_SDK_MAJOR, MockLanguageModel, SUMMARY, finish, isSummaryPrompt } from '../../support/models';
import { band, atCeiling } from '../../support/prepare-fixtures';
import { assistant, scriptedModel, system, toolCall, toolResult, user, wrap } from '../../support/harness';

// The spans of a compaction (docs/observability.md), exported by the OpenTelemetry SDK to memory:
// `ai-compaction.compact` under the AI SDK's step span (ai@6: `experimental_telemetry`; ai@7:
// `registerTelemetry` with `@ai-sdk/otel`), each model call a GenAI child span, no content.

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  if (AI_SDK_MAJOR === 7) {
    const { OpenTelemetry } = await import('@ai-sdk/otel');
    (ai as unknown as { registerTelemetry: (integration: unknown) => void }).registerTelemetry(new OpenTelemetry());
  }
});
afterAll(() => {
  (globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: unknown }).AI_SDK_TELEMETRY_INTEGRATIONS = undefined;
  trace.disable();
  context.disable();
});
afterEach(() => exporter.reset());

/** The AI SDK's telemetry on, the way each major turns it on (ai@7: registered above). */
const telemetryOn = AI_SDK_MAJOR === 7 ? {} : { experimental_telemetry: { isEnabled: true } };

const SECRET = 'SECRET-PAYMENT-TOKEN-4242';
const conversation = (): Message[] => [system('You are the billing agent.'), user(`Charge the card ${SECRET} and report back.`), assistant('Charged. Receipt 99.'), user('Now refund it.')];

/** A model answering summary requests with the template (its usage reported) and steps with 'ok', noting the span active at each step. */
function tracedModel(summary: (prompt: Message[], index: number) => unknown = () => reply(SUMMARY, 5_000, 300, 4_000)) {
  const activeAtStep: string[] = [];
  let summaries = 0;
  const model = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => {
      if (isSummaryPrompt(params.prompt)) return summary(params.prompt, summaries++);
      activeAtStep.push(trace.getActiveSpan()?.spanContext().spanId ?? 'none');
      return reply('ok', 800, 10);
    },
  });
  return { model, activeAtStep };
}

function reply(text: string, input: number, output: number, cached?: number) {
  return { content: [{ type: 'text', text }], finishReason: finish('stop'), usage: { inputTokens: { total: input, noCache: input, cacheRead: cached, cacheWrite: undefined }, outputTokens: { total: output, text: output, reasoning: undefined } }, warnings: [] };
}

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const childrenOf = (span: ReadableSpan) => spans().filter((other) => parentOf(other) === span.spanContext().spanId);

/** This package's spans: each compaction's, and the model calls under it. */
function ourSpans(): ReadableSpan[] {
  return named('ai-compaction.compact').flatMap((span) => [span, ...childrenOf(span)]);
}

/** Every value this package put in a span: attributes, status message, events, links. */
function recorded(span: ReadableSpan): string[] {
  const values = Object.values(span.attributes).flatMap((value) => (Array.isArray(value) ? value : [value]));
  return [...values.map(String), span.status.message ?? '', ...span.events.map((event) => JSON.stringify(event)), ...span.links.map((link) => JSON.stringify(link))];
}

/** What a span of this package may record as text: names, enums, ids; never message or summary text. */
const ALLOWED_TEXT = new Set(['', 'auto', 'manual', 'overflow', 'summary', 'clear', 'native', 'chat', 'mock-provider', 'mock-model-id', 'stop', 'true', 'false', 'template-missing', 'summarizer-failed', '500']);

function expectNoContent(): void {
  const ours = ourSpans();
  expect(ours.length).toBeGreaterThan(0);
  expect(ours.every((span) => span.events.length === 0 && span.links.length === 0)).toBe(true);
  for (const value of ours.flatMap(recorded)) {
    expect(ALLOWED_TEXT.has(value) || /^\d+$/.test(value), `recorded ${JSON.stringify(value)}`).toBe(true);
  }
}

describe('OpenTelemetry spans', () => {
  it("should trace a compaction under the AI SDK's step span, with the summary request as a GenAI child span", async () => {
    const { model, activeAtStep } = tracedModel();
    const middleware = compaction({ contextWindow: 200_000 });
    middleware.compactNext();
    await generateText({ model: ai.wrapLanguageModel({ model: model as never, middleware }), messages: conversation().slice(1) as never, system: 'You are the billing agent.', ...telemetryOn });
    const record = middleware.last()!;

    const [compact] = named('ai-compaction.compact');
    expect(named('ai-compaction.compact')).toHaveLength(1);
    // Under the span the AI SDK had active around the provider call of this step.
    expect(activeAtStep).toHaveLength(1);
    expect(activeAtStep[0]).not.toBe('none');
    expect(parentOf(compact!)).toBe(activeAtStep[0]);
    // ai@6 names that span after the step; @ai-sdk/otel makes it the step's inference span, under `step 1`.
    const step = spans().find((span) => span.spanContext().spanId === activeAtStep[0])!;
    expect(step.name).toBe(AI_SDK_MAJOR === 7 ? 'chat mock-model-id' : 'ai.generateText.doGenerate');
    expect(compact!.spanContext().traceId).toBe(step.spanContext().traceId);
    expect(compact!.kind).toBe(0);
    expect(compact!.attributes).toEqual({
      'ai_compaction.reason': 'manual',
      'ai_compaction.kind': 'summary',
      'ai_compaction.prepared': false,
      'ai_compaction.messages_covered': record.messagesCovered,
      'ai_compaction.tokens_before': record.tokensBefore,
      'ai_compaction.tokens_after': record.tokensAfter,
      'ai_compaction.requests': 1,
      'gen_ai.request.model': 'mock-model-id',
    });
    expect(compact!.status.code).toBe(0);

    const requests = childrenOf(compact!);
    expect(requests.map((span) => span.name)).toEqual(['chat mock-model-id']);
    expect(requests[0]!.kind).toBe(2);
    expect(requests[0]!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'mock-provider',
      'gen_ai.request.model': 'mock-model-id',
      'gen_ai.request.max_tokens': 32_000,
      'gen_ai.usage.input_tokens': 5_000,
      'gen_ai.usage.cache_read.input_tokens': 4_000,
      'gen_ai.usage.output_tokens': 300,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    // The request within the compaction, the compaction within the step.
    const time = (value: [number, number]) => value[0] * 1e9 + value[1];
    expect(time(requests[0]!.startTime)).toBeGreaterThanOrEqual(time(compact!.startTime));
    expect(time(requests[0]!.endTime)).toBeLessThanOrEqual(time(compact!.endTime));
    expectNoContent();
  });

  it("should set the span's status to error with the CompactionError reason, the requests under it kept", async () => {
    const { model } = tracedModel(() => reply('I would rather not.', 700, 20));
    const middleware = compaction({ contextWindow: 200_000, logger: { info: () => undefined, warn: () => undefined } });
    middleware.compactNext();
    await generateText({ model: ai.wrapLanguageModel({ model: model as never, middleware }), messages: conversation().slice(1) as never, ...telemetryOn });
    // The step went out as it was: it fits the window.
    expect(middleware.last()).toBeUndefined();
    const [compact] = named('ai-compaction.compact');
    expect(compact!.status).toEqual({ code: 2, message: 'template-missing' });
    expect(compact!.attributes['error.type']).toBe('template-missing');
    // The summary request and its reminder, both answered: they cost what they cost.
    const requests = childrenOf(compact!);
    expect(requests).toHaveLength(2);
    expect(requests.map((span) => [span.status.code, span.attributes['gen_ai.usage.input_tokens']])).toEqual([
      [0, 700],
      [0, 700],
    ]);
    expectNoContent();
  });

  it('should mark a failed request with the status the provider answered, never its message', async () => {
    const failure = new APICallError({ message: `upstream broke while reading ${SECRET}`, url: 'https://api.example.com/v1', requestBodyValues: {}, statusCode: 500, responseBody: SECRET, isRetryable: false });
    const { model } = tracedModel(() => {
      throw failure;
    });
    const middleware = compaction({ contextWindow: 200_000, logger: { info: () => undefined, warn: () => undefined } });
    middleware.compactNext();
    await generateText({ model: ai.wrapLanguageModel({ model: model as never, middleware }), messages: conversation().slice(1) as never, ...telemetryOn });
    const [compact] = named('ai-compaction.compact');
    expect(compact!.status).toEqual({ code: 2, message: 'summarizer-failed' });
    const [request] = childrenOf(compact!);
    expect(request!.status).toEqual({ code: 2, message: '500' });
    expect(request!.attributes['error.type']).toBe('500');
    expectNoContent();
  });

  it('should trace a checkpoint prepared ahead under the step it was prepared beside, and the step that sends it not again', async () => {
    const scripted = scriptedModel();
    const background: Promise<unknown>[] = [];
    const middleware = compaction({ contextWindow: 20_000, waitUntil: (promise) => void background.push(promise) });
    const wrapped = wrap(scripted.model, middleware);
    const beside = trace.getTracer('test').startSpan('step beside');
    await context.with(trace.setSpan(context.active(), beside), () => wrapped.doGenerate({ prompt: band() }));
    beside.end();
    await Promise.all(background);
    await wrapped.doGenerate({ prompt: atCeiling() });
    expect(middleware.last()!.prepared).toBe(true);
    const [compact] = named('ai-compaction.compact');
    expect(named('ai-compaction.compact')).toHaveLength(1);
    expect(parentOf(compact!)).toBe(beside.spanContext().spanId);
    expect(compact!.attributes).toMatchObject({ 'ai_compaction.prepared': true, 'ai_compaction.reason': 'auto', 'ai_compaction.messages_covered': 14, 'ai_compaction.requests': 1 });
    expect(childrenOf(compact!)).toHaveLength(1);
    expectNoContent();
  });

  it('should trace a clearing of old tool results as a compaction with no model call under it', async () => {
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 100_000, clearToolResults: true });
    const prompt: Message[] = [user('Read the logs.')];
    for (let index = 0; index < 22; index++) prompt.push(toolCall(`c${index}`, 'read', { index }), toolResult(`c${index}`, 'read', `${SECRET} `.repeat(16_000 / 26)));
    prompt.push(assistant('Read them all.'), user('Summarize.'));
    await wrap(scripted.model, middleware).doGenerate({ prompt });
    expect(middleware.last()!.kind).toBe('clear');
    // (a checkpoint an earlier test prepared in the background may end its own span meanwhile)
    const cleared = named('ai-compaction.compact').filter((span) => span.attributes['ai_compaction.kind'] === 'clear');
    expect(cleared).toHaveLength(1);
    const [compact] = cleared;
    expect(compact!.attributes).toMatchObject({ 'ai_compaction.kind': 'clear', 'ai_compaction.requests': 0 });
    expect(childrenOf(compact!)).toEqual([]);
    expect(scripted.summaryCalls()).toHaveLength(0);
    expectNoContent();
  });

  it('should make nothing without a registered tracer provider', async () => {
    trace.disable();
    try {
      const { model } = tracedModel();
      const middleware = compaction({ contextWindow: 200_000 });
      middleware.compactNext();
      await generateText({ model: ai.wrapLanguageModel({ model: model as never, middleware }), messages: conversation().slice(1) as never });
      expect(middleware.last()!.usage.requests).toBe(1);
      expect(spans().filter((span) => span.instrumentationScope.name === 'ai-compaction')).toEqual([]);
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
  });
});
