/**
 * Compaction timed by what it costs (docs/design.md, "Compaction timed by what it costs"): the
 * 500-step session of session.ts at 20 seeds, and the continuity scoreboard (every window, honest,
 * lossy and amnesiac summaries), for this middleware with `compactAt: 'ceiling'`, `'cost'` and
 * fixed shares of the ceiling, beside "summarize all but 20" done at the same trigger, under two
 * price profiles. Input and full cost, summary requests per compaction, steps wasted.
 *
 *   npm run bench -- cost
 *   COST_SEEDS=4 COST_CONTINUITY_SEEDS=1 COST_WINDOWS=24000,32000 npm run bench -- cost   # fewer, on a busy machine
 */
import type { ModelPricing } from '../src/types';
import { ceiling } from '../src/sizing/ceiling';
import { MODES, WINDOWS, runContinuity } from './continuity';
import type { Usage } from './cost';
import { inChildren } from './pool';
import { runStrategy } from './session';
import { type Strategy, compacting, printTable, summarizeOlder, tokenizerMeasure, tokens } from './strategies';

/** The two price profiles, as ratios to the input price; both providers drop a prefix idle 5 minutes. */
export const PROFILES = {
  OpenAI: { cachedInput: 0.1, cacheWrite: 1, output: 8, cacheTtl: 300_000 },
  Anthropic: { cachedInput: 0.1, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 },
} satisfies Record<string, ModelPricing>;
type Profile = keyof typeof PROFILES;

/** Prices a variant is told (a wrong one for the variant that must cost more). */
const TOLD: Record<Profile | 'free cache', ModelPricing> = { ...PROFILES, 'free cache': { ...PROFILES.OpenAI, cachedInput: 0 } };

/** What a run's tokens cost under a profile: uncached input written to the cache, cached input read from it, output. */
export function profileCost({ input, cached, output }: Usage, prices: ModelPricing): { input: number; full: number } {
  const inputCost = (input - cached) * prices.cacheWrite + cached * prices.cachedInput;
  return { input: inputCost, full: inputCost + output * prices.output };
}

/** Seeds of the session (`COST_SEEDS`: how many, from 1; 20 by default). */
const SESSION_SEEDS = Array.from({ length: Number(process.env.COST_SEEDS ?? 20) }, (_, index) => index + 1);
/** Seeds of the continuity scoreboard (`COST_CONTINUITY_SEEDS`: how many, from 1; 3 by default). */
const CONTINUITY_SEEDS = Array.from({ length: Number(process.env.COST_CONTINUITY_SEEDS ?? 3) }, (_, index) => index + 1);

/**
 * A variant: this middleware at a `compactAt`, or "summarize all but 20" at a share of the
 * ceiling. `recall`: the recall tool offered (docs/design.md, "Recall"); no variant has it yet,
 * the rows with it are added beside these once it exists.
 */
interface Variant {
  name: string;
  compactAt?: 'ceiling' | 'cost' | number;
  profile?: Profile | 'free cache';
  handWritten?: number;
  recall?: boolean;
}

const VARIANTS: Variant[] = [
  { name: "compactAt: 'ceiling'", compactAt: 'ceiling' },
  { name: "compactAt: 'cost' (OpenAI prices)", compactAt: 'cost', profile: 'OpenAI' },
  { name: "compactAt: 'cost' (Anthropic prices)", compactAt: 'cost', profile: 'Anthropic' },
  { name: 'compactAt: 0.5', compactAt: 0.5 },
  { name: 'compactAt: 0.35', compactAt: 0.35 },
  // the control of the instrument: a share of 1 is the ceiling, figure for figure
  { name: 'compactAt: 1 (control: the ceiling)', compactAt: 1 },
  // must cost more than the default: told that cached input is free, it has no reason to compact before the ceiling
  { name: "compactAt: 'cost', told the cache is free (must cost more)", compactAt: 'cost', profile: 'free cache' },
  { name: 'summarize all but 20 at the ceiling', handWritten: 1 },
  { name: 'summarize all but 20 at 0.5', handWritten: 0.5 },
  { name: 'summarize all but 20 at 0.35', handWritten: 0.35 },
];

