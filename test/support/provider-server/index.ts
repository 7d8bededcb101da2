// A local HTTP server that speaks enough OpenAI Chat Completions, OpenAI Responses and Anthropic
// Messages for the real, unmodified `@ai-sdk/openai` and `@ai-sdk/anthropic` clients (v3 and v4)
// to work against it through their `baseURL` option. It answers as a deterministic scripted
// model: by default a coding agent (agent.ts) working on a seeded fake project (project.ts); the
// `agent` option gives another one (the fixer of fixer.ts, the chat assistant of assistant.ts). It
// counts prompts with a real tokenizer (tokens.ts), and rejects prompts over the context window
// with each provider's real overflow error (errors.ts). `npm run provider-server` runs it alone
// (cli.ts).
//
//   const server = await startProviderServer({ contextWindow: 200_000 });
//   const openai = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' });
//   const anthropic = createAnthropic({ baseURL: server.anthropicBaseURL, apiKey: 'test' });
//   ... generateText({ model: openai.chat('gpt-4o'), tools, stopWhen: stepCountIs(20) }) ...
//   await server.close();
//
// The same server without a socket (`createProvider`): its handler is a `fetch` the clients take
// as their `fetch` option, so a request never leaves the process (the benchmarks' virtual clock
// needs to see every piece of work in flight: bench/clock.ts).
//
//   const provider = createProvider({ contextWindow: 200_000, speed, clock });
//   const openai = createOpenAI({ baseURL: IN_PROCESS_URL, apiKey: 'test', fetch: provider.fetch });
//
// How a context overflow reaches the caller (observed with the clients installed here:
// @ai-sdk/openai 3.0.141 / 4.0.118, @ai-sdk/anthropic 3.0.140 / 4.0.105):
// - OpenAI chat: HTTP 400 JSON, streaming or not. `doGenerate`/`doStream` reject with an
//   APICallError (statusCode 400, responseBody = the JSON text).
// - OpenAI Responses, not streaming: HTTP 400 JSON; `doGenerate` rejects the same way.
// - OpenAI Responses, streaming: HTTP 200 SSE `response.created`, `response.in_progress`, then the
//   `error` frame (sequence_number 2). Both v3 and v4 clients read ahead until the first output
//   chunk and turn the frame into a rejection of `doStream()`: an APICallError with statusCode 400
//   (derived from the code `context_length_exceeded`), responseBody = JSON of the frame,
//   isRetryable false. `streamText` then emits it as an `error` part (it never rejects).
// - Anthropic: HTTP 400 JSON, streaming or not (the real API validates length before streaming).

import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { detectSummary, runAgent, type AgentReply, type AgentScript } from './agent';
import { compactionSummary } from './compaction';
import { parseAnthropicRequest, sendAnthropic, type ParsedAnthropicRequest } from './anthropic';
import { isRecord, jsonString, RequestError, type ApiName, type ParsedRequest } from './conversation';
import { anthropicInvalidRequest, anthropicOverflow, openaiChatOverflow, openaiInvalidRequest } from './errors';
import { argDeltas, Ids, KEEP_ALIVE_MS, paceOf, readBody, responseSink, sendJson, sleep, type RenderedReply, type ReplySink, type Speed, type Usage } from './http';
import { parseChatRequest, sendChat } from './openai-chat';
import { parseResponsesRequest, ResponsesStore, sendResponses, sendResponsesOverflow, type ParsedResponsesRequest } from './openai-responses';
import { anthropicCache, CACHE_IDLE_MS, type CacheExpiry, countOutput, countPrompt, openaiCache, PrefixCache, prefixHashes, splitDeltas, truncateToTokens } from './tokens';

