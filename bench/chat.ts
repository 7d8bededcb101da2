/**
 * Chat: the first use the package is for. A person chats with an assistant for 120 turns: states
 * facts (and corrects some), pastes documents whose fields they ask about later, pastes logs with
 * nothing to keep, and asks about facts given earlier (test/support/provider-server/chat-session.ts).
 * Each turn goes through `streamText` with the real `@ai-sdk/openai` client, as a chat route does,
 * to the local provider server playing the chat assistant (assistant.ts): it answers only from its
 * prompt's text and says plainly when it no longer has a fact. Recall is the share of questions
 * answered with the value the user gave last (`judgeRecall`: right, stale, forgotten, wrong; a
 * question after the chat broke is unanswered).
 *
 * At a person's pace: 20 to 120 s between turns, and now and then a break of 6 to 30 minutes
 * (`pauses`), on the run's virtual clock (bench/clock.ts), never slept: the middleware reads its
 * time from it, the provider (in this process) paces its replies on it at a real model's speed
 * (5,000 uncached prompt tokens a second, cached ones free, 60 output tokens a second), and its
 * prompt cache, which drops a prefix after 5 minutes idle, expires on it: the breaks make it
 * expire. A summary written in the background goes on during a pause, in simulated time.
 *
 * Every strategy compacts at the same ceiling, this middleware's for the window (the ceiling is a
 * parameter of the comparison, not a difference between strategies). The runs go in two child
 * processes (pool.ts): they only compute, since no time is slept.
 *
 *   npm run bench -- chat
 *   BENCH_BASELINE_REF=<ref> npm run bench -- chat        # another build to compare with
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type ModelMessage, streamText, wrapLanguageModel } from 'ai';
import { ceiling } from '../src/sizing/ceiling';
import {
  assistantAgent,
  CACHE_IDLE_MS,
  chatSession,
  type ChatSummaryMode,
  type ChatTurn,
  judgeRecall,
  type RecallVerdict,
  type RecordedRequest,
  type Speed,
} from '../test/support/provider-server';
import { int, rng } from '../test/support/provider-server/random';
import { baselineAt, baselineFromEnv, type Baseline } from './baseline';
import { virtualClock } from './clock';
import { type Usage, COST_COLUMNS, COST_NOTE, costCells, costOf, usageOf } from './cost';
import { inChildren } from './pool';
import { localProvider, SPEED } from './provider';
import { type Strategy, compacting, noMiddleware, printTable, quantile, slidingWindow, summarizingAtCeiling, tokens } from './strategies';

/**
 * The windows: 16,000 (ceiling 13,600) and 48,000 (ceiling 32,000). The chat is about 60,000
 * tokens of prompt in all, so it compacts several times in both (about eight and three), and no
 * middleware overflows in both; the two ceilings are far apart. (32,000 would add little: its
 * ceiling, 16,000, is near 16,000's.)
 */
export const WINDOWS = [16_000, 48_000] as const;
/** A window no run fills: the control in which nothing is lost (its recall must be 100 %). */
export const LARGE_WINDOW = 1_000_000;
export const SEED = 1;
/** User turns of the chat. */
export const TURNS = 150;
/** Characters of a pasted document or log: larger than the session's default, so that a 48,000 window compacts several times. */
export const PASTE_CHARS: [number, number] = [2_000, 8_000];
/** Messages the hand-written strategies keep verbatim: ten turns. */
export const KEEP = 20;
/** A real model's speed (provider.ts). */
export { SPEED } from './provider';

/** A person's pace: the pause before each turn, 20 to 120 s; now and then (6 % of turns) a break of 6 to 30 minutes. */
export const PACE = { pauseMs: [20_000, 120_000], breakShare: 0.06, breakMs: [6 * 60_000, 30 * 60_000] } as const;

/**
 * The pause before each user turn, in milliseconds (0 before the first), as whole seconds: the
 * same for the same seed and count, whatever the strategy.
 */
