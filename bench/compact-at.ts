/**
 * Compaction timed by what it costs (docs/design.md, "Compaction timed by what it costs"): the
 * 500-step session of session.ts at 20 seeds, the chat of chat.ts with a person's pauses (some
 * longer than the providers' 5-minute cache lifetime), and the continuity scoreboard (every window,
 * honest, lossy and amnesiac summaries), for this middleware with `compactAt: 'ceiling'`, `'cost'`
 * and fixed shares of the ceiling, beside "summarize all but 20" done at the same trigger, under two
 * price profiles. Input and full cost, summary requests per compaction, compactions the cold-cache
 * rule decided, steps wasted. Every run is a piece of one pool of child processes (pool.ts), two at
 * a time, the longest first.
 *
 *   npm run bench -- cost
 *   COST_SEEDS=2 COST_CHAT_SEEDS=2 COST_CONTINUITY_SEEDS=1 COST_WINDOWS=24000,32000 npm run bench -- cost --no-write   # a check
 */
import type { ModelPricing } from '../src/types';
import { ceiling } from '../src/sizing/ceiling';
import { CACHE_IDLE_MS } from '../test/support/provider-server';
import { PACE, pauses, runChat, TURNS as CHAT_TURNS } from './chat';
import { MODES, WINDOWS, runContinuity, wastedSteps } from './continuity';
import type { Usage } from './cost';
import { inChildren } from './pool';
import { SPEED } from './provider';
import { runStrategy } from './session';
import { type Strategy, type StrategyRun, compacting, printTable, summarizeOlder, tokenizerMeasure, tokens } from './strategies';

/** The two price profiles, as ratios to the input price; both providers drop a prefix idle 5 minutes. */
export const PROFILES = {
  OpenAI: { cachedInput: 0.1, cacheWrite: 1, output: 8, cacheTtl: 300_000 },
  Anthropic: { cachedInput: 0.1, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 },
} satisfies Record<string, ModelPricing>;
type Profile = keyof typeof PROFILES;

/** Prices a variant is told (a wrong one for the controls: the cache free, or never expiring). */
const TOLD = {
  ...PROFILES,
  'free cache': { ...PROFILES.OpenAI, cachedInput: 0 },
  'cache never expires': { ...PROFILES.Anthropic, cacheTtl: Number.MAX_SAFE_INTEGER },
} satisfies Record<string, ModelPricing>;
type Told = keyof typeof TOLD;

/** What a run's tokens cost under a profile: uncached input written to the cache, cached input read from it, output. */
export function profileCost({ input, cached, output }: Usage, prices: ModelPricing): { input: number; full: number } {
  const inputCost = (input - cached) * prices.cacheWrite + cached * prices.cachedInput;
  return { input: inputCost, full: inputCost + output * prices.output };
}

/** Seeds of the session (`COST_SEEDS`: how many, from 1; 20 by default). */
const SESSION_SEEDS = Array.from({ length: Number(process.env.COST_SEEDS ?? 20) }, (_, index) => index + 1);
/** Seeds of the chat with its pauses (`COST_CHAT_SEEDS`: how many, from 1; 20 by default): each seed another chat and other pauses. */
const CHAT_SEEDS = Array.from({ length: Number(process.env.COST_CHAT_SEEDS ?? 20) }, (_, index) => index + 1);
/**
 * The windows of the chat with its pauses (`COST_CHAT_WINDOWS`: a comma-separated list): the
 * session's, 128,000, where a chat of 150 turns compacts about once, and 32,000, where it compacts
 * every few dozen turns, often across a break longer than the cache's lifetime.
 */
const CHAT_WINDOWS: readonly number[] = (process.env.COST_CHAT_WINDOWS ?? '128000,32000').split(',').map(Number);
/** Seeds of the continuity scoreboard (`COST_CONTINUITY_SEEDS`: how many, from 1; 3 by default). */
const CONTINUITY_SEEDS = Array.from({ length: Number(process.env.COST_CONTINUITY_SEEDS ?? 3) }, (_, index) => index + 1);

