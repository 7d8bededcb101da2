/**
 * Preparing ahead (SPEC 14) at a real model's speed: does a compacting step still wait for its
 * summary, and what does preparing it ahead cost? Two benchmarks, each side by side in one run
 * with `prepare` on and off:
 *
 * - the 500-step session of session.ts (`prepare` 0.8, the default, 0.9 and off);
 * - the continuity benchmark of continuity.ts (`prepare` 0.8, 0.6 and off, honest and lossy summaries).
 *
 * The local provider paces its replies (`SPEED`). Each compacting step's time in `transformParams`
 * is measured (the middleware's own hook, wrapped), with the summary requests made, those prepared
 * in the background and never sent, and the input billed.
 *
 *   npm run bench -- prepare
 */
import { createOpenAI } from '@ai-sdk/openai';
import { performance } from 'node:perf_hooks';
import { type LanguageModelMiddleware, type ModelMessage, generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { type CompactionRecord, compaction } from '../src';
import { startProviderServer } from '../test/support/provider-server';
import { type ContinuityRun, MODES, runContinuity } from './continuity';
import { CEILING, STEPS_PER_TURN, SYSTEM, TASKS, TURNS, WINDOW, percent, sessionTools } from './session';
import { compacting, printTable } from './strategies';

/**
 * A real model's speed: 5,000 prompt tokens a second (those read from the prompt cache take no
 * time) and 60 output tokens a second. A summary of ~800 tokens then takes about 14 s.
 */
export const SPEED = { promptTokensPerSecond: 5_000, outputTokensPerSecond: 60 };
/** A compaction that adds less than this to its step does not keep a chat user waiting. */
export const UNNOTICED_MS = 50;

interface PacedRow {
  name: string;
  steps: number;
  errors: number;
  compactions: number;
  /** Milliseconds each compacting step spent in `transformParams`. */
  compactingMs: number[];
  /** Milliseconds of every other step in `transformParams`. */
  otherMs: number[];
  summaryRequests: number;
  /** Background compactions whose checkpoint no step sent (the session ended first, it failed, or the step at the ceiling compacted from it). */
  preparedUnused: number;
  meanShare: number;
  maxShare: number;
  billed: number;
  seconds: number;
}

/**
 * The 500-step session at `SPEED`, timing `transformParams` of each step: with `prepare` the step
 * at the ceiling sends a checkpoint prepared beside an earlier step; without it, it waits for its
 * summary. Background work is handed to `waitUntil`, as a serverless host would take it, and
 * awaited at the end.
 */
async function runPaced(prepare: number | false): Promise<PacedRow> {
  const server = await startProviderServer({ contextWindow: WINDOW, seed: 11, agent: { toolCallsPerTurn: 10_000 }, keepBodies: 0, speed: SPEED });
  const records: CompactionRecord[] = [];
  const background: Promise<unknown>[] = [];
  const inner = compaction({
    contextWindow: WINDOW,
    prepare,
    onCompaction: (record) => void records.push(record),
    waitUntil: (promise) => void background.push(promise),
  });
  const compactingMs: number[] = [];
  const otherMs: number[] = [];
  const timed: LanguageModelMiddleware = {
    ...inner,
    transformParams: async (options) => {
      const before = records.length;
      const start = performance.now();
      const params = await inner.transformParams!(options);
      (records.length > before ? compactingMs : otherMs).push(performance.now() - start);
      return params;
    },
  };
  const model = wrapLanguageModel({ model: createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'local' }).chat('local-coding-agent'), middleware: timed });
  const tools = sessionTools();
  const messages: ModelMessage[] = [];
  let steps = 0;
  let errors = 0;
  const started = performance.now();
  for (const task of TASKS.slice(0, TURNS)) {
    messages.push({ role: 'user', content: task });
    try {
      const result = await generateText({ model, system: SYSTEM, messages, tools, stopWhen: stepCountIs(STEPS_PER_TURN), maxRetries: 0 });
      steps += result.steps.length;
      messages.push(...result.response.messages);
    } catch {
      errors++;
      break;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  await Promise.allSettled(background);
  await server.close();
  const answered = server.requests.filter((request) => !request.rejected);
  const shares = answered.filter((request) => !request.isSummaryRequest).map((request) => request.promptTokens / CEILING);
  return {
    name: `prepare: ${prepare}${prepare === 0.8 ? ' (default)' : ''}`,
    steps,
    errors,
    compactions: records.length,
    compactingMs,
    otherMs,
    summaryRequests: answered.filter((request) => request.isSummaryRequest).length,
    preparedUnused: background.length - records.filter((record) => record.prepared === true).length,
    meanShare: shares.reduce((a, b) => a + b, 0) / Math.max(1, shares.length),
    maxShare: Math.max(0, ...shares),
    billed: answered.reduce((sum, request) => sum + request.promptTokens, 0),
    seconds,
  };
}

/** The `share` quantile of `values` (nearest rank), or undefined when there are none. */
export function quantile(values: number[], share: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))];
}

