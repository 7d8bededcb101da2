/**
 * Sizing (docs/design.md, "The size of a prompt"), before and after, side by side in one run.
 * "Before" is the build of commit 73628ac (4 characters a token, no frame rule), extracted with
 * `git archive` and bundled with esbuild into .bench-out/; "after" is this tree. Against the local
 * provider server (gpt-tokenizer counts):
 *
 * (a) the first call of a conversation new to an instance that has served one earlier
 *     conversation of the same model: the middleware's size of it (the `tokensBefore` of a manual
 *     compaction of that very call) against the provider's count of it, code-heavy and prose-heavy;
 * (b) the 500-step session of bench/session.ts with a new instance taking over every 25 steps, as
 *     on a serverless host: with an empty memory store each time, and with one shared Redis.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { type LanguageModelMiddleware, type ModelMessage, type ToolSet, generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { build } from 'esbuild';
import { countTokens } from 'gpt-tokenizer';
import Redis from 'ioredis';
import { z } from 'zod';
import { type CompactionMiddleware, type CompactionOptions, compaction, isSummaryRequest } from '../src';
import { redisStore } from '../src/redis';
import { charsPerToken, tokenizerFactor } from '../src/sizing/learned';
import type { ModelSizing } from '../src/store/format';
import type { Clock } from '../src/clock';
import { CLOCK } from '../src/options';
import { type AgentRequest, createProjectTools, projectToolDescriptions, startProviderServer } from '../test/support/provider-server';
import { pick, rng } from '../test/support/provider-server/random';
import { startRedisServer } from '../test/support/redis-server';
import { CEILING, type Row, TASKS, WINDOW, runStrategy } from './session';
import { COST_COLUMNS, COST_NOTE, costCells } from './cost';
import { type Strategy, percent, printTable, tokens } from './strategies';

/** The commit before the learned sizing: the build "before" is made from it. */
const BEFORE = '73628ac';
/** Steps a serverless instance serves before a new one takes over (b). */
const STEPS_PER_INSTANCE = 25;

type Compaction = (options?: CompactionOptions & { secret?: undefined }) => CompactionMiddleware;
interface Build {
  name: string;
  compaction: Compaction;
  redisStore: typeof redisStore;
}