/** Windows of the continuity scoreboard (`COST_WINDOWS`: a comma-separated list; every window of continuity.ts by default). */
const CONTINUITY_WINDOWS: readonly number[] = process.env.COST_WINDOWS === undefined ? WINDOWS : process.env.COST_WINDOWS.split(',').map(Number);

/** The variants the continuity scoreboard runs. */
const CONTINUITY_VARIANTS = [0, 2, 3, 4];

function strategyOf(variant: Variant): Strategy {
  if (variant.handWritten !== undefined) {
    const share = variant.handWritten;
    return {
      name: variant.name,
      start: async (window) => {
        let summaries = 0;
        return { middleware: [summarizeOlder(20, Math.round(share * ceiling(window, undefined)), () => void summaries++, tokenizerMeasure)], compactions: () => summaries };
      },
    };
  }
  return compacting(variant.name, { compactAt: variant.compactAt, ...(variant.profile === undefined ? {} : { pricing: TOLD[variant.profile] }) });
}

interface SessionPiece {
  seed: number;
  variant: number;
}

interface SessionRun {
  steps: number;
  errors: number;
  usage: Usage;
  compactions: number;
  summaryRequests: number;
}

/** One variant's session at one seed (a child of pool.ts runs it). */
export async function runSessionPiece({ seed, variant }: SessionPiece): Promise<SessionRun> {
  const row = await runStrategy(strategyOf(VARIANTS[variant]!), { seed });
  return { steps: row.steps, errors: row.errors, usage: row.usage, compactions: row.compactions ?? 0, summaryRequests: row.summaryRequests };
}

interface ContinuityPiece {
  window: number;
  seed: number;
  variant: number;
  mode: (typeof MODES)[number];
}

interface ContinuityResult {
  finished: boolean;
  overShortest: number | undefined;
  summaryRequests: number;
  violations: number;
}

/** One variant's continuity run (a child of pool.ts runs it). */
export async function runContinuityPiece({ window, seed, variant, mode }: ContinuityPiece): Promise<ContinuityResult> {
  const run = await runContinuity(strategyOf(VARIANTS[variant]!), mode, { window, seed });
  return { finished: run.finished, overShortest: run.overShortest, summaryRequests: run.summaryRequests, violations: run.violations };
}

const ratio = (value: number, of: number) => `${(value / of).toFixed(2)}x`;

