/**
 * Preparing ahead (docs/design.md, "Preparing ahead") at a real model's speed: does a compacting
 * step still wait for its summary, and what does preparing it ahead cost? Two benchmarks, each side
 * by side in one run with `prepare` on and off:
 *
 * - the 500-step session of session.ts (`prepare` 0.8, the default, 0.9 and off);
 * - the continuity benchmark of continuity.ts (`prepare` 0.8, 0.6 and off, each of 0.8 and off with a
 *   `summarizer` four times as fast and with `clearToolResults`; honest and lossy summaries).
 *
 * The local provider paces its replies (`SPEED`) on each run's virtual clock (clock.ts), which the
 * middleware reads too: a model's time is simulated, never slept. Each compacting step's time in
 * `transformParams` is measured on it (the middleware's own hook, wrapped), with the summary
 * requests made, those prepared in the background and never sent, and the input billed.
 *
 *   npm run bench -- prepare
 */
import type { Speed, SummaryMode } from '../test/support/provider-server';
import { type ContinuityRun, WINDOW, runContinuity } from './continuity';
import { COST_COLUMNS, COST_NOTE, costCells } from './cost';
import { SPEED } from './provider';
import { type Row, runStrategy, SESSION_SEED } from './session';
import { compacting, milliseconds, percent, printTable, quantile, tokens } from './strategies';
import { ceiling } from '../src/sizing/ceiling';

/** Another session of the same shape as the session benchmark's (`SESSION_SEED`). */
const OTHER_SEED = 12;
/** A smaller model's speed for the `summarizer` option: four times as fast at both (its prompt cache is its own). */
const SUMMARIZER_SPEED: Speed = { promptTokensPerSecond: 20_000, outputTokensPerSecond: 240 };
/**
 * The continuity runs here are shorter than the continuity benchmark's (14 failing tests, not
 * 40: at a real model's pace a run of 40 takes some ten minutes) and write honest and lossy
 * summaries (an amnesiac one is as short as a lossy one): they measure waits, not continuity.
 */
const PACED_FAILING = 14;
const PACED_MODES: SummaryMode[] = ['honest', 'lossy'];
/** A compaction that adds less than this to its step does not keep a chat user waiting. */
const UNNOTICED_MS = 50;

/** The columns both tables share: how long the compacting steps took, why, and what preparing cost in requests. */
function waits(run: Pick<Row & ContinuityRun, 'compactingMs' | 'beforeMs' | 'summaryMs' | 'summaryRequests' | 'prepared'>): string[] {
  const { compactingMs, summaryRequests } = run;
  const count = compactingMs.length;
  const unused = run.prepared === undefined ? 0 : run.prepared.made - run.prepared.sent;
  return [
    String(count),
    count === 0 ? '-' : percent(compactingMs.filter((ms) => ms < UNNOTICED_MS).length / count),
    milliseconds(quantile(compactingMs, 0.5)),
    milliseconds(quantile(compactingMs, 0.95)),
    milliseconds(quantile(compactingMs, 1)),
    milliseconds(quantile(run.summaryMs, 0.5)),
    milliseconds(quantile(run.beforeMs, 0.5)),
    String(summaryRequests),
    summaryRequests === 0 ? '-' : `${unused} (${percent(unused / summaryRequests)})`,
  ];
}

const WAIT_COLUMNS = ['compactions', `under ${UNNOTICED_MS} ms`, 'p50', 'p95', 'max', 'summary p50', 'between p50', 'summary req', 'prepared, unused'];

/** The session with `prepare` at 0.8 (the default), at 0.9 and off, in one run. */
export async function runSession(): Promise<void> {
  // Each run on a virtual clock of its own (clock.ts): the times are simulated, whatever runs beside them.
  const rows: Row[] = [];
  for (const prepare of [0.8, 0.9, false] as const) {
    rows.push(await runStrategy(compacting(`prepare: ${prepare}${prepare === 0.8 ? ' (default)' : ''}`, { prepare }), { speed: SPEED }));
  }
  // Another session of the same shape (another seed of the scripted agent): what the default costs
  // over `prepare: false` is no accident of one session.
  for (const prepare of [0.8, false] as const) {
    rows.push(await runStrategy(compacting(`prepare: ${prepare}${prepare === 0.8 ? ' (default)' : ''}, seed ${OTHER_SEED}`, { prepare }), { speed: SPEED, seed: OTHER_SEED }));
  }
  console.log(
    `\nThe 500-step session at a real model's speed (${SPEED.promptTokensPerSecond.toLocaleString('en-US')} prompt tokens/s, cached ones free; ${SPEED.outputTokensPerSecond} output tokens/s): time the compacting steps spend in transformParams; seed ${SESSION_SEED}, then another session of the same shape (seed ${OTHER_SEED})`,
  );
  printTable(
    ['prepare', 'steps', 'errors', ...WAIT_COLUMNS, 'other steps p50', 'mean/ceiling', 'max/ceiling', ...COST_COLUMNS, 'session time'],
    rows.map((row) => [
      row.name,
      String(row.steps),
      String(row.errors),
      ...waits(row),
      milliseconds(quantile(row.otherMs, 0.5)),
      percent(row.meanShare),
      percent(row.maxShare),
      ...costCells(row.usage),
      `${Math.round(row.seconds)} s`,
    ]),
  );
}

