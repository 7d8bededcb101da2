/**
 * `npm run provider-server`: the local provider server on its own, for any OpenAI- or
 * Anthropic-compatible client (the Next.js example, a script of yours). No API key; it prints one
 * line per request.
 *
 *   npm run provider-server                              # the chat assistant on http://127.0.0.1:4010/v1
 *   npm run provider-server -- --port 4011 --context-window 32000
 *   npm run provider-server -- --agent coding            # the scripted coding agent instead
 *   npm run provider-server -- --speed 0                 # answer at once (default: 60 output tokens a second)
 *
 * Then, for example: `OPENAI_BASE_URL=http://127.0.0.1:4010/v1 npm start --prefix examples/next-chat`.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { assistantAgent } from './assistant';
import { fixerAgent } from './fixer';
import { type ProviderServer, type ProviderServerOptions, type RecordedRequest, startProviderServer } from './index';

const AGENTS = {
  assistant: { name: 'the chat assistant', script: assistantAgent },
  coding: { name: 'the scripted coding agent', script: () => ({}) },
  fixer: { name: 'the test-fixing agent of the continuity benchmark', script: () => fixerAgent() },
} as const;
type AgentName = keyof typeof AGENTS;

const PATHS: Record<RecordedRequest['api'], string> = { 'openai-chat': '/v1/chat/completions', 'openai-responses': '/v1/responses', anthropic: '/v1/messages' };
const number = new Intl.NumberFormat('en-US');

/** The options of the command line, checked; throws a `RangeError` naming the bad one. */
export function providerServerOptions(argv: string[]): ProviderServerOptions & { agentName: AgentName } {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: process.env.PORT ?? '4010' },
      host: { type: 'string', default: '127.0.0.1' },
      agent: { type: 'string', default: 'assistant' },
      'context-window': { type: 'string', default: '8000' },
      speed: { type: 'string', default: '60' },
      seed: { type: 'string', default: '1' },
    },
    strict: true,
  });
  const whole = (name: string, value: string, min: number) => {
    const parsed = Number(value.replace(/_/g, ''));
    if (!Number.isInteger(parsed) || parsed < min) throw new RangeError(`--${name} must be a whole number of at least ${min}, got ${JSON.stringify(value)}`);
    return parsed;
  };
  const agentName = values.agent as AgentName;
  if (!(agentName in AGENTS)) throw new RangeError(`--agent must be one of ${Object.keys(AGENTS).join(', ')}, got ${JSON.stringify(values.agent)}`);
  const speed = whole('speed', values.speed!, 0);
  return {
    agentName,
    agent: AGENTS[agentName].script(),
    port: whole('port', values.port!, 0),
    host: values.host!,
    contextWindow: whole('context-window', values['context-window']!, 1_000),
    seed: whole('seed', values.seed!, 0),
    // the prompt is read fast (a real model reads thousands of tokens a second); the reply is written at `speed`
    ...(speed === 0 ? {} : { speed: { promptTokensPerSecond: 20_000, outputTokensPerSecond: speed } }),
  };
}

/** One line for a request the server answered. */
export function requestLine(request: RecordedRequest): string {
  const what = request.rejected
    ? `rejected (${request.error ?? 'error'}, ${request.status})`
    : `${number.format(request.promptTokens)} → ${number.format(request.outputTokens)} tokens${request.isSummaryRequest ? ', a summary request' : ''}`;
  return `POST ${PATHS[request.api]} ${request.model}${request.stream ? ' (stream)' : ''}: ${what}`;
}

/** Starts the server the command line describes and prints where it is; `log` gets every line. */
export async function runProviderServer(argv: string[], log: (line: string) => void = console.log): Promise<ProviderServer> {
  const { agentName, ...options } = providerServerOptions(argv);
  const server = await startProviderServer({ ...options, onRequest: (request) => log(requestLine(request)) });
  log(`Local provider server: ${AGENTS[agentName].name}, a context window of ${number.format(options.contextWindow)} tokens${options.speed ? `, ${options.speed.outputTokensPerSecond} output tokens a second` : ''}.`);
  log(`  OpenAI:    OPENAI_BASE_URL=${server.openaiBaseURL}  (any OPENAI_API_KEY)`);
  log(`  Anthropic: ANTHROPIC_BASE_URL=${server.anthropicBaseURL}  (any ANTHROPIC_API_KEY)`);
  return server;
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (isMain) {
  try {
    const server = await runProviderServer(process.argv.slice(2));
    console.log('Ctrl+C stops it.');
    const stop = () => void server.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\nUsage: npm run provider-server -- [--port 4010] [--host 127.0.0.1] [--agent assistant|coding|fixer] [--context-window 8000] [--speed 60] [--seed 1]`);
    process.exit(2);
  }
}
