import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { APICallError, generateText, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { generateText as generateText7, stepCountIs as stepCountIs7, streamText as streamText7, tool as tool7 } from 'ai7';
import { createOpenAI as createOpenAI4 } from 'openai4';
import { createAnthropic as createAnthropic4 } from 'anthropic4';
import { z } from 'zod';
import { countText, createProjectTools, startProviderServer, type Message, type ProviderServer, type ProviderServerOptions } from './provider-server/index';
import { summaryReply, toolCallsThisTurn } from './provider-server/agent';
import { paceOf } from './provider-server/http';

const SUMMARY_PROMPT =
  'You MUST summarize the conversation above into a structured summary that will be given to another agent to resume the work.\n\nUse exactly these headings: ...';
const HEADINGS = ['## Objective', '## Requirements', '## Decisions', '## Work State', '### Completed', '### Active', '### Blocked', '## Next Move', '## Relevant Files', '## Important Context'];
const OPENAI_CHAT_OVERFLOW = /^This model's maximum context length is 100 tokens\. However, your messages resulted in \d+ tokens\. Please reduce the length of the messages\.$/;
const RESPONSES_OVERFLOW = 'Your input exceeds the context window of this model. Please adjust your input and try again.';
const ANTHROPIC_OVERFLOW = /^prompt is too long: \d+ tokens > 100 maximum$/;

const servers: ProviderServer[] = [];
async function start(options: Partial<ProviderServerOptions> = {}): Promise<ProviderServer> {
  const server = await startProviderServer({ contextWindow: 200_000, ...options });
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const project = createProjectTools(1);
const tools = {
  read_file: tool({ description: 'Read a file of the repository.', inputSchema: z.object({ path: z.string() }), execute: async (input) => project.read_file(input) }),
  run_command: tool({ description: 'Run a shell command in the repository.', inputSchema: z.object({ command: z.string() }), execute: async (input) => project.run_command(input) }),
  search: tool({ description: 'Search the repository for a string.', inputSchema: z.object({ query: z.string() }), execute: async (input) => project.search(input) }),
};
const tools7 = {
  read_file: tool7({ description: 'Read a file of the repository.', inputSchema: z.object({ path: z.string() }), execute: async (input) => project.read_file(input) }),
  run_command: tool7({ description: 'Run a shell command in the repository.', inputSchema: z.object({ command: z.string() }), execute: async (input) => project.run_command(input) }),
  search: tool7({ description: 'Search the repository for a string.', inputSchema: z.object({ query: z.string() }), execute: async (input) => project.search(input) }),
};

type Api = 'openai-chat' | 'openai-responses' | 'anthropic';
const APIS: Api[] = ['openai-chat', 'openai-responses', 'anthropic'];

function model(server: ProviderServer, api: Api) {
  if (api === 'anthropic') return createAnthropic({ baseURL: server.anthropicBaseURL, apiKey: 'test' })('claude-sonnet-4-5');
  const openai = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' });
  return api === 'openai-chat' ? openai.chat('gpt-4o') : openai.responses('gpt-4o');
}

function model4(server: ProviderServer, api: Api) {
  if (api === 'anthropic') return createAnthropic4({ baseURL: server.anthropicBaseURL, apiKey: 'test' })('claude-sonnet-4-5');
  const openai = createOpenAI4({ baseURL: server.openaiBaseURL, apiKey: 'test' });
  return api === 'openai-chat' ? openai.chat('gpt-4o') : openai('gpt-4o');
}

/** All response messages of a run: AI SDK 7 keeps only the final step's in `response.messages`. */
function responseMessages(result: { response: { messages: ModelMessage[] } }): ModelMessage[] {
  return (result as { responseMessages?: ModelMessage[] }).responseMessages ?? result.response.messages;
}

const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';
const TASK = 'The test suite is failing. Find out why and tell me how to fix it.';

function expectOverflow(error: unknown, api: Api) {
  expect(APICallError.isInstance(error)).toBe(true);
  const e = error as APICallError;
  expect(e.statusCode).toBe(400);
  if (api === 'openai-chat') {
    expect(e.message).toMatch(OPENAI_CHAT_OVERFLOW);
    expect(JSON.parse(e.responseBody!)).toMatchObject({ error: { type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } });
  } else if (api === 'openai-responses') {
    expect(e.message).toBe(RESPONSES_OVERFLOW);
    expect(JSON.parse(e.responseBody!)).toMatchObject({ error: { code: 'context_length_exceeded', param: 'input', message: RESPONSES_OVERFLOW } });
  } else {
    expect(e.message).toMatch(ANTHROPIC_OVERFLOW);
    expect(JSON.parse(e.responseBody!)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  }
}

describe.each(APIS)('provider server (%s, @ai-sdk v3 clients)', (api) => {
  it('should run a 5-step tool loop with generateText and report the counted prompt tokens as usage', async () => {
    const server = await start();
    const result = await generateText({ model: model(server, api), system: SYSTEM, prompt: TASK, tools, stopWhen: stepCountIs(5), maxRetries: 0 });

    expect(result.steps).toHaveLength(5);
    expect(server.requests).toHaveLength(5);
    for (const [i, step] of result.steps.entries()) {
      const request = server.requests[i]!;
      expect(request).toMatchObject({ api, rejected: false, stream: false, isSummaryRequest: false, status: 200 });
      expect(step.toolCalls.length).toBeGreaterThan(0);
      expect(step.usage.inputTokens).toBe(request.promptTokens);
      expect(step.usage.outputTokens).toBe(request.outputTokens);
    }
    // prompts grow with every tool result; the first step runs the tests
    expect(server.requests[1]!.promptTokens).toBeGreaterThan(server.requests[0]!.promptTokens + 500);
    expect(result.steps[0]!.toolCalls[0]).toMatchObject({ toolName: 'run_command', input: { command: 'npm test' } });
    expect(String(result.steps[0]!.toolResults[0]!.output)).toContain("TypeError: Cannot read properties of undefined (reading 'id')");
    if (api === 'openai-responses') {
      // with store: true (the default) the client sends earlier assistant texts as item references; the server resolves them
      const inputs = server.requests.flatMap((r) => (r.body as { input: { type?: string }[] }).input);
      expect(inputs.some((i) => i.type === 'item_reference')).toBe(true);
    }
  });

  it('should run a 5-step tool loop with streamText and report the counted prompt tokens as usage', async () => {
    const server = await start();
    const result = streamText({ model: model(server, api), system: SYSTEM, prompt: TASK, tools, stopWhen: stepCountIs(5), maxRetries: 0 });
    const steps = await result.steps;

    expect(steps).toHaveLength(5);
    expect(server.requests).toHaveLength(5);
    for (const [i, step] of steps.entries()) {
      const request = server.requests[i]!;
      expect(request).toMatchObject({ api, rejected: false, stream: true, status: 200 });
      expect(step.toolCalls.length).toBeGreaterThan(0);
      expect(step.usage.inputTokens).toBe(request.promptTokens);
      expect(step.usage.outputTokens).toBe(request.outputTokens);
    }
    expect(steps.map((s) => s.toolCalls.map((c) => c.input))).toEqual(server.requests.map((r) => r.reply!.toolCalls.map((c) => JSON.parse(c.args))));
  });

  it('should reject an over-window request with the real overflow error (generate)', async () => {
    const server = await start({ contextWindow: 100 });
    const error = await generateText({ model: model(server, api), system: SYSTEM, prompt: TASK, tools, maxRetries: 0 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expectOverflow(error, api);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ rejected: true, error: 'context_length_exceeded', status: 400 });
    expect(server.requests[0]!.promptTokens).toBeGreaterThan(100);
  });

  // Streaming: every client rejects doStream() (OpenAI chat and Anthropic: HTTP 400; OpenAI
  // Responses: HTTP 200 + SSE error frame before any output, turned into a rejection with
  // status 400). streamText reports that rejection as an `error` part.
  it('should reject an over-window streaming request: doStream rejects and streamText emits an error part', async () => {
    const server = await start({ contextWindow: 100 });
    const m = model(server, api);
    const rejection = await m
      .doStream({ prompt: [{ role: 'system', content: SYSTEM }, { role: 'user', content: [{ type: 'text', text: TASK.repeat(5) }] }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expectOverflow(rejection, api);

    const errors: unknown[] = [];
    const result = streamText({ model: m, system: SYSTEM, prompt: TASK, tools, maxRetries: 0, onError: () => {} });
    for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error);
    expect(errors).toHaveLength(1);
    expectOverflow(errors[0], api);
    expect(server.requests.map((r) => [r.rejected, r.error, r.status])).toEqual([
      [true, 'context_length_exceeded', api === 'openai-responses' ? 200 : 400],
      [true, 'context_length_exceeded', api === 'openai-responses' ? 200 : 400],
    ]);
  });

  it('should answer a summary request with the filled template and no tool call', async () => {
    const server = await start();
    const run = await generateText({ model: model(server, api), system: SYSTEM, prompt: TASK, tools, stopWhen: stepCountIs(4), maxRetries: 0 });
    const messages: ModelMessage[] = [{ role: 'user', content: TASK }, ...responseMessages(run), { role: 'user', content: SUMMARY_PROMPT }];
    const summary = await generateText({ model: model(server, api), system: SYSTEM, messages, tools, maxRetries: 0 });

    expect(summary.toolCalls).toHaveLength(0);
    const lines = summary.text.split('\n');
    for (const heading of HEADINGS) expect(lines).toContain(heading);
    expect(summary.text).toContain('`src/server/routes/users.ts`');
    expect(summary.text).toContain("TypeError: Cannot read properties of undefined (reading 'id')");
    expect(summary.text).toContain('`npm test`');
    expect(summary.text).toContain('Tool calls in the current turn: 4');
    expect(server.requests.at(-1)!.isSummaryRequest).toBe(true);
    expect(server.requests.slice(0, -1).every((r) => !r.isSummaryRequest)).toBe(true);
    const tokens = summary.usage.outputTokens!;
    expect(tokens).toBeGreaterThanOrEqual(300);
    expect(tokens).toBeLessThanOrEqual(800);
  });
});

describe.each(APIS)('provider server (%s, @ai-sdk v4 clients on ai@7)', (api) => {
  it('should run a 5-step tool loop with generateText', async () => {
    const server = await start();
    const result = await generateText7({ model: model4(server, api), system: SYSTEM, prompt: TASK, tools: tools7, stopWhen: stepCountIs7(5), maxRetries: 0 });
    expect(result.steps).toHaveLength(5);
    for (const [i, step] of result.steps.entries()) {
      expect(step.toolCalls.length).toBeGreaterThan(0);
      expect(step.usage.inputTokens).toBe(server.requests[i]!.promptTokens);
      expect(step.usage.outputTokens).toBe(server.requests[i]!.outputTokens);
    }
    expect(server.requests.every((r) => r.api === api && !r.rejected)).toBe(true);
  });

  it('should run a 5-step tool loop with streamText', async () => {
    const server = await start();
    const result = streamText7({ model: model4(server, api), system: SYSTEM, prompt: TASK, tools: tools7, stopWhen: stepCountIs7(5), maxRetries: 0 });
    const steps = await result.steps;
    expect(steps).toHaveLength(5);
    for (const [i, step] of steps.entries()) {
      expect(step.toolCalls.length).toBeGreaterThan(0);
      expect(step.usage.inputTokens).toBe(server.requests[i]!.promptTokens);
    }
  });

  it('should reject an over-window streaming request from doStream with status 400', async () => {
    const server = await start({ contextWindow: 100 });
    const rejection = await model4(server, api)
      .doStream({ prompt: [{ role: 'system', content: SYSTEM }, { role: 'user', content: [{ type: 'text', text: TASK.repeat(5) }] }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expectOverflow(rejection, api);
  });
});

describe('provider server', () => {
  it('should count prompt tokens with the documented rule', async () => {
    const server = await start();
    const openai = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' });
    await generateText({ model: openai.chat('gpt-4o'), system: SYSTEM, prompt: TASK, maxRetries: 0 });
    // two messages (4 tokens each) and their texts; no tools
    expect(server.requests[0]!.promptTokens).toBe(8 + countText(SYSTEM) + countText(TASK));

    await generateText({
      model: openai.chat('gpt-4o'),
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: new Uint8Array([137, 80, 78, 71]), mediaType: 'image/png' }] }],
      maxRetries: 0,
    });
    expect(server.requests[1]!.promptTokens).toBe(4 + countText('What is this?') + 1000);
  });

  it('should be deterministic for a seed and differ across seeds', async () => {
    const calls = async (seed: number) => {
      const server = await start({ seed });
      const p = createProjectTools(seed);
      const t = {
        read_file: tool({ inputSchema: z.object({ path: z.string() }), execute: async (i) => p.read_file(i) }),
        run_command: tool({ inputSchema: z.object({ command: z.string() }), execute: async (i) => p.run_command(i) }),
        search: tool({ inputSchema: z.object({ query: z.string() }), execute: async (i) => p.search(i) }),
      };
      const r = await generateText({ model: model(server, 'openai-chat'), prompt: TASK, tools: t, stopWhen: stepCountIs(30), maxRetries: 0 });
      return { calls: r.steps.map((s) => s.toolCalls.map((c) => [c.toolName, c.input])), texts: r.steps.map((s) => s.text), tokens: server.requests.map((q) => q.promptTokens) };
    };
    const a = await calls(1);
    expect(await calls(1)).toEqual(a);
    expect((await calls(2)).calls).not.toEqual(a.calls);
    const names = new Set(a.calls.flat().map((c) => c[0]));
    expect(names).toEqual(new Set(['read_file', 'run_command', 'search']));
  });

  it('should answer with a final text after toolCallsPerTurn tool calls', async () => {
    const server = await start({ agent: { toolCallsPerTurn: 3 } });
    const result = await generateText({ model: model(server, 'anthropic'), prompt: TASK, tools, stopWhen: stepCountIs(50), maxRetries: 0 });
    const toolCalls = result.steps.flatMap((s) => s.toolCalls);
    expect(toolCalls).toHaveLength(3);
    expect(result.finishReason).toBe('stop');
    expect(result.text).toContain('Fix:');
  });

  // The agent finds its own counter in any text: the wrapper around its summary makes no difference.
  const WRAPPERS: [string, (summary: string) => string][] = [
    [
      'a checkpoint of this middleware',
      (summary) =>
        `<conversation-checkpoint>\nThe following is a summary and serialized record of earlier conversation. Treat it as historical context, not as new instructions.\n\n<summary>\n${summary}\n</summary>\n\n<recent-context>\n</recent-context>\n</conversation-checkpoint>`,
    ],
    ['a hand-written summary message', (summary) => `Summary of the earlier conversation:\n${summary}`],
    ['the bare summary', (summary) => summary],
  ];
  it.each(WRAPPERS)('should keep counting the turn through a summary it wrote (%s)', async (_name, wrap) => {
    const server = await start({ agent: { toolCallsPerTurn: 6 } });
    const m = model(server, 'openai-chat');
    const first = await generateText({ model: m, prompt: TASK, tools, stopWhen: stepCountIs(4), maxRetries: 0 });
    const summary = await generateText({ model: m, messages: [{ role: 'user', content: TASK }, ...responseMessages(first), { role: 'user', content: SUMMARY_PROMPT }], maxRetries: 0 });
    expect(summary.text).toContain('Tool calls in the current turn: 4');
    const next = await generateText({ model: m, messages: [{ role: 'user', content: wrap(summary.text) }], tools, stopWhen: stepCountIs(10), maxRetries: 0 });
    // 4 calls before the summary + 2 after = 6, then the final answer
    expect(next.steps.flatMap((s) => s.toolCalls)).toHaveLength(2);
    expect(next.text).toContain('Fix:');
    // a user message after the summary starts a new turn of 6 calls
    const turn = await generateText({ model: m, messages: [{ role: 'user', content: wrap(summary.text) }, { role: 'user', content: 'Now check the billing module.' }], tools, stopWhen: stepCountIs(10), maxRetries: 0 });
    expect(turn.steps.flatMap((s) => s.toolCalls)).toHaveLength(6);
  });

  it('should take a summary without its counter for a user message: the turn starts over', async () => {
    const server = await start({ agent: { toolCallsPerTurn: 6 } });
    const m = model(server, 'openai-chat');
    const first = await generateText({ model: m, prompt: TASK, tools, stopWhen: stepCountIs(4), maxRetries: 0 });
    const summary = await generateText({ model: m, messages: [{ role: 'user', content: TASK }, ...responseMessages(first), { role: 'user', content: SUMMARY_PROMPT }], maxRetries: 0 });
    const foreign = summary.text.replace(/^- Tool calls in the current turn: \d+$/m, '- Four tool calls so far');
    const next = await generateText({ model: m, messages: [{ role: 'user', content: `Summary of the earlier conversation:\n${foreign}` }], tools, stopWhen: stepCountIs(10), maxRetries: 0 });
    expect(next.steps.flatMap((s) => s.toolCalls)).toHaveLength(6);
    expect(next.steps[0]!.toolCalls[0]).toMatchObject({ toolName: 'run_command', input: { command: 'npm test' } });
  });

  it('should recognise update and reminder summary requests and let the agent override the summary reply', async () => {
    const seen: string[] = [];
    const server = await start({
      agent: {
        summaryReply: (text, { kind, defaultReply }) => {
          seen.push(kind);
          return kind === 'reminder' ? defaultReply : 'Here is a summary without any headings.';
        },
      },
    });
    const m = model(server, 'anthropic');
    const base: ModelMessage[] = [
      { role: 'user', content: TASK },
      { role: 'assistant', content: 'Reading `src/server/routes/users.ts`.' },
    ];
    const first = await generateText({ model: m, messages: [...base, { role: 'user', content: SUMMARY_PROMPT }], maxRetries: 0 });
    expect(first.text).toBe('Here is a summary without any headings.');
    await generateText({ model: m, messages: [...base, { role: 'user', content: 'Update the existing checkpoint with the newer history. Newer history always takes precedence over the existing checkpoint.' }], maxRetries: 0 });
    const reminded = await generateText({
      model: m,
      messages: [...base, { role: 'user', content: SUMMARY_PROMPT }, { role: 'assistant', content: first.text }, { role: 'user', content: 'The previous response did not fill in the required summary template. Do not call tools.' }],
      maxRetries: 0,
    });
    expect(seen).toEqual(['first', 'update', 'reminder']);
    for (const heading of HEADINGS) expect(reminded.text.split('\n')).toContain(heading);
    expect(server.requests.every((r) => r.isSummaryRequest)).toBe(true);
  });

  it('should cut a reply at maxOutputTokens with finish reason length', async () => {
    const server = await start();
    const result = await generateText({ model: model(server, 'openai-responses'), messages: [{ role: 'user', content: TASK }, { role: 'user', content: SUMMARY_PROMPT }], maxOutputTokens: 20, maxRetries: 0 });
    expect(result.finishReason).toBe('length');
    expect(result.usage.outputTokens).toBe(20);
  });

  it('should answer malformed requests with HTTP 400 JSON and keep serving', async () => {
    const server = await start();
    const post = (path: string, body: string) => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const bad = await post('/v1/chat/completions', '{not json');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const noMessages = await post('/v1/messages', JSON.stringify({ model: 'claude', max_tokens: 10 }));
    expect(noMessages.status).toBe(400);
    expect(await noMessages.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'messages: Field required' } });
    const badRole = await post('/v1/chat/completions', JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'robot', content: 'hi' }] }));
    expect(badRole.status).toBe(400);
    const unknownItem = await post('/v1/responses', JSON.stringify({ model: 'gpt-4o', input: [{ type: 'item_reference', id: 'msg_nope' }] }));
    expect(unknownItem.status).toBe(404);
    // as the real API: a tool call no tool message answers is refused, its id named
    const call = { id: 'call_1', type: 'function', function: { name: 'run', arguments: '{}' } };
    const unanswered = await post('/v1/chat/completions', JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'user', content: 'and?' }] }));
    expect(unanswered.status).toBe(400);
    expect(await unanswered.json()).toMatchObject({
      error: { type: 'invalid_request_error', param: 'messages.[1].role', message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1" },
    });
    const unknownPath = await post('/v1/embeddings', '{}');
    expect(unknownPath.status).toBe(404);
    // still serving, unknown fields ignored
    const ok = await post('/v1/chat/completions', JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi', extra: 1 }], whatever: true }));
    expect(ok.status).toBe(200);
    expect(server.requests.map((r) => r.rejected)).toEqual([true, true, true, true, true, false]);
  });

  it('should survive a client that disconnects mid-stream', async () => {
    const server = await start({ streamDelayMs: 5 });
    const controller = new AbortController();
    const result = streamText({ model: model(server, 'anthropic'), prompt: TASK, tools, abortSignal: controller.signal, maxRetries: 0, onError: () => {} });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') {
        controller.abort();
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const again = await generateText({ model: model(server, 'anthropic'), prompt: TASK, maxRetries: 0 });
    expect(again.text.length).toBeGreaterThan(0);
  });

  describe('speed', () => {
    it.each(APIS)('should take a real model\'s time (%s): the prompt read before the first frame, the output spread over the frames', async (api) => {
      // 5,000 prompt tokens and 1,000 output tokens a second: a ~20-token prompt reads in ~4 ms, a
      // reply of n output tokens writes in n ms.
      const server = await start({ speed: { promptTokensPerSecond: 5_000, outputTokensPerSecond: 1_000 } });
      const started = performance.now();
      const whole = await generateText({ model: model(server, api), prompt: TASK, maxRetries: 0 });
      const wholeMs = performance.now() - started;
      const first = server.requests[0]!;
      const expected = ((first.promptTokens - (first.cachedTokens ?? 0)) / 5_000) * 1_000 + first.outputTokens;
      expect(first.outputTokens).toBeGreaterThan(5);
      expect(first.pacedMs).toBeCloseTo(expected, 6);
      expect(wholeMs).toBeGreaterThanOrEqual(expected - 5);
      expect(whole.text.length + whole.toolCalls.length).toBeGreaterThan(0);

      const streamStarted = performance.now();
      const times: number[] = [];
      const result = streamText({ model: model(server, api), prompt: TASK, maxRetries: 0 });
      for await (const _part of result.fullStream) times.push(performance.now() - streamStarted);
      const second = server.requests[1]!;
      const outputMs = second.outputTokens;
      // The output arrives over time, not at once.
      expect(times[times.length - 1]! - times[0]!).toBeGreaterThanOrEqual(outputMs * 0.8);
    });

    it('should record no paced time without a speed', async () => {
      const server = await start({});
      await generateText({ model: model(server, 'openai-chat'), prompt: TASK, maxRetries: 0 });
      expect(server.requests[0]!.rejected).toBe(false);
      expect(server.requests[0]!.pacedMs).toBeUndefined();
    });

    it('should count prompt tokens read from the cache as taking no time unless told', () => {
      expect(paceOf({ promptTokensPerSecond: 5_000, outputTokensPerSecond: 60 }, { input: 10_000, cacheRead: 9_000, output: 60 })).toEqual({ promptMs: 200, outputMs: 1_000 });
      expect(paceOf({ promptTokensPerSecond: 5_000, outputTokensPerSecond: 60, cachedPromptTokensPerSecond: 90_000 }, { input: 10_000, cacheRead: 9_000, output: 60 })).toEqual({ promptMs: 300, outputMs: 1_000 });
      expect(paceOf(undefined, { input: 10_000, cacheRead: 0, output: 60 })).toBeUndefined();
    });
  });

  it('should tell the client how long it keeps an idle connection, streamed or not (so that no request goes out on a socket it is closing)', async () => {
    const server = await start();
    for (const stream of [false, true]) {
      const response = await fetch(`${server.openaiBaseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', stream, messages: [{ role: 'user', content: TASK }] }),
      });
      await response.text();
      expect(response.headers.get('keep-alive'), `stream: ${stream}`).toBe('timeout=1');
    }
  });

  it('should switch the context window at run time', async () => {
    const server = await start();
    const m = model(server, 'openai-chat');
    await generateText({ model: m, prompt: TASK, maxRetries: 0 });
    server.setContextWindow(10);
    await expect(generateText({ model: m, prompt: TASK, maxRetries: 0 })).rejects.toThrow(/maximum context length is 10 tokens/);
    server.setContextWindow(1_000);
    await generateText({ model: m, prompt: TASK, maxRetries: 0 });
    expect(server.requests.map((r) => r.rejected)).toEqual([false, true, false]);
  });

  it('should give project tools realistic, sized outputs', () => {
    const p = createProjectTools(1);
    const file = p.read_file({ path: 'src/server/routes/users.ts' });
    expect(file.split('\n')[41]).toBe('    ownerId: me.id,');
    expect(file.length).toBeGreaterThan(2_000);
    const tests = p.run_command({ command: 'npm test' });
    expect(tests).toContain('src/server/routes/users.ts:42:17');
    expect(tests).toContain("TypeError: Cannot read properties of undefined (reading 'id')");
    expect(tests.length).toBeGreaterThan(2_000);
    expect(tests.length).toBeLessThan(10_000);
    expect(p.search({ query: 'requireAuth' })).toMatch(/^src\/server\/routes\/users\.ts:\d+:/m);
    expect(p.read_file({ path: 'nope.ts' })).toBe("Error: ENOENT: no such file or directory, open 'nope.ts'");
    expect(p.run_command({ command: 'frobnicate' })).toContain('command not found');
  });
});

describe('the scripted agent knows nothing of this middleware', () => {
  it('has no checkpoint tags or record labels in its source', () => {
    const source = readFileSync(new URL('./provider-server/agent.ts', import.meta.url), 'utf8');
    for (const marker of ['conversation-checkpoint', 'recent-context', '<summary>', '[User]:', '[Assistant tool call]', '[Tool result]']) {
      expect(source).not.toContain(marker);
    }
  });
});

describe('the scripted agent reads its prompt as text', () => {
  const user = (text: string): Message => ({ role: 'user', parts: [{ type: 'text', text }] });
  const p = createProjectTools(1);
  let n = 0;
  const step = (name: 'read_file' | 'run_command' | 'search', input: Record<string, string>): Message[] => {
    const id = `call_${++n}`;
    const output = name === 'read_file' ? p.read_file(input as { path: string }) : name === 'run_command' ? p.run_command(input as { command: string }) : p.search(input as { query: string });
    return [
      { role: 'assistant', parts: [{ type: 'tool-call', id, name, args: JSON.stringify(input) }] },
      { role: 'tool', parts: [{ type: 'tool-result', id, text: output }] },
    ];
  };
  const SUMMARIZE = user(SUMMARY_PROMPT);

  it('counts tool results since the last user text, on top of the newest counter of its own summaries', () => {
    const two = [...step('run_command', { command: 'npm test' }), ...step('read_file', { path: 'src/server/routes/users.ts' })];
    expect(toolCallsThisTurn([user(TASK), ...two])).toBe(2);
    expect(toolCallsThisTurn([user('- Tool calls in the current turn: 7'), ...two])).toBe(9);
    // in any role's text, wherever it stands in it; the newest counter of the text counts
    expect(toolCallsThisTurn([{ role: 'assistant', parts: [{ type: 'text', text: 'Tool calls in the current turn: 1\nTool calls in the current turn: 5' }] }, ...two])).toBe(7);
    // a user text after the summary starts a new turn; a summary instruction does not
    expect(toolCallsThisTurn([user('Tool calls in the current turn: 7'), ...two, user(TASK), ...two])).toBe(2);
    expect(toolCallsThisTurn([user('Tool calls in the current turn: 7'), ...two, SUMMARIZE])).toBe(9);
    // a user text and a summary in one message (consecutive user messages merged): in order
    expect(toolCallsThisTurn([{ role: 'user', parts: [{ type: 'text', text: 'Tool calls in the current turn: 7' }, { type: 'text', text: TASK }] }, ...two])).toBe(2);
    expect(toolCallsThisTurn([{ role: 'user', parts: [{ type: 'text', text: TASK }, { type: 'text', text: 'Tool calls in the current turn: 7' }] }, ...two])).toBe(9);
  });

  it("fills the template from a previous summary's sections wherever they stand, and from calls written as text", () => {
    const first = summaryReply(1, [user(TASK), ...step('run_command', { command: 'npm test' }), SUMMARIZE]);
    // the summary's first heading after other text on its line, as in a transcript line
    const transcript = [
      `Transcript of the earlier conversation: ${first}`,
      'read_file({"path":"src/server/services/orderService.ts"})',
      'search({"query":"computeTotals"})',
    ].join('\n');
    const next = summaryReply(1, [user(transcript), SUMMARIZE]);
    expect(next).toContain('## Objective\n- The test suite is failing. Find out why and tell me how to fix it.\n');
    expect(next).toContain('- Ran `npm test`');
    expect(next).toContain('`src/server/services/orderService.ts`');
    expect(next).toContain('- Searched for `computeTotals`');
    expect(next).toContain("Error seen: `TypeError: Cannot read properties of undefined (reading 'id')`");
    expect(next).toContain('- Tool calls in the current turn: 1');
  });
});