export function pauses(seed: number, turns: number): number[] {
  if (!Number.isInteger(turns) || turns < 0) throw new RangeError(`pauses: turns must be a non-negative whole number, got ${turns}`);
  return Array.from({ length: turns }, (_, turn) => {
    if (turn === 0) return 0;
    const random = rng('chat pace', seed, turn);
    const [min, max] = random() < PACE.breakShare ? PACE.breakMs : PACE.pauseMs;
    return int(random, min / 1_000, max / 1_000) * 1_000;
  });
}

/** The questions' verdicts, counted; `unanswered`: questions not asked because the chat broke first. */
export interface RecallTally {
  questions: number;
  right: number;
  stale: number;
  forgotten: number;
  wrong: number;
  unanswered: number;
}

/** Counts verdicts, one per question (`undefined`: not asked). */
export function tallyRecall(verdicts: readonly (RecallVerdict | undefined)[]): RecallTally {
  const tally: RecallTally = { questions: verdicts.length, right: 0, stale: 0, forgotten: 0, wrong: 0, unanswered: 0 };
  for (const verdict of verdicts) tally[verdict ?? 'unanswered']++;
  return tally;
}

/** The share of questions answered right (0 for none asked). */
export const recallOf = (tally: RecallTally) => (tally.questions === 0 ? 0 : tally.right / tally.questions);

/** A span of work, in milliseconds of the run's clock. */
export interface Span {
  start: number;
  end: number;
}

/** Whether a step waited for a summary: a summary request ended while the step was in `transformParams`. */
export function waitedForSummary(step: Span, summaries: readonly Span[]): boolean {
  return summaries.some((summary) => summary.end > step.start && summary.end <= step.end);
}

/** Of the turns, those whose request found nothing of its prompt in the provider's cache though it was long enough to be cached (1,024 tokens). */
export function coldRequests(requests: readonly Pick<RecordedRequest, 'rejected' | 'isSummaryRequest' | 'promptTokens' | 'cachedTokens'>[]): number {
  return requests.filter((request) => !request.rejected && !request.isSummaryRequest && request.promptTokens >= 1_024 && (request.cachedTokens ?? 0) === 0).length;
}

export interface ChatOptions {
  window: number;
  /** @default SEED */
  seed?: number;
  /** @default TURNS */
  turns?: number;
  /** @default PASTE_CHARS */
  pasteChars?: [number, number];
  /** How the assistant writes summaries. @default 'honest' */
  summaries?: ChatSummaryMode;
  /** The provider's speed. None by default: replies come at once. */
  speed?: Speed;
  /** The person's pauses (`pauses(seed, turns)` by default), slept on the run's virtual clock. */
  pauses?: number[];
  /** The prompt cache's expiry: a prefix idle this long is gone. @default CACHE_IDLE_MS; `false`: never */
  cacheIdleMs?: number | false;
}

/** One chat through one strategy. */
export interface ChatRun {
  strategy: string;
  summaries: ChatSummaryMode;
  /** False for a strategy that never asks for a summary (its run is the same in every mode). */
  summarizes: boolean;
  window: number;
  seed: number;
  /** User turns sent (all of them, unless the chat broke). */
  turns: number;
  recall: RecallTally;
  /** The first error that broke the chat (the run stops there), its first line. */
  error?: string;
  /** Requests the provider rejected as over the window. */
  overflows: number;
  /** Compactions (trims, summaries) the strategy reports; undefined for none. */
  compactions: number | undefined;
  /** Time in `transformParams` of each step that compacted, in milliseconds. */
  compactingMs: number[];
  /** Of those steps, how many waited for a summary (one ended while the step was in `transformParams`). */
  waited: number;
  summaryRequests: number;
  /** Every answered request, summary requests included. */
  usage: Usage;
  /** Turns whose request read nothing from the cache though long enough to (after a break, or a new prefix). */
  cold: number;
  /** The prompt the provider counted on each step that compacted. */
  promptsAfter: number[];
  /** The largest prompt of a step (not a summary request). */
  maxPrompt: number;
  /** How long the chat took on the run's virtual clock: the pauses, the provider's pace. */
  simulatedMs: number;
}

