/**
 * Continuity: after a compaction, does the agent still know its task, its files and its last
 * result? A scripted agent (test/support/provider-server/fixer.ts) fixes the failing tests of a
 * seeded project (fixer-project.ts) through the local provider server (OpenAI chat wire format,
 * gpt-tokenizer counts, real overflow errors). It acts only on what its prompt shows, the same way
 * for every strategy, so whatever a strategy drops from the prompt it must find again: by running a
 * command or reading a file once more (a repeated call), or by editing from a stale token (a
 * rejected edit), or not at all (it loses the task and asks what to do).
 *
 * Each strategy runs twice, once with each way the agent writes summaries: `honest` (the facts it
 * saw, within a realistic budget) and `lossy` (the task and three paths).
 *
 *   npm run bench -- continuity
 *   BENCH_BASELINE_REF=<ref> npm run bench -- continuity        # another build to compare with
 *   BENCH_BASELINE_TARBALL=./ai-compaction-0.1.0.tgz npm run bench -- continuity
 */
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { ceiling } from '../src/sizing/ceiling';
import {
  countText,
  createFixerTools,
  FIXER_TASK,
  fixerAgent,
  fixerToolDescriptions,
  startProviderServer,
  type Speed,
  type SummaryMode,
} from '../test/support/provider-server';
import { baselineFromEnv, type Baseline } from './baseline';
import { type PromptMeasure, type Strategy, clearingAlone, compacting, keepingLast, noMiddleware, pacedMs, percent, printTable, summarizingOlder, timed, tokens, totalSeconds } from './strategies';

/**
 * The window. A failing test costs the agent about 4,700 counted tokens of prompt (its vitest run,
 * about 900; the source file, 2,700 to 4,500; the edit and the re-run), the 14 tests about 66,000.
 * At 32,000 the middleware's ceiling is 16,000 (from a 32,000-token window on, the buffer is at
 * least 16,000 tokens), so it compacts every three tests or so, four times a run, usually right
 * after a file was read, in the middle of a test: the moment that tests what a checkpoint keeps.
 * Summarizing at 85 % (counted) compacts three times; keeping the last 30 messages trims from the
 * 16th step on; with no middleware the prompt overflows about halfway. At 64,000 the ceiling is
 * 48,000 (about ten tests) and the middleware would compact once.
 */
export const WINDOW = 32_000;
/** The step cap: the shortest run is 59 steps (one `npm test`, four calls a test, a last `npm test`, the final answer). */
export const CAP = 160;
export const SEED = 1;
export const FAILING = 14;
/** Messages kept by the keep-the-last strategy: at most about 20,000 tokens of this agent's steps. */
export const KEEP_LAST = 30;
export const MODES: SummaryMode[] = ['honest', 'lossy'];

const SYSTEM = 'You are a coding agent working in a TypeScript repository. Use the tools, one call per step. Be terse.';

export interface ContinuityOptions {
  /** @default WINDOW */
  window?: number;
  /** @default CAP */
  cap?: number;
  /** @default SEED */
  seed?: number;
  /** Failing tests. @default FAILING */
  failing?: number;
  /** Tests that pass from the start. @default 6 */
  passing?: number;
  /** The user's message. @default FIXER_TASK */
  task?: string;
  /** The provider's generation speed (a real model's pace); none by default: replies come at once. */
  speed?: Speed;
  /**
   * Summary requests go to a model of their own at this speed (this middleware's `summarizer`, a
   * smaller, faster model): the same scripted agent behind another provider server. Its requests
   * count in the summary requests and the input billed. None by default: the step's own model.
   */
  summarizerSpeed?: Speed;
}

export interface ToolCallRecord {
  /** 1-based step that made the call. */
  step: number;
  name: string;
  input: unknown;
  result: string;
  /** Same name, input and result as an earlier call of the run. */
  repeat: boolean;
}

export type Outcome = 'finished' | 'asked what to do' | 'stopped' | 'step cap' | 'error';

