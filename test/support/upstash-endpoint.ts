import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';

/**
 * A small HTTP endpoint speaking the Upstash REST protocol in front of a real `redis-server`, for
 * `@upstash/redis` clients in tests: a command is a JSON array (`["SET","k","v","EX",60]`) POSTed to
 * `/`, a pipeline an array of them POSTed to `/pipeline` (or `/multi-exec`); the reply is
 * `{ "result": ... }` or `{ "error": "..." }` (an array of those for a pipeline), its strings in
 * base64 when the client sends `Upstash-Encoding: base64` (as it does by default). Requests need
 * `Authorization: Bearer <token>`. Commands go to Redis through an ioredis client at its defaults,
 * so a stopped Redis holds the request, as a stopped database would hold Upstash's.
 */
export interface UpstashEndpoint {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly token: string;
  /** Commands it has run, in order (their names, upper case). */
  readonly commands: string[];
  /** Stops listening and drops open connections: the REST service is gone (connections are refused). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Stops for good, and closes its Redis client. */
  close(): Promise<void>;
}

type Reply = string | number | null | Reply[];

function encode(value: Reply): Reply {
  if (typeof value === 'string') return Buffer.from(value, 'utf8').toString('base64');
  if (Array.isArray(value)) return value.map(encode);
  return value;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

/** Starts the endpoint on a free local port, in front of the Redis on `redisPort`. */
export async function startUpstashEndpoint(redisPort: number): Promise<UpstashEndpoint> {
  const token = 'test-token-' + Math.random().toString(36).slice(2);
  const redis = new Redis({ host: '127.0.0.1', port: redisPort });
  redis.on('error', () => {});
  const commands: string[] = [];

  const run = async (command: unknown, base64: boolean): Promise<{ result: Reply } | { error: string }> => {
    if (!Array.isArray(command) || command.length === 0 || command.some((part) => typeof part !== 'string' && typeof part !== 'number')) {
      return { error: 'ERR a command is a non-empty array of strings and numbers' };
    }
    const [name, ...args] = command.map(String) as [string, ...string[]];
    commands.push(name.toUpperCase());
    try {
      const result = (await redis.call(name, ...args)) as Reply;
      return { result: base64 ? encode(result) : result };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.headers.authorization !== `Bearer ${token}`) return send(401, { error: 'Unauthorized' });
    if (request.method !== 'POST') return send(405, { error: 'POST only' });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(request));
    } catch {
      return send(400, { error: 'ERR the body is not JSON' });
    }
    const base64 = String(request.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/pipeline' || path === '/multi-exec') {
      if (!Array.isArray(body)) return send(400, { error: 'ERR a pipeline is an array of commands' });
      const replies = [];
      for (const command of body) replies.push(await run(command, base64));
      return send(200, replies);
    }
    if (path !== '/' && path !== '') return send(404, { error: `no route ${path}` });
    const reply = await run(body, base64);
    return send('error' in reply ? 400 : 200, reply);
  };

  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((request, response) => {
        handle(request, response).catch((error: unknown) => {
          response.writeHead(500, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: String(error) }));
        });
      });
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        port = (next.address() as AddressInfo).port;
        server = next;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      const running = server;
      server = undefined;
      if (running === undefined) return resolve();
      running.close(() => resolve());
      running.closeAllConnections();
    });

  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    commands,
    stop,
    start: async () => {
      if (server === undefined) await listen();
    },
    async close() {
      await stop();
      redis.disconnect();
    },
  };
}