const SYSTEM = 'You are a helpful assistant. Answer briefly, from what the user told you in this conversation.';

/** `model` with its `doGenerate` calls (the summary requests: the chat itself streams) timed on `now`. */
function timingSummaries(model: LanguageModelV3, now: () => number): { model: LanguageModelV3; spans: Span[]; inFlight: Set<Promise<unknown>> } {
  const spans: Span[] = [];
  const inFlight = new Set<Promise<unknown>>();
  return {
    spans,
    inFlight,
    model: {
      specificationVersion: model.specificationVersion,
      provider: model.provider,
      modelId: model.modelId,
      supportedUrls: model.supportedUrls,
      doGenerate: (options) => {
        const start = now();
        const call = Promise.resolve(model.doGenerate(options)).finally(() => {
          spans.push({ start, end: now() });
          inFlight.delete(call);
        });
        inFlight.add(call);
        return call;
      },
      doStream: (options) => model.doStream(options),
    },
  };
}

/** Runs the chat through `strategy` (see the top of this file). */
export async function runChat(strategy: Strategy, options: ChatOptions): Promise<ChatRun> {
  const { window } = options;
  const seed = options.seed ?? SEED;
  const summaries = options.summaries ?? 'honest';
  const session = chatSession({ seed, turns: options.turns ?? TURNS, pasteChars: options.pasteChars ?? PASTE_CHARS });
  const pace = options.pauses ?? pauses(seed, session.length);
  if (pace.length !== session.length) throw new RangeError(`runChat: ${pace.length} pauses for ${session.length} turns`);
  const idleMs = options.cacheIdleMs ?? CACHE_IDLE_MS;

  // the provider in this process, paced on the run's virtual clock, which the middleware reads too
  const clock = virtualClock();
  const run = await strategy.start(window, { clock });
  const server = localProvider({
    contextWindow: window,
    seed,
    agent: assistantAgent({ summaries }),
    keepBodies: 0,
    clock,
    ...(options.speed === undefined ? {} : { speed: options.speed }),
    ...(idleMs === false ? {} : { promptCacheExpiry: { idleMs } }),
  });
  const base = timingSummaries(server.openai.chat('local-assistant'), clock.now);

  // each step's time in transformParams, and whether it compacted (the strategy's count moved)
  const steps: Array<Span & { compacted: boolean; turn: number }> = [];
  let turn = 0;
  const middleware = run.middleware.map((each) =>
    each.transformParams === undefined
      ? each
      : {
          ...each,
          transformParams: async (call: Parameters<NonNullable<typeof each.transformParams>>[0]) => {
            const start = clock.now();
            const before = run.compactions();
            try {
              return await each.transformParams!(call);
            } finally {
              steps.push({ start, end: clock.now(), compacted: run.compactions() !== before, turn });
            }
          },
        },
  );
  const model = middleware.length === 0 ? base.model : wrapLanguageModel({ model: base.model, middleware });

  const messages: ModelMessage[] = [];
  const verdicts: (RecallVerdict | undefined)[] = session.filter((each) => each.kind === 'question').map(() => undefined);
  let asked = 0;
  let sent = 0;
  let error: string | undefined;
  const stepRequest: Array<RecordedRequest | undefined> = [];
  try {
    for (const [index, each] of session.entries()) {
      turn = index;
      // the person reads the reply and types: a summary being written meanwhile goes on
      await clock.sleep(pace[index]!);
      messages.push({ role: 'user', content: each.text });
      sent++;
      const mark = server.requests.length;
      const text = await reply(model, messages);
      stepRequest[index] = server.requests.slice(mark).filter((request) => !request.isSummaryRequest && !request.rejected).at(-1);
      messages.push({ role: 'assistant', content: text });
      if (each.kind === 'question') verdicts[asked++] = judgeRecall(text, each.question);
    }
  } catch (caught) {
    error = (caught instanceof Error ? caught.message : String(caught)).split('\n')[0]!.slice(0, 160);
  } finally {
    // a summary still being written when the chat ends is finished (and billed), not cut off
    await Promise.allSettled([run.preparing?.().settled, ...base.inFlight]);
  }
  const simulatedMs = clock.elapsed();
  const compacting = steps.filter((step) => step.compacted);
  const requests = server.requests;
  const answered = requests.filter((request) => !request.rejected && !request.isSummaryRequest);
  return {
    strategy: strategy.name,
    summaries,
    summarizes: strategy.summarizes !== false,
    window,
    seed,
    turns: sent,
    recall: tallyRecall(verdicts),
    ...(error === undefined ? {} : { error }),
    overflows: requests.filter((request) => request.error === 'context_length_exceeded').length,
    compactions: run.compactions(),
    compactingMs: compacting.map((step) => step.end - step.start),
    waited: compacting.filter((step) => waitedForSummary(step, base.spans)).length,
    summaryRequests: requests.filter((request) => request.isSummaryRequest).length,
    usage: usageOf(requests),
    cold: coldRequests(requests),
    promptsAfter: compacting.flatMap((step) => (stepRequest[step.turn] === undefined ? [] : [stepRequest[step.turn]!.promptTokens])),
    maxPrompt: Math.max(0, ...answered.map((request) => request.promptTokens)),
    simulatedMs,
  };
}

