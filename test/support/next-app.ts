// Builds and starts the Next.js example (examples/next-chat) for the end-to-end tests.
//
// The app consumes this package through `file:../..`, i.e. the root's built `dist/`. `next build`
// takes about a minute, so it runs only when the sources changed: a digest of the app's sources,
// its lockfile and the root's `dist/` is written into `.next/` after a build and compared before
// the next one. Everything that is missing fails at once with the command that fixes it.

import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));
export const NEXT_APP_DIR = join(REPO_DIR, 'examples/next-chat');
const NEXT_BIN = join(NEXT_APP_DIR, 'node_modules/next/dist/bin/next');
const DIGEST_FILE = join(NEXT_APP_DIR, '.next/ai-compaction-sources.sha256');
/** What the build depends on, besides node_modules (covered by the lockfile). */
const APP_SOURCES = ['app', 'lib', 'instrumentation.ts', 'next.config.ts', 'tsconfig.json', 'package.json', 'package-lock.json'];

function files(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => files(join(path, entry.name)));
}

/** Why `dist/` (the built package the example consumes) cannot be used as it is: missing, or older than a file of `src/`; `undefined` when it is current. */
export function staleDist(): string | undefined {
  const dist = join(REPO_DIR, 'dist/index.js');
  if (!existsSync(dist)) return 'dist/ is missing';
  const built = statSync(dist).mtimeMs;
  const newer = files(join(REPO_DIR, 'src')).find((file) => statSync(file).mtimeMs > built);
  return newer === undefined ? undefined : `dist/ is older than ${relative(REPO_DIR, newer)}`;
}

/** Throws, with the command to run, when the example or the package it consumes is not there. */
export function assertNextAppPrerequisites(): void {
  if (!existsSync(NEXT_BIN)) {
    throw new Error('examples/next-chat is not installed: run `npm ci --prefix examples/next-chat` (after `npm ci` at the root).');
  }
  const stale = staleDist();
  if (stale !== undefined) {
    throw new Error(`${stale}: the example consumes the built package (a stale one would be tested); run \`npm run build\` at the root first.`);
  }
}

function sourcesDigest(): string {
  const hash = createHash('sha256');
  const inputs = [
    ...APP_SOURCES.flatMap((source) => files(join(NEXT_APP_DIR, source))),
    ...files(join(REPO_DIR, 'dist')).filter((file) => /\.(?:c?js|d\.c?ts)$/.test(file)),
  ];
  for (const file of inputs) {
    hash.update(relative(REPO_DIR, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function run(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, onOutput?: (text: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [NEXT_BIN, ...args], { cwd: NEXT_APP_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString();
      onOutput?.(chunk.toString());
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`next ${args.join(' ')} took more than ${timeoutMs / 1000} s:\n${output.slice(-4000)}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`next ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output.slice(-4000)}`));
    });
  });
}

const baseEnv = (): NodeJS.ProcessEnv => ({ ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' });

/**
 * `next build`, unless `.next/` already holds a build of the same sources and the same `dist/`.
 * Returns whether it built and how long it took; `onStart` is called when it starts building,
 * `onOutput` with what `next build` prints, as it prints it.
 */
export async function buildNextApp(timeoutMs = 300_000, { onStart, onOutput }: { onStart?: () => void; onOutput?: (text: string) => void } = {}): Promise<{ built: boolean; ms: number }> {
  assertNextAppPrerequisites();
  const started = Date.now();
  const previous = existsSync(DIGEST_FILE) ? readFileSync(DIGEST_FILE, 'utf8').trim() : undefined;
  if (previous === sourcesDigest() && existsSync(join(NEXT_APP_DIR, '.next/BUILD_ID'))) return { built: false, ms: Date.now() - started };
  onStart?.();
  await run(['build'], baseEnv(), timeoutMs, onOutput);
  // after the build: `next build` may rewrite tsconfig.json
  writeFileSync(DIGEST_FILE, `${sourcesDigest()}\n`);
  return { built: true, ms: Date.now() - started };
}

export interface NextApp {
  url: string;
  /** Everything the server printed so far. */
  output(): string;
  /** Resolves when the server's process ends, with how (`exit 0`, `SIGTERM`). */
  exited: Promise<string>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface StartOptions {
  /** Port on 127.0.0.1 (default: a free one). */
  port?: number;
  /** `next dev` instead of `next start` (no build needed; pages compile on first load). */
  dev?: boolean;
  /** Called with what the server prints, as it prints it. */
  onOutput?: (text: string) => void;
  /** How long to wait for `GET /` to answer (default 30 s; a dev server compiles the page first). */
  timeoutMs?: number;
}

/** `next start` (or `next dev`) on 127.0.0.1, resolved once it answers `GET /`. */
export async function startNextApp(env: Record<string, string>, options: StartOptions = {}): Promise<NextApp> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!options.dev && !existsSync(join(NEXT_APP_DIR, '.next/BUILD_ID'))) throw new Error('examples/next-chat is not built: call buildNextApp() first.');
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const { NODE_ENV: _, ...development } = baseEnv();
  // its own process group, so close() ends the server and anything it started, and nothing else
  const child: ChildProcess = spawn(process.execPath, [NEXT_BIN, options.dev ? 'dev' : 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: NEXT_APP_DIR,
    env: { ...(options.dev ? development : baseEnv()), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const print = (chunk: Buffer) => {
    output += chunk.toString();
    options.onOutput?.(chunk.toString());
  };
  child.stdout?.on('data', print);
  child.stderr?.on('data', print);
  let exited: string | undefined;
  const gone = new Promise<string>((resolve) =>
    child.on('exit', (code, signal) => {
      exited = signal ?? `exit ${code}`;
      resolve(exited);
    }),
  );

  const close = async () => {
    if (exited !== undefined || child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, 5_000);
    await gone;
    clearTimeout(timer);
  };

  // Next prints `Ready in …` once it listens: wait for that line (or the process's end), then ask
  // for the page once; the deadline bounds both (a dev server compiles the page on that request).
  const started = Date.now();
  const fail = async (why: string) => {
    await close();
    return new Error(`next ${options.dev ? 'dev' : 'start'} ${why}:\n${output.slice(-4000)}`);
  };
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  // after `print`, so `output` holds the chunk
  const watch = () => void (/\bReady in\b/.test(output) && onReady());
  child.stdout?.on('data', watch);
  child.stderr?.on('data', watch);
  watch();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  const first = await Promise.race([ready.then(() => 'ready' as const), gone.then(() => 'gone' as const), late]);
  clearTimeout(timer);
  if (first === 'gone') throw new Error(`next ${options.dev ? 'dev' : 'start'} ended (${exited}) before answering:\n${output.slice(-4000)}`);
  if (first === 'late') throw await fail(`did not say it was ready within ${timeoutMs / 1000} s`);
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(Math.max(1_000, timeoutMs - (Date.now() - started))) });
    if (!response.ok) throw new Error(`GET / answered ${response.status}`);
  } catch (error) {
    throw await fail(`did not answer GET / within ${timeoutMs / 1000} s (${String(error)})`);
  }
  return { url, output: () => output, exited: gone, close };
}
