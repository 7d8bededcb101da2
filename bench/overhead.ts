/**
 * What `transformParams` costs on the common step: no compaction due, and the provider's count of
 * the previous step known (the prompt extends a step whose usage was recorded). Driven the way the
 * AI SDK drives a middleware: `transformParams`, then `wrapGenerate` with the provider's usage, then
 * `transformParams` on the next prompt, a fresh copy of the messages every step, as a tool loop
 * passes them. Compared with one `JSON.stringify` of the same prompt, measured interleaved.
 */
import { isDeepStrictEqual } from 'node:util';
import { performance } from 'node:perf_hooks';
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
} from '@ai-sdk/provider';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { compaction } from '../src';
import { PrefixDigests } from '../src/prompt/hash';
import { startCompactionSpan } from '../src/telemetry/spans';
import { TOOLS, asMessages, estimatedTokens, extendConversation, generateConversation } from './conversation';

const SIZES = [
  { label: '10k', tokens: 10_000, iterations: 300, warmup: 60 },
  { label: '50k', tokens: 50_000, iterations: 120, warmup: 20 },
  { label: '200k', tokens: 200_000, iterations: 60, warmup: 8 },
  { label: '1M', tokens: 1_000_000, iterations: 20, warmup: 3 },
];

/** Big enough that no compaction is ever due. */
const CONTEXT_WINDOW = 10_000_000;
/** Fresh copies are made this many steps at a time, outside the timing, to bound memory. */
const BATCH = 8;
const SEED = 42;

interface Row {
  label: string;
  messages: number;
  step: number;
  json: number;
  hashing: number;
}

const SCENARIOS = [
  { title: 'transformParams overhead (no compaction due, provider count known)', imageData: 'bytes' },
  { title: 'the same, screenshots as base64 strings instead of Uint8Array', imageData: 'base64' },
] as const;

export async function run(): Promise<void> {
  for (const { title, imageData } of SCENARIOS) {
    const rows: Row[] = [];
    for (const size of SIZES) rows.push(await measure(size, imageData));
    console.log(title);
    printTable(
      ['size', 'messages', 'transformParams', 'JSON.stringify', 'ratio', 'hashing'],
      rows.map((row) => [
        row.label,
        String(row.messages),
        `${ms(row.step)} ms`,
        `${ms(row.json)} ms`,
        `${(row.step / row.json).toFixed(2)}x`,
        `${ms(row.hashing)} ms`,
      ]),
    );
    console.log('');
  }
  console.log(
    'Medians per step. "hashing": the canonical form and the two SHA-256 digests alone (PrefixDigests). Every\n' +
      'step gets a fresh structuredClone of the prompt, made outside the timing. JSON.stringify writes a\n' +
      'Uint8Array as {"0":137,...}, about 11 characters a byte: with bytes, it is a generous yardstick.',
  );
  console.log('');
  await measureTelemetry();
}

/**
 * What tracing costs where it runs at all: a step that compacts (an instant summarizer), with no
 * tracer provider registered and with a recording one (the SDK's, to memory), measured interleaved.
 * "spans alone": the compaction's span and its request's child span made and ended, nothing else.
 * A step that does not compact never reaches the telemetry code (the tables above).
 */
