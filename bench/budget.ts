/**
 * The budget's share (docs/design.md, "One budget"): how much of the room a compaction keeps (the
 * checkpoint and what goes out live after it), measured on the continuity scoreboard, the way its
 * default was chosen. Every window, failure block and seed of the continuity sweep, this middleware
 * at several shares of the room (at most half), with honest and lossy summaries; and the 500-step
 * session with an agent-sized system prompt at the same shares.
 *
 * A smaller share leaves the prompt lower after each compaction (cheaper steps) but compacts more
 * often and keeps less verbatim (more summary requests, cache misses, and what a summary lost to
 * find again); a larger one the other way round. The share is not a public option: it is passed
 * under `Symbol.for('ai-compaction.budgetShare')`.
 *
 *   npm run bench -- budget
 */
import { BUDGET_SHARE } from '../src/options';
import { DEFAULT_BUDGET_SHARE } from '../src/checkpoint/budget';
import { ceiling } from '../src/sizing/ceiling';
import type { SummaryMode } from '../test/support/provider-server';
import { type ContinuityRun, type Configuration, runContinuity, SEEDS, sweepConfigurations, WINDOWS } from './continuity';
import { addUsage, COST_COLUMNS, COST_NOTE, costCells, costOf } from './cost';
import { inChildren } from './pool';
import { AGENT_SYSTEM, runStrategy, SYSTEM } from './session';
import { type Strategy, compacting, printTable, tokens } from './strategies';

/** The shares measured: an eighth of the room to half (the most a compaction may keep). */
export const SHARES = [0.125, 0.25, 0.375, 0.5] as const;

/** The summarizers of the sweep: honest keeps what it saw, lossy the task and three paths. */
const SUMMARIES: SummaryMode[] = ['honest', 'lossy'];

const label = (share: number) => `share ${share}${share === DEFAULT_BUDGET_SHARE ? ' (default)' : ''}`;

/** This middleware keeping `share` of the room. */
export function atShare(share: number): Strategy {
  return compacting(label(share), { [BUDGET_SHARE]: share } as Record<string, unknown>);
}

/** One configuration of the sweep, every share and summarizer, in a child process (pool.ts). */
export async function runSharePiece(configuration: Configuration): Promise<ContinuityRun[]> {
  const runs: ContinuityRun[] = [];
  for (const share of SHARES) {
    for (const mode of SUMMARIES) runs.push({ ...(await runContinuity(atShare(share), mode, configuration)), calls: [] });
  }
  return runs;
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

export async function run(): Promise<void> {
  const configurations = sweepConfigurations();
  const runs = (await inChildren<Configuration, ContinuityRun[]>(import.meta.url, 'runSharePiece', configurations)).flat();

  console.log(
    `\nThe continuity scoreboard by the budget's share of the room: windows ${WINDOWS.map(tokens).join(', ')}, failure block early and late, seeds ${SEEDS.join(' / ')}; each cell summed over its ${SEEDS.length * 2} runs (2 failure blocks x ${SEEDS.length} seeds)`,
  );
  for (const mode of SUMMARIES) {
    const rows: string[][] = [];
    for (const share of SHARES) {
      const mine = runs.filter((run) => run.strategy === label(share) && run.mode === mode);
      const cells = WINDOWS.map((window) => mine.filter((run) => run.window === window));
      rows.push([
        label(share),
        mode,
        `${mine.filter((run) => run.finished).length}/${mine.length}`,
        ...cells.map((cell) => `${sum(cell.map((run) => run.overShortest ?? 0))} / ${sum(cell.map((run) => run.summaryRequests))} / ${costCells(addUsage(...cell.map((run) => run.usage)))[1]}`),
        String(sum(mine.map((run) => run.overShortest ?? 0))),
        String(sum(mine.map((run) => run.violations + run.rejectedEdits))),
        String(sum(mine.map((run) => run.summaryRequests))),
        ...costCells(addUsage(...mine.map((run) => run.usage))),
      ]);
    }
    printTable(['share', 'summaries', 'finished', ...WINDOWS.map((window) => `${tokens(window)}: over / req / input cost`), 'over shortest', 'violations + rejected', 'summary req', ...COST_COLUMNS], rows);
  }
  // The rule the default is chosen by: the cheapest share at cache prices, honest and lossy runs
  // together, whose runs all finish with no edit refused for a rule and none rejected.
  const judged = SHARES.map((share) => {
    const mine = runs.filter((run) => run.strategy === label(share));
    return { share, sound: mine.every((run) => run.finished && run.violations === 0 && run.rejectedEdits === 0), cost: costOf(addUsage(...mine.map((run) => run.usage))).input };
  });
  const chosen = judged.filter((each) => each.sound).sort((a, b) => a.cost - b.cost)[0];
  console.log(
    `The cheapest share, honest and lossy runs together, whose runs all finish with no violation and no rejected edit: ${chosen === undefined ? 'none' : chosen.share}; the default: ${DEFAULT_BUDGET_SHARE} (${chosen?.share === DEFAULT_BUDGET_SHARE ? 'the same' : 'not the same'}).`,
  );
  console.log(
    `"over shortest": steps beyond the shortest run, summed (as in the continuity benchmark); "req": summary requests; "violations + rejected": edits refused for a rule or rejected for a wrong token.
Every window compacts at this middleware's ceiling for it (${WINDOWS.map((window) => `${tokens(window)} -> ${tokens(ceiling(window, undefined))}`).join(', ')}).
Cost at cache prices: ${COST_NOTE}.`,
  );

  console.log('\nThe 500-step session (window 128,000, ceiling 108,800) by the budget\'s share, with a one-line and an agent-sized system prompt');
  const session: string[][] = [];
  for (const [prompt, system] of [['one line', SYSTEM], ['agent-sized', AGENT_SYSTEM]] as const) {
    for (const share of SHARES) {
      const row = await runStrategy(atShare(share), { system });
      session.push([label(share), prompt, String(row.steps), String(row.errors), String(row.compactions ?? '-'), String(row.summaryRequests), row.floor === undefined ? '-' : tokens(Math.round(row.floor)), `${Math.round(row.meanShare * 100)} %`, ...costCells(row.usage)]);
    }
  }
  printTable(['share', 'system prompt', 'steps', 'errors', 'compactions', 'summary req', 'prompt after compaction', 'mean/ceiling', ...COST_COLUMNS], session);
  console.log(`"prompt after compaction": the mean prompt of the steps sent right after one. Cost at cache prices: ${COST_NOTE}.`);
}