/** The build of commit `BEFORE`, bundled once into .bench-out/ (its bare imports resolve from this tree's node_modules). */
async function buildBefore(): Promise<Build> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const dir = join(root, '.bench-out', `sizing-before-${BEFORE}`);
  const out = join(dir, 'dist');
  if (!existsSync(join(out, 'redis.mjs'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execSync(`git archive ${BEFORE} src | tar -x -C '${dir}'`, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    await build({
      entryPoints: { index: join(dir, 'src', 'index.ts'), redis: join(dir, 'src', 'redis.ts') },
      bundle: true,
      format: 'esm',
      platform: 'node',
      packages: 'external',
      outdir: out,
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    });
  }
  const index = (await import(pathToFileURL(join(out, 'index.mjs')).href)) as { compaction: Compaction };
  const redis = (await import(pathToFileURL(join(out, 'redis.mjs')).href)) as { redisStore: typeof redisStore };
  return { name: `before (${BEFORE})`, compaction: index.compaction, redisStore: redis.redisStore };
}

const AFTER: Build = { name: 'after', compaction, redisStore };

// ---------------------------------------------------------------------------------------------
// (a) the first call of a conversation new to the instance

/** Sentences for prose-heavy chats (an editor's assistant), combined by seed into paragraphs. */
const SENTENCES = [
  'The opening paragraph should tell the reader why the trip mattered before it tells them where it went.',
  'I would move the anecdote about the missed train to the second section, where it explains the change of plans.',
  'Your argument is clearest when you describe what the committee actually decided and who disagreed with it.',
  'Several readers will not know what a cooperative grocery is, so a sentence of context would help here.',
  'The tone shifts from warm to formal in the middle of the letter, and that shift makes the request sound colder than you intend.',
  'Consider cutting the list of dates; one or two well-chosen examples carry the point with less effort for the reader.',
  'When the neighbours finally met in the library, nobody expected the conversation to last until the building closed.',
  'She had kept every receipt from the renovation in a shoebox, and the box told the story better than any spreadsheet.',
  'The proposal asks for a modest budget, but it does not yet say what success would look like after the first year.',
  'A shorter title would be easier to remember, and it would leave room for the subtitle to explain the subject.',
  'In the final section you repeat the conclusion of the introduction almost word for word, which weakens both.',
  'The interview quotes are vivid, although the third one drifts away from the question you are trying to answer.',
  'It rained for most of the week, so the walking tour became a slow circuit of cafes, bookshops and museums.',
  'Grandfather always said that a garden is a conversation with the weather, and he rarely won the argument.',
  'If the audience is parents rather than teachers, the examples should come from evenings at home, not classrooms.',
  'The budget table is fine, but the paragraph before it should say plainly which costs are estimates.',
  'Nobody on the board remembered who had first suggested moving the meeting to Thursday evenings.',
  'There is a good story in the delay itself: the permit, the wrong delivery, and the afternoon the power went out.',
  'Try reading the draft aloud; the long sentences in the middle will show you where the reader loses the thread.',
  'The river was higher than anyone could remember, and the old footbridge was closed for the whole summer.',
  'You could end with the image of the empty hall after the last guests had gone, which echoes the beginning.',
  'The second chapter introduces four new characters at once, and it is hard to keep their motives apart.',
  'A reader who skims will see only the headings, so each heading should make a claim rather than name a topic.',
  'We spent the morning comparing two versions of the invitation and chose the one that sounded less like an order.',
  'The village kept its market on the square every Saturday, even in the winter when only three stalls opened.',
  'Her notes from the first workshop are more honest than the report, which smooths over the disagreements.',
  'I like the idea of a timeline, but it would work better as a short paragraph than as a numbered list.',
  'The volunteers who stayed late deserve a sentence of thanks by name, not a general line at the very end.',
  'Before you send it, check that every number in the summary matches the figures in the attached letter.',
  'The essay is strongest when it admits what the author still does not understand about the decision.',
] as const;

function paragraph(random: () => number, sentences: number): string {
  return Array.from({ length: sentences }, () => pick(random, SENTENCES)).join(' ');
}

function proseText(random: () => number, paragraphs: number): string {
  return Array.from({ length: paragraphs }, () => paragraph(random, 4 + Math.floor(random() * 5))).join('\n\n');
}

/** The prose chat's user turns: a draft to comment on, one to three paragraphs. */
const proseTurn = (seed: number, turn: number) => `Here is the next part of my draft. What would you change?\n\n${proseText(rng('prose-user', seed, turn), 1 + (turn % 3))}`;

/** The prose chat's assistant: two to four paragraphs of comments (a seeded pure function of the request). */
function proseReply(seed: number) {
  return (request: AgentRequest) => (request.summary === undefined ? { text: proseText(rng('prose-reply', seed, request.messages.length), 2 + (request.messages.length % 3)) } : undefined);
}

const CODE_SYSTEM = 'You are a coding agent working in a TypeScript repository. Use the tools to find and fix the failing tests. Be terse.';
const PROSE_SYSTEM = 'You are an editor. Comment on the drafts the user sends: structure, clarity and tone. Be specific.';

function projectTools(seed: number): ToolSet {
  const project = createProjectTools(seed);
  return {
    read_file: tool({ description: projectToolDescriptions.read_file, inputSchema: z.object({ path: z.string() }), execute: async (input) => project.read_file(input) }),
    run_command: tool({ description: projectToolDescriptions.run_command, inputSchema: z.object({ command: z.string() }), execute: async (input) => project.run_command(input) }),
    search: tool({ description: projectToolDescriptions.search, inputSchema: z.object({ query: z.string() }), execute: async (input) => project.search(input) }),
  };
}

/** A conversation of one kind: its server (seed), system prompt, tools, and how it goes on. */
interface Kind {
  name: string;
  seed: number;
  system: string;
  tools: ToolSet | undefined;
  /** Drives `steps` calls of the conversation through `model`, appending to `messages`. */
  drive: (model: Parameters<typeof generateText>[0]['model'], messages: ModelMessage[], steps: number) => Promise<void>;
}

function codeKind(seed: number, task: string): Kind {
  const tools = projectTools(seed);
  return {
    name: 'code-heavy',
    seed,
    system: CODE_SYSTEM,
    tools,
    drive: async (model, messages, steps) => {
      if (messages.length === 0) messages.push({ role: 'user', content: task });
      const result = await generateText({ model, system: CODE_SYSTEM, messages, tools, stopWhen: stepCountIs(steps), maxRetries: 0 });
      messages.push(...result.response.messages);
    },
  };
}

function proseKind(seed: number): Kind {
  return {
    name: 'prose-heavy',
    seed,
    system: PROSE_SYSTEM,
    tools: undefined,
    drive: async (model, messages, turns) => {
      for (let turn = 0; turn < turns; turn++) {
        messages.push({ role: 'user', content: proseTurn(seed, messages.length) });
        const result = await generateText({ model, system: PROSE_SYSTEM, messages, maxRetries: 0 });
        messages.push(...result.response.messages);
      }
    },
  };
}

interface FirstCall {
  kind: string;
  variant: string;
  /** What the instance had learned before the call: characters a token, or the `estimate` option's factor. */
  learned: string;
  estimate: number;
  count: number;
}

/** The model's key as the local server's chat model gives it. */
const MODEL_KEY = 'openai.chat:local-coding-agent';

function learnedOf(middleware: CompactionMiddleware): string {
  const record = (middleware.state() as { sizing?: Record<string, ModelSizing> }).sizing?.[MODEL_KEY];
  if (record === undefined) return '4 characters a token (fixed)';
  if (record.tokenizer.length > 0) return `factor ${tokenizerFactor(record.tokenizer).toFixed(3)}`;
  return `${charsPerToken(record.chars).toFixed(2)} characters a token`;
}

/**
 * One kind: each variant's instance serves conversation `earlier` for `steps` calls, then gets the
 * next call of conversation `later` (whose first `steps` calls another instance served). Its size
 * of that call is the `tokensBefore` of a manual compaction of it; the count is the provider's
 * count of the same call sent without the middleware.
 */
async function firstCalls(earlier: Kind, later: Kind, steps: number, variants: { name: string; make: () => CompactionMiddleware }[]): Promise<FirstCall[]> {
  const servers = await Promise.all(
    [earlier, later].map((kind) =>
      startProviderServer({ contextWindow: 10_000_000, seed: kind.seed, agent: { toolCallsPerTurn: 10_000, ...(kind.tools === undefined ? { respond: proseReply(kind.seed) } : {}) }, keepBodies: 0 }),
    ),
  );
  const [earlierModel, laterModel] = servers.map((server) => createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'local' }).chat('local-coding-agent'));
  const history: ModelMessage[] = [];
  await later.drive(laterModel!, history, steps);
  // The provider's count of the next call, sent as it is.
  const probe = async (model: Parameters<typeof generateText>[0]['model'], compact: boolean) =>
    generateText({
      model,
      system: later.system,
      messages: [...history, ...(later.tools === undefined ? [{ role: 'user' as const, content: proseTurn(later.seed, history.length) }] : [])],
      ...(later.tools === undefined ? {} : { tools: later.tools }),
      stopWhen: stepCountIs(1),
      maxRetries: 0,
      ...(compact ? { providerOptions: { compaction: { compact: true } } } : {}),
    });
  await probe(laterModel!, false);
  const laterRequests = servers[1]!.requests;
  const count = laterRequests[laterRequests.length - 1]!.promptTokens;
  const rows: FirstCall[] = [];
  for (const variant of variants) {
    const middleware = variant.make();
    await earlier.drive(wrapLanguageModel({ model: earlierModel!, middleware }), [], steps);
    const learned = learnedOf(middleware);
    await probe(wrapLanguageModel({ model: laterModel!, middleware }), true);
    rows.push({ kind: later.name, variant: variant.name, learned, estimate: middleware.last()!.tokensBefore, count });
  }
  await Promise.all(servers.map((server) => server.close()));
  return rows;
}