/** One run of the benchmark: a strategy, a summary mode. */
export interface ContinuityRun {
  strategy: string;
  mode: SummaryMode;
  window: number;
  cap: number;
  /** Every failing test fixed and the agent stopped (a text answer) within the cap. */
  finished: boolean;
  outcome: Outcome;
  steps: number;
  toolCalls: number;
  repeatedCalls: number;
  /** repeatedCalls / steps. */
  repeatedShare: number;
  rejectedEdits: number;
  acceptedEdits: number;
  testsFixed: number;
  testsFailing: number;
  /** Counted prompt tokens of every answered request, summary requests included. */
  inputTokens: number;
  summaryRequests: number;
  /** Requests the server rejected as over the window. */
  overflows: number;
  /** Errors thrown to the caller (the run stops at the first). */
  errors: number;
  error?: string;
  /** Compactions (or trims, or summaries) the strategy reports; undefined for none. */
  compactions: number | undefined;
  /** Of those, the clearings of old tool results and the summaries (this middleware, clearing alone). */
  kinds: { clear: number; summary: number } | undefined;
  /** Wall time in `transformParams` of each step that compacted (the summary request included), in milliseconds. */
  compactingMs: number[];
  /** Wall time the agent ran before each of those steps, since the previous one (or the first step), in milliseconds. */
  beforeMs: number[];
  /** Time the provider took to answer each summary request at the run's `speed` (none without one), in milliseconds. */
  summaryMs: number[];
  /** Time the provider took to answer each step (not a summary request) at the run's `speed` (none without one), in milliseconds. */
  stepMs: number[];
  /** This middleware's background compactions (SPEC 14): those started, and those a step sent; undefined for other strategies. */
  prepared: { made: number; sent: number } | undefined;
  /** The largest counted prompt of a step (not a summary request). */
  maxPrompt: number;
  /** The agent's last text. */
  finalText: string;
  calls: ToolCallRecord[];
}

