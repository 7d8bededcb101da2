/**
 * Continuity: after a compaction, does the agent still know what it was told and what it found
 * long before? A scripted agent (test/support/provider-server/fixer.ts) fixes the failing tests of
 * a seeded project (fixer-project.ts) through `generateText` with tools, the real `@ai-sdk/openai`
 * client and the local provider server (OpenAI chat wire format, gpt-tokenizer counts, a prompt
 * cache, real overflow errors), in a session of several user turns: the task, then two rules the
 * user adds while it works (do not edit files under `src/legacy/`; every fix adds a line to
 * CHANGELOG.md naming its test), then words of encouragement. Some fixes need a setting read once
 * from `config/settings.json`, and some the test signing key, which `npm run issue-key` shows once
 * (a rotation revokes it and undoes the fixes set to it). The agent acts only on what its prompt
 * shows, the same way for every strategy, so whatever a strategy drops it must find again: by
 * running a test or reading a file once more (a repeated call), by an edit the project refuses for
 * breaking a rule it no longer knows (a violation), by rotating the key and making the undone fixes
 * again, by asking the recall tool when it is offered, or not at all (it loses the task and asks
 * what to do).
 *
 * The facts a fix needs late (the rules, the settings, which tests are fixed) are found long
 * before, are not exact identifiers, and are not in the newest steps: across a compaction only a
 * summary carries them. Each summarizing strategy runs with each way the agent writes summaries:
 * `honest` (what it saw, within a realistic budget), `lossy` (the task and three paths) and
 * `amnesiac` (the Objective alone). Every strategy compacts at the same ceiling, this middleware's
 * for the window: the ceiling is a parameter of the comparison, not a difference between them.
 *
 *   npm run bench -- continuity
 *   BENCH_BASELINE_REF=<ref> npm run bench -- continuity        # another build to compare with
 *   BENCH_BASELINE_TARBALL=./ai-compaction-0.1.0.tgz npm run bench -- continuity
 */
