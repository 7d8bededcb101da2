import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll } from 'vitest';

/** A throwaway `redis-server` on a free local port, for tests. */
export interface RedisServer {
  /** The port it listens on (kept across stop/start). */
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Kills the server and waits until the process is gone. Stopping a stopped server is a no-op. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty, unless it persists) and waits until it answers PING. */
  start(): Promise<void>;
  /** Stops the process (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Lets a paused process go on (SIGCONT): what it was sent meanwhile is answered. */
  resume(): void;
}

/** How the server is started. */
export interface RedisServerOptions {
  /** Append-only persistence (`appendfsync always`) in a directory of its own: what it acknowledged survives a kill. */
  appendOnly?: boolean;
}

const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
const READY_TIMEOUT_MS = 10_000;

/** A port nothing listens on right now (the OS picks it; a race with another process is retried). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** Resolves true when the server on `port` answers PING with PONG, false otherwise. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Spawns redis-server on `port`; resolves with the process once it answers PING. */
async function launch(port: number, dir: string | undefined): Promise<ChildProcess> {
  const persistence = dir === undefined ? ['--appendonly', 'no', '--dir', tmpdir()] : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir];
  const child = spawn(
    REDIS_SERVER,
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--save', '',
      ...persistence,
      '--loglevel', 'warning',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let exited = false;
  let spawnError: Error | undefined;
  child.once('exit', () => (exited = true));
  child.once('error', (error) => {
    spawnError = error;
    exited = true;
  });

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) {
      throw new Error(
        `redis-server on port ${port} exited before answering PING${spawnError ? `: ${spawnError.message}` : ''}\n${output}`,
      );
    }
    if (await ping(port)) return child;
    await delay(20);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms\n${output}`);
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * Starts a `redis-server` (`/usr/bin/redis-server`, or `$REDIS_SERVER_BIN`) on a free local port,
 * without persistence unless asked, and resolves once it answers PING. Call `stop()` when done (an
 * exit hook kills it anyway if the test process ends first).
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  let child: ChildProcess | undefined;
  let port = 0;
  const dir = options.appendOnly === true ? mkdtempSync(join(tmpdir(), 'ai-compaction-redis-')) : undefined;
  for (let attempt = 1; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir);
    } catch (error) {
      // Another process may have taken the port between freePort() and redis binding it.
      if (attempt >= 5) throw error;
    }
  }

  const killOnExit = () => {
    child?.kill('SIGCONT');
    child?.kill('SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', killOnExit);

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      const running = child;
      child = undefined;
      process.off('exit', killOnExit);
      running?.kill('SIGCONT');
      if (running) await kill(running);
    },
    async start() {
      if (child) return;
      child = await launch(port, dir);
      process.on('exit', killOnExit);
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
  };
}

/** A Redis server and a connected client of each library the store supports, closed together. */
export interface RedisClients {
  server: RedisServer;
  ioredis: Redis;
  nodeRedis: ReturnType<typeof createClient>;
  close(): Promise<void>;
}

/** Starts a Redis server on a free port and connects an ioredis and a node-redis client to it; both fail fast while it is down. */
export async function connectRedisClients(): Promise<RedisClients> {
  const server = await startRedisServer();
  const ioredis = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, connectTimeout: 500, commandTimeout: 1_000, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => 50 });
  ioredis.on('error', () => {});
  await ioredis.connect();
  const nodeRedis = createClient({ url: server.url, socket: { connectTimeout: 500, reconnectStrategy: () => 50 }, disableOfflineQueue: true });
  nodeRedis.on('error', () => {});
  await nodeRedis.connect();
  return {
    server,
    ioredis,
    // the type the tests declare, as createClient() without options gives it
    nodeRedis: nodeRedis as unknown as ReturnType<typeof createClient>,
    async close() {
      ioredis.disconnect();
      nodeRedis.destroy();
      await server.stop();
    },
  };
}

/** Connects both clients to a fresh server before the tests of a file (`assign` receives them) and closes them after. */
export function useRedisClients(assign: (clients: RedisClients) => void): void {
  let clients: RedisClients | undefined;
  beforeAll(async () => {
    clients = await connectRedisClients();
    assign(clients);
  });
  afterAll(() => clients?.close());
}