/** Marks each call whose name, input and result are identical to an earlier call's. */
export function markRepeats(calls: Omit<ToolCallRecord, 'repeat'>[]): ToolCallRecord[] {
  const seen = new Set<string>();
  return calls.map((call) => {
    const key = JSON.stringify([call.name, stable(call.input), call.result]);
    const repeat = seen.has(key);
    seen.add(key);
    return { ...call, repeat };
  });
}

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, stable((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** Runs the fixer on a fresh project through `strategy`, with summaries written the `mode` way. */
export async function runContinuity(strategy: Strategy, mode: SummaryMode, options: ContinuityOptions = {}): Promise<ContinuityRun> {
  const window = options.window ?? WINDOW;
  const cap = options.cap ?? CAP;
  const seed = options.seed ?? SEED;
  // the project and the strategy first: one that cannot start (a missing baseline) leaves no server behind
  const project = createFixerTools({ seed, failing: options.failing ?? FAILING, passing: options.passing });
  const agent = fixerAgent({ summaries: mode });
  const summarizing =
    options.summarizerSpeed === undefined ? undefined : await startProviderServer({ contextWindow: window, seed, agent, keepBodies: 0, speed: options.summarizerSpeed });
  const summarizer = summarizing === undefined ? {} : { summarizer: createOpenAI({ baseURL: summarizing.openaiBaseURL, apiKey: 'local' }).chat('local-summarizer') };
  // a run that cannot start leaves no summarizer's server behind either
  const closeSummarizer = async (error: unknown): Promise<never> => {
    await summarizing?.close();
    throw error;
  };
  const { middleware, compactions, kinds, compactingMs, beforeMs, preparing } = timed(await strategy.start(window, summarizer).catch(closeSummarizer));
  const server = await startProviderServer({ contextWindow: window, seed, agent, keepBodies: 0, speed: options.speed }).catch(closeSummarizer);
  const base = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'local' }).chat('local-fixer');
  const model = middleware.length === 0 ? base : wrapLanguageModel({ model: base, middleware });

  let step = 1;
  const calls: Omit<ToolCallRecord, 'repeat'>[] = [];
  const logged =
    <I,>(name: string, run: (input: I) => string) =>
    async (input: I) => {
      const result = run(input);
      calls.push({ step, name, input, result });
      return result;
    };
  const tools = {
    run_command: tool({ description: fixerToolDescriptions.run_command, inputSchema: z.object({ command: z.string() }), execute: logged('run_command', project.run_command) }),
    read_file: tool({ description: fixerToolDescriptions.read_file, inputSchema: z.object({ path: z.string() }), execute: logged('read_file', project.read_file) }),
    edit_file: tool({
      description: fixerToolDescriptions.edit_file,
      inputSchema: z.object({ path: z.string(), line: z.number().int(), token: z.string() }),
      execute: logged('edit_file', project.edit_file),
    }),
  };

  let steps = 0;
  let lastHadCalls = true;
  let finalText = '';
  let error: string | undefined;
  try {
    await generateText({
      model,
      system: SYSTEM,
      messages: [{ role: 'user', content: options.task ?? FIXER_TASK }],
      tools,
      stopWhen: stepCountIs(cap),
      maxRetries: 0,
      onStepFinish: (result) => {
        steps++;
        step = steps + 1;
        lastHadCalls = result.toolCalls.length > 0;
        if (result.text) finalText = result.text;
      },
    });
  } catch (caught) {
    error = (caught instanceof Error ? caught.message : String(caught)).split('\n')[0]!.slice(0, 160);
  } finally {
    // a checkpoint still being prepared when the run ends is finished (and counted unused), not cut off
    await preparing?.().settled;
    await server.close();
    await summarizing?.close();
  }

  const marked = markRepeats(calls);
  const repeatedCalls = marked.filter((call) => call.repeat).length;
  const requests = [...server.requests, ...(summarizing?.requests ?? [])];
  const answered = requests.filter((request) => !request.rejected);
  const allFixed = project.failing().length === 0;
  const stopped = error === undefined && !lastHadCalls;
  const outcome: Outcome =
    error !== undefined ? 'error' : !stopped ? 'step cap' : allFixed ? 'finished' : /what would you like me to do/i.test(finalText) ? 'asked what to do' : 'stopped';
  return {
    strategy: strategy.name,
    mode,
    window,
    cap,
    finished: outcome === 'finished',
    outcome,
    steps,
    toolCalls: calls.length,
    repeatedCalls,
    repeatedShare: steps === 0 ? 0 : repeatedCalls / steps,
    rejectedEdits: project.edits.rejected,
    acceptedEdits: project.edits.accepted,
    testsFixed: project.fixed().length,
    testsFailing: project.project.failures.length,
    inputTokens: answered.reduce((sum, request) => sum + request.promptTokens, 0),
    summaryRequests: requests.filter((request) => request.isSummaryRequest).length,
    overflows: requests.filter((request) => request.error === 'context_length_exceeded').length,
    errors: error === undefined ? 0 : 1,
    ...(error === undefined ? {} : { error }),
    compactions: compactions(),
    kinds: kinds?.(),
    compactingMs: compactingMs(),
    beforeMs: beforeMs(),
    summaryMs: pacedMs(answered, true),
    stepMs: pacedMs(answered, false),
    prepared: preparing === undefined ? undefined : (({ made, sent }) => ({ made, sent }))(preparing()),
    maxPrompt: Math.max(0, ...answered.filter((request) => !request.isSummaryRequest).map((request) => request.promptTokens)),
    finalText,
    calls: marked,
  };
}

/**
 * A prompt counted the way the provider server counts it (gpt-tokenizer, 4 tokens a message):
 * what a hand-written strategy measures with a real tokenizer.
 */
export const tokenizerMeasure: PromptMeasure = (prompt: LanguageModelV3Prompt, tools) => {
  let tokens = tools === undefined ? 0 : countText(JSON.stringify(tools));
  for (const message of prompt) {
    tokens += 4;
    if (typeof message.content === 'string') {
      tokens += countText(message.content);
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning') tokens += countText(part.text);
      else if (part.type === 'tool-call') tokens += countText(part.toolName) + countText(JSON.stringify(part.input));
      else if (part.type === 'tool-result') tokens += countText(part.output.type === 'text' || part.output.type === 'error-text' ? part.output.value : JSON.stringify(part.output));
      else tokens += 1_000;
    }
  }
  return tokens;
};