async function measureTelemetry(): Promise<void> {
  const iterations = 200;
  const warmup = 40;
  const exporter = new InMemorySpanExporter();
  const recording = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const prompt = generateConversation({ targetTokens: 10_000, seed: SEED });
  const { model, summaryRequests } = mockModel();
  const middleware = compaction({ contextWindow: CONTEXT_WINDOW });
  const reply = { content: [], finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } };
  const spansAlone = async () => {
    const start = performance.now();
    const span = startCompactionSpan({ reason: 'auto', prepared: false, tokensBefore: 10_000 });
    await span?.call(model as never, { prompt: [] }, async () => reply);
    span?.end({ kind: 'summary', messagesCovered: 10, tokensAfter: 2_000, usage: { requests: 1, durationMs: 0 } });
    return performance.now() - start;
  };
  let recorded = 0;
  const times = { none: { step: [] as number[], spans: [] as number[] }, recording: { step: [] as number[], spans: [] as number[] } };
  for (let index = -warmup; index < iterations; index++) {
    for (const variant of index % 2 === 0 ? (['none', 'recording'] as const) : (['recording', 'none'] as const)) {
      if (variant === 'recording') trace.setGlobalTracerProvider(recording);
      const params = { prompt: structuredClone(prompt), tools: TOOLS };
      middleware.compactNext();
      const step = await timeStep(middleware, model, params);
      const spans = await spansAlone();
      trace.disable();
      if (index >= 0) {
        times[variant].step.push(step);
        times[variant].spans.push(spans);
      }
    }
    recorded += exporter.getFinishedSpans().length;
    exporter.reset();
  }
  // Every timed step compacted: one summary request each.
  if (summaryRequests() !== 2 * (warmup + iterations)) fail('telemetry', `${summaryRequests()} summary requests for ${2 * (warmup + iterations)} steps`);
  // And only the recording variant made spans: a compaction's and its request's, twice (the step, and alone).
  if (recorded !== 4 * (warmup + iterations)) fail('telemetry', `${recorded} spans recorded for ${warmup + iterations} recording steps`);
  const none = { step: median(times.none.step), spans: median(times.none.spans) };
  const on = { step: median(times.recording.step), spans: median(times.recording.spans) };
  // The instrument: spans that are recorded must cost more than none made.
  if (!(on.spans > none.spans)) fail('telemetry', `recording spans (${on.spans} ms) measured no dearer than none (${none.spans} ms)`);
  console.log('telemetry on a step that compacts (10k tokens, instant summarizer)');
  printTable(
    ['tracer provider', 'transformParams', 'ratio', 'spans alone', 'share of the step'],
    [
      ['none', `${ms(none.step)} ms`, '1.00x', `${(none.spans * 1000).toFixed(2)} µs`, `${((none.spans / none.step) * 100).toFixed(3)} %`],
      ['recording', `${ms(on.step)} ms`, `${(on.step / none.step).toFixed(2)}x`, `${(on.spans * 1000).toFixed(2)} µs`, `${((on.spans / on.step) * 100).toFixed(3)} %`],
    ],
  );
  console.log('Medians per step, the two variants interleaved; "spans alone" includes the cost of timing it. Without a tracer\nprovider the telemetry is one read of a global, and no span object is made.');
}

async function measure(
  { label, tokens, iterations, warmup }: (typeof SIZES)[number],
  imageData: 'bytes' | 'base64',
): Promise<Row> {
  const previous = generateConversation({ targetTokens: tokens, seed: SEED, imageData });
  const next = extendConversation(previous, SEED);
  const params: LanguageModelV3CallOptions = { prompt: next, tools: TOOLS };

  const { model, summaryRequests } = mockModel();
  const middleware = compaction({ contextWindow: CONTEXT_WINDOW });
  await recordPreviousStep(middleware, model, previous, next, 1.05);

  // The timed path must be the counted one, with nothing to do: no summary request, the prompt unchanged.
  const check = structuredClone(params);
  const out = await middleware.transformParams!({ type: 'generate', params: check, model });
  if (summaryRequests() !== 0) fail(label, `a summary request was made (${summaryRequests()})`);
  if (out !== check || !isDeepStrictEqual(out.prompt, next)) fail(label, 'the prompt sent differs from the one given');
  await checkCountIsUsed(label, previous, next);

  const steps: number[] = [];
  const jsons: number[] = [];
  const hashings: number[] = [];
  for (let index = -warmup; index < iterations; ) {
    const copies = Array.from({ length: Math.min(BATCH, iterations - index) }, () => ({
      step: structuredClone(params),
      json: structuredClone(params),
    }));
    for (const copy of copies) {
      let step: number;
      let json: number;
      if (index % 2 === 0) {
        step = await timeStep(middleware, model, copy.step);
        json = timeJson(copy.json);
      } else {
        json = timeJson(copy.json);
        step = await timeStep(middleware, model, copy.step);
      }
      const hashing = await timeHashing(copy.json.prompt, previous.length);
      if (index >= 0) {
        steps.push(step);
        jsons.push(json);
        hashings.push(hashing);
      }
      index++;
    }
  }
  if (summaryRequests() !== 0) fail(label, 'a summary request was made while timing');
  return { label, messages: next.length, step: median(steps), json: median(jsons), hashing: median(hashings) };
}

