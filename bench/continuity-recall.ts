/**
 * Continuity with the recall tool (docs/benchmarking.md, "Continuity with recall"): the continuity
 * benchmark's runs with `recallTool()` offered beside the project's tools, the scripted agent asking
 * it for a fact it needs and does not see once the start of the conversation is out of sight
 * (fixer.ts, `lookUp`), the same way for every strategy; beside the same runs without the tool, and
 * with a recall tool that answers nothing (the variant that must not improve anything).
 *
 *   npm run bench -- continuity-recall                                                 # the whole scoreboard
 *   BENCH_RECALL_SEEDS=1 BENCH_RECALL_LATE=0 npm run bench -- continuity-recall --no-write  # seed 1, early block (a sixth)
 *   BENCH_RECALL_WINDOWS=32000 npm run bench -- continuity-recall --no-write           # one window (a quick look)
 */
import { positionedMessages } from '../src/recall/messages';
import { searchMessages } from '../src/recall/search';
import { type ContinuityRun, type Configuration, KEEP, MODES, WINDOWS, absentPieces, runContinuity, wastedSteps } from './continuity';
import { PROFILES } from './compact-at';
import { addUsage, costOf } from './cost';
import { inChildren } from './pool';
import { type Strategy, compacting, printTable, slidingWindow, summarizingAtCeiling, tokens } from './strategies';

type Variant = 'none' | 'tool' | 'empty';
const VARIANTS: Variant[] = ['none', 'tool', 'empty'];
const LABEL: Record<Variant, string> = { none: 'without', tool: 'with recall', empty: 'recall answering nothing' };

/** The windows, seeds and failure blocks run: the whole scoreboard (every window, seeds 1 to 3, the failure block early and late), unless the environment asks for fewer. */
export function recallConfigurations(env = process.env): Configuration[] {
  const seeds = (env.BENCH_RECALL_SEEDS ?? '1,2,3').split(',').map(Number);
  const late = env.BENCH_RECALL_LATE === '0' ? [false] : [false, true];
  return windowsOf(env).flatMap((window) => late.flatMap((lateFailure) => seeds.map((seed) => ({ window, seed, lateFailure }))));
}

/** The windows run: `WINDOWS`, or those `BENCH_RECALL_WINDOWS` lists (each one of them). */
function windowsOf(env: NodeJS.ProcessEnv): number[] {
  if (env.BENCH_RECALL_WINDOWS === undefined) return [...WINDOWS];
  const asked = env.BENCH_RECALL_WINDOWS.split(',').map(Number);
  const unknown = asked.filter((window) => !(WINDOWS as readonly number[]).includes(window));
  if (unknown.length > 0) throw new Error(`BENCH_RECALL_WINDOWS lists ${unknown.join(', ')}, not among the windows ${WINDOWS.join(', ')}`);
  return asked;
}

export interface RecallPiece {
  configuration: Configuration;
  variant: Variant;
  /** The hand-written strategies in place of this middleware. */
  handWritten?: boolean;
  /** This middleware told OpenAI's prices: it compacts where it costs least (`compactAt: 'cost'`, the default) instead of at the ceiling. */
  priced?: boolean;
}

/** The strategy's name when it is told prices: `compactAt: 'cost'` at work. */
export const PRICED = "ai-compaction, compactAt: 'cost' (OpenAI prices)";

function strategiesOf(handWritten: boolean, priced: boolean): Strategy[] {
  if (handWritten) return [summarizingAtCeiling(KEEP), slidingWindow(KEEP)];
  // the local model is in no catalog: without prices the default compacts at the ceiling, as `compactAt: 'ceiling'`
  return [priced ? compacting(PRICED, { pricing: PROFILES.OpenAI }) : compacting('ai-compaction', {})];
}

/** One configuration and variant, every mode, in a child process (the tool calls left out of what comes back). */
export async function runRecallPiece({ configuration, variant, handWritten = false, priced = false }: RecallPiece): Promise<Array<ContinuityRun & { variant: Variant }>> {
  const runs: Array<ContinuityRun & { variant: Variant }> = [];
  for (const strategy of strategiesOf(handWritten, priced)) {
    for (const mode of strategy.summarizes === false ? MODES.slice(0, 1) : MODES) {
      const run = await runContinuity(strategy, mode, { ...configuration, ...(variant === 'none' ? {} : { recall: variant }) });
      runs.push({ ...run, calls: [], variant });
    }
  }
  return runs;
}

