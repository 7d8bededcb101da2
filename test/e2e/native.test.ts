// Native compaction end to end (docs/native.md), AI SDK 7: the real, unmodified `@ai-sdk/openai` v4
// Responses client and `@ai-sdk/anthropic` v4 client talk HTTP to the local provider server, which
// answers a compaction request (OpenAI `compaction_trigger`, Anthropic `compaction: summarize`) with
// one compaction item, and counts an item that comes back as standing for everything before it
// (test/support/provider-server/compaction.ts). It imports ai@7 by name, so it runs under the ai6
// vitest project (the ai7 project excludes test/e2e/**).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel, type ModelMessage } from 'ai7';
import { createOpenAI } from 'openai4';
import { createAnthropic } from 'anthropic4';
import { z } from 'zod';
import { compaction, type CompactionMiddleware, type CompactionOptions, type CompactionRecord } from '../../src';
import { createProjectTools, projectToolDescriptions, startProviderServer, type ProviderServer, type RecordedRequest } from '../support/provider-server/index';

const SYSTEM = 'You are a careful coding agent working in a TypeScript repository. Use the tools to investigate before you answer.';
const TASK = 'The test suite is failing. Find out why and tell me how to fix it.';
/** The window the server enforces and the middleware is told (ceiling: 12,000 - 15 % = 10,200). */
const WINDOW = 12_000;
const STEPS = 40;

type Api = 'openai' | 'anthropic';
type Mode = 'generate' | 'stream';
type Body = Record<string, unknown> & { input?: Record<string, unknown>[]; messages?: { role: string; content: Record<string, unknown>[] }[] };

const servers: ProviderServer[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(contextWindow: number, agent?: Parameters<typeof startProviderServer>[0]['agent']): Promise<ProviderServer> {
  const server = await startProviderServer({ contextWindow, seed: 1, agent: agent ?? { toolCallsPerTurn: 100_000 } });
  servers.push(server);
  return server;
}

function clientModel(server: ProviderServer, api: Api | 'openai-chat') {
  if (api === 'anthropic') return createAnthropic({ baseURL: server.anthropicBaseURL, apiKey: 'test' })('claude-sonnet-4-6');
  const openai = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' });
  return api === 'openai' ? openai.responses('gpt-5') : openai.chat('gpt-4.1');
}

const project = createProjectTools(1);
const tools = {
  read_file: tool({ description: projectToolDescriptions.read_file, inputSchema: z.object({ path: z.string() }), execute: async (input: { path: string }) => project.read_file(input) }),
  run_command: tool({ description: projectToolDescriptions.run_command, inputSchema: z.object({ command: z.string() }), execute: async (input: { command: string }) => project.run_command(input) }),
  search: tool({ description: projectToolDescriptions.search, inputSchema: z.object({ query: z.string() }), execute: async (input: { query: string }) => project.search(input) }),
};

interface Run {
  middleware: CompactionMiddleware;
  records: CompactionRecord[];
  warnings: string[];
  errors: unknown[];
  steps: { toolCalls: unknown[] }[];
  messages: ModelMessage[];
}

/** A tool loop through the wrapped real client. */
async function loop(
  server: ProviderServer,
  api: Api | 'openai-chat',
  mode: Mode,
  options: CompactionOptions & { steps?: number; openaiStore?: boolean; messages?: ModelMessage[] },
): Promise<Run> {
  const { steps: stepCount = STEPS, openaiStore: store, messages: prompt, ...settings } = options;
  const records: CompactionRecord[] = [];
  const warnings: string[] = [];
  const middleware = compaction({ ...settings, logger: { info: () => {}, warn: (line) => warnings.push(line) }, onCompaction: (record) => records.push(record) });
  const call = {
    model: wrapLanguageModel({ model: clientModel(server, api), middleware: middleware as never }),
    system: SYSTEM,
    ...(prompt === undefined ? { prompt: TASK } : { messages: prompt }),
    tools,
    stopWhen: stepCountIs(stepCount),
    maxRetries: 0,
    ...(store === undefined ? {} : { providerOptions: { openai: { store } } }),
  } as Parameters<typeof generateText>[0];
  const errors: unknown[] = [];
  if (mode === 'generate') {
    const result = await generateText(call);
    return { middleware, records, warnings, errors, steps: result.steps, messages: await result.responseMessages };
  }
  const result = streamText({ ...(call as Parameters<typeof streamText>[0]), onError: () => {} });
  for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error);
  return { middleware, records, warnings, errors, steps: await result.steps, messages: await result.responseMessages };
}

