/**
 * `npm run demo`: a long coding-agent session through `generateText` with tools, kept inside a
 * 32,000-token window by `ai-compaction`. By default the model is the embedded local provider
 * (it speaks the OpenAI wire format, counts tokens with a real tokenizer, and plays a scripted
 * coding agent over a generated project), so no API key is needed.
 *
 *   npm run demo                                   # embedded local provider
 *   npm run demo -- --steps 200                    # a longer session
 *   OPENAI_API_KEY=... npm run demo -- --provider openai [--model gpt-5-mini]
 *   ANTHROPIC_API_KEY=... npm run demo -- --provider anthropic [--model claude-haiku-4-5]
 *   npm run demo -- --out chart.svg                # where the chart goes (default demo-output/session.svg)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { type LanguageModelMiddleware, generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { type CompactionRecord, compaction, isContextOverflowError, isSummaryRequest } from '../src';
import { ceiling } from '../src/sizing/ceiling';
import { createProjectTools, projectToolDescriptions, startProviderServer } from '../test/support/provider-server';
import { type StepPoint, sessionChart, sparkline, sparklineScale, stepLine } from './chart';

const WINDOW = 32_000;

const { values } = parseArgs({
  options: {
    provider: { type: 'string', default: 'local' },
    model: { type: 'string' },
    steps: { type: 'string', default: '120' },
    out: { type: 'string', default: 'demo-output/session.svg' },
  },
});
const steps = Number.parseInt(values.steps!, 10);
if (!Number.isInteger(steps) || steps < 1) usage(`--steps must be a positive whole number, got ${values.steps}`);
if (values.provider === 'openai' && !process.env.OPENAI_API_KEY) usage('--provider openai needs OPENAI_API_KEY');
if (values.provider === 'anthropic' && !process.env.ANTHROPIC_API_KEY) usage('--provider anthropic needs ANTHROPIC_API_KEY');
if (!['local', 'openai', 'anthropic'].includes(values.provider!)) usage(`--provider must be local, openai or anthropic, got ${values.provider}`);

function usage(problem: string): never {
  console.error(`${problem}\nUsage: npm run demo -- [--steps N] [--provider local|openai|anthropic] [--model ID] [--out FILE.svg]`);
  process.exit(2);
}

const server = values.provider === 'local' ? await startProviderServer({ contextWindow: WINDOW, seed: 7 }) : undefined;
const model = pickModel(values.provider!, values.model);

const records: Array<CompactionRecord & { step: number }> = [];
const points: StepPoint[] = [];
let compactedBeforeNext = false;
const middleware = compaction({
  contextWindow: WINDOW,
  onCompaction: (record) => {
    records.push({ ...record, step: points.length + 1 });
    compactedBeforeNext = true;
  },
});

/**
 * Sits between the compaction middleware and the model, so it sees every call that goes out (the
 * steps and the summary requests) on any provider: what the table reports is measured, not assumed.
 */
const meter = { summaryRequests: 0, rejections: 0, billed: 0 };
const metering: LanguageModelMiddleware = {
  specificationVersion: 'v3',
  wrapGenerate: async ({ doGenerate, params }) => {
    if (isSummaryRequest(params)) meter.summaryRequests++;
    try {
      const result = await doGenerate();
      meter.billed += result.usage.inputTokens.total ?? 0;
      return result;
    } catch (error) {
      if (isContextOverflowError(error)) meter.rejections++;
      throw error;
    }
  },
};

const project = createProjectTools(7);
const tools = {
  read_file: tool({ description: projectToolDescriptions.read_file, inputSchema: z.object({ path: z.string() }), execute: async (input) => project.read_file(input) }),
  run_command: tool({ description: projectToolDescriptions.run_command, inputSchema: z.object({ command: z.string() }), execute: async (input) => project.run_command(input) }),
  search: tool({ description: projectToolDescriptions.search, inputSchema: z.object({ query: z.string() }), execute: async (input) => project.search(input) }),
};

const limit = ceiling(WINDOW, undefined);
console.log(`ai-compaction demo: ${steps} agent steps, ${WINDOW.toLocaleString('en-US')}-token window (ceiling ${limit.toLocaleString('en-US')}), model: ${describeModel()}`);
console.log(
  `Each line is a step's prompt as the provider counted it. Bar and % are of the ceiling (${limit.toLocaleString('en-US')} tokens), the compaction point.\n` +
    "The middleware holds a step to it by its own measure (the provider's count of the step before, plus an estimate of what was added since): a step whose prompt would reach it by that measure is compacted before it goes out. " +
    `When what was added is denser than estimated, the provider counts a step a little over the ceiling; the window (${WINDOW.toLocaleString('en-US')}) is the limit.\n`,
);