export type { AgentReply, AgentRequest, AgentScript, SummaryKind } from './agent';
export type { ApiName, Message, Part } from './conversation';
export type { Speed } from './http';
export { createProjectTools, getProject, projectToolDescriptions, type ProjectTools } from './project';
export { CACHE_IDLE_MS, countText } from './tokens';
export { amnesiacSummary as amnesiacChatSummary, answer, askedName, assistantAgent, assistantReply, chatReply, factKey, factNamedIn, newestUserText, questionsIn, readChatFacts, summaryReply as chatSummary, type ChatFact, type ChatFacts, type ChatSummaryMode } from './assistant';
export { chatSession, judgeRecall, type ChatSessionOptions, type ChatTurn, type RecallQuestion, type RecallVerdict, type SessionFact } from './chat-session';
export { amnesiacSummary, decide, FIXER_TASK, fixerAgent, fixerReply, fixLocation, honestSummary, isSummaryRequestFor, lossySummary, promptText, readFacts, SUMMARY_LIMITS, type FixerAction, type FixerFacts, type FixerOptions, type SummaryMode } from './fixer';
export { CHANGELOG_FILE, createFixerTools, fewestRepeats, fewestSteps, fixerToolDescriptions, fixerTurns, getFixerProject, LEGACY_DIR, MAX_TEST_FILES, RULE_TEXT, SETTINGS_FILE, type FixerFailure, type FixerProject, type FixerProjectOptions, type FixerRule, type FixerTools, type FixerTurn } from './fixer-project';

export interface ProviderServerOptions {
  /** Tokens. A request whose counted prompt exceeds it gets the provider's overflow error. */
  contextWindow: number;
  /** Seeds the project and the agent (default 1). */
  seed?: number;
  /** The scripted model (default: the coding agent of agent.ts; `fixerAgent()` of fixer.ts for the continuity benchmark). */
  agent?: AgentScript;
  /** Pause between SSE frames, for demos (default 0). */
  streamDelayMs?: number;
  /**
   * A real model's speed, e.g. `{ promptTokensPerSecond: 5_000, outputTokensPerSecond: 60 }`: each
   * answer waits for its prompt to be read (tokens from the prompt cache take no time unless
   * `cachedPromptTokensPerSecond` says) and its output to be written, before a reply that is not
   * streamed, and between the frames of one that is. Default: no wait (tests).
   */
  speed?: Speed;
  /**
   * Where the pace (`speed`, `streamDelayMs`) is waited and the prompt cache's expiry measured: a
   * benchmark's virtual clock (bench/clock.ts), on which a model's time is simulated, never slept.
   * Default: real time.
   */
  clock?: { now(): number; sleep(ms: number): Promise<void> };
  /**
   * Prompt-cache expiry: a cached prefix that no request read or wrote for `idleMs` (default
   * `CACHE_IDLE_MS`, 5 minutes, what OpenAI and Anthropic do) is gone, measured on `now`
   * (milliseconds; default the `clock`'s, else `Date.now()`, looked up on every call). A test
   * passes a fake one. Off by default: a prefix stays cached for the server's life.
   */
  promptCacheExpiry?: { idleMs?: number; now?: () => number };
  /** How many of the newest requests keep their `body` in `requests` (default 200; older ones drop it to save memory). */
  keepBodies?: number;
  /** Port to listen on (default: a free one the system picks). */
  port?: number;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Called with each request as it is recorded (before its reply is sent). */
  onRequest?: (request: RecordedRequest) => void;
}

export interface RecordedRequest {
  api: ApiName;
  /** Counted prompt tokens (0 when the request could not be parsed). */
  promptTokens: number;
  /** Counted output tokens of the reply (0 when rejected). */
  outputTokens: number;
  /** Prompt tokens read from the simulated prompt cache (a prefix seen before; 0 when rejected). */
  cachedTokens?: number;
  /** Answered with an error (context overflow, malformed request, unknown item). */
  rejected: boolean;
  /** `context_length_exceeded` for overflow rejections, else the error kind. */
  error?: 'context_length_exceeded' | 'invalid_request' | 'not_found';
  isSummaryRequest: boolean;
  /** A provider-native compaction request (OpenAI `compaction_trigger`, Anthropic `compaction: { type: 'summarize' }`), answered with a compaction item. */
  nativeCompaction: boolean;
  stream: boolean;
  model: string;
  /** HTTP status of the answer (a streamed Responses overflow is 200, like the real API). */
  status: number;
  /** The JSON body as received (dropped for requests older than `keepBodies`). */
  body: unknown;
  /** Milliseconds the reply took at `speed` (reading the prompt, then writing the output); undefined without a speed or when rejected. */
  pacedMs?: number;
  /** What the agent answered (undefined when rejected). */
  reply?: { text: string; toolCalls: { name: string; args: string }[]; finishReason: RenderedReply['finishReason'] };
}