/** One turn through `streamText`, as a chat route sends it: the reply's text, or the error that broke it. */
async function reply(model: Parameters<typeof streamText>[0]['model'], messages: ModelMessage[]): Promise<string> {
  let failure: unknown;
  const result = streamText({
    model,
    system: SYSTEM,
    messages,
    maxRetries: 0,
    onError: ({ error }) => {
      failure ??= error;
    },
  });
  let text = '';
  try {
    text = await result.text;
  } catch (caught) {
    failure ??= caught;
  }
  if (failure !== undefined) throw failure;
  return text;
}

/** A strategy of the chat, the summary modes it runs in, and the provider's prompt cache expiry for it (`ChatOptions.cacheIdleMs`). */
export interface ChatEntry {
  strategy: Strategy;
  modes: ChatSummaryMode[];
  cacheIdleMs?: number | false;
}

/** The control of the cache expiry: this middleware's default against a prompt cache that never expires. */
export const NEVER_EXPIRES = 'ai-compaction, cache never expires';

/**
 * The strategies, in table order, each compacting at this middleware's ceiling for the window, and
 * the summary modes each runs in. Add a variant of the middleware with `compacting(name, options)`
 * (this checkout) or `compacting(name, options, baseline.load)` (the baseline build).
 */
export function chatStrategies(baseline: Baseline = baselineFromEnv()): ChatEntry[] {
  return [
    // the default prepares the next checkpoint in the background from 80 % of the ceiling
    { strategy: compacting('ai-compaction', {}), modes: ['honest', 'amnesiac'] },
    // the same with a prompt cache that never expires: what the breaks cost (it must cost less)
    { strategy: compacting(NEVER_EXPIRES, {}), modes: ['honest'], cacheIdleMs: false },
    { strategy: compacting('ai-compaction, prepare: false', { prepare: false }), modes: ['honest'] },
    // the other build gets this checkout's ceiling as its buffer, whatever its own default is
    { strategy: compacting(baseline.label, (window) => ({ buffer: window - ceiling(window, undefined) }), baseline.load), modes: ['honest'] },
    { strategy: summarizingAtCeiling(KEEP), modes: ['honest', 'amnesiac'] },
    { strategy: slidingWindow(KEEP, `the first message and the last ${KEEP} (tokenizer)`), modes: ['honest'] },
    { strategy: noMiddleware, modes: ['honest'] },
  ];
}