// ---------------------------------------------------------------------------------------------
// (b) the session with a new instance every 25 steps

interface Counters {
  overflow: number;
  auto: number;
  instances: number;
}

/**
 * Hands each step to the current instance and starts a new one every `every` steps (a step's
 * `wrapGenerate` goes to the instance whose `transformParams` made its params).
 */
function rotating(make: Make, every: number, counters: Counters, clock: Clock | undefined): LanguageModelMiddleware {
  const onCompaction: CompactionOptions['onCompaction'] = (record) => void (record.reason === 'overflow' ? counters.overflow++ : counters.auto++);
  // every instance reads the run's virtual clock (a figure must not depend on the machine's speed)
  const given = { onCompaction, ...(clock === undefined ? {} : { [CLOCK]: clock }) };
  let current = make(given);
  counters.instances = 1;
  let steps = 0;
  const owners = new WeakMap<object, CompactionMiddleware>();
  const owner = (params: object) => owners.get(params) ?? current;
  return {
    specificationVersion: 'v3',
    transformParams: async (options) => {
      if (!isSummaryRequest(options.params)) {
        if (steps > 0 && steps % every === 0) {
          current = make(given);
          counters.instances++;
        }
        steps++;
      }
      const instance = current;
      const params = await instance.transformParams!(options as never);
      owners.set(params, instance);
      return params;
    },
    wrapGenerate: (options) => owner(options.params).wrapGenerate!(options as never),
    wrapStream: (options) => owner(options.params).wrapStream!(options as never),
  } as LanguageModelMiddleware;
}