/**
 * A variant: this middleware at a `compactAt`, or "summarize all but 20" at a share of the
 * ceiling. `recall`: the recall tool offered (docs/design.md, "Recall"), on the continuity
 * scoreboard only (`continuityOnly`: neither the session nor the chat asks for facts it lacks).
 * `chatOnly`: a control of the chat's pauses, not run on the session (whose clock never moves: no
 * pause, no pace). `cacheKept`: the provider's prompt cache never expires (the pauses not billed).
 */
interface Variant {
  name: string;
  compactAt?: 'ceiling' | 'cost' | number;
  profile?: Told;
  handWritten?: number;
  recall?: boolean;
  chatOnly?: boolean;
  continuityOnly?: boolean;
  cacheKept?: boolean;
}

export const VARIANTS: Variant[] = [
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
  // the chat's controls of the pauses: told the cache never expires, the cold-cache rule never fires
  { name: "compactAt: 'cost' (Anthropic prices), told the cache never expires (no cold-cache)", compactAt: 'cost', profile: 'cache never expires', chatOnly: true },
  // the provider's cache never expires: the same policy, the pauses not billed (must cost less)
  { name: "compactAt: 'cost' (Anthropic prices), the provider's cache never expiring (must cost less)", compactAt: 'cost', profile: 'Anthropic', chatOnly: true, cacheKept: true },
  // the default's fidelity condition: with the recall tool offered, against 'ceiling' without it
  { name: "compactAt: 'cost' (Anthropic prices), with the recall tool", compactAt: 'cost', profile: 'Anthropic', recall: true, continuityOnly: true },
];
/** Indexes of the variants the checks below read. */
const [CEILING, COST_OPENAI, COST_ANTHROPIC, CONTROL, FREE_CACHE] = [0, 1, 2, 5, 6];
/** The variants of the chat's controls of the pauses. */
const NEVER_TOLD = VARIANTS.findIndex((variant) => variant.profile === 'cache never expires');
const CACHE_KEPT = VARIANTS.findIndex((variant) => variant.cacheKept === true);
/** The variants the session runs (the chat runs them all). */
const SESSION_VARIANTS = VARIANTS.flatMap((variant, index) => (variant.chatOnly === true || variant.continuityOnly === true ? [] : [index]));
/** The variants the chat runs. */
const CHAT_VARIANTS = VARIANTS.flatMap((variant, index) => (variant.continuityOnly === true ? [] : [index]));

/** Windows of the continuity scoreboard (`COST_WINDOWS`: a comma-separated list; every window of continuity.ts by default). */
const CONTINUITY_WINDOWS: readonly number[] = process.env.COST_WINDOWS === undefined ? WINDOWS : process.env.COST_WINDOWS.split(',').map(Number);

/** The variants the continuity scoreboard runs. */
const WITH_RECALL = VARIANTS.findIndex((variant) => variant.recall === true);
const CONTINUITY_VARIANTS = [CEILING, COST_ANTHROPIC, 3, 4, WITH_RECALL];

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