/** One run of the sweep, for a child process: a strategy by its name, a mode, a window. */
export interface ChatPiece {
  strategy: string;
  summaries: ChatSummaryMode;
  window: number;
  /** The baseline as the parent resolved it (a git commit and its label; none for a tarball's, read from the environment). */
  baseline?: { commit: string; label: string };
}

/** A run in a child process. */
export async function runPiece(piece: ChatPiece): Promise<ChatRun> {
  const baseline = piece.baseline === undefined ? baselineFromEnv() : baselineAt(piece.baseline.commit, piece.baseline.label);
  const entry = chatStrategies(baseline).find((each) => each.strategy.name === piece.strategy);
  if (entry === undefined) throw new Error(`no chat strategy named ${piece.strategy}`);
  return runChat(entry.strategy, { window: piece.window, summaries: piece.summaries, speed: SPEED, ...(entry.cacheIdleMs === undefined ? {} : { cacheIdleMs: entry.cacheIdleMs }) });
}

const seconds = (ms: number | undefined) => (ms === undefined ? '-' : ms >= 10_000 ? `${(ms / 1_000).toFixed(1)} s` : ms >= 1_000 ? `${(ms / 1_000).toFixed(2)} s` : `${Math.round(ms)} ms`);
const share = (value: number) => `${Math.round(value * 100)} %`;
const modeOf = (run: ChatRun) => (run.summarizes ? run.summaries : '-');

/** A window's table: a row per strategy and mode. */
export function printChat(title: string, runs: readonly ChatRun[]): void {
  console.log(`\n${title}`);
  printTable(
    ['strategy', 'summaries', 'recall', 'right/stale/forgotten/wrong/unanswered', 'compactions', 'summary req', 'wait p50', 'wait max', 'waited', 'prompt after', 'max prompt', 'cold turns', ...COST_COLUMNS, 'cached'],
    runs.map((run) => {
      const { right, stale, forgotten, wrong, unanswered } = run.recall;
      return [
        run.strategy,
        modeOf(run),
        share(recallOf(run.recall)),
        [right, stale, forgotten, wrong, unanswered].join(' / '),
        run.compactions === undefined ? '-' : String(run.compactions),
        String(run.summaryRequests),
        seconds(quantile(run.compactingMs, 0.5)),
        seconds(quantile(run.compactingMs, 1)),
        `${run.waited}/${run.compactingMs.length}`,
        tokens(quantile(run.promptsAfter, 0.5)),
        tokens(run.maxPrompt),
        String(run.cold),
        ...costCells(run.usage),
        share(run.usage.input === 0 ? 0 : run.usage.cached / run.usage.input),
      ];
    }),
  );
}

/** "Clearly lower": the amnesiac run's recall at least this far (a share of the questions) under the honest run's. */
export const CLEARLY_LOWER = 0.2;

