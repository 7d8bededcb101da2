/**
 * The 500-step session of session.ts, once for each of 20 seeds (20 sessions of the same shape:
 * the same tasks and tools, other files, outputs and tool calls), for this middleware with
 * `prepare` on and off and for the two hand-written strategies done at its ceiling. One seed's
 * figure can move with a few tokens: a checkpoint a little smaller lets the step at the ceiling
 * fall just under it and go out whole, one step later. Over many seeds such steps even out, so a
 * change is judged here by its totals, and the spread shows what one session may cost.
 *
 *   npm run bench -- seeds
 */
import { type Usage, costOf } from './cost';
import { inChildren } from './pool';
import { SESSION_SEED, runStrategy } from './session';
import { type Strategy, compacting, printTable, slidingWindow, summarizingAtCeiling, tokens } from './strategies';

/** Seeds 1 to 20; the session benchmark's own (11) among them. */
export const SEEDS = Array.from({ length: 20 }, (_, index) => index + 1);

/** What preparing ahead may add to the input cost of `prepare: false`, as the design aims (docs/design.md, "Preparing ahead"). */
const PREPARE_AIM = 0.05;

function strategies(): Strategy[] {
  return [compacting('ai-compaction', {}), compacting('ai-compaction, prepare: false', { prepare: false }), slidingWindow(60), summarizingAtCeiling(20)];
}

interface Piece {
  seed: number;
  strategy: number;
}

interface PieceRun {
  steps: number;
  errors: number;
  usage: Usage;
}

/** One strategy's session at one seed (a child of pool.ts runs it). */
export async function runSeedPiece({ seed, strategy }: Piece): Promise<PieceRun> {
  const row = await runStrategy(strategies()[strategy]!, { seed });
  return { steps: row.steps, errors: row.errors, usage: row.usage };
}

const percentSigned = (share: number) => `${share >= 0 ? '+' : ''}${(share * 100).toFixed(1)} %`;

export async function run(): Promise<void> {
  const names = strategies().map((strategy) => strategy.name);
  const pieces = SEEDS.flatMap((seed) => names.map((_, strategy) => ({ seed, strategy })));
  const runs = await inChildren<Piece, PieceRun>(import.meta.url, 'runSeedPiece', pieces);
  // the pieces seed by seed, each seed's strategies in order
  const cost = (seed: number, strategy: number) => costOf(runs[SEEDS.indexOf(seed) * names.length + strategy]!.usage).input;
  const unfinished = runs.filter((run) => run.steps !== 500 || run.errors > 0).length;
  const extra = SEEDS.map((seed) => cost(seed, 0) / cost(seed, 1) - 1);

  console.log(`\nThe 500-step session of the session benchmark at ${SEEDS.length} seeds (${SEEDS[0]} to ${SEEDS.at(-1)}; ${SESSION_SEED} is the session benchmark's): input cost at cache prices, summary requests included`);
  printTable(
    ['seed', ...names, 'prepare: extra'],
    SEEDS.map((seed, index) => [String(seed), ...names.map((_, strategy) => tokens(cost(seed, strategy))), percentSigned(extra[index]!)]),
  );
  const totals = names.map((_, strategy) => SEEDS.reduce((sum, seed) => sum + cost(seed, strategy), 0));
  console.log(`In total: ${names.map((name, strategy) => `${name} ${tokens(totals[strategy])}`).join('; ')}.`);
  const sorted = [...extra].sort((a, b) => a - b);
  const worst = extra.indexOf(sorted.at(-1)!);
  console.log(`Runs that did not finish their 500 steps, or raised an error: ${unfinished}.`);
  for (const baseline of [2, 3]) {
    const cheaper = SEEDS.filter((seed) => cost(seed, 0) < cost(seed, baseline)).length;
    console.log(`ai-compaction cheaper than "${names[baseline]}": ${cheaper} of ${SEEDS.length} seeds; in total ${percentSigned(totals[0]! / totals[baseline]! - 1)}.`);
  }
  console.log(
    `prepare (0.8, the default) over prepare: false: median ${percentSigned(sorted[Math.floor(sorted.length / 2)]!)}, least ${percentSigned(sorted[0]!)}, most ${percentSigned(sorted.at(-1)!)} (seed ${SEEDS[worst]}); over the ${PREPARE_AIM * 100} % it aims at: ${extra.filter((share) => share > PREPARE_AIM).length} of ${SEEDS.length} seeds; in total ${percentSigned(totals[0]! / totals[1]! - 1)}.`,
  );
}