const bodyOf = (request: RecordedRequest) => request.body as Body;

/** The compaction item a request carries, as the server received it, and where. */
function carried(request: RecordedRequest, api: Api): { item: Record<string, unknown>; index: number } | undefined {
  const body = bodyOf(request);
  if (api === 'openai') {
    const index = (body.input ?? []).findIndex((item) => item.type === 'compaction' || (item.type === 'item_reference' && String(item.id).startsWith('cmp_')));
    return index < 0 ? undefined : { item: body.input![index]!, index };
  }
  for (const [index, message] of (body.messages ?? []).entries()) {
    const item = Array.isArray(message.content) ? message.content.find((block) => block.type === 'compaction') : undefined;
    if (item) return { item, index };
  }
  return undefined;
}

/** What a compaction record's item goes out as on the wire. */
function wireItem(record: CompactionRecord, api: Api, store: boolean | undefined): Record<string, unknown> {
  const item = record.native!.item as { text?: string; providerOptions: Record<string, Record<string, unknown>> };
  if (api === 'anthropic') {
    const options = item.providerOptions.anthropic!;
    return { type: 'compaction', content: item.text, ...(options.signature === undefined ? {} : { signature: options.signature }) };
  }
  const options = item.providerOptions.openai!;
  return store === false ? { type: 'compaction', id: options.itemId, encrypted_content: options.encryptedContent } : { type: 'item_reference', id: options.itemId };
}

/** The summary a record's item stands for, as the server encoded it. */
function summaryOf(record: CompactionRecord): string {
  const item = record.native!.item as { text?: string; providerOptions: Record<string, Record<string, unknown>> };
  if (record.native!.provider === 'anthropic') return item.text!;
  const encrypted = String(item.providerOptions.openai!.encryptedContent);
  return (JSON.parse(Buffer.from(encrypted.slice('gAAAAA'.length), 'base64url').toString('utf8')) as { summary: string }).summary;
}

const userTask = (api: Api) =>
  api === 'openai' ? { role: 'user', content: [{ type: 'input_text', text: TASK }] } : { role: 'user', content: [{ type: 'text', text: TASK }] };

const CASES: { api: Api; mode: Mode; store?: boolean }[] = [
  { api: 'openai', mode: 'generate', store: false },
  { api: 'openai', mode: 'stream', store: false },
  { api: 'openai', mode: 'generate', store: true },
  { api: 'openai', mode: 'stream', store: true },
  { api: 'anthropic', mode: 'generate' },
  { api: 'anthropic', mode: 'stream' },
];
const label = (c: (typeof CASES)[number]) => `${c.api}${c.store === undefined ? '' : ` store:${c.store}`} ${c.mode}`;