/** The continuity benchmark with `prepare` at 0.8 (the default), 0.6 and off, a faster summarizer and clearing, each summary mode, side by side. */
export async function runContinuityPaced(): Promise<void> {
  const variants: { name: string; prepare: number | false; summarizerSpeed?: Speed; clearToolResults?: true }[] = [
    { name: 'prepare: 0.8 (default)', prepare: 0.8 },
    { name: 'prepare: 0.6', prepare: 0.6 },
    { name: 'prepare: false', prepare: false },
    { name: 'prepare: 0.8, summarizer 4x as fast', prepare: 0.8, summarizerSpeed: SUMMARIZER_SPEED },
    { name: 'prepare: false, summarizer 4x as fast', prepare: false, summarizerSpeed: SUMMARIZER_SPEED },
    // clearing old tool results instead of waiting for the rest of a summary (docs/design.md, "What zero wait can promise")
    { name: 'prepare: 0.8, clearToolResults', prepare: 0.8, clearToolResults: true },
    { name: 'prepare: false, clearToolResults', prepare: false, clearToolResults: true },
  ];
  const runs: ContinuityRun[] = [];
  for (const mode of PACED_MODES) {
    for (const { name, prepare, summarizerSpeed, clearToolResults } of variants) {
      runs.push(await runContinuity(compacting(name, { prepare, ...(clearToolResults ? { clearToolResults } : {}) }), mode, { speed: SPEED, summarizerSpeed, failing: PACED_FAILING }));
    }
  }
  console.log(
    `\nThe continuity benchmark's session at the same speed: the fixer agent, ${PACED_FAILING} failing tests (the user's rules in later turns as in the continuity benchmark), window ${tokens(WINDOW)} (ceiling ${tokens(ceiling(WINDOW, undefined))})`,
  );
  printTable(
    ['prepare', 'summaries', 'finished', 'steps', 'over shortest', 'repeated calls', 'rejected edits', 'violations', ...WAIT_COLUMNS, 'step p50', ...COST_COLUMNS],
    runs.map((run) => [
      run.strategy,
      run.mode,
      run.finished ? 'yes' : `no (${run.outcome})`,
      String(run.steps),
      run.overShortest === undefined ? '-' : String(run.overShortest),
      String(run.repeatedCalls),
      String(run.rejectedEdits),
      String(run.violations),
      ...waits(run),
      milliseconds(quantile(run.stepMs, 0.5)),
      ...costCells(run.usage),
    ]),
  );
}

export async function run(): Promise<void> {
  await runSession();
  await runContinuityPaced();
  console.log(
    [
      '"compactions": steps that compacted (sent a checkpoint prepared ahead, or waited for a summary); "under 50 ms", p50, p95, max: the time those steps spent in transformParams;',
      '"summary p50": the time the provider took to write a summary; "between p50": the time the agent ran from one compaction (or its first step) to the step of the next,',
      'the most time any summary started ahead of that step could have had: where a summary takes longer than that, a step waits whatever `prepare` is;',
      '"step p50" (continuity): the time the provider took to answer a step (its tools answer at once); "session time": how long the session took;',
      'every time in simulated time, on a virtual clock (bench/clock.ts): the provider\'s pace is simulated, never slept, and computing takes none, so a step that waited for no summary waits 0 ms.',
      '"prepared, unused": background compactions whose checkpoint no step sent (the conversation ended first, it failed, or the step at the ceiling compacted from it), and their share of all summary requests.',
      '"over shortest", "repeated calls", "rejected edits", "violations": as in the continuity benchmark.',
      `Cost at cache prices: ${COST_NOTE}.`,
    ].join('\n'),
  );
}
