// End-to-end scenarios shared by clients.test.ts (ai@6, @ai-sdk v3 clients) and
// clients-ai7.test.ts (ai@7, @ai-sdk v4 clients): the real, unmodified provider clients talk HTTP
// to the local provider server (test/support/provider-server), which counts every prompt with a
// real tokenizer, rejects over-window prompts with the provider's own overflow error and plays a
// scripted coding agent that keeps calling tools. The middleware sits between the two.
//
// The scenarios are parameterised by the `ai` module and the client factories, so one definition
// serves both SDK majors. `E2E_STATS=1` prints a table per file: requests, rejections, summary
// requests, compactions by reason, and the largest prompt the server counted as a share of its window.

import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compaction, withoutCompaction, type CompactionMiddleware, type CompactionReason } from '../../src';
import {
  assistantAgent,
  createProjectTools,
  projectToolDescriptions,
  startProviderServer,
  type ProviderServer,
  type RecordedRequest,
} from '../support/provider-server/index';

// The `ai` module of either major, read structurally: the two majors' types differ, the calls made
// here are the same.
type Loose = (...args: any[]) => any;
export interface AiModule {
  generateText: Loose;
  streamText: Loose;
  wrapLanguageModel: Loose;
  tool: Loose;
  stepCountIs: Loose;
  convertToModelMessages: Loose;
  readUIMessageStream: Loose;
}

interface ClientSettings {
  baseURL: string;
  apiKey: string;
}

/** `createOpenAI` and `createAnthropic` of either client major. */
export interface ClientFactories {
  createOpenAI(settings: ClientSettings): { chat(modelId: string): unknown; responses(modelId: string): unknown };
  createAnthropic(settings: ClientSettings): (modelId: string) => unknown;
}

export type Api = 'openai-chat' | 'openai-responses' | 'anthropic';
export type Mode = 'generateText' | 'streamText';

export const APIS: readonly Api[] = ['openai-chat', 'openai-responses', 'anthropic'];
export const MODES: readonly Mode[] = ['generateText', 'streamText'];

const SEED = 1;
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository. Use the tools to investigate before you answer.';
const TASK = 'The test suite is failing. Find out why and tell me how to fix it.';

export function clientModel(clients: ClientFactories, server: ProviderServer, api: Api): unknown {
  if (api === 'anthropic') return clients.createAnthropic({ baseURL: server.anthropicBaseURL, apiKey: 'test' })('claude-sonnet-4-5');
  const openai = clients.createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' });
  return api === 'openai-chat' ? openai.chat('gpt-4.1') : openai.responses('gpt-4.1');
}

export function projectTools(ai: AiModule, seed = SEED) {
  const project = createProjectTools(seed);
  return {
    read_file: ai.tool({
      description: projectToolDescriptions.read_file,
      inputSchema: z.object({ path: z.string() }),
      execute: async (input: { path: string }) => project.read_file(input),
    }),
    run_command: ai.tool({
      description: projectToolDescriptions.run_command,
      inputSchema: z.object({ command: z.string() }),
      execute: async (input: { command: string }) => project.run_command(input),
    }),
    search: ai.tool({
      description: projectToolDescriptions.search,
      inputSchema: z.object({ query: z.string() }),
      execute: async (input: { query: string }) => project.search(input),
    }),
  };
}

interface ContentPart {
  type: string;
  toolCallId?: string;
  providerExecuted?: boolean;
}
interface ResponseMessage {
  role: string;
  content: string | ContentPart[];
}
interface StepLike {
  /** The agent's own tool calls. */
  toolCalls: { toolCallId: string }[];
  /** The compactions the step showed: provider-executed `compaction` tool calls (docs/design.md, "Compaction in the stream"). */
  compactions: number;
}