let failure: unknown;
try {
  await generateText({
    model: wrapLanguageModel({ model, middleware: [middleware, metering] }),
    system: 'You are a coding agent working in a TypeScript repository. Use the tools to find and fix the failing tests. Be terse.',
    prompt: 'The test suite is failing. Find the cause of every failure and fix it.',
    tools,
    stopWhen: stepCountIs(steps),
    onStepFinish: (step) => {
      const point = { step: points.length + 1, promptTokens: step.usage.inputTokens ?? 0, compacted: compactedBeforeNext };
      points.push(point);
      compactedBeforeNext = false;
      console.log(stepLine(point, { ceiling: limit, compactions: records.length }));
    },
  });
} catch (error) {
  failure = error;
}

const prompts = points.map((point) => point.promptTokens);
const { summaryRequests, rejections, billed } = meter;
const max = Math.max(0, ...prompts);
const over = prompts.filter((tokens) => tokens >= limit);
const mean = prompts.length === 0 ? 0 : Math.round(prompts.reduce((a, b) => a + b, 0) / prompts.length);

const rows: Array<[string, string]> = [
  ['steps', String(points.length)],
  ['compactions', `${records.length} (${['auto', 'overflow', 'manual'].map((reason) => `${reason} ${records.filter((record) => record.reason === reason).length}`).join(', ')})`],
  ['summary requests', String(summaryRequests)],
  ['overflow rejections', String(rejections)],
  ['errors reaching the caller', failure === undefined ? '0' : '1'],
  ['max prompt', `${max.toLocaleString('en-US')} tokens (${Math.round((max / WINDOW) * 100)} % of the window, ${Math.round((max / limit) * 100)} % of the ceiling)`],
  [
    'counted over the ceiling',
    over.length === 0
      ? 'no step'
      : `${over.length} step${over.length === 1 ? '' : 's'} (largest ${Math.round((Math.max(...over) / limit) * 100)} %; ${max <= WINDOW ? 'none over the window' : 'OVER THE WINDOW'})`,
  ],
  ['mean prompt', `${mean.toLocaleString('en-US')} tokens (${Math.round((mean / limit) * 100)} % of the ceiling)`],
  ['input tokens billed', billed.toLocaleString('en-US')],
];
console.log(`\n${rows.map(([name, value]) => `${name.padEnd(28)}${value}`).join('\n')}`);
console.log(`\n${sparkline(prompts, limit)}   (prompt per step, ${sparklineScale(prompts.length)}; full height = the ceiling, ${limit.toLocaleString('en-US')})`);
const last = records.at(-1);
if (last !== undefined) {
  console.log(`\nThe last compaction (step ${last.step}, ${last.reason}): ${last.messagesCovered} messages, ${last.tokensBefore.toLocaleString('en-US')} -> ${last.tokensAfter.toLocaleString('en-US')} estimated tokens. Its summary begins:`);
  console.log(last.summary.split('\n').slice(0, 8).map((line) => `  ${line}`).join('\n'));
}

const out = resolve(values.out!);
await mkdir(resolve(out, '..'), { recursive: true });
await writeFile(out, sessionChart(points, { window: WINDOW, ceiling: limit, title: `ai-compaction: ${points.length} step${points.length === 1 ? '' : 's'} in a ${WINDOW.toLocaleString('en-US')}-token window` }));
console.log(`\nChart: ${out}`);

await server?.close();
if (failure !== undefined) {
  console.error('\nThe session failed:', failure);
  process.exitCode = 1;
}

function pickModel(provider: string, id: string | undefined): Parameters<typeof wrapLanguageModel>[0]['model'] {
  switch (provider) {
    case 'local':
      return createOpenAI({ baseURL: server!.openaiBaseURL, apiKey: 'local' }).chat(id ?? 'local-coding-agent');
    case 'openai':
      return createOpenAI()(id ?? 'gpt-5-mini');
    default:
      return createAnthropic()(id ?? 'claude-haiku-4-5');
  }
}

function describeModel(): string {
  return values.provider === 'local' ? 'the embedded local provider (scripted coding agent, OpenAI wire format)' : `${values.provider} ${values.model ?? ''}`.trim();
}
