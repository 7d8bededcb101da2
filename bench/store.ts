/**
 * The store under faults (docs/stores.md), against a real redis-server, through ioredis and
 * node-redis at their defaults, two middleware instances sharing one Redis, side by side with the
 * build before the outage rule and the lease (`BENCH_STORE_BASELINE_REF`, default 2564617, through
 * baseline.ts; it takes this checkout's redisStore, whose interface it shares):
 *
 * - Redis down: killed after two turns of each conversation; three conversations go on through
 *   the two instances. The time each step is held (the model answers at once: a step's time is
 *   the middleware's, the store's waits included), with Redis up and down.
 * - Redis hung: the server stopped (SIGSTOP) for 20 s while three conversations go on, then
 *   continued (SIGCONT): the time of the steps that started while it was stopped.
 * - Concurrent: 20 conversations x 10 turns at once, each turn through the other instance, against
 *   the same through one instance: summary requests (the summarizer takes 400 ms).
 * - Sealed values: with `secret`, the stored values are scanned for the conversations' words, and a
 *   checkpoint moved from another conversation, one forged in the clear (digest and length
 *   rewritten) and one sealed with a foreign secret are put under a conversation's key: is any sent?
 *   Without `secret` (the control) the forged one is.
 *
 *   npm run bench -- store
 */
import { performance } from 'node:perf_hooks';
import { type LanguageModelMiddleware, wrapLanguageModel } from 'ai';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { compaction, isSummaryRequest } from '../src';
import { redisStore } from '../src/redis';
import type { CompactionState, SealedCompactionState } from '../src/state';
import { STATE_KEY, createSealer } from '../src/store/seal';
import { PLAIN_SUMMARY } from '../test/support/plain-model';
import { type RedisServer, startRedisServer } from '../test/support/redis-server';
import { fromGitRef } from './baseline';
import { type CompactionFactory, percent, printTable } from './strategies';

const BASELINE_REF = process.env.BENCH_STORE_BASELINE_REF || '2564617';
const SECRET = 'bench secret: thirty-two characters or more';
const FOREIGN = 'a foreign secret of thirty-two characters';
const WORDS = ['harbor', 'lantern', 'mosaic', 'juniper', 'quarry', 'saffron', 'tundra', 'velvet'];
const HELD_LIMIT_MS = 5_000;

interface Build {
  name: string;
  make: CompactionFactory;
}

type ClientName = 'ioredis' | 'node-redis';
const CLIENTS: ClientName[] = ['ioredis', 'node-redis'];

interface Client {
  client: Parameters<typeof redisStore>[0]['client'];
  /** Whether it has noticed the server is gone. */
  lost(): boolean;
  close(): void;
}