describe('native compaction with the real clients (ai@7, @ai-sdk v4)', () => {
  for (const c of CASES) {
    it(`should let the provider compact a ${STEPS}-step tool loop and send its item back unchanged (${label(c)})`, async () => {
      const server = await start(WINDOW);
      // One trigger per compaction, each sent by the step after it: nothing prepared ahead
      // (docs/design.md, "Preparing ahead") here.
      const run = await loop(server, c.api, c.mode, { contextWindow: WINDOW, native: true, openaiStore: c.store, prepare: false });
      const { requests } = server;

      // the loop ran to the end; every request fit the window; no summary (template) request went out
      expect(run.errors).toEqual([]);
      expect(run.steps).toHaveLength(STEPS);
      for (const step of run.steps) expect(step.toolCalls.length).toBeGreaterThan(0);
      expect(requests.filter((r) => r.rejected || r.promptTokens > WINDOW)).toEqual([]);
      expect(requests.filter((r) => r.isSummaryRequest)).toEqual([]);
      expect(run.warnings).toEqual([]);

      // the provider compacted, more than once, each time on the step's own request with the trigger
      const triggers = requests.flatMap((r, index) => (r.nativeCompaction ? [index] : []));
      expect(triggers.length).toBeGreaterThanOrEqual(2);
      expect(run.records).toHaveLength(triggers.length);
      expect(requests.filter((r) => !r.nativeCompaction)).toHaveLength(STEPS);
      for (const [n, t] of triggers.entries()) {
        const trigger = requests[t]!;
        const body = bodyOf(trigger);
        expect(trigger.stream).toBe(false);
        if (c.api === 'openai') {
          expect(body.input!.at(-1)).toEqual({ type: 'compaction_trigger' });
          expect(body.store).toBe(c.store);
        } else {
          expect(body.compaction).toEqual({ type: 'summarize' });
        }
        // the record's item is the one the provider returned
        const record = run.records[n]!;
        expect(record).toMatchObject({ reason: 'auto', summary: '', record: '', native: { provider: c.api } });
        expect(summaryOf(record)).toBe(trigger.reply!.text);
        // ... and stands for the whole turn so far: the agent resumes from it rather than starting over
        // (but the newest step, which stays live after it and is not in the trigger request)
        const stepsBefore = requests.slice(0, t).filter((r) => !r.nativeCompaction).length;
        // (the agent's calls: not the provider-executed `compaction` call a compacting step shows)
        const callsCovered = run.steps.slice(0, stepsBefore - 1).reduce((sum, step) => sum + step.toolCalls.filter((call) => (call as { providerExecuted?: boolean }).providerExecuted !== true).length, 0);
        expect(summaryOf(record)).toContain(`Tool calls in the current turn: ${callsCovered}\n`);
        // from the next trigger on, the previous item is what the trigger compacts again
        if (n > 0) expect(carried(trigger, c.api)?.item).toEqual(wireItem(run.records[n - 1]!, c.api, c.store));

        // the step goes out with the item, unchanged, then the newest user message (without tool results)
        const after = requests[t + 1]!;
        expect(after).toMatchObject({ nativeCompaction: false, rejected: false, stream: c.mode === 'stream' });
        const item = wireItem(record, c.api, c.store);
        // ... and the newest step, live: the calls and the results that answer them
        if (c.api === 'openai') {
          const input = bodyOf(after).input!;
          expect(input.slice(0, 3)).toEqual([{ role: 'developer', content: SYSTEM }, item, userTask(c.api)]);
          const live = input.slice(3) as Array<{ type?: string; role?: string; call_id?: string }>;
          // the step's own words, if any, then its calls and their outputs
          expect(live.every((entry) => entry.role === 'assistant' || entry.type === 'function_call' || entry.type === 'function_call_output')).toBe(true);
          const calls = live.filter((entry) => entry.type === 'function_call').map((entry) => entry.call_id);
          expect(calls.length).toBeGreaterThan(0);
          expect(live.filter((entry) => entry.type === 'function_call_output').map((entry) => entry.call_id)).toEqual(calls);
        } else {
          const messages = bodyOf(after).messages!;
          expect(messages.slice(0, 2)).toEqual([{ role: 'assistant', content: [item] }, userTask(c.api)]);
          const [call, results] = messages.slice(2) as Array<{ role: string; content: Array<{ type: string; id?: string; tool_use_id?: string }> }>;
          const ids = call!.content.filter((block) => block.type === 'tool_use').map((block) => block.id);
          expect(call!.role).toBe('assistant');
          expect(ids.length).toBeGreaterThan(0);
          expect(results!.role).toBe('user');
          expect(results!.content.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id)).toEqual(ids);
          expect(messages).toHaveLength(4);
        }
        // the server counted the item in place of everything before it
        expect(after.promptTokens).toBeLessThan(trigger.promptTokens / 4);

        // every step until the next compaction carries the same item first; the next trigger waits
        // for a step whose usage (the provider's count of the item) came back
        const next = triggers[n + 1] ?? requests.length;
        expect(next - t).toBeGreaterThan(1);
        for (const request of requests.slice(t + 1, next)) expect(carried(request, c.api)).toEqual({ item, index: c.api === 'openai' ? 1 : 0 });
      }
      expect(run.middleware.last()).toEqual(run.records.at(-1));
      expect(run.middleware.last()!.native!.item).toMatchObject(
        c.api === 'openai' ? { type: 'custom', kind: 'openai.compaction' } : { type: 'text', providerOptions: { anthropic: { type: 'compaction' } } },
      );
    });
  }

  for (const api of ['openai', 'anthropic'] as const) {
    it(`should wait for the provider's count of the item before compacting again (${api})`, async () => {
      // A stays covered by the item; the step sent with the item is aborted before its usage comes
      // back, so the next call, over the ceiling by estimate, still goes out without compacting.
      const controller = new AbortController();
      let abortOnItem = true;
      const server = await start(200_000, {
        respond: (request) => {
          if (abortOnItem && request.messages.some((m) => m.parts.some((p) => p.type === 'text' && p.text.startsWith('<conversation-checkpoint>')))) {
            abortOnItem = false;
            controller.abort();
          }
          return { text: 'Noted.' };
        },
      });
      const records: CompactionRecord[] = [];
      const middleware = compaction({ contextWindow: WINDOW, native: true, keep: 2_000, onCompaction: (record) => records.push(record) });
      const model = wrapLanguageModel({ model: clientModel(server, api), middleware: middleware as never });
      const conversation: ModelMessage[] = [
        { role: 'user', content: 'Where do we stand with the release?' },
        { role: 'assistant', content: 'Two blockers left: the session bug and the totals bug.' },
        { role: 'user', content: 'Which one first?' },
      ];
      middleware.compactNext();
      await expect(generateText({ model, messages: conversation, maxRetries: 0, abortSignal: controller.signal })).rejects.toThrow();
      expect(server.requests.map((r) => r.nativeCompaction)).toEqual([true, false]);
      expect(records).toHaveLength(1);

      // a long answer (over the ceiling of 10,200 by the middleware's estimate, ~11,700) and a new
      // question: there is older conversation to compact, but the item's size is still unknown
      const long = Array.from({ length: 8_400 }, (_, i) => String((i * 7_919) % 10_007)).join(' ');
      conversation.push({ role: 'assistant', content: long }, { role: 'user', content: 'And the totals bug?' });
      const second = await generateText({ model, messages: conversation, maxRetries: 0 });
      expect(server.requests.map((r) => r.nativeCompaction)).toEqual([true, false, false]);
      expect(carried(server.requests[2]!, api)).toBeDefined();
      expect(server.requests[2]!.promptTokens).toBeGreaterThan(10_200);

      // counted now: the next step compacts first
      conversation.push(...second.response.messages, { role: 'user', content: 'Go on.' });
      await generateText({ model, messages: conversation, maxRetries: 0 });
      expect(server.requests.map((r) => r.nativeCompaction)).toEqual([true, false, false, true, false]);
      expect(records).toHaveLength(2);
      expect(records[1]!.reason).toBe('auto');
      expect(carried(server.requests[4]!, api)!.item).toEqual(wireItem(records[1]!, api, undefined));
    });
  }

  for (const c of CASES.filter((x) => x.mode === 'generate')) {
    it(`should prepare the provider's item in the background and send it at the ceiling (${label(c)})`, async () => {
      // The clock stands still (only `Date`): the local server's items, measured to take time,
      // would time preparing to them, and the run would depend on how busy the machine is.
      vi.useFakeTimers({ toFake: ['Date'] });
      const server = await start(WINDOW);
      const run = await loop(server, c.api, c.mode, { contextWindow: WINDOW, native: true, openaiStore: c.store });
      const { requests } = server;
      expect(run.errors).toEqual([]);
      expect(run.steps).toHaveLength(STEPS);
      expect(run.warnings).toEqual([]);
      expect(requests.filter((r) => r.rejected || r.isSummaryRequest)).toEqual([]);
      // Each trigger went out beside a step, and each item sent is one of them. A trigger made at
      // prepare x the ceiling is superseded by the one made for the next step when the growth says
      // that step reaches the ceiling (its item keeps the budget): at most two a compaction, and the
      // last ones possibly unsent (the loop ends first).
      const triggers = requests.filter((r) => r.nativeCompaction);
      expect(run.records.length).toBeGreaterThanOrEqual(2);
      expect(triggers.length).toBeLessThanOrEqual(2 * run.records.length + 2);
      const replies = triggers.map((trigger) => trigger.reply!.text);
      let seen = -1;
      for (const record of run.records) {
        expect(record).toMatchObject({ reason: 'auto', kind: 'native', prepared: true, native: { provider: c.api } });
        // in the order they were made, each sent once
        const at = replies.indexOf(summaryOf(record));
        expect(at).toBeGreaterThan(seen);
        seen = at;
      }
      // Each item is carried unchanged by every step after the one that first sent it.
      const last = run.records.at(-1)!;
      expect(carried(requests.filter((r) => !r.nativeCompaction).at(-1)!, c.api)!.item).toEqual(wireItem(last, c.api, c.store));
    });
  }

  for (const c of [...CASES.filter((x) => x.store !== true)]) {
    it(`should recover from an overflow rejection on the native path (${label(c)})`, async () => {
      // the server's window is smaller than the middleware was told
      const serverWindow = 8_000;
      const server = await start(serverWindow);
      // Each rejected step is followed by its own summary request: nothing prepared ahead
      // (docs/design.md, "Preparing ahead") here.
      const run = await loop(server, c.api, c.mode, { contextWindow: WINDOW, native: true, openaiStore: c.store, steps: 30, prepare: false });
      const { requests } = server;

      expect(run.errors).toEqual([]);
      expect(run.steps).toHaveLength(30);
      const rejected = requests.filter((r) => r.rejected);
      expect(rejected.length).toBeGreaterThan(0);
      expect(rejected.every((r) => r.error === 'context_length_exceeded')).toBe(true);
      expect(run.records.map((r) => r.reason)).toContain('overflow');
      // a rejected step is recovered by ordinary compaction: no trigger carrying the very prompt just rejected
      expect(run.warnings.some((line) => line.includes('the native compaction request was rejected as too long'))).toBe(false);
      for (const [index, request] of requests.entries()) {
        if (!request.rejected || request.nativeCompaction || request.isSummaryRequest) continue;
        expect(requests[index + 1]).toMatchObject({ nativeCompaction: false, isSummaryRequest: true });
        const retry = requests.slice(index + 1).find((r) => !r.isSummaryRequest);
        expect(retry).toMatchObject({ rejected: false, nativeCompaction: false });
      }
      expect(requests.filter((r) => !r.rejected && !r.isSummaryRequest && !r.nativeCompaction)).toHaveLength(30);
      expect(requests.filter((r) => !r.rejected).every((r) => r.promptTokens <= serverWindow)).toBe(true);
      if (c.api === 'anthropic') {
        // the window is learned from the error: later compactions are native again, and accepted
        expect(requests.some((r) => r.nativeCompaction && !r.rejected)).toBe(true);
      }
    });
  }

  for (const mode of ['generate', 'stream'] as const) {
    it(`should fall back to ordinary compaction, with one warning, for the OpenAI chat model (${mode})`, async () => {
      const server = await start(WINDOW);
      const run = await loop(server, 'openai-chat', mode, { contextWindow: WINDOW, native: true, steps: 30 });
      expect(run.errors).toEqual([]);
      expect(run.steps).toHaveLength(30);
      expect(run.records.length).toBeGreaterThanOrEqual(2);
      expect(run.records.every((r) => r.native === undefined && r.summary.includes('## Objective'))).toBe(true);
      expect(server.requests.filter((r) => r.isSummaryRequest).length).toBeGreaterThanOrEqual(run.records.length);
      expect(server.requests.some((r) => r.nativeCompaction)).toBe(false);
      expect(server.requests.every((r) => r.api === 'openai-chat' && !r.rejected && r.promptTokens <= WINDOW)).toBe(true);
      expect(run.warnings).toEqual(['ai-compaction: native compaction is not available for openai.chat:gpt-4.1; using ordinary compaction']);
    });
  }
});

