/**
 * The continuity scoreboard at a real model's pace (provider.ts, `SPEED`), beside the unpaced one
 * of continuity.ts: every window, seeds 1 to 3, honest, lossy and amnesiac summaries, the failure
 * block early. Each run is on a virtual clock of its own (clock.ts), which the provider paces on
 * and the middleware reads: a model's time is simulated, never slept, so the waits are the same
 * from run to run, and the whole sweep takes minutes of computing, not hours of waiting.
 *
 * Per window: what the unpaced scoreboard shows (finished, steps over the shortest, violations,
 * summary requests, cost), and how long the compacting steps wait for a summary (p50 and max of
 * their time in `transformParams`, in simulated time; a step that sent a checkpoint prepared ahead
 * waits 0 ms). Then the instrument's own test: what must wait does.
 *
 *   npm run bench -- continuity-paced
 */
import { ceiling } from '../src/sizing/ceiling';
import type { Speed } from '../test/support/provider-server';
import { type ContinuityRun, FAILING, MODES, printTarget, runConfiguration, runContinuity, SEEDS, WINDOWS } from './continuity';
import { addUsage, COST_COLUMNS, COST_NOTE, costCells } from './cost';
import { inChildren } from './pool';
import { SPEED } from './provider';
import { compacting, milliseconds, printTable, quantile, summarizingAtCeiling, tokens } from './strategies';

/** A model half as fast (the variant that must wait longer). */
export const HALF_SPEED: Speed = { promptTokensPerSecond: SPEED.promptTokensPerSecond / 2, outputTokensPerSecond: SPEED.outputTokensPerSecond / 2 };
const KEEP = 20;
const SLOWER = 'ai-compaction, prepare: false, a model half as fast';

/** The strategies at a real pace: this middleware with `prepare` on and off, and the hand-written summarizer that waits at every compaction. */
const strategies = () => [compacting('ai-compaction', {}), compacting('ai-compaction, prepare: false', { prepare: false }), summarizingAtCeiling(KEEP)];

/** One window and seed, every strategy and mode, and the slower model (honest), in a child process (pool.ts). */
export async function runPacedPiece({ window, seed }: { window: number; seed: number }): Promise<{ runs: ContinuityRun[]; failed: string[] }> {
  const failed: string[] = [];
  const configuration = { window, seed, lateFailure: false };
  const runs = await runConfiguration(strategies(), configuration, failed, { speed: SPEED });
  runs.push(await runContinuity(compacting(SLOWER, { prepare: false }), 'honest', { ...configuration, speed: HALF_SPEED }));
  return { runs: runs.map((each) => ({ ...each, calls: [] })), failed };
}

const perSeed = (runs: ContinuityRun[], value: (run: ContinuityRun) => number | undefined) => runs.map((run) => String(value(run) ?? '-')).join(' / ');

/** A window's table: a row per strategy and mode, the seeds side by side, the waits over all of them. */
export function printPaced(window: number, runs: ContinuityRun[]): void {
  console.log(`\nAt a real model's pace: window ${tokens(window)} (ceiling ${tokens(ceiling(window, undefined))}); seeds ${SEEDS.join(' / ')} side by side, waits and costs over all of them`);
  const groups = new Map<string, ContinuityRun[]>();
  for (const run of runs) groups.set(`${run.strategy}\u0000${run.mode}`, [...(groups.get(`${run.strategy}\u0000${run.mode}`) ?? []), run]);
  printTable(
    ['strategy', 'summaries', 'finished', 'over shortest', 'violations', 'summary req', 'compactions', 'waited', 'wait p50', 'wait max', 'summary p50', ...COST_COLUMNS],
    [...groups.values()].map((group) => {
      const waits = group.flatMap((run) => run.compactingMs);
      return [
        group[0]!.strategy,
        group[0]!.mode,
        `${group.filter((run) => run.finished).length}/${group.length}`,
        perSeed(group, (run) => run.overShortest),
        perSeed(group, (run) => run.violations),
        perSeed(group, (run) => run.summaryRequests),
        String(waits.length),
        String(waits.filter((ms) => ms > 0).length),
        milliseconds(quantile(waits, 0.5)),
        milliseconds(quantile(waits, 1)),
        milliseconds(quantile(group.flatMap((run) => run.summaryMs), 0.5)),
        ...costCells(addUsage(...group.map((run) => run.usage))),
      ];
    }),
  );
}