/** A client at its library's defaults. */
async function connect(name: ClientName, server: RedisServer): Promise<Client> {
  if (name === 'ioredis') {
    const client = new Redis({ host: '127.0.0.1', port: server.port });
    client.on('error', () => {});
    while (client.status !== 'ready') await sleep(10);
    return { client, lost: () => client.status !== 'ready', close: () => client.disconnect() };
  }
  const client = createClient({ url: server.url });
  client.on('error', () => {});
  await client.connect();
  return { client, lost: () => !client.isReady, close: () => client.destroy() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A model (spec v3) whose steps answer after `stepMs` and summary requests after `summaryMs`, counting both and recording every prompt's text. */
function benchModel(stepMs = 0, summaryMs = 0) {
  const counts = { steps: 0, summaries: 0 };
  const prompts: string[] = [];
  const model = {
    specificationVersion: 'v3' as const,
    provider: 'bench',
    modelId: 'store',
    supportedUrls: {},
    doStream: async () => {
      throw new Error('not used');
    },
    doGenerate: async (options: { prompt: unknown[] }) => {
      const summary = isSummaryRequest(options as never);
      prompts.push(JSON.stringify(options.prompt));
      if (summary) counts.summaries++;
      else counts.steps++;
      const wait = summary ? summaryMs : stepMs;
      if (wait > 0) await sleep(wait);
      const size = Math.round(JSON.stringify(options.prompt).length / 4);
      const usage = { inputTokens: { total: size, noCache: size, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 10, text: 10, reasoning: undefined } };
      const text = summary ? PLAIN_SUMMARY : 'ok';
      return { content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] };
    },
  };
  return { model, counts, prompts };
}

type Message = { role: 'user' | 'assistant'; content: Array<{ type: 'text'; text: string }> };

/** A turn of conversation `id`: about `tokens` tokens of its words. */
function words(id: number, turn: number, tokens: number): string {
  const out = [`conversation ${id} turn ${turn}:`];
  for (let index = 0; out.join(' ').length < tokens * 4; index++) out.push(WORDS[(id * 7 + turn * 3 + index) % WORDS.length]!);
  return out.join(' ');
}

/** Two instances of `build` sharing one Redis, each through its own client. */
async function instances(build: Build, clients: Client[], prefix: string, options: Record<string, unknown>): Promise<LanguageModelMiddleware[]> {
  return clients.map((each) => build.make({ ...options, store: redisStore({ client: each.client, prefix }) } as never));
}

const median = (values: number[]) => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};
const ms = (value: number | undefined) => (value === undefined ? '-' : value >= 1_000 ? `${(value / 1_000).toFixed(1)} s` : `${value.toFixed(1)} ms`);

interface FaultResult {
  build: string;
  client: ClientName;
  up: number[];
  fault: number[];
}

/** Steps of three conversations, through instance A and B in turn, timed. */
async function turns(middlewares: LanguageModelMiddleware[], conversations: Message[][], count: number, into: number[], shouldGo: () => boolean = () => true, pauseMs = 0, startAt?: { from: number; to: number; into: number[] }): Promise<void> {
  const { model } = benchModel();
  const wrapped = middlewares.map((middleware) => wrapLanguageModel({ model: model as never, middleware }));
  await Promise.all(
    conversations.map(async (conversation, id) => {
      for (let turn = 0; turn < count && shouldGo(); turn++) {
        conversation.push({ role: 'user', content: [{ type: 'text', text: words(id, conversation.length, 50) }] });
        const start = performance.now();
        await wrapped[(id + conversation.length) % wrapped.length]!.doGenerate({ prompt: structuredClone(conversation) } as never);
        const held = performance.now() - start;
        into.push(held);
        if (startAt !== undefined && start >= startAt.from && start < startAt.to) startAt.into.push(held);
        conversation.push({ role: 'assistant', content: [{ type: 'text', text: words(id, conversation.length, 50) }] });
        if (pauseMs > 0) await sleep(pauseMs);
      }
    }),
  );
}

/** Turns of each conversation with Redis down: fewer for the previous build, each of whose steps takes 10 to 30 s. */
const DOWN_TURNS = { previous: 3, current: 20 };

async function downRun(build: Build, name: ClientName, downTurns: number): Promise<FaultResult> {
  const server = await startRedisServer();
  const clients = [await connect(name, server), await connect(name, server)];
  try {
    const middlewares = await instances(build, clients, `down-${Date.now()}:`, { contextWindow: 200_000 });
    const conversations: Message[][] = [[], [], []];
    const up: number[] = [];
    await turns(middlewares, conversations, 2, up);
    await server.stop();
    while (!clients.every((each) => each.lost())) await sleep(10);
    const fault: number[] = [];
    await turns(middlewares, conversations, downTurns, fault);
    return { build: build.name, client: name, up, fault };
  } finally {
    for (const each of clients) each.close();
    await server.stop();
  }
}

const HUNG_MS = 20_000;