export async function run(): Promise<void> {
  const pieces = SESSION_SEEDS.flatMap((seed) => VARIANTS.map((_, variant) => ({ seed, variant })));
  const runs = await inChildren<SessionPiece, SessionRun>(import.meta.url, 'runSessionPiece', pieces);
  const of = (variant: number) => runs.filter((_, index) => pieces[index]!.variant === variant);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const total = (variant: number, profile: Profile) => {
    const costs = of(variant).map((piece) => profileCost(piece.usage, PROFILES[profile]));
    return { input: sum(costs.map((cost) => cost.input)), full: sum(costs.map((cost) => cost.full)) };
  };
  const ceilingCost = (profile: Profile) => total(0, profile);

  const ran = SESSION_SEEDS.length === 20 ? '' : ` (of the 20 the benchmark runs by default: COST_SEEDS=${SESSION_SEEDS.length})`;
  console.log(`\nThe 500-step session of the session benchmark at ${SESSION_SEEDS.length} seeds (1 to ${SESSION_SEEDS.length})${ran}, window 128,000 (ceiling ${tokens(ceiling(128_000, undefined))}), summed over the seeds.`);
  console.log('Costs in tokens at the input price: input cost = uncached input x the cache-write price + cached input x the cached price; full cost = input cost + output x the output price. OpenAI: cached 0.1, no write premium, output 8; Anthropic: cached 0.1, write 1.25, output 5. Summary requests included.');
  printTable(
    ['variant', 'unfinished', 'compactions', 'summary req', 'req / compaction', ...(['OpenAI', 'Anthropic'] as const).flatMap((profile) => [`${profile} input cost`, 'x ceiling', `${profile} full cost`, 'x ceiling'])],
    VARIANTS.map((variant, index) => {
      const pieceRuns = of(index);
      const compactions = sum(pieceRuns.map((piece) => piece.compactions));
      const requests = sum(pieceRuns.map((piece) => piece.summaryRequests));
      return [
        variant.name,
        String(pieceRuns.filter((piece) => piece.steps !== 500 || piece.errors > 0).length),
        String(compactions),
        String(requests),
        compactions === 0 ? '-' : (requests / compactions).toFixed(2),
        ...(['OpenAI', 'Anthropic'] as const).flatMap((profile) => {
          const cost = total(index, profile);
          return [tokens(cost.input), ratio(cost.input, ceilingCost(profile).input), tokens(cost.full), ratio(cost.full, ceilingCost(profile).full)];
        }),
      ];
    }),
  );
  for (const profile of ['OpenAI', 'Anthropic'] as const) {
    const variant = profile === 'OpenAI' ? 1 : 2;
    const cost = total(variant, profile);
    console.log(
      `Under ${profile} prices, compactAt 'cost' costs ${ratio(cost.input, ceilingCost(profile).input)} of compactAt 'ceiling' in input cost (target: at most 0.50x) and ${ratio(cost.full, ceilingCost(profile).full)} in full cost (target: at most 0.55x).`,
    );
  }
  const control = total(5, 'OpenAI').input === ceilingCost('OpenAI').input;
  const worse = (['OpenAI', 'Anthropic'] as const).every((profile) => {
    const told = total(6, profile);
    const right = total(profile === 'OpenAI' ? 1 : 2, profile);
    return told.input > right.input && told.full > right.full;
  });
  console.log(`The instrument's own test: compactAt 1 costs what 'ceiling' costs, to the token: ${control ? 'yes' : 'NO'}; 'cost' told the cache is free costs more than 'cost' under both profiles, in input and in full cost: ${worse ? 'yes' : 'NO'}.`);

  const configurations = CONTINUITY_WINDOWS.flatMap((window) => CONTINUITY_SEEDS.flatMap((seed) => CONTINUITY_VARIANTS.flatMap((variant) => MODES.map((mode) => ({ window, seed, variant, mode })))));
  const results = await inChildren<ContinuityPiece, ContinuityResult>(import.meta.url, 'runContinuityPiece', configurations);
  console.log(
    `\nThe continuity scoreboard (40 failing tests, the failure block early, seeds 1 to ${CONTINUITY_SEEDS.length}, windows ${CONTINUITY_WINDOWS.map(tokens).join(', ')}): steps over the shortest run summed over the seeds (unfinished runs, then summary requests, in brackets). Without the recall tool: the rows with it are added once it exists (a variant's \`recall\`).`,
  );
  for (const mode of MODES) {
    printTable(
      [`${mode}`, ...CONTINUITY_WINDOWS.map((window) => `window ${tokens(window)}`)],
      CONTINUITY_VARIANTS.map((variant) => [
        VARIANTS[variant]!.name,
        ...CONTINUITY_WINDOWS.map((window) => {
          const cell = results.filter((_, index) => configurations[index]!.window === window && configurations[index]!.variant === variant && configurations[index]!.mode === mode);
          const unfinished = cell.filter((result) => !result.finished).length;
          return `${sum(cell.map((result) => result.overShortest ?? 0))} (${unfinished}, ${sum(cell.map((result) => result.summaryRequests))})`;
        }),
      ]),
    );
  }
}