interface ColdRow {
  store: string;
  variant: string;
  counters: Counters;
  row: Row;
}

/** An instance of a build, given the run's `onCompaction` and clock. */
type Make = (options: Pick<CompactionOptions, 'onCompaction'>) => CompactionMiddleware;

async function coldStart(store: string, variant: string, make: Make): Promise<ColdRow> {
  const counters: Counters = { overflow: 0, auto: 0, instances: 0 };
  const strategy: Strategy = {
    name: variant,
    start: async (_window, run) => ({ middleware: [rotating(make, STEPS_PER_INSTANCE, counters, run?.clock)], compactions: () => counters.overflow + counters.auto }),
  };
  return { store, variant, counters, row: await runStrategy(strategy) };
}

// ---------------------------------------------------------------------------------------------


export async function run(): Promise<void> {
  const before = await buildBefore();
  const variants = [
    { name: before.name, make: () => before.compaction({}) },
    { name: 'after', make: () => AFTER.compaction({}) },
    { name: 'after, estimate: countTokens', make: () => AFTER.compaction({ estimate: (text) => countTokens(text) }) },
  ];
  const first = [
    ...(await firstCalls(codeKind(11, TASKS[0]!), codeKind(12, TASKS[1]!), 40, variants)),
    ...(await firstCalls(proseKind(21), proseKind(22), 20, variants)),
  ];
  console.log('\n(a) The first call of a conversation new to an instance that served one earlier conversation of the model');
  printTable(
    ['session', 'variant', 'learned before the call', 'size (middleware)', 'provider count', 'size / count'],
    first.map((row) => [row.kind, row.variant, row.learned, tokens(row.estimate), tokens(row.count), `${(row.estimate / row.count).toFixed(3)}`]),
  );
  console.log('Code: 40 steps of one coding-agent conversation, then the 41st call of another (other project); prose: 20 turns of\n' +
    'an editor chat, then the 21st of another. "size": what the middleware takes the prompt for (no count of it yet).');

  const redisServer = await startRedisServer();
  const client = new Redis({ host: '127.0.0.1', port: redisServer.port, lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  try {
    const rows: ColdRow[] = [];
    const memory = 'memory, empty at each start';
    rows.push(await coldStart(memory, before.name, (options) => before.compaction({ contextWindow: WINDOW, ...options })));
    rows.push(await coldStart(memory, 'after', (options) => AFTER.compaction({ contextWindow: WINDOW, ...options })));
    rows.push(await coldStart(memory, 'after, estimate: countTokens', (options) => AFTER.compaction({ contextWindow: WINDOW, ...options, estimate: (text) => countTokens(text) })));
    let run = 0;
    for (const build of [before, AFTER]) {
      const prefix = `bench-sizing-${Date.now()}-${run++}:`;
      rows.push(await coldStart('one shared Redis', build.name, (options) => build.compaction({ contextWindow: WINDOW, ...options, store: build.redisStore({ client, prefix }) })));
    }
    console.log(`\n(b) The 500-step session, a new instance every ${STEPS_PER_INSTANCE} steps (a serverless host), window ${WINDOW.toLocaleString('en-US')}, ceiling ${CEILING.toLocaleString('en-US')}`);
    printTable(
      ['store', 'variant', 'instances', 'steps', 'errors', 'rejected calls', 'overflow compactions', 'auto compactions', 'summary req', 'sent over ceiling', 'max/ceiling', ...COST_COLUMNS],
      rows.map(({ store, variant, counters, row }) => [
        store,
        variant,
        String(counters.instances),
        String(row.steps),
        String(row.errors),
        String(row.rejections),
        String(counters.overflow),
        String(counters.auto),
        String(row.summaryRequests),
        String(row.overCeiling),
        percent(row.maxShare),
        ...costCells(row.usage),
      ]),
    );
    console.log('"rejected calls": calls the provider refused as over its window (each one a wasted call, followed by a compaction\n' +
      'under way while the caller waits: an "overflow compaction"). "sent over ceiling": steps the provider counted over the\n' +
      `ceiling; "max/ceiling": the largest of them. Cost at cache prices: ${COST_NOTE}.`);
  } finally {
    client.disconnect();
    await redisServer.stop();
  }
}