import { type LanguageModelMiddleware, type ModelMessage, generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { ceiling } from '../src/sizing/ceiling';
import { recallTool } from '../src';
import { recallToolName } from '../src/recall/marker';
import type { RecallAnswer } from '../src/recall/types';
import {
  createFixerTools,
  FIXER_TASK,
  fewestRepeats,
  fewestSteps,
  fixerAgent,
  fixerToolDescriptions,
  fixerTurns,
  type FixerTurn,
  type Speed,
  type SummaryMode,
} from '../test/support/provider-server';
import { baselineAt, baselineFromEnv, type Baseline } from './baseline';
import { virtualClock } from './clock';
import { inChildren } from './pool';
import { localProvider } from './provider';
import { type Cost, type Usage, addUsage, COST_COLUMNS, COST_NOTE, costCells, costOf, usageOf } from './cost';
import { type Strategy, clearingAlone, compacting, noMiddleware, pacedMs, printTable, slidingWindow, summarizingAtCeiling, timed, tokens } from './strategies';

/** The windows of the sweep; the headline table is at `WINDOW`. */
export const WINDOWS = [24_000, 32_000, 48_000, 64_000, 128_000] as const;
export const WINDOW = 32_000;
export const SEEDS = [1, 2, 3] as const;
export const SEED = 1;
/**
 * Failing tests: about 4,900 counted tokens of prompt each (a run of it, about 900; the source
 * file, 2,700 to 4,500; the edit and the re-run), so the whole task is about 200,000 tokens, and
 * even at 128,000 (ceiling 108,800) every strategy but "no middleware" compacts at least once.
 */
export const FAILING = 40;
/** Messages the hand-written strategies keep verbatim: ten steps, two or three tests. */
export const KEEP = 20;
export const MODES: SummaryMode[] = ['honest', 'lossy', 'amnesiac'];
/** A window no run fills: the control in which nothing is ever lost (it must take the shortest run). */
export const LARGE_WINDOW = 1_000_000;

const SYSTEM = 'You are a coding agent working in a TypeScript repository. Use the tools, one call per step. Be terse.';

export interface ContinuityOptions {
  /** @default WINDOW */
  window?: number;
  /** The step cap. @default twice the shortest run */
  cap?: number;
  /** @default SEED */
  seed?: number;
  /** Failing tests. @default FAILING */
  failing?: number;
  /** Tests that pass from the start. @default 6 */
  passing?: number;
  /** The failure block of a test's own run stands past the first 1,250 characters of its output. @default false */
  lateFailure?: boolean;
  /** The user's later messages. @default fixerTurns(failing): the two rules, then encouragement */
  turns?: FixerTurn[];
  /** The user's first message. @default FIXER_TASK */
  task?: string;
  /** The provider's generation speed (a real model's pace); none by default: replies come at once. */
  speed?: Speed;
  /**
   * Summary requests go to a model of their own at this speed (this middleware's `summarizer`, a
   * smaller, faster model): the same scripted agent behind another provider server. Its requests
   * count in the summary requests and the cost. None by default: the step's own model.
   */
  summarizerSpeed?: Speed;
  /**
   * Offer the recall tool (`recallTool()`, under the name `recall`), which the agent asks for a fact
   * it needs and does not see when the start of the conversation is out of sight; `'empty'`: the
   * same tool answering nothing (the variant that must not improve anything). None by default.
   */
  recall?: 'tool' | 'empty';
}

export interface ToolCallRecord {
  /** 1-based step that made the call. */
  step: number;
  name: string;
  input: unknown;
  result: string;
  /** The same tool with the same input as an earlier call of the run, whatever the result. */
  repeat: boolean;
}

export type Outcome = 'finished' | 'asked what to do' | 'stopped' | 'step cap' | 'error';

/** One run of the benchmark: a strategy, a summary mode, a window, a seed. */
export interface ContinuityRun {
  strategy: string;
  mode: SummaryMode;
  /** False for a strategy that never asks for a summary (its run is the same in every mode). */
  summarizes: boolean;
  window: number;
  seed: number;
  lateFailure: boolean;
  cap: number;
  /** Every failing test fixed and the agent stopped (a text answer) within the cap. */
  finished: boolean;
  outcome: Outcome;
  steps: number;
  /** The fewest steps this project takes with every fact kept. */
  fewest: number;
  /** Steps over the fewest, for a finished run. */
  overShortest: number | undefined;
  toolCalls: number;
  /** Tool calls with the same tool and input as an earlier call, whatever their result. */
  repeatedCalls: number;
  /** Of those, the shortest run makes this many (each test's run after its fix, the last `npm test`). */
  fewestRepeats: number;
  /** Edits rejected for a wrong token, line, file or value. */
  rejectedEdits: number;
  /** Edits refused for breaking a rule the user gave. */
  violations: number;
  acceptedEdits: number;
  testsFixed: number;
  testsFailing: number;
  /** User messages sent after the task. */
  turns: number;
  /** Every answered request, summary requests included (both servers with `summarizerSpeed`). */
  usage: Usage;
  cost: Cost;
  /** `usage.input`: counted prompt tokens of every answered request. */
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
  /** Whether the recall tool was offered (`'empty'`: the one answering nothing). */
  recall: 'tool' | 'empty' | undefined;
  /** Calls of the recall tool. */
  lookups: number;
  /** Pieces of the recall tool's answers (their paragraphs) that no message handed to it holds: the guard, 0 or the tool made text up. */
  unfound: number;
  /** The test signing key: issued (the first, then one a rotation), refusals of a second issue, fixes a rotation undid. */
  keys: { issued: number; refused: number; undone: number };
  /** With the tool offered, the steps whose call showed it to the middleware as the recall tool (every step, or the run measures a middleware that never heard of it). */
  recognised: number;
  /** Simulated time in `transformParams` of each step that compacted (the summary request included), in milliseconds. */
  compactingMs: number[];
  /** Simulated time the agent ran before each of those steps, since the previous one (or the first step), in milliseconds. */
  beforeMs: number[];
  /** Time the provider took to answer each summary request at the run's `speed` (none without one), in milliseconds. */
  summaryMs: number[];
  /** Time the provider took to answer each step (not a summary request) at the run's `speed` (none without one), in milliseconds. */
  stepMs: number[];
  /** This middleware's background compactions (prepared ahead): those started, and those a step sent; undefined for other strategies. */
  prepared: { made: number; sent: number } | undefined;
  /** The largest counted prompt of a step (not a summary request). */
  maxPrompt: number;
  /** The agent's last text. */
  finalText: string;
  calls: ToolCallRecord[];
}

/** Steps wasted by runs: each finished run's steps over the shortest run, each unfinished one its cap less the shortest. */
export function wastedSteps(runs: readonly Pick<ContinuityRun, 'overShortest' | 'cap' | 'fewest'>[]): number {
  return runs.reduce((sum, run) => sum + (run.overShortest ?? run.cap - run.fewest), 0);
}

/** Marks each call made before with the same tool and input (keys in any order), whatever its result. */
export function markRepeats(calls: Omit<ToolCallRecord, 'repeat'>[]): ToolCallRecord[] {
  const seen = new Set<string>();
  return calls.map((call) => {
    const key = JSON.stringify([call.name, stable(call.input)]);
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

/** Runs the fixer's session on a fresh project through `strategy`, with summaries written the `mode` way. */
export async function runContinuity(strategy: Strategy, mode: SummaryMode, options: ContinuityOptions = {}): Promise<ContinuityRun> {
  const window = options.window ?? WINDOW;
  const seed = options.seed ?? SEED;
  const failing = options.failing ?? FAILING;
  const lateFailure = options.lateFailure ?? false;
  const project = createFixerTools({ seed, failing, passing: options.passing, lateFailure });
  const fewest = fewestSteps(project.project);
  const cap = options.cap ?? 2 * fewest;
  const turns = [...(options.turns ?? fixerTurns(failing))].sort((a, b) => a.afterFixed - b.afterFixed);
  const agent = fixerAgent({ summaries: mode });
  // the providers in this process, paced on the run's virtual clock, which the middleware reads too
  const clock = virtualClock();
  const summarizing = options.summarizerSpeed === undefined ? undefined : localProvider({ contextWindow: window, seed, agent, keepBodies: 0, speed: options.summarizerSpeed, clock });
  const summarizer = summarizing === undefined ? {} : { summarizer: summarizing.openai.chat('local-summarizer') };
  const { middleware, compactions, kinds, compactingMs, beforeMs, preparing } = timed(await strategy.start(window, { ...summarizer, clock }), clock.now);
  const server = localProvider({ contextWindow: window, seed, agent, keepBodies: 0, speed: options.speed, clock });
  const base = server.openai.chat('local-fixer');
  // with the tool offered, the steps whose call shows it as the recall tool (its marker, which the
  // AI SDK hands the model call): a run in which none does measures a middleware that never heard of it
  let recognised = 0;
  const seeing: LanguageModelMiddleware = {
    specificationVersion: 'v3',
    transformParams: async ({ params }) => {
      if (recallToolName(params.tools as never) !== undefined) recognised++;
      return params;
    },
  };
  const chain = options.recall === undefined ? middleware : [seeing, ...middleware];
  const model = chain.length === 0 ? base : wrapLanguageModel({ model: base, middleware: chain });

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
      inputSchema: z.object({ path: z.string(), line: z.number().int(), token: z.string(), value: z.string().optional(), changelog: z.string().optional() }),
      execute: logged('edit_file', project.edit_file),
    }),
    ...(options.recall === undefined
      ? {}
      : {
          recall: recallFor(
            options.recall,
            (input) => calls.push({ step, name: 'recall', input, result: '' }),
            (count) => (unfound += count),
          ),
        }),
  };

  let steps = 0;
  let sent = 0;
  // pieces of the tool's answers that no handed message holds (the guard: must stay 0)
  let unfound = 0;
  let lastHadCalls = true;
  let finalText = '';
  let error: string | undefined;
  const messages: ModelMessage[] = [{ role: 'user', content: options.task ?? FIXER_TASK }];
  const due = () => turns[sent] !== undefined && project.fixed().length >= turns[sent]!.afterFixed;
  try {
    // One generateText call a user turn: it ends when the agent answers in text (it is done, or
    // lost), at the cap, or after the step at which the user's next message is due.
    while (steps < cap) {
      const result = await generateText({
        model,
        system: SYSTEM,
        messages,
        tools,
        stopWhen: [stepCountIs(cap - steps), due],
        maxRetries: 0,
        onStepFinish: (each) => {
          steps++;
          step = steps + 1;
          // the agent's own calls: a compacting step also shows the middleware's provider-executed `compaction` call
          lastHadCalls = each.toolCalls.some((call) => call?.providerExecuted !== true);
          if (each.text) finalText = each.text;
        },
      });
      messages.push(...result.response.messages);
      if (!lastHadCalls || !due()) break;
      while (due()) {
        const turn = turns[sent++]!;
        messages.push({ role: 'user', content: turn.text });
        if (turn.rule) project.impose(turn.rule);
      }
    }
  } catch (caught) {
    error = (caught instanceof Error ? caught.message : String(caught)).split('\n')[0]!.slice(0, 160);
  } finally {
    // a checkpoint still being prepared when the run ends is finished (and counted unused), not cut off
    await preparing?.().settled;
  }

  const marked = markRepeats(calls);
  const requests = [...server.requests, ...(summarizing?.requests ?? [])];
  const answered = requests.filter((request) => !request.rejected);
  const allFixed = project.failing().length === 0;
  const stopped = error === undefined && !lastHadCalls;
  const outcome: Outcome =
    error !== undefined ? 'error' : !stopped ? 'step cap' : allFixed ? 'finished' : /what would you like me to do/i.test(finalText) ? 'asked what to do' : 'stopped';
  const usage = usageOf(requests);
  return {
    strategy: strategy.name,
    mode,
    summarizes: strategy.summarizes !== false,
    window,
    seed,
    lateFailure,
    cap,
    finished: outcome === 'finished',
    outcome,
    steps,
    fewest,
    overShortest: outcome === 'finished' ? steps - fewest : undefined,
    toolCalls: calls.length,
    repeatedCalls: marked.filter((call) => call.repeat).length,
    fewestRepeats: fewestRepeats(project.project),
    rejectedEdits: project.edits.rejected,
    violations: project.edits.violations,
    acceptedEdits: project.edits.accepted,
    testsFixed: project.fixed().length,
    testsFailing: project.project.failures.length,
    turns: sent,
    usage,
    cost: costOf(usage),
    inputTokens: usage.input,
    summaryRequests: requests.filter((request) => request.isSummaryRequest).length,
    overflows: requests.filter((request) => request.error === 'context_length_exceeded').length,
    errors: error === undefined ? 0 : 1,
    ...(error === undefined ? {} : { error }),
    recall: options.recall,
    lookups: calls.filter((call) => call.name === 'recall').length,
    unfound,
    keys: { ...project.keys },
    recognised,
    compactions: compactions(),
    kinds: kinds?.(),
    compactingMs: compactingMs(),
    beforeMs: beforeMs(),
    summaryMs: pacedMs(answered, true),
    stepMs: pacedMs(answered, false),
    prepared: preparing === undefined ? undefined : (({ made, sent: used }) => ({ made, sent: used }))(preparing()),
    maxPrompt: Math.max(0, ...answered.filter((request) => !request.isSummaryRequest).map((request) => request.promptTokens)),
    finalText,
    calls: marked,
  };
}

/**
 * The recall tool as the benchmark offers it: the package's, or the same answering nothing; each call
 * logged, and each answer checked against the messages handed to it (`unfound`: its paragraphs no
 * handed message's text, tool input or tool output holds).
 */
function recallFor(kind: 'tool' | 'empty', log: (input: unknown) => void, unfound: (count: number) => void) {
  const real = recallTool();
  const execute = real.execute as (input: unknown, options: unknown) => Promise<RecallAnswer> | RecallAnswer;
  return {
    ...real,
    execute: async (input: unknown, options: { messages: unknown[] }) => {
      log(input);
      if (kind === 'empty') return { matches: [], page: 1, pages: 0, messages: options.messages.length };
      const answer = await execute(input, options);
      unfound(absentPieces(answer, options.messages));
      return answer;
    },
  } as typeof real;
}

/** The paragraphs of an answer's matches that none of the handed messages' own strings holds (read here apart from the tool's code). */
export function absentPieces(answer: RecallAnswer, handed: readonly unknown[]): number {
  const strings: string[] = [];
  for (const message of handed as Array<{ content: unknown }>) {
    if (typeof message.content === 'string') strings.push(message.content);
    else if (Array.isArray(message.content)) {
      for (const part of message.content as Array<Record<string, unknown>>) {
        if (typeof part.text === 'string') strings.push(part.text);
        if (part.type === 'tool-call') strings.push(`${String(part.toolName)}(${typeof part.input === 'string' ? part.input : JSON.stringify(part.input)})`);
        const output = part.output as { type?: string; value?: unknown } | undefined;
        if (output !== undefined) strings.push(typeof output.value === 'string' ? output.value : JSON.stringify(output.value));
      }
    }
  }
  const held = (piece: string) => strings.some((each) => each.includes(piece));
  return answer.matches.flatMap((match) => match.text.split('\n\n')).filter((piece) => piece.trim() !== '' && !held(piece)).length;
}

/**
 * The strategies of the sweep, in table order, each compacting at this middleware's ceiling for
 * the window. Add a variant of the middleware with `compacting(name, options)` (this checkout) or
 * `compacting(name, options, baseline.load)` (the baseline build); options this checkout's types
 * do not know yet are accepted as they are.
 */
export function continuityStrategies(baseline: Baseline = baselineFromEnv()): Strategy[] {
  return [
    // the default prepares the next checkpoint in the background from 80 % of the ceiling
    compacting('ai-compaction', {}),
    compacting('ai-compaction, prepare: false', { prepare: false }),
    // the other build gets this checkout's ceiling as its buffer, whatever its own default is
    compacting(baseline.label, (window) => ({ buffer: window - ceiling(window, undefined) }), baseline.load),
    summarizingAtCeiling(KEEP),
    // the same, keeping what this middleware's record may take (a quarter of the ceiling) in place of a count of messages
    summarizingAtCeiling({ share: 0.25 }, 'summarize all but the newest 25 % of the ceiling (tokenizer)'),
    slidingWindow(KEEP),
    noMiddleware,
  ];
}

/** The headline's strategies: the sweep's, and clearing old tool results (an option of this middleware, and the rule alone). */
export function headlineStrategies(baseline: Baseline = baselineFromEnv()): Strategy[] {
  const sweep = continuityStrategies(baseline);
  return [...sweep.slice(0, 2), compacting('clearing, then summary', { clearToolResults: true }), clearingAlone(), ...sweep.slice(2)];
}

/** Every configuration of the sweep: each window, the failure block early and late, each seed. */
export function sweepConfigurations(): Configuration[] {
  return WINDOWS.flatMap((window) => [false, true].flatMap((lateFailure) => SEEDS.map((seed) => ({ window, seed, lateFailure }))));
}

/** One configuration of the benchmark. */
export interface Configuration {
  window: number;
  seed: number;
  lateFailure: boolean;
}

/** Every strategy in every mode it runs in (once for one that never summarizes), for one configuration. */
export async function runConfiguration(strategies: Strategy[], configuration: Configuration, failed: string[], options: ContinuityOptions = {}): Promise<ContinuityRun[]> {
  const runs: ContinuityRun[] = [];
  for (const strategy of strategies) {
    for (const mode of strategy.summarizes === false ? MODES.slice(0, 1) : MODES) {
      try {
        runs.push(await runContinuity(strategy, mode, { ...options, ...configuration }));
      } catch (error) {
        // a strategy that cannot start (a baseline ref this clone does not have) is reported, the others still run
        failed.push(`${strategy.name} (${mode}, window ${tokens(configuration.window)}, seed ${configuration.seed}) did not run: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      }
    }
  }
  return runs;
}

const ended = (run: ContinuityRun) => (run.finished ? 'yes' : `no (${run.outcome})`);
const count = (value: number | undefined) => (value === undefined ? '-' : String(value));
const modeOf = (run: ContinuityRun) => (run.summarizes ? run.mode : '-');
const block = (late: boolean) => (late ? 'past the cut (late)' : 'within the first 1,250 characters (early)');

/** The table of single runs: every column. */
export function printRuns(title: string, runs: ContinuityRun[]): void {
  console.log(`\n${title}`);
  printTable(
    ['strategy', 'summaries', 'finished', 'steps', 'over shortest', 'repeated calls', 'rejected edits', 'violations', 'fixed', 'compactions', 'summary req', 'overflows', 'max prompt', ...COST_COLUMNS],
    runs.map((run) => [
      run.strategy,
      modeOf(run),
      ended(run),
      String(run.steps),
      count(run.overShortest),
      String(run.repeatedCalls),
      String(run.rejectedEdits),
      String(run.violations),
      `${run.testsFixed}/${run.testsFailing}`,
      count(run.compactions),
      String(run.summaryRequests),
      String(run.overflows),
      tokens(run.maxPrompt),
      ...costCells(run.usage),
    ]),
  );
}

/** Runs grouped by strategy and mode, in the order they came. */
function groups(runs: ContinuityRun[]): ContinuityRun[][] {
  const byKey = new Map<string, ContinuityRun[]>();
  for (const run of runs) {
    const key = `${run.strategy}\u0000${modeOf(run)}`;
    byKey.set(key, [...(byKey.get(key) ?? []), run]);
  }
  return [...byKey.values()];
}

const perSeed = (runs: ContinuityRun[], value: (run: ContinuityRun) => number | undefined) => runs.map((run) => count(value(run))).join(' / ');

/** One table of a window and a failure block: a row per strategy and mode, the seeds side by side. */
export function printSweep(window: number, lateFailure: boolean, runs: ContinuityRun[]): void {
  const seeds = [...new Set(runs.map((run) => run.seed))];
  console.log(`\nWindow ${tokens(window)} (ceiling ${tokens(ceiling(window, undefined))}), failure block ${block(lateFailure)}; seeds ${seeds.join(' / ')} side by side, costs summed over them`);
  printTable(
    ['strategy', 'summaries', 'finished', 'over shortest', 'repeated calls', 'rejected edits', 'violations', 'summary req', ...COST_COLUMNS],
    groups(runs).map((group) => [
      group[0]!.strategy,
      modeOf(group[0]!),
      `${group.filter((run) => run.finished).length}/${group.length}`,
      perSeed(group, (run) => run.overShortest),
      perSeed(group, (run) => run.repeatedCalls),
      perSeed(group, (run) => run.rejectedEdits),
      perSeed(group, (run) => run.violations),
      perSeed(group, (run) => run.summaryRequests),
      ...costCells(addUsage(...group.map((run) => run.usage))),
    ]),
  );
}

/** "Clearly worse", seed by seed: at least this many more steps over the shortest, or this many more violations. */
export const CLEARLY = { steps: 5, violations: 2 } as const;

/** Whether `worse` is clearly worse than `better` (same seed): more steps over the shortest by `CLEARLY.steps`, more violations by `CLEARLY.violations`, or unfinished where the other finished. */
export function clearlyWorse(worse: ContinuityRun, better: ContinuityRun): boolean {
  if (better.finished && !worse.finished) return true;
  if (!worse.finished || !better.finished) return false;
  return worse.overShortest! - better.overShortest! >= CLEARLY.steps || worse.violations - better.violations >= CLEARLY.violations;
}

/** The benchmark's own test: does this middleware with amnesiac summaries show clearly more waste or violations than with honest ones, in every configuration? */
export function printTarget(runs: ContinuityRun[], strategy = 'ai-compaction'): boolean {
  const rows: string[][] = [];
  let met = true;
  for (const window of WINDOWS) {
    for (const late of [false, true]) {
      const of = (mode: SummaryMode) => runs.filter((run) => run.strategy === strategy && run.mode === mode && run.window === window && run.lateFailure === late).sort((a, b) => a.seed - b.seed);
      const honest = of('honest');
      const amnesiac = of('amnesiac');
      if (honest.length === 0 || honest.length !== amnesiac.length) continue;
      const every = honest.every((run, index) => clearlyWorse(amnesiac[index]!, run));
      met &&= every;
      rows.push([
        tokens(window),
        late ? 'late' : 'early',
        perSeed(honest, (run) => run.overShortest),
        perSeed(amnesiac, (run) => run.overShortest),
        perSeed(honest, (run) => run.violations),
        perSeed(amnesiac, (run) => run.violations),
        perSeed(honest, (run) => run.repeatedCalls),
        perSeed(amnesiac, (run) => run.repeatedCalls),
        every ? 'yes' : 'no',
      ]);
    }
  }
  console.log(`\nThe benchmark's own test: ${strategy} with amnesiac summaries (the Objective alone) against honest ones, seed by seed`);
  printTable(['window', 'failure block', 'over shortest, honest', 'amnesiac', 'violations, honest', 'amnesiac', 'repeated calls, honest', 'amnesiac', 'clearly worse'], rows);
  console.log(
    `"clearly worse": in every seed, the amnesiac run takes at least ${CLEARLY.steps} more steps over the shortest, or makes at least ${CLEARLY.violations} more violations, or does not finish where the honest one does. Met everywhere: ${met ? 'yes' : 'no'}.`,
  );
  return met;
}

function legend(failing: number, project: { fewest: number; fewestRepeats: number }): void {
  console.log(
    [
      '',
      `The task: ${failing} failing tests (and 6 passing), one turn for the task, then the user's later messages (fixer-project.ts, fixerTurns): after the 2nd fix the rule "do not edit files under src/legacy/", after the 4th "every fix adds a line to CHANGELOG.md naming its test", then every 4th fix a word of encouragement (no rule). About one failure in ten needs the test signing key, which npm run issue-key shows once; a rotation revokes it and undoes the fixes set to it.`,
      `The shortest run: ${project.fewest} steps (an npm test, four calls a test, one read of config/settings.json, one npm run issue-key, a last npm test, the answer), ${project.fewestRepeats} of its calls repeated (each test's run after its fix, the last npm test). The step cap is twice the shortest run.`,
      '"over shortest": steps beyond the shortest run (finished runs only); "repeated calls": calls of a tool with the same input as an earlier call, whatever the result;',
      '"rejected edits": edits with a token that is not the line\'s (read before an edit, or from another line) or a wrong setting value; "violations": edits refused for breaking a rule the user gave (the refusal quotes the rule, so the agent knows it again);',
      '"compactions": compactions of the middleware, trims of the sliding window, summaries of summarize-all-but; "overflows": requests the provider rejected as over the window (the run ends at the first error);',
      '"max prompt": the largest prompt of a step as the provider counted it (this middleware sizes a prompt by the last count and an estimate of what came since, so a step sent under the ceiling can be counted a little over it).',
      `Cost at cache prices: ${COST_NOTE}. Every strategy compacts at this middleware's ceiling for the window (the hand-written ones count with gpt-tokenizer, as the provider does; the other build is given that ceiling as its buffer).`,
      'What it proves: whether the prompt a strategy sends still carries the facts a long task needs (the rules, the settings, what is fixed, the failure at hand), and what losing them costs an agent that acts only on what its prompt shows.',
      'What it does not: how well a real model summarizes (honest and amnesiac are the two ends), nor that a real agent keeps to a rule it can read, or recovers from a refusal, as this one does (docs/benchmarking.md).',
    ].join('\n'),
  );
}

/** A piece of the sweep: a configuration, and the baseline as the parent resolved it (a git commit and its label; none for a tarball's, read from the environment). */
export interface Piece {
  configuration: Configuration;
  baseline?: { commit: string; label: string };
  /** Leave the baseline out (its src/ is this checkout's). */
  withoutBaseline: boolean;
}

/** A configuration's runs, in a child process (pool.ts): the strategies built there, the tool calls left out of what comes back. */
export async function runPiece({ configuration, baseline, withoutBaseline }: Piece): Promise<{ runs: ContinuityRun[]; failed: string[] }> {
  const failed: string[] = [];
  const own = baseline === undefined ? baselineFromEnv() : baselineAt(baseline.commit, baseline.label);
  const strategies = continuityStrategies(own).filter((strategy) => !withoutBaseline || strategy.name !== own.label);
  const runs = await runConfiguration(strategies, configuration, failed);
  return { runs: runs.map((each) => ({ ...each, calls: [] })), failed };
}

export async function run(): Promise<void> {
  const baseline = baselineFromEnv();
  const failed: string[] = [];
  const headline = await runConfiguration(headlineStrategies(baseline), { window: WINDOW, seed: SEED, lateFailure: false }, failed);
  const control = await runContinuity(noMiddleware, 'honest', { window: LARGE_WINDOW, seed: SEED });
  printRuns(
    `Continuity: ${FAILING} failing tests, window ${tokens(WINDOW)} (ceiling ${tokens(ceiling(WINDOW, undefined))}), seed ${SEED}, failure block ${block(false)}; local provider, gpt-tokenizer counts`,
    [...headline, { ...control, strategy: `no middleware, window ${tokens(LARGE_WINDOW)} (the control: nothing lost)` }],
  );
  legend(FAILING, control);
  if (control.overShortest !== 0) failed.push(`the control run took ${control.steps} steps, not the shortest run's ${control.fewest}: the shortest run is wrong`);

  // the sweep's configurations in child processes, two at a time: these figures are counts, not times
  // A baseline with this checkout's very src/ (on main, main itself) runs in the headline, where its rows must equal this checkout's, and not again.
  const withoutBaseline = baseline.sameAsCheckout === true;
  const pinned = baseline.commit === undefined ? undefined : { commit: baseline.commit, label: baseline.label };
  const configurations = sweepConfigurations();
  const pieces = await inChildren<Piece, Awaited<ReturnType<typeof runPiece>>>(
    import.meta.url,
    'runPiece',
    configurations.map((configuration) => ({ configuration, ...(pinned === undefined ? {} : { baseline: pinned }), withoutBaseline })),
  );
  const sweep = pieces.flatMap((piece) => piece.runs);
  failed.push(...pieces.flatMap((piece) => piece.failed));
  for (const window of WINDOWS) {
    for (const lateFailure of [false, true]) printSweep(window, lateFailure, sweep.filter((each) => each.window === window && each.lateFailure === lateFailure));
  }
  if (withoutBaseline) console.log(`\n${baseline.label} has this checkout's src/: it runs in the headline only (its rows there must equal ai-compaction's), not in the sweep.`);
  printTarget(sweep);
  for (const each of [...headline, ...sweep]) if (each.error) console.log(`${each.strategy} (${modeOf(each)}, window ${tokens(each.window)}, seed ${each.seed}${each.lateFailure ? ', late' : ''}): ${each.error}`);
  for (const line of failed) console.log(line);
  if (failed.length > 0) process.exitCode = 1;
}