/**
 * The strategies, in table order. Add a variant of the middleware with
 * `compacting(name, options)` (this checkout) or `compacting(name, options, baseline.load)` (the
 * baseline build); options this checkout's types do not know yet are accepted as they are.
 */
export function continuityStrategies(baseline: Baseline = baselineFromEnv()): Strategy[] {
  return [
    // the default prepares the next checkpoint in the background from 80 % of the ceiling (SPEC 14)
    compacting('ai-compaction', {}),
    compacting('ai-compaction, prepare: false', { prepare: false }),
    compacting(baseline.label, {}, baseline.load),
    // clearing old tool results (SPEC 13): summary only is the default above
    compacting('clearing, then summary', { clearToolResults: true }),
    clearingAlone(),
    noMiddleware,
    keepingLast(KEEP_LAST),
    // sized with 4 characters a token, as in the session benchmark; code and its tokens run at
    // about 2.9 characters a token, so 85 % by this estimate is over the window
    summarizingOlder(20, 0.85, 'summarize all but 20 at 85 % (4 chars a token)'),
    summarizingOlder(20, 0.85, 'summarize all but 20 at 85 % (tokenizer)', tokenizerMeasure),
  ];
}

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/** One table per summary mode. */
export function printContinuity(runs: ContinuityRun[]): void {
  for (const mode of MODES) {
    const rows = runs.filter((run) => run.mode === mode);
    if (rows.length === 0) continue;
    const first = rows[0]!;
    console.log(
      `\nContinuity, ${mode} summaries: ${first.testsFailing} failing tests, step cap ${first.cap}, window ${tokens(first.window)} (ceiling ${tokens(ceiling(first.window, undefined))}), local provider, gpt-tokenizer counts`,
    );
    printTable(
      ['strategy', 'finished', 'ended', 'steps', 'fixed', 'repeated calls', 'repeated/steps', 'rejected edits', 'input billed', 'summary req', 'compactions', 'clears / summaries', 'overflows', 'errors', 'compacting steps'],
      rows.map((run) => [
        run.strategy,
        yesNo(run.finished),
        run.outcome,
        String(run.steps),
        `${run.testsFixed}/${run.testsFailing}`,
        String(run.repeatedCalls),
        percent(run.repeatedShare),
        String(run.rejectedEdits),
        tokens(run.inputTokens),
        String(run.summaryRequests),
        run.compactions === undefined ? '-' : String(run.compactions),
        run.kinds === undefined ? '-' : `${run.kinds.clear} / ${run.kinds.summary}`,
        String(run.overflows),
        String(run.errors),
        totalSeconds(run.compactingMs),
      ]),
    );
  }
  console.log(
    [
      '',
      '"repeated calls": tool calls whose name, input and result all equal an earlier call of the run; "input billed": counted prompt tokens of every answered request, summary requests included;',
      '"compactions": compactions of the middleware, trims of keep-the-last, summaries of summarize-all-but; "errors": errors thrown to the caller (the run ends there);',
      '"compacting steps": time in transformParams of the steps that compacted (the summary request included, against the local provider).',
    ].join('\n'),
  );
  for (const run of runs) if (run.error) console.log(`${run.strategy} (${run.mode}): ${run.error}`);
}

export async function run(): Promise<void> {
  const runs: ContinuityRun[] = [];
  const failed: string[] = [];
  for (const strategy of continuityStrategies()) {
    for (const mode of MODES) {
      try {
        runs.push(await runContinuity(strategy, mode));
      } catch (error) {
        // a strategy that cannot start (a baseline ref this clone does not have) is reported, the others still run
        failed.push(`${strategy.name} (${mode}) did not run: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
    }
  }
  printContinuity(runs);
  for (const line of failed) console.log(line);
  if (failed.length > 0) process.exitCode = 1;
}