/** The benchmark's own test: the runs that must score worse do, and the control loses nothing. Prints it; returns what failed. */
export function printTarget(runs: readonly ChatRun[], control: ChatRun): string[] {
  const failed: string[] = [];
  const rows: string[][] = [];
  for (const window of new Set(runs.map((run) => run.window))) {
    const of = (strategy: string, summaries: ChatSummaryMode) => runs.find((run) => run.window === window && run.strategy === strategy && run.summaries === summaries);
    for (const strategy of new Set(runs.filter((run) => run.summaries === 'amnesiac').map((run) => run.strategy))) {
      const honest = of(strategy, 'honest');
      const amnesiac = of(strategy, 'amnesiac')!;
      if (honest === undefined) continue;
      const met = recallOf(amnesiac.recall) <= recallOf(honest.recall) - CLEARLY_LOWER;
      if (!met) failed.push(`${strategy}, window ${tokens(window)}: amnesiac recall ${share(recallOf(amnesiac.recall))} is not clearly under honest ${share(recallOf(honest.recall))}`);
      rows.push([`${strategy}, amnesiac`, tokens(window), share(recallOf(amnesiac.recall)), `honest ${share(recallOf(honest.recall))}`, met ? 'yes' : 'no']);
    }
    const expiring = of('ai-compaction', 'honest');
    const never = of(NEVER_EXPIRES, 'honest');
    if (expiring !== undefined && never !== undefined) {
      const [on, off] = [costOf(expiring.usage).input, costOf(never.usage).input];
      const met = off < on;
      if (!met) failed.push(`window ${tokens(window)}: the input cost with a cache that never expires (${tokens(off)}) is not under the one with the expiry (${tokens(on)}): the breaks do not empty the cache`);
      rows.push(['ai-compaction, the cache expiring', tokens(window), `input cost ${tokens(on)}`, `never expiring ${tokens(off)}`, met ? 'yes' : 'no']);
    }
    const bare = of(noMiddleware.name, 'honest');
    if (bare !== undefined) {
      const met = bare.overflows > 0 && recallOf(bare.recall) < recallOf(control.recall);
      if (!met) failed.push(`no middleware, window ${tokens(window)}: it did not overflow, or its recall ${share(recallOf(bare.recall))} is not under the control's`);
      rows.push(['no middleware', tokens(window), share(recallOf(bare.recall)), bare.overflows > 0 ? `overflowed at turn ${bare.turns} of ${TURNS}` : 'did not overflow', met ? 'yes' : 'no']);
    }
  }
  const whole = recallOf(control.recall) === 1 && control.error === undefined;
  if (!whole) failed.push(`the control (no middleware, window ${tokens(LARGE_WINDOW)}) answered ${share(recallOf(control.recall))} right: the session or the judge is wrong`);
  rows.push(['no middleware (the control)', tokens(LARGE_WINDOW), share(recallOf(control.recall)), 'must be 100 %', whole ? 'yes' : 'no']);
  console.log(
    `\nThe benchmark's own test: what must score worse does ("clearly": an amnesiac summarizer's recall at least ${Math.round(CLEARLY_LOWER * 100)} points under the honest one's; the cache expiring costs more than a cache that never does; no middleware overflows and answers less than the control, which answers all)`,
  );
  printTable(['run', 'window', 'recall or cost', 'against', 'met'], rows);
  console.log(`Met everywhere: ${failed.length === 0 ? 'yes' : 'no'}.`);
  return failed;
}

function legend(session: ChatTurn[], pace: number[], control: ChatRun): void {
  const kinds = (kind: ChatTurn['kind']) => session.filter((turn) => turn.kind === kind).length;
  const breaks = pace.filter((ms) => ms >= CACHE_IDLE_MS).length;
  const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;
  console.log(
    [
      '',
      `The chat (chat-session.ts, seed ${SEED}): ${session.length} user turns: ${kinds('fact')} facts stated or corrected, ${kinds('document')} pasted documents with fields, ${kinds('paste')} pasted logs with nothing to keep, ${kinds('question')} questions about facts given at least two turns before, ${kinds('chat')} lines of small talk; pastes of ${PASTE_CHARS[0].toLocaleString('en-US')} to ${PASTE_CHARS[1].toLocaleString('en-US')} characters; ${tokens(control.maxPrompt)} tokens of prompt at the last turn without compaction.`,
      `A person's pace (seed ${SEED}): ${PACE.pauseMs[0] / 1_000} to ${PACE.pauseMs[1] / 1_000} s before each turn, and ${breaks} breaks of ${minutes(PACE.breakMs[0])} to ${minutes(PACE.breakMs[1])} instead; ${minutes(pace.reduce((sum, ms) => sum + ms, 0))} of pauses in all, on a virtual clock (never slept: the middleware reads its time from it, a summary written in the background goes on during a pause, and the provider's cache expires on it). The provider: ${SPEED.promptTokensPerSecond.toLocaleString('en-US')} uncached prompt tokens a second (cached ones free), ${SPEED.outputTokensPerSecond} output tokens a second, in simulated time; its prompt cache drops a prefix idle ${minutes(CACHE_IDLE_MS)}.`,
      '"recall": questions answered with the value the user gave last; "stale": with a value the user corrected since; "forgotten": the assistant said it no longer has it; "unanswered": not asked, the chat broke before (the run ends at the first error);',
      '"wait p50 / max": time in transformParams of the steps that compacted (a summary written then, or a checkpoint prepared ahead sent), in simulated time: computing takes none, so a step that waited for no summary waits 0 ms; "waited": of those steps, those during which a summary request ended (the step waited for it);',
      '"prompt after": the provider\'s count of the prompt of a compacting step (p50); "cold turns": turns whose prompt, 1,024 tokens or more, read nothing from the cache (after a break, after a compaction changed the prompt\'s opening, or before the chat had 1,024 tokens to cache).',
      `Cost at cache prices: ${COST_NOTE}; "cached": the share of input read from the cache. Every strategy compacts at this middleware's ceiling for the window (the hand-written ones count with gpt-tokenizer; the other build is given that ceiling as its buffer).`,
      'What it proves: whether a strategy still answers what the user said long before, after compactions, for an assistant that answers only from its prompt; what each costs at cache prices when a person\'s breaks empty the cache; how long a compacting turn waits.',
      'What it does not: how well a real model summarizes a chat (honest keeps every fact, amnesiac none: the two ends), nor answer quality beyond recalling a value (docs/benchmarking.md).',
    ].join('\n'),
  );
}