/** A step's calls, the agent's own apart from the compaction the middleware shows as a provider-executed one. */
function stepOf(step: { toolCalls: { toolCallId: string; toolName: string; providerExecuted?: boolean }[] }): StepLike {
  return {
    toolCalls: step.toolCalls.filter((call) => call.providerExecuted !== true),
    compactions: step.toolCalls.filter((call) => call.providerExecuted === true && call.toolName === 'compaction').length,
  };
}

export interface LoopRun {
  server: ProviderServer;
  middleware: CompactionMiddleware;
  /** Every compaction's reason, in order (from `onCompaction`). */
  reasons: CompactionReason[];
  /** Errors that reached the caller: a rejection of generateText, `error` parts of the stream. */
  errors: unknown[];
  steps: StepLike[];
  /** All response messages of the run (ai@6: `response.messages`; ai@7: `responseMessages`). */
  messages: ResponseMessage[];
  /** Wall time of the loop, ms. */
  ms: number;
}

export interface LoopOptions {
  ai: AiModule;
  clients: ClientFactories;
  major: 6 | 7;
  api: Api;
  mode: Mode;
  steps: number;
  /** The window the provider server enforces. */
  serverWindow: number;
  /** The window the middleware is told. */
  middlewareWindow: number;
  /** Register the server for closing (the caller closes it after the test). */
  track(server: ProviderServer): void;
  /** The middleware's `prepare` (default: its own default). */
  prepare?: number | false;
  /** The middleware's `compactAt` (default: its own default). */
  compactAt?: 'cost' | 'ceiling' | number;
}

/** Runs one agent loop through the wrapped real client against the provider server. */
export async function runLoop(options: LoopOptions): Promise<LoopRun> {
  const { ai, major } = options;
  // keep every body: summary requests are told apart by their text (see isSummary)
  const server = await startProviderServer({ contextWindow: options.serverWindow, seed: SEED, agent: { toolCallsPerTurn: 100_000 }, keepBodies: 100_000 });
  options.track(server);
  const reasons: CompactionReason[] = [];
  const middleware = compaction({ contextWindow: options.middlewareWindow, ...(options.prepare === undefined ? {} : { prepare: options.prepare }), ...(options.compactAt === undefined ? {} : { compactAt: options.compactAt }), onCompaction: (record) => reasons.push(record.reason) });
  const model = ai.wrapLanguageModel({ model: clientModel(options.clients, server, options.api), middleware });
  const call = {
    model,
    system: SYSTEM,
    prompt: TASK,
    tools: projectTools(ai),
    stopWhen: ai.stepCountIs(options.steps),
    maxRetries: 0,
  };
  const errors: unknown[] = [];
  const started = performance.now();
  let steps: StepLike[] = [];
  let messages: ResponseMessage[] = [];
  if (options.mode === 'generateText') {
    try {
      const result = await ai.generateText(call);
      steps = result.steps.map(stepOf);
      messages = major === 7 ? await result.responseMessages : (await result.response).messages;
    } catch (error) {
      errors.push(error);
    }
  } else {
    const result = ai.streamText({ ...call, onError: () => {} });
    for await (const part of result.fullStream as AsyncIterable<{ type: string; error?: unknown }>) {
      if (part.type === 'error') errors.push(part.error);
    }
    steps = (await result.steps).map(stepOf);
    messages = major === 7 ? await result.responseMessages : (await result.response).messages;
  }
  return { server, middleware, reasons, errors, steps, messages, ms: performance.now() - started };
}

/**
 * Whether the server received one of the middleware's summary requests. The server's own flag
 * misses one form: the Anthropic client merges consecutive user messages, so a transcript summary
 * request (previous checkpoint, transcript, instructions: three user messages) reaches it as one
 * user message starting with `<conversation-checkpoint>`, which it takes for a checkpoint.
 */
export function isSummary(request: RecordedRequest): boolean {
  return request.isSummaryRequest || JSON.stringify(request.body ?? '').includes(SUMMARY_FIRST_LINE);
}
const SUMMARY_FIRST_LINE = 'You MUST summarize the conversation above into a structured summary';