describe("a provider's compaction item in the caller's prompt", () => {
  const held: { api: Api; store?: boolean; native: boolean; mode: Mode }[] = [
    { api: 'openai', store: false, native: false, mode: 'generate' },
    { api: 'openai', store: true, native: false, mode: 'stream' },
    { api: 'anthropic', native: false, mode: 'stream' },
    { api: 'openai', store: false, native: true, mode: 'stream' },
    { api: 'anthropic', native: true, mode: 'generate' },
  ];
  for (const c of held) {
    it(`should never be summarized again nor altered (${c.api}${c.store === undefined ? '' : ` store:${c.store}`}, native: ${c.native}, ${c.mode})`, async () => {
      const server = await start(WINDOW);
      // a conversation the provider compacted itself: a short tool loop, then a compaction request
      const providerOptions = c.api === 'openai' && c.store !== undefined ? { openai: { store: c.store } } : undefined;
      const first = await generateText({ model: clientModel(server, c.api), system: SYSTEM, prompt: TASK, tools, stopWhen: stepCountIs(6), maxRetries: 0, providerOptions });
      const history: ModelMessage[] = [{ role: 'user', content: TASK }, ...(await first.responseMessages)];
      const compacted = await generateText({
        model: clientModel(server, c.api),
        system: SYSTEM,
        messages: history,
        tools,
        maxRetries: 0,
        providerOptions: c.api === 'openai' ? { openai: { store: c.store ?? true, compactionTrigger: true } } : { anthropic: { compaction: { type: 'summarize' } } },
      });
      expect(server.requests.at(-1)!.nativeCompaction).toBe(true);
      const itemMessage = (await compacted.responseMessages)[0]!;
      expect(itemMessage).toMatchObject(
        c.api === 'openai'
          ? { role: 'assistant', content: [{ type: 'custom', kind: 'openai.compaction', providerOptions: { openai: { type: 'compaction' } } }] }
          : { role: 'assistant', content: [{ type: 'text', providerOptions: { anthropic: { type: 'compaction' } } }] },
      );
      const summary = server.requests.at(-1)!.reply!.text;
      const before = server.requests.length;

      const next = 'Good. Now look at the failing orders test again and keep going.';
      const run = await loop(server, c.api, c.mode, {
        contextWindow: WINDOW,
        native: c.native,
        openaiStore: c.store,
        steps: 25,
        messages: [...history, itemMessage, { role: 'user', content: next }],
      });
      expect(run.errors).toEqual([]);
      expect(run.steps).toHaveLength(25);
      const requests = server.requests.slice(before);
      expect(requests.every((r) => !r.rejected && r.promptTokens <= WINDOW)).toBe(true);
      // it compacted after the item, at least once
      expect(run.records.length).toBeGreaterThan(0);

      // what the server received: the item, unchanged, right after the system prompt; nothing before it
      const options = (itemMessage.content as { providerOptions: Record<string, Record<string, unknown>> }[])[0]!.providerOptions;
      const wire =
        c.api === 'anthropic'
          ? { type: 'compaction', content: summary, signature: options.anthropic!.signature }
          : c.store
            ? { type: 'item_reference', id: options.openai!.itemId }
            : { type: 'compaction', id: options.openai!.itemId, encrypted_content: options.openai!.encryptedContent };
      const firstStep = bodyOf(requests[0]!);
      if (c.api === 'openai') expect(firstStep.input).toEqual([{ role: 'developer', content: SYSTEM }, wire, userNext(c.api, next)]);
      else expect(firstStep.messages).toEqual([{ role: 'assistant', content: [wire] }, userNext(c.api, next)]);

      if (!c.native) {
        // ordinary compaction: the summary requests and every later step still carry the item first,
        // unchanged; the checkpoint stands only for what came after it
        expect(requests.some((r) => r.isSummaryRequest)).toBe(true);
        expect(requests.some((r) => r.nativeCompaction)).toBe(false);
        for (const request of requests) expect(carried(request, c.api)).toEqual({ item: wire, index: c.api === 'openai' ? 1 : 0 });
        for (const record of run.records) expect(record.messagesCovered).toBeGreaterThan(history.length + 1);
        const last = bodyOf(requests.at(-1)!);
        const afterItem = c.api === 'openai' ? last.input![2] : last.messages![1];
        expect(afterItem).toMatchObject({ role: 'user', content: [{ text: expect.stringMatching(/^<conversation-checkpoint>/) }] });
      } else {
        // native: the provider compacts the item again with what followed; its new item stands for both
        expect(requests.some((r) => r.isSummaryRequest)).toBe(false);
        const trigger = requests.find((r) => r.nativeCompaction)!;
        expect(carried(trigger, c.api)).toEqual({ item: wire, index: c.api === 'openai' ? 1 : 0 });
        const last = requests.at(-1)!;
        expect(carried(last, c.api)!.item).toEqual(wireItem(run.records.at(-1)!, c.api, c.store));
        expect(JSON.stringify(last.body)).not.toContain(JSON.stringify(wire));
      }
    });
  }
});