/** The instrument's own test at a pace: `prepare: false` waits at every compacting step, and longer with a model half as fast, seed by seed. */
export function printPacedTarget(runs: ContinuityRun[]): boolean {
  const rows: string[][] = [];
  let met = true;
  for (const window of WINDOWS) {
    const of = (strategy: string) => runs.filter((run) => run.window === window && run.strategy === strategy && run.mode === 'honest').sort((a, b) => a.seed - b.seed);
    const off = runs.filter((run) => run.window === window && run.strategy === 'ai-compaction, prepare: false');
    const everyWait = off.every((run) => run.compactingMs.every((ms) => ms > 0));
    const [fast, slow] = [of('ai-compaction, prepare: false'), of(SLOWER)];
    const p50 = (run: ContinuityRun) => quantile(run.compactingMs, 0.5) ?? 0;
    const longer = fast.length > 0 && fast.length === slow.length && fast.every((run, index) => p50(slow[index]!) > p50(run));
    met &&= everyWait && longer;
    rows.push([
      tokens(window),
      `${off.reduce((sum, run) => sum + run.compactingMs.filter((ms) => ms > 0).length, 0)}/${off.reduce((sum, run) => sum + run.compactingMs.length, 0)}`,
      everyWait ? 'yes' : 'no',
      fast.map((run) => milliseconds(p50(run))).join(' / '),
      slow.map((run) => milliseconds(p50(run))).join(' / '),
      longer ? 'yes' : 'no',
    ]);
  }
  console.log("\nThe instrument's own test at a pace: `prepare: false` (every mode) waits at every compacting step, and, honest, seed by seed, a model half as fast makes its p50 wait longer");
  printTable(['window', 'prepare: false, steps that waited', 'every one', 'wait p50 by seed', 'half as fast', 'longer'], rows);
  console.log(`Met everywhere: ${met ? 'yes' : 'no'}.`);
  return met;
}

export async function run(): Promise<void> {
  const tasks = WINDOWS.flatMap((window) => SEEDS.map((seed) => ({ window, seed })));
  // two child processes at once: the runs only compute (their time is simulated)
  const pieces = await inChildren<{ window: number; seed: number }, Awaited<ReturnType<typeof runPacedPiece>>>(import.meta.url, 'runPacedPiece', tasks);
  const runs = pieces.flatMap((piece) => piece.runs);
  const failed = pieces.flatMap((piece) => piece.failed);
  console.log(
    `\nThe continuity scoreboard (${FAILING} failing tests, failure block early, summaries ${MODES.join(' / ')}) at a real model's pace: ${SPEED.promptTokensPerSecond.toLocaleString('en-US')} uncached prompt tokens a second (cached ones free), ${SPEED.outputTokensPerSecond} output tokens a second, on a virtual clock`,
  );
  for (const window of WINDOWS) printPaced(window, runs.filter((each) => each.window === window));
  console.log(
    [
      '"compactions": steps that compacted, over the three seeds; "waited": of those, the ones that spent any time in transformParams (a step that sent a checkpoint prepared ahead waits 0 ms);',
      '"wait p50 / max": the time those steps spent in transformParams, in simulated time (computing takes none); "summary p50": the time the provider took to write a summary;',
      '"finished", "over shortest", "violations", "summary req": as in the continuity benchmark (a paced run may compact at other steps than an unpaced one: a checkpoint prepared ahead is ready later).',
      `Cost at cache prices: ${COST_NOTE}.`,
    ].join('\n'),
  );
  const waits = printPacedTarget(runs);
  const summaries = printTarget(runs);
  for (const each of runs) if (each.error) console.log(`${each.strategy} (${each.mode}, window ${tokens(each.window)}, seed ${each.seed}): ${each.error}`);
  for (const line of failed) console.log(line);
  if (!waits || !summaries || failed.length > 0) process.exitCode = 1;
}