const inputCost = (runs: ContinuityRun[]) => costOf(addUsage(...runs.map((run) => run.usage))).input;
const lookups = (runs: ContinuityRun[]) => runs.reduce((sum, run) => sum + run.lookups, 0);
const unfinished = (runs: ContinuityRun[]) => runs.filter((run) => !run.finished).length;
const sum = (runs: ContinuityRun[], value: (run: ContinuityRun) => number) => runs.reduce((total, run) => total + value(run), 0);

/**
 * What a call of the tool costs on 200,000 characters of tool output (20 outputs of 10,000, as the
 * tool's test pages them): its index is built on every call (docs/design.md, "Recall"). Real time,
 * seven calls, in this process before the sweep starts: the only figure of this benchmark that
 * moves from run to run and with the machine's load.
 */
export function indexTimes(): number[] {
  const output = (index: number) => Array.from({ length: 250 }, (_, line) => `src/module-${index}/file-${line}.ts:${line} warning TS6133 unused variable 'value${line}'`).join('\n').slice(0, 10_000);
  const handed = [{ role: 'user', content: 'Clean up the warnings.' }];
  for (let index = 0; index < 20; index++) {
    handed.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${index}`, toolName: 'run_command', input: {} }] } as never);
    handed.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${index}`, toolName: 'run_command', output: { type: 'text', value: output(index) } }] } as never);
  }
  return Array.from({ length: 7 }, () => {
    const start = performance.now();
    searchMessages(positionedMessages(handed), { query: 'TS6133 value42' }, 16_000);
    return performance.now() - start;
  }).sort((a, b) => a - b);
}

/** The guard's own test: a handed conversation, and an answer whose second paragraph it does not hold. */
const HANDED = [{ role: 'user', content: 'Fix the tests.' }, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'run_command', output: { type: 'text', value: 'Issued the test signing key key_0123abcd.' } }] }];
const MADE_UP = { matches: [{ position: 1, role: 'tool' as const, text: 'Issued the test signing key key_0123abcd.\n\nIssued the test signing key key_ffffffff.' }], page: 1, pages: 1, messages: 2 };

/**
 * The cost policy's fidelity condition on the scoreboard: this middleware compacting where it costs least
 * (told OpenAI's prices), with the recall tool, against compacting at the ceiling without it; steps
 * wasted per window and summaries, and the ratio (at most 1.25x wanted at every window).
 */
function printCostAgainstCeiling(all: Array<ContinuityRun & { variant: Variant }>, windows: number[]): void {
  const ceilingRuns = (mode: string, window?: number) => all.filter((each) => each.strategy === 'ai-compaction' && each.variant === 'none' && each.mode === mode && (window === undefined || each.window === window));
  const costRuns = (mode: string, window?: number) => all.filter((each) => each.strategy === PRICED && each.mode === mode && (window === undefined || each.window === window));
  const ratio = (cost: number, ceiling: number) => (ceiling === 0 ? (cost === 0 ? '1.00x' : 'more than 0') : `${(cost / ceiling).toFixed(2)}x`);
  const within = (cost: number, ceiling: number) => cost <= 1.25 * ceiling;
  console.log(
    `\nThe cost policy's fidelity: compactAt 'cost' (the default, told OpenAI's prices) with the recall tool, against compactAt 'ceiling' without it (ai-compaction above: the local model has no known prices, so it compacts at the ceiling); steps wasted (lookups), and cost's waste as a multiple of the ceiling's`,
  );
  const rows: string[][] = [];
  let met = true;
  for (const mode of MODES) {
    for (const [label, runs] of [["'ceiling', without recall", ceilingRuns], ["'cost', with recall", costRuns]] as const) {
      rows.push([mode, label, ...windows.map((window) => `${wastedSteps(runs(mode, window))} (${lookups(runs(mode, window))})`), String(wastedSteps(runs(mode))), tokens(inputCost(runs(mode)))]);
    }
    rows.push([mode, "'cost' / 'ceiling'", ...windows.map((window) => ratio(wastedSteps(costRuns(mode, window)), wastedSteps(ceilingRuns(mode, window)))), ratio(wastedSteps(costRuns(mode)), wastedSteps(ceilingRuns(mode))), `${(inputCost(costRuns(mode)) / inputCost(ceilingRuns(mode))).toFixed(2)}x`]);
    met &&= windows.every((window) => within(wastedSteps(costRuns(mode, window)), wastedSteps(ceilingRuns(mode, window))));
  }
  printTable(['summaries', 'compactAt', ...windows.map((window) => `${tokens(window)}: wasted (lookups)`), 'wasted, all windows', 'input cost'], rows);
  console.log(`At most 1.25x the ceiling's waste at every window and with every summary kind: ${met ? 'yes' : 'no'}.`);
}