/** Tool call ids of the tool results in the response messages, in order. */
export function toolResultIds(messages: ResponseMessage[]): string[] {
  return messages
    .filter((m) => m.role === 'tool' && Array.isArray(m.content))
    .flatMap((m) => (m.content as ContentPart[]).filter((p) => p.type === 'tool-result').map((p) => p.toolCallId!));
}

/** Tool call ids of the assistant's tool calls in the response messages, in order (not the provider-executed `compaction` ones). */
export function toolCallIds(messages: ResponseMessage[]): string[] {
  return messages
    .filter((m) => m.role === 'assistant' && Array.isArray(m.content))
    .flatMap((m) => (m.content as ContentPart[]).filter((p) => p.type === 'tool-call' && p.providerExecuted !== true).map((p) => p.toolCallId!));
}

export interface RunStats {
  label: string;
  ms: number;
  requests: number;
  rejected: number;
  summaries: number;
  compactions: number;
  reasons: string;
  maxPromptTokens: number;
  /** Largest prompt the server counted, as a share of the server's window. */
  maxShare: number;
  /** Largest prompt of an ordinary step (not a summary request), as a share of the server's window. */
  maxStepShare: number;
}

export function stats(label: string, run: LoopRun, serverWindow: number): RunStats {
  const accepted = run.server.requests.filter((r) => !r.rejected);
  const max = (rs: RecordedRequest[]) => rs.reduce((m, r) => Math.max(m, r.promptTokens), 0);
  return {
    label,
    ms: Math.round(run.ms),
    requests: run.server.requests.length,
    rejected: run.server.requests.filter((r) => r.rejected).length,
    summaries: run.server.requests.filter(isSummary).length,
    compactions: run.reasons.length,
    reasons: [...new Set(run.reasons)].map((r) => `${r}x${run.reasons.filter((x) => x === r).length}`).join(' '),
    maxPromptTokens: max(accepted),
    maxShare: Math.round((max(accepted) / serverWindow) * 1000) / 1000,
    maxStepShare: Math.round((max(accepted.filter((r) => !isSummary(r))) / serverWindow) * 1000) / 1000,
  };
}

export interface MatrixOptions {
  /** Names the suite: `ai@6, @ai-sdk v3 clients`. */
  label: string;
  ai: AiModule;
  clients: ClientFactories;
  major: 6 | 7;
  /** Steps of the in-window loop (150 for the full matrix). */
  steps: number;
  /** Steps of the overflow loop. */
  overflowSteps: number;
}

/** The window the middleware is told in both cases, and the window the server enforces in the first. */
export const WINDOW = 32_000;
/**
 * The server's window in the overflow case. The middleware's ceiling for 32,000 is 16,000
 * estimated tokens, so the server's window has to sit below what the middleware lets out for a
 * rejection to happen at all: with 32,000 the server never counts more than about 16,300 for a step
 * and 19,700 for a summary request, so a 24,000-token server would never reject.
 */
export const OVERFLOW_SERVER_WINDOW = 14_000;