const milliseconds = (value: number | undefined) => (value === undefined ? '-' : value >= 1_000 ? `${(value / 1_000).toFixed(1)} s` : `${value.toFixed(1)} ms`);

/** The columns both tables share: how long the compacting steps took, and what preparing cost in requests. */
function waits(compactingMs: number[], summaryRequests: number, unused: number): string[] {
  const count = compactingMs.length;
  return [
    String(count),
    count === 0 ? '-' : `${Math.round((100 * compactingMs.filter((ms) => ms < UNNOTICED_MS).length) / count)} %`,
    milliseconds(quantile(compactingMs, 0.5)),
    milliseconds(quantile(compactingMs, 0.95)),
    milliseconds(quantile(compactingMs, 1)),
    String(summaryRequests),
    summaryRequests === 0 ? '-' : `${unused} (${Math.round((100 * unused) / summaryRequests)} %)`,
  ];
}

const WAIT_COLUMNS = ['compactions', `under ${UNNOTICED_MS} ms`, 'p50', 'p95', 'max', 'summary req', 'prepared, unused'];

/** The session with `prepare` at 0.8 (the default), at 0.9 and off, in one run. */
export async function runSession(): Promise<void> {
  // One after the other: the local provider counts every prompt with a tokenizer on this event
  // loop, and a 100,000-token prompt of another session would hold a step's transformParams up
  // (by up to 80 ms when the three ran at once), a cost no real provider puts on the caller.
  const rows: PacedRow[] = [];
  for (const prepare of [0.8, 0.9, false] as const) rows.push(await runPaced(prepare));
  console.log(
    `\nThe 500-step session at a real model's speed (${SPEED.promptTokensPerSecond.toLocaleString('en-US')} prompt tokens/s, cached ones free; ${SPEED.outputTokensPerSecond} output tokens/s): time the compacting steps spend in transformParams`,
  );
  printTable(
    ['prepare', 'steps', 'errors', ...WAIT_COLUMNS, 'other steps p50', 'mean/ceiling', 'max/ceiling', 'input billed', 'session'],
    rows.map((row) => [
      row.name,
      String(row.steps),
      String(row.errors),
      ...waits(row.compactingMs, row.summaryRequests, row.preparedUnused),
      milliseconds(quantile(row.otherMs, 0.5)),
      percent(row.meanShare),
      percent(row.maxShare),
      row.billed.toLocaleString('en-US'),
      `${Math.round(row.seconds)} s`,
    ]),
  );
}

/** The continuity benchmark with `prepare` at 0.8 (the default), 0.6 and off, each summary mode, side by side. */
export async function runContinuityPaced(): Promise<void> {
  const variants: { name: string; prepare: number | false }[] = [
    { name: 'prepare: 0.8 (default)', prepare: 0.8 },
    { name: 'prepare: 0.6', prepare: 0.6 },
    { name: 'prepare: false', prepare: false },
  ];
  const runs: ContinuityRun[] = await Promise.all(
    MODES.flatMap((mode) => variants.map(({ name, prepare }) => runContinuity(compacting(name, { prepare }), mode, { speed: SPEED }))),
  );
  console.log('\nThe continuity benchmark at the same speed: the fixer agent, 14 failing tests, window 32,000 (ceiling 16,000)');
  printTable(
    ['prepare', 'summaries', 'finished', 'steps', 'repeated calls', 'rejected edits', ...WAIT_COLUMNS, 'input billed'],
    runs.map((run) => [
      run.strategy,
      run.mode,
      run.finished ? 'yes' : `no (${run.outcome})`,
      String(run.steps),
      String(run.repeatedCalls),
      String(run.rejectedEdits),
      ...waits(run.compactingMs, run.summaryRequests, run.prepared === undefined ? 0 : run.prepared.made - run.prepared.sent),
      run.inputTokens.toLocaleString('en-US'),
    ]),
  );
}

export async function run(): Promise<void> {
  // One after the other: the session's tokenizer work would slow the continuity runs' event loop, and the other way round.
  await runSession();
  await runContinuityPaced();
  console.log(
    [
      '"compactions": steps that compacted (sent a checkpoint prepared ahead, or waited for a summary); "under 50 ms", p50, p95, max: the time those steps spent in transformParams;',
      '"prepared, unused": background compactions whose checkpoint no step sent (the conversation ended first, it failed, or the step at the ceiling compacted from it), and their share of all summary requests.',
    ].join('\n'),
  );
}