async function timeStep(
  middleware: ReturnType<typeof compaction>,
  model: LanguageModelV3,
  params: LanguageModelV3CallOptions,
): Promise<number> {
  const start = performance.now();
  await middleware.transformParams!({ type: 'generate', params, model });
  return performance.now() - start;
}

let sink = 0;

function timeJson(params: LanguageModelV3CallOptions): number {
  const start = performance.now();
  sink += JSON.stringify(params.prompt).length;
  return performance.now() - start;
}

/** The canonical form and the two digests a counted step needs: the thread's and the counted prefix's. */
async function timeHashing(prompt: LanguageModelV3Prompt, countedLength: number): Promise<number> {
  const start = performance.now();
  const digests = new PrefixDigests('', asMessages(prompt.slice(1)));
  await digests.of(1);
  await digests.of(countedLength - 1);
  return performance.now() - start;
}

/**
 * Sends the previous prompt through the middleware the way the AI SDK does and has the provider
 * report `countFactor` times its estimate as input tokens, so the next step rests on that count.
 */
async function recordPreviousStep(
  middleware: ReturnType<typeof compaction>,
  model: LanguageModelV3,
  previous: LanguageModelV3Prompt,
  next: LanguageModelV3Prompt,
  countFactor: number,
): Promise<void> {
  const sent = await middleware.transformParams!({
    type: 'generate',
    params: { prompt: structuredClone(previous), tools: TOOLS },
    model,
  });
  const reply = next[previous.length]!;
  const content: LanguageModelV3Content[] = [];
  if (reply.role === 'assistant') {
    for (const part of reply.content) {
      if (part.type === 'text') content.push({ type: 'text', text: part.text });
      if (part.type === 'tool-call') {
        content.push({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: JSON.stringify(part.input) });
      }
    }
  }
  const input = Math.round(estimatedTokens(previous, TOOLS) * countFactor);
  const result: LanguageModelV3GenerateResult = {
    content,
    finishReason: { unified: 'tool-calls', raw: 'tool_use' },
    usage: {
      inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 40, text: 40, reasoning: undefined },
    },
    warnings: [],
  };
  await middleware.wrapGenerate!({
    doGenerate: async () => result,
    doStream: async () => {
      throw new Error('the bench does not stream');
    },
    params: sent,
    model,
  });
}

/**
 * Proves that a fresh copy of the next prompt finds the recorded count: with a count three times
 * the estimate and a window twice the estimate, only a step that rests on the count compacts.
 */
async function checkCountIsUsed(label: string, previous: LanguageModelV3Prompt, next: LanguageModelV3Prompt): Promise<void> {
  const estimate = estimatedTokens(next, TOOLS);
  const window = estimate * 2;
  const { model, summaryRequests } = mockModel();
  const quiet = { info: () => undefined, warn: () => undefined };
  const probe = compaction({ contextWindow: window, buffer: 1, logger: quiet });
  await recordPreviousStep(probe, model, previous, next, 3);
  try {
    await probe.transformParams!({ type: 'generate', params: { prompt: structuredClone(next), tools: TOOLS }, model });
  } catch {
    // Whether the compaction succeeded does not matter, only that it was attempted.
  }
  if (summaryRequests() === 0) {
    fail(label, 'the next step did not rest on the recorded provider count (no compaction where the count calls for one)');
  }
}

function mockModel(): { model: LanguageModelV3; summaryRequests: () => number } {
  let calls = 0;
  const model: LanguageModelV3 = {
    specificationVersion: 'v3',
    provider: 'bench',
    modelId: 'bench-model',
    supportedUrls: {},
    async doGenerate() {
      calls++;
      return {
        content: [{ type: 'text', text: '## Objective\n- benchmark' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: 1_000, noCache: 1_000, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 10, text: 10, reasoning: undefined },
        },
        warnings: [],
      };
    },
    async doStream() {
      throw new Error('the bench does not stream');
    },
  };
  return { model, summaryRequests: () => calls };
}

function fail(label: string, message: string): never {
  throw new Error(`overhead bench (${label}): ${message}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function ms(value: number): string {
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)) + 2);
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('').trimEnd();
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  if (sink < 0) console.log(sink);
}