export async function run(): Promise<void> {
  const times = indexTimes();
  const configurations = recallConfigurations();
  const windows = windowsOf(process.env);
  const pieces: RecallPiece[] = [
    ...configurations.flatMap((configuration) => VARIANTS.map((variant) => ({ configuration, variant }))),
    ...windows.flatMap((window) => (['none', 'tool'] as const).map((variant) => ({ configuration: { window, seed: 1, lateFailure: false }, variant, handWritten: true }))),
    // the cost policy: compacting where it costs least, with the tool, against the ceiling without it
    ...configurations.map((configuration) => ({ configuration, variant: 'tool' as const, priced: true })),
  ];
  const all = (await inChildren<RecallPiece, Array<ContinuityRun & { variant: Variant }>>(import.meta.url, 'runRecallPiece', pieces)).flat();
  const own = all.filter((each) => each.strategy === 'ai-compaction');
  const seeds = [...new Set(configurations.map((each) => each.seed))];
  const blocks = [...new Set(configurations.map((each) => (each.lateFailure ? 'late' : 'early')))];
  console.log(
    `\nContinuity with the recall tool: ai-compaction, ${windows.length} window${windows.length === 1 ? '' : 's'}, seeds ${seeds.join(', ')}, failure block ${blocks.join(' and ')}; steps wasted (over the shortest run; an unfinished run counts its cap), lookups (calls of the recall tool, each a step), input cost at cache prices, summed over the seeds and blocks`,
  );
  const rows: string[][] = [];
  for (const mode of MODES) {
    for (const variant of VARIANTS) {
      const of = (window?: number) => own.filter((each) => each.mode === mode && each.variant === variant && (window === undefined || each.window === window));
      rows.push([
        mode,
        LABEL[variant],
        ...windows.map((window) => `${wastedSteps(of(window))} (${lookups(of(window))})`),
        String(wastedSteps(of())),
        String(lookups(of())),
        String(unfinished(of())),
        `${sum(of(), (run) => run.keys.issued - 1)} / ${sum(of(), (run) => run.keys.undone)}`,
        tokens(inputCost(of())),
      ]);
    }
  }
  printTable(['summaries', 'recall', ...windows.map((window) => `${tokens(window)}: wasted (lookups)`), 'wasted, all windows', 'lookups', 'unfinished', 'key rotations / fixes undone', 'input cost'], rows);
  console.log(
    '"unfinished": runs stopped at the step cap (twice the shortest run), each counted as its cap less the shortest run; "key rotations / fixes undone": new test signing keys issued after the first (the agent had lost the first and could not see it again), and the fixes each rotation undid (their lines carried the revoked key and had to be made again).',
  );

  // the targets, printed with the run
  const target: string[] = [];
  for (const mode of ['lossy', 'amnesiac'] as const) {
    const of = (variant: Variant, window?: number) => own.filter((each) => each.mode === mode && each.variant === variant && (window === undefined || each.window === window));
    const half = wastedSteps(of('tool')) * 2 <= wastedSteps(of('none'));
    const never = windows.every((window) => wastedSteps(of('tool', window)) <= wastedSteps(of('none', window)));
    const cost = inputCost(of('tool')) / inputCost(of('none'));
    target.push(
      `${mode}: with recall ${wastedSteps(of('tool'))} steps wasted against ${wastedSteps(of('none'))} without (at most half: ${half ? 'yes' : 'no'}; never more at a window: ${never ? 'yes' : 'no'}); input cost ${cost.toFixed(3)}x (at most 1.05x: ${cost <= 1.05 ? 'yes' : 'no'})`,
    );
  }
  const unfound = sum(all, (run) => run.unfound);
  const answered = sum(all.filter((run) => run.variant === 'tool'), (run) => run.lookups);
  target.push(`The tool's answers hold only text of the messages handed to it: ${unfound} paragraphs of ${answered} answers found in none of them (0 wanted: ${unfound === 0 ? 'yes' : 'no'}); the guard itself counts ${absentPieces(MADE_UP, HANDED)} for an answer that makes a line up (more than 0 wanted)`);
  if (unfound > 0) process.exitCode = 1;
  const honest = own.filter((each) => each.mode === 'honest' && each.variant === 'tool');
  target.push(`honest with recall: ${wastedSteps(honest)} steps wasted, ${lookups(honest)} lookups (0 wanted: ${wastedSteps(honest) === 0 ? 'yes' : 'no'})`);
  const controls = MODES.map((mode) => {
    const of = (variant: Variant) => own.filter((each) => each.mode === mode && each.variant === variant);
    return `${mode} ${wastedSteps(of('empty'))} against ${wastedSteps(of('none'))} without`;
  });
  const failed = MODES.some((mode) => {
    const of = (variant: Variant) => own.filter((each) => each.mode === mode && each.variant === variant);
    return wastedSteps(of('empty')) < wastedSteps(of('none'));
  });
  target.push(`The control, a recall tool that answers nothing (it must improve nothing): ${controls.join('; ')} (improves nothing: ${failed ? 'no' : 'yes'})`);
  const worse = (['lossy', 'amnesiac'] as const).map((mode) => {
    const of = (variant: Variant) => own.filter((each) => each.mode === mode && each.variant === variant);
    return { mode, empty: wastedSteps(of('empty')), tool: wastedSteps(of('tool')) };
  });
  target.push(
    `The instrument can fail: the tool answering nothing must waste more than the real one: ${worse.map(({ mode, empty, tool }) => `${mode} ${empty} against ${tool}`).join('; ')} (it does: ${worse.every(({ empty, tool }) => empty > tool) ? 'yes' : 'no'})`,
  );
  // a run with the tool whose steps did not show it to the middleware measured another program (an AI SDK that drops a tool's providerOptions)
  const unseen = all.filter((each) => each.variant !== 'none' && each.recognised < each.steps);
  if (unseen.length > 0) {
    console.log(`\n${unseen.length} run(s) with the tool in which the middleware did not see it at every step (the AI SDK did not hand it the tool's marker): their figures are not those of the tool`);
    process.exitCode = 1;
  }
  console.log(`\nThe targets:\n${target.map((line) => `- ${line}`).join('\n')}`);

  console.log(
    `\nA call of the tool on 200,000 characters of tool output (its index built anew, then one search; real time, 7 calls in this process before the sweep): median ${Math.round(times[3]!)} ms, fastest ${Math.round(times[0]!)} ms, slowest ${Math.round(times[6]!)} ms.`,
  );

  printCostAgainstCeiling(all, windows);

  const hand = all.filter((each) => each.strategy !== 'ai-compaction' && each.strategy !== PRICED);
  console.log(`\nThe hand-written strategies with and without the tool, every window (each at this middleware's ceiling for it), seed 1, failure block early; "wasted" as above (an unfinished run counts its cap)`);
  printTable(
    ['window', 'strategy', 'summaries', 'recall', 'finished', 'wasted', 'lookups', 'violations', 'repeated calls', 'input cost'],
    hand.map((each) => [tokens(each.window), each.strategy, each.summarizes ? each.mode : '-', LABEL[each.variant], each.finished ? 'yes' : `no (${each.outcome})`, String(wastedSteps([each])), String(each.lookups), String(each.violations), String(each.repeatedCalls), tokens(costOf(each.usage).input)]),
  );
  // Summed over the windows, per strategy and summary kind: with the tool against without.
  for (const strategy of [...new Set(hand.map((each) => each.strategy))]) {
    for (const mode of [...new Set(hand.filter((each) => each.strategy === strategy).map((each) => each.mode))]) {
      const of = (variant: Variant) => hand.filter((each) => each.strategy === strategy && each.mode === mode && each.variant === variant);
      const label = of('none')[0]?.summarizes === false ? strategy : `${strategy}, ${mode}`;
      console.log(`${label}: ${wastedSteps(of('tool'))} steps wasted with the tool against ${wastedSteps(of('none'))} without, over the windows; input cost ${(inputCost(of('tool')) / inputCost(of('none'))).toFixed(3)}x`);
    }
  }
}