async function hungRun(build: Build, name: ClientName): Promise<FaultResult> {
  const server = await startRedisServer();
  const clients = [await connect(name, server), await connect(name, server)];
  try {
    const middlewares = await instances(build, clients, `hung-${Date.now()}:`, { contextWindow: 200_000 });
    const conversations: Message[][] = [[], [], []];
    const up: number[] = [];
    await turns(middlewares, conversations, 2, up);
    const all: number[] = [];
    const fault: number[] = [];
    const begin = performance.now();
    const window = { from: begin + 2_000, to: begin + 2_000 + HUNG_MS, into: fault };
    const pausing = (async () => {
      await sleep(2_000);
      server.pause();
      await sleep(HUNG_MS);
      server.resume();
    })();
    await Promise.all([turns(middlewares, conversations, 10_000, all, () => performance.now() < begin + HUNG_MS + 5_000, 250, window), pausing]);
    return { build: build.name, client: name, up, fault };
  } finally {
    server.resume();
    for (const each of clients) each.close();
    await server.stop();
  }
}

function printFaults(title: string, results: FaultResult[], faultName: string): void {
  console.log(`\n${title}`);
  printTable(
    ['build', 'client', `steps ${faultName}`, 'p50 up', `p50 ${faultName}`, `max ${faultName}`, `p50 added`, 'store added > 5 s', 'targets'],
    results.map((result) => {
      const up = median(result.up) ?? 0;
      const added = (median(result.fault) ?? 0) - up;
      // What the store added to a step: beyond the slowest step with Redis up (the step's own work).
      const slowestUp = Math.max(...result.up);
      const over = result.fault.filter((held) => held - slowestUp > HELD_LIMIT_MS).length;
      const met = over === 0 && added < 10;
      return [result.build, result.client, String(result.fault.length), ms(median(result.up)), ms(median(result.fault)), ms(Math.max(...result.fault)), ms(added), String(over), met ? 'met' : 'missed'];
    }),
  );
}

interface ConcurrentResult {
  build: string;
  client: ClientName;
  one: number;
  two: number;
}

const CONCURRENT = { conversations: 20, turns: 10, window: 10_000, tokensPerTurn: 1_800, summaryMs: 1_500, stepMs: 20 };

/** The same pseudo-random sequence every run (a load balancer's choices, the same for every build). */
function sequence(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
}