/** `strategy`, with the run it starts kept, to read what it counted (its rules) once the run is over. */
function watched(strategy: Strategy): { strategy: Strategy; run: () => StrategyRun | undefined } {
  let started: StrategyRun | undefined;
  return {
    strategy: { ...strategy, start: async (window, run) => (started = await strategy.start(window, run)) },
    run: () => started,
  };
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

export interface ChatPiece {
  seed: number;
  variant: number;
  window: number;
  /** The chat's user turns (the chat benchmark's 150 by default; a test runs fewer). */
  turns?: number;
  /** The person's pauses before each turn (`pauses(seed, turns)` of chat.ts by default). */
  pauses?: number[];
}

export interface ChatResult {
  /** Turns sent (all of them, unless the chat broke). */
  turns: number;
  error?: string;
  usage: Usage;
  compactions: number;
  summaryRequests: number;
  /** Compactions by the rule that decided them (this middleware's; none for the hand-written strategy). */
  rules: Record<string, number>;
  /** Turns whose prompt (1,024 tokens or more) read nothing from the provider's cache. */
  cold: number;
  /** Questions answered with the value the user gave last, of those asked. */
  right: number;
  questions: number;
}

/**
 * One variant's chat at one seed (a child of pool.ts runs it): the chat benchmark's 150 turns at a
 * person's pace (chat.ts `pauses`: 20 to 120 s, and 6 % breaks of 6 to 30 minutes) and a real
 * model's speed, on the run's virtual clock; the provider's prompt cache drops a prefix idle 5
 * minutes on that clock (unless the variant keeps it), so a turn after a break reads its prompt
 * uncached and the bill shows it.
 */
export async function runChatPiece({ seed, variant, window, turns, pauses: pace }: ChatPiece): Promise<ChatResult> {
  const { strategy, run } = watched(strategyOf(VARIANTS[variant]!));
  const chat = await runChat(strategy, {
    window,
    seed,
    speed: SPEED,
    ...(turns === undefined ? {} : { turns }),
    ...(pace === undefined ? {} : { pauses: pace }),
    cacheIdleMs: VARIANTS[variant]!.cacheKept === true ? false : CACHE_IDLE_MS,
  });
  return {
    turns: chat.turns,
    ...(chat.error === undefined ? {} : { error: chat.error }),
    usage: chat.usage,
    compactions: chat.compactions ?? 0,
    summaryRequests: chat.summaryRequests,
    rules: run()?.rules?.() ?? {},
    cold: chat.cold,
    right: chat.recall.right,
    questions: chat.recall.questions,
  };
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
  /** The step cap and the fewest steps of the run (an unfinished run counts the one less the other). */
  cap: number;
  fewest: number;
  summaryRequests: number;
  violations: number;
  /** Calls of the recall tool (0 for a variant that does not offer it). */
  lookups: number;
}

/** One variant's continuity run (a child of pool.ts runs it). */
export async function runContinuityPiece({ window, seed, variant, mode }: ContinuityPiece): Promise<ContinuityResult> {
  const run = await runContinuity(strategyOf(VARIANTS[variant]!), mode, { window, seed, ...(VARIANTS[variant]!.recall === true ? { recall: 'tool' as const } : {}) });
  return { finished: run.finished, overShortest: run.overShortest, cap: run.cap, fewest: run.fewest, summaryRequests: run.summaryRequests, violations: run.violations, lookups: run.lookups };
}

/** A piece of the benchmark, of any of its three parts: the pool runs them all in one queue. */
type Piece = ({ kind: 'session' } & SessionPiece) | ({ kind: 'chat' } & ChatPiece) | ({ kind: 'continuity' } & ContinuityPiece);
type PieceResult = SessionRun | ChatResult | ContinuityResult;

/** One piece, whichever its part (a child of pool.ts runs it). */
export async function runCostPiece(piece: Piece): Promise<PieceResult> {
  if (piece.kind === 'session') return runSessionPiece(piece);
  if (piece.kind === 'chat') return runChatPiece(piece);
  return runContinuityPiece(piece);
}

const ratio = (value: number, of: number) => `${(value / of).toFixed(2)}x`;
/** Summary requests a compaction, as the tables print it ('-' where nothing compacted). */
const perCompaction = (requests: number, compactions: number) => (compactions === 0 ? '-' : (requests / compactions).toFixed(2));
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const PROFILE_NAMES = ['OpenAI', 'Anthropic'] as const;
const COST_HEADER = PROFILE_NAMES.flatMap((profile) => [`${profile} input cost`, 'x ceiling', `${profile} full cost`, 'x ceiling']);

/** A set of runs' cost under a profile, summed. */
function totalCost(runs: readonly { usage: Usage }[], profile: Profile): { input: number; full: number } {
  const costs = runs.map((each) => profileCost(each.usage, PROFILES[profile]));
  return { input: sum(costs.map((cost) => cost.input)), full: sum(costs.map((cost) => cost.full)) };
}

/** The cost cells of a row: each profile's input and full cost, and their ratios to `ceiling`'s. */
function costCellsOf(runs: readonly { usage: Usage }[], ceilingRuns: readonly { usage: Usage }[]): string[] {
  return PROFILE_NAMES.flatMap((profile) => {
    const cost = totalCost(runs, profile);
    const base = totalCost(ceilingRuns, profile);
    return [tokens(cost.input), ratio(cost.input, base.input), tokens(cost.full), ratio(cost.full, base.full)];
  });
}

/** The pieces in the order the pool takes them: the longest first, so that no child is left with a long one at the end. */
export function pieces(): Piece[] {
  const continuity = CONTINUITY_WINDOWS.flatMap((window) => CONTINUITY_SEEDS.flatMap((seed) => CONTINUITY_VARIANTS.flatMap((variant) => MODES.map((mode) => ({ kind: 'continuity' as const, window, seed, variant, mode })))));
  const session = SESSION_SEEDS.flatMap((seed) => SESSION_VARIANTS.map((variant) => ({ kind: 'session' as const, seed, variant })));
  const chat = CHAT_WINDOWS.flatMap((window) => CHAT_SEEDS.flatMap((seed) => CHAT_VARIANTS.map((variant) => ({ kind: 'chat' as const, seed, variant, window }))));
  // measured (BENCH_POOL_TIMES=1): a session about 6 s of CPU (10 held near the ceiling), a continuity run about 3, a chat about 2
  return [...session, ...continuity, ...chat];
}

export async function run(): Promise<void> {
  const all = pieces();
  const results = await inChildren<Piece, PieceResult>(import.meta.url, 'runCostPiece', all);
  const of = <K extends Piece['kind'], R>(kind: K) => all.flatMap((piece, index) => (piece.kind === kind ? [{ piece: piece as Extract<Piece, { kind: K }>, result: results[index] as R }] : []));
  printSession(of<'session', SessionRun>('session'));
  const chats = of<'chat', ChatResult>('chat');
  for (const window of CHAT_WINDOWS) printChat(window, chats.filter(({ piece }) => piece.window === window));
  printContinuity(of<'continuity', ContinuityResult>('continuity'));
}

function printSession(runs: { piece: SessionPiece; result: SessionRun }[]): void {
  const byVariant = (variant: number) => runs.filter((each) => each.piece.variant === variant).map((each) => each.result);
  const ceilingCost = (profile: Profile) => totalCost(byVariant(CEILING), profile);

  const ran = SESSION_SEEDS.length === 20 ? '' : ` (of the 20 the benchmark runs by default: COST_SEEDS=${SESSION_SEEDS.length})`;
  console.log(`\nThe 500-step session of the session benchmark at ${SESSION_SEEDS.length} seeds (1 to ${SESSION_SEEDS.length})${ran}, window 128,000 (ceiling ${tokens(ceiling(128_000, undefined))}), summed over the seeds.`);
  console.log('Costs in tokens at the input price: input cost = uncached input x the cache-write price + cached input x the cached price; full cost = input cost + output x the output price. OpenAI: cached 0.1, no write premium, output 8; Anthropic: cached 0.1, write 1.25, output 5. Summary requests included.');
  printTable(
    ['variant', 'unfinished', 'compactions', 'summary req', 'req / compaction', ...COST_HEADER],
    SESSION_VARIANTS.map((index) => {
      const pieceRuns = byVariant(index);
      const compactions = sum(pieceRuns.map((piece) => piece.compactions));
      const requests = sum(pieceRuns.map((piece) => piece.summaryRequests));
      return [
        VARIANTS[index]!.name,
        String(pieceRuns.filter((piece) => piece.steps !== 500 || piece.errors > 0).length),
        String(compactions),
        String(requests),
        perCompaction(requests, compactions),
        ...costCellsOf(pieceRuns, byVariant(CEILING)),
      ];
    }),
  );
  for (const profile of PROFILE_NAMES) {
    const cost = totalCost(byVariant(profile === 'OpenAI' ? COST_OPENAI : COST_ANTHROPIC), profile);
    console.log(
      `Under ${profile} prices, compactAt 'cost' costs ${ratio(cost.input, ceilingCost(profile).input)} of compactAt 'ceiling' in input cost (target: at most 0.50x) and ${ratio(cost.full, ceilingCost(profile).full)} in full cost (target: at most 0.55x).`,
    );
  }
  const control = totalCost(byVariant(CONTROL), 'OpenAI').input === ceilingCost('OpenAI').input;
  const worse = PROFILE_NAMES.every((profile) => {
    const told = totalCost(byVariant(FREE_CACHE), profile);
    const right = totalCost(byVariant(profile === 'OpenAI' ? COST_OPENAI : COST_ANTHROPIC), profile);
    return told.input > right.input && told.full > right.full;
  });
  console.log(`The instrument's own test: compactAt 1 costs what 'ceiling' costs, to the token: ${control ? 'yes' : 'NO'}; 'cost' told the cache is free costs more than 'cost' under both profiles, in input and in full cost: ${worse ? 'yes' : 'NO'}.`);
}

function printChat(window: number, runs: { piece: ChatPiece; result: ChatResult }[]): void {
  if (runs.length === 0) return;
  const byVariant = (variant: number) => runs.filter((each) => each.piece.variant === variant).map((each) => each.result);
  const breaks = sum(CHAT_SEEDS.map((seed) => pauses(seed, CHAT_TURNS).filter((ms) => ms > CACHE_IDLE_MS).length));
  const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;
  console.log(
    `\nThe chat of the chat benchmark with its pauses: ${CHAT_TURNS} user turns, a person's pace (${PACE.pauseMs[0] / 1_000} to ${PACE.pauseMs[1] / 1_000} s before a turn; ${Math.round(PACE.breakShare * 100)} % of them breaks of ${minutes(PACE.breakMs[0])} to ${minutes(PACE.breakMs[1])}: ${breaks} breaks longer than the cache's ${minutes(CACHE_IDLE_MS)} over the seeds), seeds 1 to ${CHAT_SEEDS.length}${CHAT_SEEDS.length === 20 ? '' : ` (COST_CHAT_SEEDS=${CHAT_SEEDS.length}; 20 by default)`}, window ${tokens(window)} (ceiling ${tokens(ceiling(window, undefined))}), a real model's speed, summed over the seeds.`,
  );
  console.log(
    "On the run's virtual clock the provider's prompt cache drops a prefix idle 5 minutes, so the turn after a break reads its prompt uncached and pays it at the cache-write price; the middleware sees the same clock (the cold-cache rule sends a ready checkpoint then). \"cold-cache\": compactions that rule decided; \"cold turns\": turns of 1,024 tokens or more that read nothing from the cache.",
  );
  printTable(
    ['variant', 'unfinished', 'recall', 'compactions', 'cold-cache', 'summary req', 'req / compaction', 'cold turns', ...COST_HEADER],
    CHAT_VARIANTS.map((index) => {
      const variant = VARIANTS[index]!;
      const chats = byVariant(index);
      const compactions = sum(chats.map((chat) => chat.compactions));
      const requests = sum(chats.map((chat) => chat.summaryRequests));
      const questions = sum(chats.map((chat) => chat.questions));
      return [
        variant.name,
        String(chats.filter((chat) => chat.error !== undefined || chat.turns !== CHAT_TURNS).length),
        questions === 0 ? '-' : `${Math.round((100 * sum(chats.map((chat) => chat.right))) / questions)} %`,
        String(compactions),
        variant.handWritten === undefined ? String(sum(chats.map((chat) => chat.rules['cold-cache'] ?? 0))) : '-',
        String(requests),
        perCompaction(requests, compactions),
        String(sum(chats.map((chat) => chat.cold))),
        ...costCellsOf(chats, byVariant(CEILING)),
      ];
    }),
  );
  for (const profile of PROFILE_NAMES) {
    const chats = byVariant(profile === 'OpenAI' ? COST_OPENAI : COST_ANTHROPIC);
    const cost = totalCost(chats, profile);
    const base = totalCost(byVariant(CEILING), profile);
    const compactions = sum(chats.map((chat) => chat.compactions));
    const requests = sum(chats.map((chat) => chat.summaryRequests));
    console.log(
      `With the pauses at ${tokens(window)}, under ${profile} prices, compactAt 'cost' costs ${ratio(cost.input, base.input)} of compactAt 'ceiling' in input cost and ${ratio(cost.full, base.full)} in full cost, and makes ${requests} summary requests for ${compactions} compactions (${perCompaction(requests, compactions)} a compaction; aim: at most 1.2).`,
    );
  }
  const truth = totalCost(byVariant(COST_ANTHROPIC), 'Anthropic');
  const kept = totalCost(byVariant(CACHE_KEPT), 'Anthropic');
  const never = totalCost(byVariant(NEVER_TOLD), 'Anthropic');
  const coldRule = (variant: number) => sum(byVariant(variant).map((chat) => chat.rules['cold-cache'] ?? 0));
  console.log(
    `The pauses' own test at ${tokens(window)}: with the provider's cache never expiring, 'cost' (Anthropic prices) costs ${tokens(kept.input)} in Anthropic input cost against ${tokens(truth.input)} with it expiring: less (the breaks are billed): ${kept.input < truth.input ? 'yes' : 'NO'}; told the cache never expires, 'cost' made ${coldRule(NEVER_TOLD)} cold-cache compactions (must be 0: ${coldRule(NEVER_TOLD) === 0 ? 'yes' : 'NO'}) against ${coldRule(COST_ANTHROPIC)} told the truth (the rule exercised: ${coldRule(COST_ANTHROPIC) > 0 ? 'yes' : 'no, the control says nothing here'}), and cost ${tokens(never.input)} in input cost, ${tokens(never.full)} in full cost, against ${tokens(truth.input)} and ${tokens(truth.full)} (what the cold-cache rule saved: ${tokens(never.input - truth.input)} and ${tokens(never.full - truth.full)}).`,
  );
}

function printContinuity(results: { piece: ContinuityPiece; result: ContinuityResult }[]): void {
  console.log(
    `\nThe continuity scoreboard (40 failing tests, the failure block early, seeds 1 to ${CONTINUITY_SEEDS.length}, windows ${CONTINUITY_WINDOWS.map(tokens).join(', ')}): steps over the shortest run summed over the seeds, an unfinished run (stopped at the step cap) counting its cap less the shortest run (unfinished runs, then summary requests, in brackets). Without the recall tool, but for the row that says it has it (the scripted agent asks it for the signing key and the user's rules when the start of its conversation is out of sight; a lookup is a step).`,
  );
  for (const mode of MODES) {
    printTable(
      [`${mode}`, ...CONTINUITY_WINDOWS.map((window) => `window ${tokens(window)}`)],
      CONTINUITY_VARIANTS.map((variant) => [
        VARIANTS[variant]!.name,
        ...CONTINUITY_WINDOWS.map((window) => {
          const cell = results.filter(({ piece }) => piece.window === window && piece.variant === variant && piece.mode === mode).map(({ result }) => result);
          const unfinished = cell.filter((result) => !result.finished).length;
          return `${wastedSteps(cell)} (${unfinished}, ${sum(cell.map((result) => result.summaryRequests))})`;
        }),
      ]),
    );
  }
  // The default's fidelity condition: with the recall tool, at most 1.25x the steps 'ceiling' wastes without it, at every window.
  const wasted = (variant: number, mode: string, window: number) => wastedSteps(results.filter(({ piece }) => piece.window === window && piece.variant === variant && piece.mode === mode).map(({ result }) => result));
  for (const mode of MODES.filter((each) => each !== 'honest')) {
    const cells = CONTINUITY_WINDOWS.map((window) => ({ window, cost: wasted(WITH_RECALL, mode, window), ceiling: wasted(CEILING, mode, window) }));
    const held = cells.filter(({ cost, ceiling }) => cost <= 1.25 * ceiling).length;
    console.log(
      `${mode}: ${VARIANTS[WITH_RECALL]!.name} wastes ${cells.map(({ window, cost, ceiling }) => `${ceiling === 0 ? (cost === 0 ? '1.00x' : `${cost} against 0`) : `${(cost / ceiling).toFixed(2)}x`} at ${tokens(window)}`).join(', ')} the steps compactAt 'ceiling' wastes without it (target: at most 1.25x at every window): held at ${held} of ${cells.length} windows.`,
    );
  }
  const honest = CONTINUITY_WINDOWS.map((window) => wasted(WITH_RECALL, 'honest', window));
  console.log(`honest: ${VARIANTS[WITH_RECALL]!.name} wastes ${honest.join(', ')} steps (target: 0 at every window).`);
}