/** Defines the client x mode matrix for one SDK major. */
export function describeClientMatrix(options: MatrixOptions): void {
  const { ai, clients, major, steps, overflowSteps } = options;
  const servers: ProviderServer[] = [];
  const track = (server: ProviderServer) => servers.push(server);
  const report: RunStats[] = [];
  const timeout = Math.max(120_000, steps * 1_000);

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  afterAll(() => {
    if (process.env.E2E_STATS) console.table(report);
  });

  describe.each(APIS)(`compaction with the real %s client (${options.label})`, (api) => {
    describe.each(MODES)('%s', (mode) => {
      it(`should show the compaction as a 'compaction' tool part and never send that part to the provider in the next turn (${mode === 'generateText' ? 'response.messages' : 'useChat messages through convertToModelMessages'})`, async () => {
        const turn = await roundTrip({ ai, clients, major, api, mode, track });
        const { server, middleware } = turn;
        const record = middleware.last()!;
        expect(record).toMatchObject({ reason: 'manual', messagesCovered: 4 });
        expect(turn.shown).toEqual({ toolName: 'compaction', output: { trigger: 'manual', reason: 'manual', rule: 'manual', summary: record.summary, tokensBefore: record.tokensBefore, tokensAfter: record.tokensAfter } });
        // The conversation sent back holds the call and its result...
        expect(turn.sentBack.flatMap((message) => (Array.isArray(message.content) ? message.content : [])).filter((part) => part.toolCallId === turn.toolCallId).map((part) => part.type)).toEqual(['tool-call', 'tool-result']);
        // ...and no request the provider received does: two steps and one summary request, all answered.
        expect(server.requests.map((request) => [isSummary(request), request.rejected])).toEqual([[true, false], [false, false], [false, false]]);
        expect(server.requests.filter((request) => JSON.stringify(request.body).includes('ai-compaction-'))).toEqual([]);
        expect(turn.secondReply).toBe('The order number you gave me is **A-4471**.');
        // The second turn found the checkpoint by the conversation's content: no second summary request.
        expect(server.requests.filter(isSummary)).toHaveLength(1);
      });

      it(`should keep a saved history portable: sent without the middleware to each client, as it is it fails where the client makes of the part something the provider refuses, through withoutCompaction never (${mode === 'generateText' ? 'response.messages' : 'useChat messages'})`, async () => {
        const turn = await roundTrip({ ai, clients, major, api, mode, track });
        const { server, savedUI } = turn;
        // What a host keeps: model messages, or useChat's UI messages (converted for the call).
        const asIs = async () => (savedUI === undefined ? turn.sentBack : await ai.convertToModelMessages(savedUI));
        const portable = async () => (savedUI === undefined ? withoutCompaction(turn.sentBack) : await ai.convertToModelMessages(withoutCompaction(savedUI)));
        const send = async (target: Api, messages: unknown[]) => {
          const from = server.requests.length;
          try {
            const result = await ai.generateText({ model: clientModel(clients, server, target), messages, maxRetries: 0 });
            return { text: result.text as string, warnings: (result.warnings ?? []).length, requests: server.requests.slice(from) };
          } catch (error) {
            return { error: (error as Error).message as string, requests: server.requests.slice(from) };
          }
        };
        const outcomes: Record<string, unknown> = {};
        for (const target of APIS) {
          const sent = await send(target, await asIs());
          outcomes[target] = 'error' in sent && sent.error !== undefined ? sent.error.replace(/ai-compaction-[0-9a-f]+/g, 'ai-compaction-…') : sent.warnings > 0 ? 'answered, with warnings' : 'answered';
          const fixed = await send(target, await portable());
          expect(fixed).toMatchObject({ text: 'The order number you gave me is **A-4471**.', warnings: 0 });
          expect(fixed.requests.filter((request) => JSON.stringify(request.body).includes('ai-compaction-'))).toEqual([]);
        }
        expect(outcomes).toEqual({
          // the Responses client sends the provider-executed call as a reference to a stored item
          'openai-responses': "Item with id 'ai-compaction-…' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
          // the chat client sends the call as a tool call and drops its result: a call no tool message answers
          'openai-chat': "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ai-compaction-…",
          // the Anthropic client drops a provider-executed call of a tool it does not know, with a warning
          anthropic: 'answered, with warnings',
        });
      });

      it(
        `should run a ${steps}-step tool loop inside a 32,000-token window, compacting as it goes`,
        async () => {
          const run = await runLoop({ ai, clients, major, api, mode, steps, serverWindow: WINDOW, middlewareWindow: WINDOW, track });
          report.push(stats(`${api} ${mode} ${steps} steps`, run, WINDOW));
          const { server } = run;
          const summaries = server.requests.filter(isSummary);
          const stepRequests = server.requests.filter((r) => !isSummary(r));

          // nothing reached the caller, the loop ran to the end
          expect(run.errors).toEqual([]);
          expect(run.steps).toHaveLength(steps);

          // every request the provider saw fit its window
          expect(server.requests.filter((r) => r.rejected || r.promptTokens > WINDOW).map((r) => [r.promptTokens, r.error])).toEqual([]);
          expect(server.requests.every((r) => !r.rejected && r.promptTokens <= WINDOW)).toBe(true);
          // one request per step (streamed in streamText), plus the summary requests (never streamed)
          expect(stepRequests.map((r) => r.reply!.toolCalls.length)).toEqual(run.steps.map((s) => s.toolCalls.length));
          expect(stepRequests.every((r) => r.api === api && r.stream === (mode === 'streamText'))).toBe(true);
          expect(summaries.every((r) => r.api === api && !r.stream && r.reply!.toolCalls.length === 0)).toBe(true);

          // compaction happened, on its own
          expect(summaries.length).toBeGreaterThan(0);
          expect(run.reasons.length).toBeGreaterThan(0);
          expect(summaries.length).toBeGreaterThanOrEqual(run.reasons.length);
          expect(new Set(run.reasons)).toEqual(new Set(['auto']));
          expect(run.middleware.last()).toMatchObject({ reason: 'auto' });
          expect(run.middleware.last()!.summary).toContain('## Objective');
          // each compaction shown once, as a `compaction` tool part of the step that first sent it
          expect(run.steps.reduce((sum, step) => sum + step.compactions, 0)).toBe(run.reasons.length);

          // the caller's conversation is whole: every tool call of every step, each with its result
          const calls = run.steps.flatMap((s) => s.toolCalls.map((c) => c.toolCallId));
          expect(calls.length).toBeGreaterThanOrEqual(steps - 1);
          expect(new Set(calls).size).toBe(calls.length);
          expect(toolCallIds(run.messages)).toEqual(calls);
          expect(toolResultIds(run.messages)).toEqual(calls);
        },
        timeout,
      );

      it(
        `should compact and retry when the provider's window is smaller than the middleware was told (${overflowSteps} steps)`,
        async () => {
          const run = await runLoop({
            ai,
            clients,
            major,
            api,
            mode,
            steps: overflowSteps,
            serverWindow: OVERFLOW_SERVER_WINDOW,
            middlewareWindow: WINDOW,
            track,
            // each rejected step is followed by its own summary request: checked below, so nothing
            // is prepared ahead here (docs/design.md, "Preparing ahead"; a prepared checkpoint of
            // the same prefix would be sent instead)
            prepare: false,
            // compacting where it costs least (the catalog knows these models' prices) would keep
            // the prompt under the provider's smaller window: this test needs it to grow to the ceiling
            compactAt: 'ceiling',
          });
          report.push(stats(`${api} ${mode} overflow ${overflowSteps} steps`, run, OVERFLOW_SERVER_WINDOW));
          const { server } = run;

          // nothing reached the caller, the loop ran to the end
          expect(run.errors).toEqual([]);
          expect(run.steps).toHaveLength(overflowSteps);

          // the provider rejected steps as too long; each was compacted (reason overflow) and sent once more
          expect(server.requests.some((r) => r.rejected)).toBe(true);
          expect(server.requests.filter((r) => r.rejected).every((r) => r.error === 'context_length_exceeded')).toBe(true);
          const rejectedSteps = server.requests.flatMap((r, index) => (r.rejected && !isSummary(r) ? [index] : []));
          expect(rejectedSteps.length).toBeGreaterThan(0);
          expect(run.reasons.filter((r) => r === 'overflow')).toHaveLength(rejectedSteps.length);
          for (const index of rejectedSteps) {
            const after = server.requests.slice(index + 1);
            expect(isSummary(after[0]!)).toBe(true);
            expect(after.find((r) => !isSummary(r))).toMatchObject({ rejected: false });
          }
          if (api !== 'openai-responses') {
            // OpenAI chat and Anthropic state the limit in the error: the middleware learns it and is not rejected again
            expect(rejectedSteps).toHaveLength(1);
          }

          // the steps the provider answered are the caller's steps (that each fit the provider's window
          // holds by construction: the server rejects any request over it)
          const answered = server.requests.filter((r) => !r.rejected && !isSummary(r));
          expect(answered.map((r) => r.reply!.toolCalls.length)).toEqual(run.steps.map((s) => s.toolCalls.length));

          const calls = run.steps.flatMap((s) => s.toolCalls.map((c) => c.toolCallId));
          expect(toolCallIds(run.messages)).toEqual(calls);
          expect(toolResultIds(run.messages)).toEqual(calls);
        },
        timeout,
      );
    });
  });
}