export async function run(): Promise<void> {
  const baseline = baselineFromEnv();
  const failed: string[] = [];
  // A baseline with this checkout's very src/ (on main, main itself) would repeat ai-compaction's rows.
  let withoutBaseline = baseline.sameAsCheckout === true;
  if (!withoutBaseline) {
    // built once here, so that the children find it made
    await baseline.load().catch((error: unknown) => {
      withoutBaseline = true;
      failed.push(`${baseline.label} did not run: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    });
  }
  const pinned = baseline.commit === undefined ? {} : { baseline: { commit: baseline.commit, label: baseline.label } };
  const pieces: ChatPiece[] = [];
  for (const window of WINDOWS) {
    for (const { strategy, modes } of chatStrategies(baseline)) {
      if (withoutBaseline && strategy.name === baseline.label) continue;
      for (const summaries of modes) pieces.push({ strategy: strategy.name, summaries, window, ...pinned });
    }
  }
  pieces.push({ strategy: noMiddleware.name, summaries: 'honest', window: LARGE_WINDOW, ...pinned });
  // two at a time: the runs only compute (their time is simulated)
  const runs = await inChildren<ChatPiece, ChatRun>(import.meta.url, 'runPiece', pieces);
  const control = runs.at(-1)!;
  for (const window of WINDOWS) {
    printChat(
      `Chat: ${TURNS} user turns, window ${tokens(window)} (ceiling ${tokens(ceiling(window, undefined))}), seed ${SEED}, at a person's pace and a real model's speed; local provider, gpt-tokenizer counts, a prompt cache that expires after 5 minutes idle`,
      runs.filter((each) => each.window === window),
    );
  }
  printChat(`The control: no middleware, window ${tokens(LARGE_WINDOW)} (nothing lost)`, [control]);
  legend(chatSession({ seed: SEED, turns: TURNS, pasteChars: PASTE_CHARS }), pauses(SEED, TURNS), control);
  if (baseline.sameAsCheckout === true) console.log(`\n${baseline.label} has this checkout's src/: it is left out (its rows would be ai-compaction's).`);
  failed.push(...printTarget(runs.slice(0, -1), control));
  for (const each of runs) if (each.error) console.log(`${each.strategy} (${modeOf(each)}, window ${tokens(each.window)}): ${each.error}`);
  console.log(`\nEach run simulated up to ${seconds(Math.max(...runs.map((each) => each.simulatedMs)))} of the chat's time (the pauses and the provider's pace, on a virtual clock).`);
  for (const line of failed) console.log(line);
  if (failed.length > 0) process.exitCode = 1;
}
