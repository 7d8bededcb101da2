/**
 * `npm run example`: the Next.js example (examples/next-chat) in one command, with no API key.
 * It builds what is missing or stale (the package's `dist/`, the example's dependencies from its
 * lock file, `next build`), starts the local provider server playing a chat assistant, starts the
 * app pointed at it, and prints the URL. With `OPENAI_API_KEY` set the app talks to OpenAI instead
 * (`OPENAI_MODEL`, `OPENAI_BASE_URL` as usual); with `REDIS_URL` set its checkpoints go to Redis.
 *
 *   npm run example                       # http://127.0.0.1:3000 (the next free port when 3000 is taken)
 *   npm run example -- --port 3001
 *   npm run example -- --dev              # `next dev` instead of `next build` + `next start`, to edit the example
 *   npm run example -- --context-window 16000 --speed 0
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildNextApp, freePort, REPO_DIR, staleDist, startNextApp, type NextApp } from '../test/support/next-app';
import type { ProviderServer } from '../test/support/provider-server/index';
import { runProviderServer } from '../test/support/provider-server/cli';

const USAGE = 'Usage: npm run example -- [--port 3000] [--dev] [--context-window 8000] [--speed 60]';

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

let values: { port?: string; dev?: boolean; 'context-window'?: string; speed?: string };
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string', default: process.env.PORT ?? '3000' },
      dev: { type: 'boolean', default: false },
      'context-window': { type: 'string', default: process.env.CONTEXT_WINDOW ?? '8000' },
      speed: { type: 'string', default: '60' },
    },
    strict: true,
  }));
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65_535) fail(`--port must be a port number, got ${JSON.stringify(values.port)}`);
const contextWindow = Number(values['context-window']!.replace(/_/g, ''));
if (!Number.isInteger(contextWindow) || contextWindow < 1_000) fail(`--context-window must be a whole number of at least 1000 tokens, got ${JSON.stringify(values['context-window'])}`);

/** Prints a child's output line by line, each with a prefix. */
function prefixed(prefix: string): (text: string) => void {
  let rest = '';
  return (text) => {
    const lines = (rest + text).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line.trim() !== '') console.log(`${prefix}${line}`);
  };
}

/** Seconds between two "still building" lines while `next build` prints nothing. */
const BUILD_PROGRESS_SECONDS = 15;

/**
 * `next build` when the app changed, saying so as it goes: what `next build` prints (`[build]`), and
 * while it prints nothing (it compiles for minutes on a small machine), how long it has been at it.
 */
async function buildWithProgress(): Promise<{ built: boolean; ms: number }> {
  const started = Date.now();
  let lastLine = started;
  const print = prefixed('[build] ');
  const ticker = setInterval(() => {
    if (Date.now() - lastLine < BUILD_PROGRESS_SECONDS * 1_000) return;
    lastLine = Date.now();
    console.log(`[build] … still building (${Math.round((lastLine - started) / 1_000)} s)`);
  }, 1_000);
  try {
    return await buildNextApp(300_000, {
      onStart: () => console.log('Building the app (next build: a minute or more the first time, reused while nothing changed)…'),
      onOutput: (text) => {
        lastLine = Date.now();
        print(text);
      },
    });
  } finally {
    clearInterval(ticker);
  }
}

/** The port if nothing listens on it, else a free one. */
function portOrFree(wanted: number): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => void freePort().then(resolve));
    probe.listen(wanted, '127.0.0.1', () => probe.close(() => resolve(wanted)));
  });
}

let server: ProviderServer | undefined;
let app: NextApp | undefined;
let stopping = false;
async function shutDown(code: number): Promise<never> {
  stopping = true;
  await app?.close();
  await server?.close();
  process.exit(code);
}
process.once('SIGINT', () => void shutDown(0));
process.once('SIGTERM', () => void shutDown(0));

try {
  // 1. the package the example consumes (`file:../..`), when src/ changed since dist/ was built
  const stale = staleDist();
  if (stale !== undefined) {
    console.log(`Building the package (${stale})…`);
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: REPO_DIR, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  // 2. the example's dependencies, from its lock file, when they are missing or differ from it
  execFileSync(process.execPath, [join(REPO_DIR, 'scripts/install-example.mjs')], { stdio: 'inherit' });

  // 3. the model: OpenAI with a key, else the local chat assistant
  const env: Record<string, string> = { CONTEXT_WINDOW: String(contextWindow) };
  if (process.env.OPENAI_API_KEY) {
    console.log(`Model: OpenAI ${process.env.OPENAI_MODEL ?? 'gpt-4o-mini'}${process.env.OPENAI_BASE_URL ? ` at ${process.env.OPENAI_BASE_URL}` : ''} (OPENAI_API_KEY is set).`);
  } else {
    server = await runProviderServer(['--port', '0', '--context-window', String(contextWindow), '--speed', values.speed!], (line) => console.log(`[model] ${line}`));
    Object.assign(env, { OPENAI_BASE_URL: server.openaiBaseURL, OPENAI_API_KEY: 'local' });
  }
  if (process.env.REDIS_URL) console.log('Checkpoints: Redis at REDIS_URL (the Node.js route and the server action).');

  // 4. the app
  if (!values.dev) {
    const build = await buildWithProgress();
    console.log(build.built ? `Built in ${Math.round(build.ms / 1000)} s.` : 'Reusing the last build.');
  }
  const chosen = await portOrFree(port);
  if (chosen !== port) console.log(`Port ${port} is taken: using ${chosen}.`);
  app = await startNextApp(env, { port: chosen, dev: values.dev, onOutput: prefixed('[next]  '), timeoutMs: values.dev ? 180_000 : 60_000 });
  void app.exited.then((how) => {
    if (stopping) return;
    console.error(`The app stopped (${how}).`);
    return shutDown(1);
  });
  console.log(
    [
      '',
      `  next-chat is ready: ${app.url}`,
      '    /        route handler (useChat + streamText)',
      '    /edge    Edge route',
      '    /action  server action (generateText)',
      '',
      server === undefined
        ? '  Ctrl+C stops it.'
        : `  The model is a scripted chat assistant with a context window of ${contextWindow.toLocaleString('en-US')} tokens:\n  tell it a fact, paste long text, then ask about the fact. Ctrl+C stops both.`,
      '',
    ].join('\n'),
  );
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  await shutDown(1);
}