/** The server's handler without a socket (`createProvider`). */
export interface Provider {
  /** Answers a request as the server does over HTTP; give it to a client as its `fetch` option, with `IN_PROCESS_URL` as its `baseURL`. */
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>;
  requests: RecordedRequest[];
  setContextWindow(tokens: number): void;
  /** Changes the model's speed (`ProviderServerOptions.speed`) for the requests that follow; `undefined`: no wait. */
  setSpeed(speed: Speed | undefined): void;
}

/** The `baseURL` of a client whose `fetch` is a `Provider`'s: no request goes to it. */
export const IN_PROCESS_URL = 'http://provider.invalid/v1';

/** A request as the handler reads it, from HTTP or from a fetch `Request`. */
interface Incoming {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ProviderServer {
  url: string;
  /** `${url}/v1`, for `createOpenAI({ baseURL, apiKey: 'test' })`. */
  openaiBaseURL: string;
  /** `${url}/v1`, for `createAnthropic({ baseURL, apiKey: 'test' })`. */
  anthropicBaseURL: string;
  requests: RecordedRequest[];
  setContextWindow(tokens: number): void;
  /** Changes the model's speed (`ProviderServerOptions.speed`) for the requests that follow; `undefined`: no wait. */
  setSpeed(speed: Speed | undefined): void;
  close(): Promise<void>;
}

const ROUTES: Record<string, ApiName> = {
  '/chat/completions': 'openai-chat',
  '/responses': 'openai-responses',
  '/messages': 'anthropic',
};

/** The provider, without a socket: see the top of this file. */
export function createProvider(options: ProviderServerOptions): Provider {
  const { handle, ...provider } = providerHandler(options);
  return {
    ...provider,
    async fetch(input, init) {
      const { incoming, signal } = await incomingOf(input, init);
      return new Promise<Response>((resolve) => {
        const res = responseSink(resolve, signal);
        handle(incoming, res)
          .catch((error: unknown) => answerFailure(res, error))
          .finally(() => {
            if (!res.headersSent) sendJson(res, 500, openaiInvalidRequest('provider-server: no reply'));
          });
      });
    },
  };
}

/**
 * A `fetch` call as the handler reads it. The AI SDK's clients call `fetch(url, { method, headers,
 * body, signal })` with the body a string: that is read as it is. Through a WHATWG `Request` the
 * body would be encoded to bytes and decoded back (the same text either way): a sixth of the CPU
 * profile of a benchmark session held near a 108,800 ceiling, and 12 % of a cost benchmark seed's
 * CPU time.
 */
async function incomingOf(input: Request | string | URL, init: RequestInit | undefined): Promise<{ incoming: Incoming; signal: AbortSignal | undefined }> {
  const headers: IncomingHttpHeaders = {};
  if (!(input instanceof Request) && typeof init?.body === 'string') {
    new Headers(init.headers).forEach((value, name) => void (headers[name] = value));
    return { incoming: { method: (init.method ?? 'GET').toUpperCase(), url: String(input), headers, body: init.body }, signal: init.signal ?? undefined };
  }
  const request = new Request(input, init);
  request.headers.forEach((value, name) => void (headers[name] = value));
  return { incoming: { method: request.method, url: request.url, headers, body: await request.text() }, signal: request.signal };
}

/** The provider's state and its handler of one request, for HTTP and for `fetch`. */
function providerHandler(options: ProviderServerOptions): Omit<Provider, 'fetch'> & { handle(req: Incoming, res: ReplySink): Promise<void> } {
  let window = options.contextWindow;
  const seed = options.seed ?? 1;
  const script = options.agent ?? {};
  const delayMs = options.streamDelayMs ?? 0;
  const keepBodies = options.keepBodies ?? 200;
  let speed = options.speed;
  const requests: RecordedRequest[] = [];
  const ids = new Ids(seed);
  const expiry = cacheExpiry(options.promptCacheExpiry, options.clock);
  const wait = options.clock === undefined ? sleep : (ms: number) => options.clock!.sleep(ms);
  const caches: Record<ApiName, PrefixCache> = {
    'openai-chat': new PrefixCache(undefined, expiry),
    'openai-responses': new PrefixCache(undefined, expiry),
    anthropic: new PrefixCache(undefined, expiry),
  };
  const responsesStore = new ResponsesStore();

  const record = (entry: RecordedRequest) => {
    requests.push(entry);
    options.onRequest?.(entry);
    const old = requests.length - 1 - keepBodies;
    if (old >= 0 && requests[old]) requests[old]!.body = undefined;
  };

  const sendError = (res: ReplySink, api: ApiName, error: RequestError) => {
    if (api === 'anthropic') {
      sendJson(res, error.status, anthropicInvalidRequest(error.message, error.status === 404 ? 'not_found_error' : 'invalid_request_error'));
    } else {
      sendJson(res, error.status, openaiInvalidRequest(error.message, error.param, error.code));
    }
  };

  async function handle(req: Incoming, res: ReplySink): Promise<void> {
    const path = new URL(req.url, 'http://localhost').pathname.replace(/^\/v1(?=\/)/, '').replace(/\/+$/, '');
    const api = ROUTES[path];
    if (!api || req.method !== 'POST') {
      sendJson(res, 404, openaiInvalidRequest(`Invalid URL (${req.method} ${req.url})`, null, 'unknown_url'));
      return;
    }

    const raw = req.body;
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const base = { api, promptTokens: 0, outputTokens: 0, isSummaryRequest: false, nativeCompaction: false, stream: false, model: '', body: body ?? raw };
    if (!isRecord(body)) {
      const message =
        api === 'anthropic'
          ? 'There was an error parsing the body of your request. Please ensure it is valid JSON.'
          : "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)";
      record({ ...base, rejected: true, error: 'invalid_request', status: 400 });
      sendError(res, api, new RequestError(400, message));
      return;
    }
    base.stream = body.stream === true;
    base.model = typeof body.model === 'string' ? body.model : '';

    let parsed: ParsedRequest;
    try {
      parsed =
        api === 'openai-chat' ? parseChatRequest(body) : api === 'openai-responses' ? parseResponsesRequest(body, responsesStore) : parseAnthropicRequest(body, req.headers);
    } catch (error) {
      const e = error instanceof RequestError ? error : new RequestError(400, error instanceof Error ? error.message : String(error));
      record({ ...base, rejected: true, error: e.status === 404 ? 'not_found' : 'invalid_request', status: e.status });
      sendError(res, api, e);
      return;
    }

    const count = countPrompt(parsed);
    const summary = detectSummary(parsed.messages);
    const nativeCompaction = (parsed as { nativeCompaction?: boolean }).nativeCompaction === true;
    const entry = { ...base, promptTokens: count.total, isSummaryRequest: summary !== undefined && !nativeCompaction, nativeCompaction };

    if (count.total > window) {
      record({ ...entry, rejected: true, error: 'context_length_exceeded', status: api === 'openai-responses' && parsed.stream ? 200 : 400 });
      if (api === 'openai-chat') sendJson(res, 400, openaiChatOverflow(window, count.total));
      else if (api === 'anthropic') sendJson(res, 400, anthropicOverflow(window, count.total));
      else await sendResponsesOverflow(res, { request: parsed, body, ids, delayMs, sleep: wait });
      return;
    }

    // a native compaction request is answered with the compaction item (compaction.ts), never by the agent
    const agentReply: AgentReply = nativeCompaction ? { text: compactionSummary(seed, parsed.messages) } : runAgent(seed, script, {
      api,
      model: parsed.model,
      messages: parsed.messages,
      tools: parsed.tools.map((t) => t.name),
      toolChoice: parsed.toolChoice,
      maxOutputTokens: parsed.maxOutputTokens,
      summary,
    });
    const reply = render(agentReply, parsed.maxOutputTokens);
    const hashes = prefixHashes(parsed);
    const cache =
      api === 'anthropic'
        ? anthropicCache(caches[api], hashes, count, (parsed as ParsedAnthropicRequest).breakpoints, true)
        : openaiCache(caches[api], hashes, count, true);
    const usage: Usage = { input: count.total, output: countOutput(reply.text, reply.toolCalls), ...cache };

    const pace = paceOf(speed, usage);
    record({ ...entry, outputTokens: usage.output, cachedTokens: cache.cacheRead, rejected: false, status: 200, reply, ...(pace === undefined ? {} : { pacedMs: pace.promptMs + pace.outputMs }) });
    if (pace !== undefined && !parsed.stream) await wait(pace.promptMs + pace.outputMs);
    // A stream's frames, about: its text and argument deltas and a few around them.
    const frames = splitDeltas(reply.text).length + reply.toolCalls.reduce((sum, call) => sum + argDeltas(call.args).length + 2, 0) + 4;
    const ctx = { request: parsed, body, reply, usage, ids, delayMs, sleep: wait, ...(pace === undefined ? {} : { pace: { ...pace, frames } }) };
    if (api === 'openai-chat') await sendChat(res, ctx);
    else if (api === 'anthropic') await sendAnthropic(res, ctx);
    else await sendResponses(res, ctx, responsesStore, (parsed as ParsedResponsesRequest).store);
  }

  return {
    handle,
    requests,
    setContextWindow(tokens: number) {
      window = tokens;
    },
    setSpeed(next: Speed | undefined) {
      speed = next;
    },
  };
}

/** Never crash the test process: answer 500 if we still can. */
function answerFailure(res: ReplySink, error: unknown): void {
  try {
    if (!res.headersSent) sendJson(res, 500, openaiInvalidRequest(`provider-server: ${error instanceof Error ? error.message : String(error)}`));
    else res.end();
  } catch {
    /* the socket is gone */
  }
}

export async function startProviderServer(options: ProviderServerOptions): Promise<ProviderServer> {
  const { handle, requests, setContextWindow, setSpeed } = providerHandler(options);
  const server = createServer((req, res) => {
    // a client that goes away mid-stream must not take the process down
    req.on('error', () => {});
    res.on('error', () => {});
    // the body is read whole first (a 404's too, so keep-alive connections stay usable)
    readBody(req)
      .then((body) => handle({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body }, res))
      .catch((error: unknown) => answerFailure(res, error));
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === undefined || options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: `${url}/v1`,
    requests,
    setContextWindow,
    setSpeed,
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The cache expiry of `ProviderServerOptions.promptCacheExpiry`, checked; undefined when off. */
function cacheExpiry(option: ProviderServerOptions['promptCacheExpiry'], clock: ProviderServerOptions['clock']): CacheExpiry | undefined {
  if (option === undefined) return undefined;
  const idleMs = option.idleMs ?? CACHE_IDLE_MS;
  if (!(Number.isFinite(idleMs) && idleMs > 0)) throw new RangeError(`startProviderServer: promptCacheExpiry.idleMs must be a positive number of milliseconds, got ${idleMs}`);
  if (option.now !== undefined && typeof option.now !== 'function') throw new TypeError('startProviderServer: promptCacheExpiry.now must be a function returning milliseconds');
  return { idleMs, now: option.now ?? (clock === undefined ? () => Date.now() : () => clock.now()) };
}

/** The agent's reply as it goes out: JSON arguments, finish reason, cut at the output limit. */
function render(reply: AgentReply, maxOutputTokens: number | undefined): RenderedReply {
  let text = reply.text ?? '';
  let toolCalls = (reply.toolCalls ?? []).map((c) => ({ name: c.name, args: jsonString(c.input) }));
  let finishReason: RenderedReply['finishReason'] = reply.finishReason === 'length' || reply.finishReason === 'content-filter' ? reply.finishReason : toolCalls.length > 0 ? 'tool-calls' : 'stop';
  if (maxOutputTokens !== undefined && countOutput(text, toolCalls) > maxOutputTokens) {
    // like a real model: the reply stops at the limit; a cut tool call is dropped
    text = truncateToTokens(text, maxOutputTokens);
    toolCalls = [];
    finishReason = 'length';
  }
  return { text, toolCalls, finishReason };
}