const userNext = (api: Api, text: string) =>
  api === 'openai' ? { role: 'user', content: [{ type: 'input_text', text }] } : { role: 'user', content: [{ type: 'text', text }] };

describe('the provider server: native compaction wire formats', () => {
  const history: ModelMessage[] = [
    { role: 'user', content: TASK },
    { role: 'assistant', content: 'I will start with the test run.' },
    { role: 'user', content: 'Please hurry.' },
  ];

  it('should answer an OpenAI compaction_trigger with one compaction item, as JSON and SSE, and count it in place of what it covers', async () => {
    const server = await start(WINDOW);
    const model = clientModel(server, 'openai');
    const providerOptions = { openai: { store: false, compactionTrigger: true } };
    const json = await generateText({ model, system: SYSTEM, messages: history, maxRetries: 0, providerOptions });
    const custom = json.content.filter((part) => part.type === 'custom');
    expect(json.content).toHaveLength(1);
    expect(custom[0]).toMatchObject({ kind: 'openai.compaction', providerMetadata: { openai: { type: 'compaction', itemId: expect.stringMatching(/^cmp_/), encryptedContent: expect.stringMatching(/^gAAAAA/) } } });
    const streamed = streamText({ model, system: SYSTEM, messages: history, maxRetries: 0, providerOptions });
    const parts: { type: string }[] = [];
    for await (const part of streamed.fullStream) parts.push(part);
    expect(parts.filter((p) => p.type === 'custom')).toEqual([expect.objectContaining({ kind: 'openai.compaction', providerMetadata: { openai: expect.objectContaining({ type: 'compaction' }) } })]);
    expect(server.requests.map((r) => [r.nativeCompaction, r.stream, r.isSummaryRequest])).toEqual([
      [true, false, false],
      [true, true, false],
    ]);
    expect(bodyOf(server.requests[1]!).input!.at(-1)).toEqual({ type: 'compaction_trigger' });

    // replayed: everything before the item is dropped (count and agent)
    const item = custom[0] as unknown as { providerMetadata: { openai: Record<string, unknown> } };
    const itemMessage: ModelMessage = { role: 'assistant', content: [{ type: 'custom', kind: 'openai.compaction', providerOptions: { openai: item.providerMetadata.openai } }] } as ModelMessage;
    const tail: ModelMessage[] = [{ role: 'user', content: 'What next?' }];
    await generateText({ model, system: SYSTEM, messages: [...history, itemMessage, ...tail], maxRetries: 0, providerOptions: { openai: { store: false } } });
    await generateText({ model, system: SYSTEM, messages: [itemMessage, ...tail], maxRetries: 0, providerOptions: { openai: { store: false } } });
    const [withHistory, alone] = server.requests.slice(-2);
    expect(withHistory!.promptTokens).toBe(alone!.promptTokens);
    expect(withHistory!.reply).toEqual(alone!.reply);

    // an altered item is refused
    const encrypted = String(item.providerMetadata.openai.encryptedContent);
    const altered = { ...item.providerMetadata.openai, encryptedContent: `${encrypted.slice(0, 60)}${encrypted[60] === 'A' ? 'B' : 'A'}${encrypted.slice(61)}` };
    const refused = await generateText({
      model,
      messages: [{ role: 'assistant', content: [{ type: 'custom', kind: 'openai.compaction', providerOptions: { openai: altered } }] } as ModelMessage, ...tail],
      maxRetries: 0,
      providerOptions: { openai: { store: false } },
    }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ statusCode: 400 });
    expect(server.requests.at(-1)).toMatchObject({ rejected: true, error: 'invalid_request' });
  });

  it('should resolve an item_reference to a stored compaction item (store: true)', async () => {
    const server = await start(WINDOW);
    const model = clientModel(server, 'openai');
    const result = await generateText({ model, messages: history, maxRetries: 0, providerOptions: { openai: { compactionTrigger: true } } });
    const tail: ModelMessage[] = [{ role: 'user', content: 'What next?' }];
    const replay = (await result.responseMessages)[0]!;
    await generateText({ model, messages: [...history, replay, ...tail], maxRetries: 0 });
    await generateText({ model, messages: [replay, ...tail], maxRetries: 0, providerOptions: { openai: { store: false } } });
    const [, byReference, byItem] = server.requests;
    expect(bodyOf(byReference!).input!.filter((i) => i.type === 'item_reference')).toEqual([{ type: 'item_reference', id: expect.stringMatching(/^cmp_/) }]);
    expect(bodyOf(byItem!).input![0]).toMatchObject({ type: 'compaction' });
    expect(byReference!.promptTokens).toBe(byItem!.promptTokens);
  });

  it('should answer an Anthropic summarize request with a compaction block, as JSON and SSE, and drop what comes before it', async () => {
    const server = await start(WINDOW);
    const model = clientModel(server, 'anthropic');
    const providerOptions = { anthropic: { compaction: { type: 'summarize' as const } } };
    const json = await generateText({ model, system: SYSTEM, messages: history, maxRetries: 0, providerOptions });
    expect(json.content).toHaveLength(1);
    expect(json.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('## Objective'), providerMetadata: { anthropic: { type: 'compaction', signature: expect.any(String) } } });
    const streamed = streamText({ model, system: SYSTEM, messages: history, maxRetries: 0, providerOptions });
    expect(await streamed.text).toBe(json.text);
    // the v4 client also puts a custom `anthropic.message_start` part in a streamed message
    const streamedMessage = (await streamed.responseMessages)[0]! as { role: string; content: { type: string }[] };
    expect(streamedMessage.content.filter((part) => part.type === 'text')).toEqual([
      { type: 'text', text: json.text, providerOptions: { anthropic: { type: 'compaction', signature: (json.content[0] as unknown as { providerMetadata: { anthropic: { signature: string } } }).providerMetadata.anthropic.signature } } },
    ]);
    expect(server.requests.map((r) => [r.nativeCompaction, r.stream])).toEqual([
      [true, false],
      [true, true],
    ]);
    expect(bodyOf(server.requests[0]!).compaction).toEqual({ type: 'summarize' });

    const block = (await json.responseMessages)[0]!;
    const tail: ModelMessage[] = [{ role: 'user', content: 'What next?' }];
    await generateText({ model, system: SYSTEM, messages: [...history, block, ...tail], maxRetries: 0 });
    await generateText({ model, system: SYSTEM, messages: [block, ...tail], maxRetries: 0 });
    const [withHistory, alone] = server.requests.slice(-2);
    expect(withHistory!.promptTokens).toBe(alone!.promptTokens);

    // an altered block is refused
    const altered = { ...block, content: [{ ...(block.content as Record<string, unknown>[])[0]!, text: `${json.text} (edited)` }] } as ModelMessage;
    const refused = await generateText({ model, messages: [altered, ...tail], maxRetries: 0 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ statusCode: 400 });
  });

  it('should refuse an Anthropic summarize request without the compact-2026-09-04 beta', async () => {
    const server = await start(WINDOW);
    const response = await fetch(`${server.anthropicBaseURL}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{ role: 'user', content: TASK }], compaction: { type: 'summarize' } }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'compaction: Extra inputs are not permitted' } });
  });
});