/** 20 conversations x 10 turns at once through `count` instances (each turn through one picked at random, as a load balancer would): summary requests. */
async function concurrent(build: Build, clients: Client[], count: number, options: Record<string, unknown> = {}) {
  const prefix = `concurrent-${count}-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
  const middlewares = (await instances(build, clients.slice(0, count), prefix, { contextWindow: CONCURRENT.window, ...options })).slice(0, count);
  const bench = benchModel(CONCURRENT.stepMs, CONCURRENT.summaryMs);
  const wrapped = middlewares.map((middleware) => wrapLanguageModel({ model: bench.model as never, middleware }));
  const conversations: Message[][] = Array.from({ length: CONCURRENT.conversations }, () => []);
  const pick = sequence(7);
  await Promise.all(
    conversations.map(async (conversation, id) => {
      for (let turn = 0; turn < CONCURRENT.turns; turn++) {
        conversation.push({ role: 'user', content: [{ type: 'text', text: words(id, turn, CONCURRENT.tokensPerTurn / 2) }] });
        await wrapped[Math.floor(pick() * wrapped.length)]!.doGenerate({ prompt: structuredClone(conversation) } as never);
        conversation.push({ role: 'assistant', content: [{ type: 'text', text: words(id, turn, CONCURRENT.tokensPerTurn / 2) }] });
      }
    }),
  );
  // Background compactions still running count too.
  await sleep(CONCURRENT.summaryMs * 3);
  return { summaries: bench.counts.summaries, prefix, conversations, middlewares };
}

async function concurrentRun(build: Build, name: ClientName): Promise<ConcurrentResult> {
  const server = await startRedisServer();
  const clients = [await connect(name, server), await connect(name, server)];
  try {
    const one = await concurrent(build, clients, 1);
    const two = await concurrent(build, clients, 2);
    return { build: build.name, client: name, one: one.summaries, two: two.summaries };
  } finally {
    for (const each of clients) each.close();
    await server.stop();
  }
}

interface SealResult {
  variant: string;
  values: number;
  withText: number;
  sent: { moved: boolean; forged: boolean; foreign: boolean };
}

/** Runs the concurrent scenario once more on ioredis, then scans what is stored and tries three substituted checkpoints. */
async function sealRun(variant: string, secret: string | undefined): Promise<SealResult> {
  const server = await startRedisServer();
  const clients = [await connect('ioredis', server), await connect('ioredis', server)];
  const raw = clients[0]!.client as Redis;
  const options = secret === undefined ? {} : { secret };
  try {
    const run = await concurrent({ name: 'this build', make: compaction as CompactionFactory }, clients, 2, options);
    const keys = await raw.keys(`${run.prefix}*`);
    const values = await Promise.all(keys.map((key) => raw.get(key)));
    const withText = values.filter((value) => value !== null && WORDS.some((word) => value.includes(word))).length;
    type Held = { record: string; length: number; digest: string };
    const next = (id: number) => [...run.conversations[id]!, { role: 'user' as const, content: [{ type: 'text' as const, text: 'one more question' }] }];
    /** The checkpoint the next step of a conversation sends (a fresh instance's state() holds what it read). */
    const used = async (id: number): Promise<Held | undefined> => {
      const fresh = compaction({ contextWindow: CONCURRENT.window, store: redisStore({ client: raw, prefix: run.prefix }), ...options });
      await wrapLanguageModel({ model: benchModel().model as never, middleware: fresh }).doGenerate({ prompt: next(id) } as never);
      const held = Object.values((await openedState(fresh.state(), secret)).checkpoints as Record<string, Held>).filter((checkpoint) => checkpoint.record.includes(`conversation ${id} turn`));
      return held.sort((a, b) => b.length - a.length)[0];
    };
    const [source, victim] = [0, 1];
    const from = await used(source);
    const to = await used(victim);
    if (from === undefined || to === undefined) throw new Error('the concurrent run left conversations 0 and 1 without a checkpoint to swap');
    const victimKey = `${run.prefix}cp:${to.digest}`;
    // Each attempt starts from what is stored now: a step that found no checkpoint may compact and store one.
    const snapshot = new Map<string, string>();
    for (const key of await raw.keys(`${run.prefix}*`)) snapshot.set(key, (await raw.get(key))!);
    const restore = async () => {
      for (const key of await raw.keys(`${run.prefix}*`)) if (!snapshot.has(key)) await raw.del(key);
      for (const [key, value] of snapshot) await raw.set(key, value);
    };
    const forgedJson = JSON.stringify({ ...from, digest: to.digest, length: to.length });
    const attempts: Record<keyof SealResult['sent'], string> = {
      moved: (await raw.get(`${run.prefix}cp:${from.digest}`))!,
      forged: forgedJson,
      foreign: await createSealer([FOREIGN]).seal(`cp:${to.digest}`, forgedJson),
    };
    const sent = { moved: false, forged: false, foreign: false };
    for (const [attack, value] of Object.entries(attempts) as [keyof SealResult['sent'], string][]) {
      await raw.set(victimKey, value);
      const bench = benchModel();
      const fresh = compaction({ contextWindow: CONCURRENT.window, store: redisStore({ client: raw, prefix: run.prefix }), ...options });
      await wrapLanguageModel({ model: bench.model as never, middleware: fresh }).doGenerate({ prompt: next(victim) } as never);
      sent[attack] = bench.prompts.some((prompt) => prompt.includes(`conversation ${source} turn`));
      await restore();
    }
    return { variant, values: values.length, withText, sent };
  } finally {
    for (const each of clients) each.close();
    await server.stop();
  }
}

export async function run(): Promise<void> {
  const previous: Build = { name: `previous (${BASELINE_REF})`, make: await fromGitRef(BASELINE_REF) };
  const current: Build = { name: 'this build', make: compaction as CompactionFactory };
  const builds = [previous, current];

  const down: FaultResult[] = [];
  for (const build of builds) for (const name of CLIENTS) down.push(await downRun(build, name, build === previous ? DOWN_TURNS.previous : DOWN_TURNS.current));
  printFaults(
    `Redis down (killed): 3 conversations through two instances sharing one Redis, 2 turns each with Redis up, then ${DOWN_TURNS.current} with it down (${DOWN_TURNS.previous} for the previous build); time a step is held (the model answers at once)`,
    down,
    'down',
  );

  const hung: FaultResult[] = [];
  for (const build of builds) for (const name of CLIENTS) hung.push(await hungRun(build, name));
  printFaults(`Redis hung (SIGSTOP for ${HUNG_MS / 1000} s, then SIGCONT): 3 conversations going on through two instances, 250 ms between turns; the steps that started while it was stopped`, hung, 'hung');

  const concurrentResults: ConcurrentResult[] = [];
  for (const build of builds) for (const name of CLIENTS) concurrentResults.push(await concurrentRun(build, name));
  console.log(
    `\nConcurrent: ${CONCURRENT.conversations} conversations x ${CONCURRENT.turns} turns at once (window ${CONCURRENT.window.toLocaleString('en-US')}, ${CONCURRENT.tokensPerTurn} tokens a turn, summaries take ${CONCURRENT.summaryMs} ms): summary requests through two instances (each turn through one picked at random) against one`,
  );
  printTable(
    ['build', 'client', 'one instance', 'two instances', 'more', 'target (within 5 %)'],
    concurrentResults.map((result) => {
      const more = result.two / result.one - 1;
      return [result.build, result.client, String(result.one), String(result.two), percent(more), Math.abs(more) <= 0.05 ? 'met' : 'missed'];
    }),
  );

  const seals = [await sealRun('secret set', SECRET), await sealRun('no secret (control)', undefined)];
  console.log('\nSealed values (this build, ioredis, the concurrent run through two instances): stored values holding the conversations\' words, and whether a substituted checkpoint under a conversation\'s key was sent');
  printTable(
    ['variant', 'values stored', 'holding their words', 'moved: sent', 'forged in the clear: sent', 'foreign secret: sent', 'target'],
    seals.map((seal) => {
      const met = seal.withText === 0 && !seal.sent.moved && !seal.sent.forged && !seal.sent.foreign;
      return [seal.variant, String(seal.values), String(seal.withText), seal.sent.moved ? 'yes' : 'no', seal.sent.forged ? 'yes' : 'no', seal.sent.foreign ? 'yes' : 'no', met ? 'met' : 'missed'];
    }),
  );
  console.log(
    [
      '"p50 up": the median step with Redis up, in the same run; "p50 added": the median step during the fault less that; "store added > 5 s": steps held more than 5 s beyond the slowest step with Redis up (its own work). Figures in ms are noisy on a loaded machine.',
      'Targets: no step held more than 5 s and the median step adding under 10 ms (down, hung); two instances within 5 % of one instance\'s summary requests; with a secret, no value holding the words and no substituted checkpoint sent.',
      `"previous": the build at ${BASELINE_REF}, before the outage rule and the lease (BENCH_STORE_BASELINE_REF), with this checkout's redisStore.`,
    ].join('\n'),
  );
}

/** What a state holds, opened with the secret when `state()` sealed it. */
async function openedState(state: CompactionState | Promise<SealedCompactionState>, secret: string | undefined): Promise<CompactionState> {
  const made = await state;
  if (!('sealed' in made)) return made;
  return JSON.parse((await createSealer([secret!]).open(STATE_KEY, made.sealed))!) as CompactionState;
}