interface RoundTripOptions {
  ai: AiModule;
  clients: ClientFactories;
  major: 6 | 7;
  api: Api;
  mode: Mode;
  track(server: ProviderServer): void;
}

interface UIPart {
  type: string;
  toolName?: string;
  toolCallId?: string;
  output?: unknown;
}

const uiText = (id: string, role: 'user' | 'assistant', text: string) => ({ id, role, parts: [{ type: 'text', text }] });

/**
 * Two turns of a chat with the local chat assistant: the first compacts (`compactNext()`) and shows
 * it as a `compaction` tool part; the host sends the whole conversation back with a new question,
 * as `generateText`'s `response.messages` or, for `streamText`, as a `useChat` page's messages
 * through `convertToModelMessages`.
 */
async function roundTrip(options: RoundTripOptions) {
  const { ai, major } = options;
  const server = await startProviderServer({ contextWindow: WINDOW, agent: assistantAgent() });
  options.track(server);
  const middleware = compaction({ contextWindow: WINDOW });
  const model = ai.wrapLanguageModel({ model: clientModel(options.clients, server, options.api), middleware });
  const history = [
    uiText('u1', 'user', 'My order number is A-4471.'),
    uiText('a1', 'assistant', 'Noted: your order number is A-4471.'),
    uiText('u2', 'user', 'My city is Lyon.'),
    uiText('a2', 'assistant', 'Noted: your city is Lyon.'),
    uiText('u3', 'user', 'Thanks. One more thing to note: my color is green.'),
  ];
  const question = uiText('u4', 'user', 'What was the order number I gave you?');
  middleware.compactNext();
  let shown: { toolName: string; output: unknown } | undefined;
  let toolCallId = '';
  let sentBack: ResponseMessage[];
  let savedUI: object[] | undefined;
  if (options.mode === 'generateText') {
    const messages = await ai.convertToModelMessages(history);
    const first = await ai.generateText({ model, messages, maxRetries: 0 });
    const result = first.content.find((part: { type: string }) => part.type === 'tool-result');
    shown = { toolName: result.toolName, output: result.output };
    toolCallId = result.toolCallId;
    const responseMessages = major === 7 ? await first.responseMessages : first.response.messages;
    sentBack = [...messages, ...responseMessages, ...(await ai.convertToModelMessages([question]))];
  } else {
    const first = ai.streamText({ model, messages: await ai.convertToModelMessages(history), maxRetries: 0 });
    let reply: { id: string; role: string; parts: UIPart[] } | undefined;
    for await (const message of ai.readUIMessageStream({ stream: first.toUIMessageStream() })) reply = message;
    const part = reply!.parts.find((item) => item.type === 'dynamic-tool')!;
    shown = { toolName: part.toolName!, output: part.output };
    toolCallId = part.toolCallId!;
    savedUI = [...history, { ...reply!, id: 'a3' }, question];
    sentBack = await ai.convertToModelMessages(savedUI);
  }
  const second = await ai.generateText({ model, messages: sentBack, maxRetries: 0 });
  return { server, middleware, shown, toolCallId, savedUI, sentBack: sentBack as { role: string; content: string | (ContentPart & { toolCallId?: string })[] }[], secondReply: second.text as string };
}
