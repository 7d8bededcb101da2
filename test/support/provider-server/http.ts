import type { IncomingMessage } from 'node:http';
import { createHash } from 'node:crypto';
import type { ParsedRequest } from './conversation';

export function readBody(req: IncomingMessage, limit = 64 * 1024 * 1024): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Where a reply is written: a Node `ServerResponse` (the HTTP server), or the body of a `Response`
 * built in process (`createProvider(...).fetch`, index.ts).
 */
export interface ReplySink {
  readonly headersSent: boolean;
  readonly destroyed: boolean;
  readonly writableEnded: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): unknown;
  end(chunk?: string): unknown;
}

/**
 * A `ReplySink` whose reply is a fetch `Response`: handed to `deliver` when its head is written,
 * its body streamed as it is written. A body its reader cancels, or whose `signal` aborts, is
 * `destroyed`: a stream writes no more to it.
 */
export function responseSink(deliver: (response: Response) => void, signal?: AbortSignal): ReplySink {
  const encoder = new TextEncoder();
  let body: ReadableStreamDefaultController<Uint8Array> | undefined;
  let headersSent = false;
  let destroyed = false;
  let ended = false;
  signal?.addEventListener(
    'abort',
    () => {
      if (destroyed || ended) return;
      destroyed = true;
      body?.error(signal.reason);
    },
    { once: true },
  );
  const sink: ReplySink = {
    get headersSent() {
      return headersSent;
    },
    get destroyed() {
      return destroyed;
    },
    get writableEnded() {
      return ended;
    },
    writeHead(status, headers) {
      headersSent = true;
      const stream = new ReadableStream<Uint8Array>({
        start: (controller) => void (body = controller),
        cancel: () => void (destroyed = true),
      });
      deliver(new Response(stream, { status, headers }));
    },
    write(chunk) {
      if (!destroyed && !ended) body?.enqueue(encoder.encode(chunk));
      return true;
    },
    end(chunk) {
      if (chunk !== undefined) sink.write(chunk);
      if (ended) return;
      ended = true;
      if (!destroyed) body?.close();
    },
  };
  return sink;
}

export function sendJson(res: ReplySink, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** How long the server keeps an idle connection open (its `keepAliveTimeout`). */
export const KEEP_ALIVE_MS = 1_000;

/** Resolves after `ms` of real time: the server's pace when it is given no clock. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How the server waits (`ProviderServerOptions.clock`): real time by default, a benchmark's virtual clock when given one. */
export type Sleep = (ms: number) => Promise<void>;

/** A model's generation speed (`ProviderServerOptions.speed`). */
export interface Speed {
  /** Prompt tokens read a second (not read from the prompt cache). */
  promptTokensPerSecond: number;
  /** Output tokens written a second. */
  outputTokensPerSecond: number;
  /** Prompt tokens read from the prompt cache a second (default: no time at all). */
  cachedPromptTokensPerSecond?: number;
}

/**
 * How long a reply takes at a speed: reading the prompt (before anything is sent), then writing the
 * output. A streamed reply sends its first frame after the prompt is read and spreads the output
 * over its frames; one that is not streamed is sent whole after both.
 */
export interface Pace {
  promptMs: number;
  outputMs: number;
}

export function paceOf(speed: Speed | undefined, usage: Pick<Usage, 'input' | 'output' | 'cacheRead'>): Pace | undefined {
  if (speed === undefined) return undefined;
  const uncached = Math.max(0, usage.input - usage.cacheRead);
  const cachedMs = speed.cachedPromptTokensPerSecond === undefined ? 0 : (usage.cacheRead / speed.cachedPromptTokensPerSecond) * 1000;
  return { promptMs: (uncached / speed.promptTokensPerSecond) * 1000 + cachedMs, outputMs: (usage.output / speed.outputTokensPerSecond) * 1000 };
}

/**
 * Server-sent events; `named` adds an `event:` line (Anthropic and OpenAI Responses do, chat does not).
 * With a `pace`, the first frame waits for the prompt to be read and each frame after it for its
 * share of the output (`frames`: how many the reply will send, about).
 */
export class SseWriter {
  private sent = 0;

  private readonly delayMs: number;
  private readonly pace: (Pace & { frames: number }) | undefined;
  private readonly wait: Sleep;

  constructor(
    private readonly res: ReplySink,
    timing: Pick<ReplyContext, 'delayMs' | 'pace' | 'sleep'>,
    private readonly named: boolean,
    headers: Record<string, string> = {},
  ) {
    this.delayMs = timing.delayMs;
    this.pace = timing.pace;
    this.wait = timing.sleep ?? sleep;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // The server closes an idle connection after `KEEP_ALIVE_MS`; Node sends this hint on the
      // replies it frames itself, not on a stream that sets its own `connection` header. Without it
      // a client keeps the socket for its own default (undici: 4 s) and may send the next request
      // on it just as the server closes it ("other side closed"); with it undici never reuses it.
      'keep-alive': `timeout=${KEEP_ALIVE_MS / 1_000}`,
      ...headers,
    });
  }

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  async send(data: unknown, eventName?: string): Promise<void> {
    if (this.closed) return;
    if (this.pace !== undefined) {
      const wait = this.sent === 0 ? this.pace.promptMs : this.pace.outputMs / Math.max(1, this.pace.frames - 1);
      this.sent++;
      if (wait > 0) await this.wait(wait);
      if (this.closed) return;
    }
    const name = this.named && eventName ? `event: ${eventName}\n` : '';
    this.res.write(`${name}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    if (this.delayMs > 0) await this.wait(this.delayMs);
  }

  end(): void {
    if (!this.closed) this.res.end();
  }
}

/** Deterministic ids: a per-server counter hashed with the seed. */
export class Ids {
  private n = 0;
  constructor(private readonly seed: number) {}

  private digest(): Buffer {
    return createHash('sha256').update(`${this.seed}:${this.n++}`).digest();
  }

  hex(prefix: string, length: number): string {
    return prefix + this.digest().toString('hex').slice(0, length);
  }

  alnum(prefix: string, length: number): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const bytes = this.digest();
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[bytes[i % bytes.length]! % alphabet.length];
    return prefix + out;
  }
}

/** What the agent replied, ready for a wire format. */
export interface RenderedReply {
  text: string;
  toolCalls: { name: string; args: string }[];
  finishReason: 'stop' | 'tool-calls' | 'length' | 'content-filter';
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface ReplyContext {
  request: ParsedRequest;
  body: Record<string, unknown>;
  reply: RenderedReply;
  usage: Usage;
  ids: Ids;
  delayMs: number;
  /** How long the reply takes (`ProviderServerOptions.speed`), with the frames a stream of it sends. */
  pace?: Pace & { frames: number };
  /** How the pace and `delayMs` are waited: real time by default (`ProviderServerOptions.clock`). */
  sleep?: Sleep;
}

/** Splits a JSON argument string into a few deltas, like the providers stream them. */
export function argDeltas(args: string): string[] {
  if (args.length <= 8) return [args];
  const size = Math.max(4, Math.ceil(args.length / 4));
  const out: string[] = [];
  for (let i = 0; i < args.length; i += size) out.push(args.slice(i, i + size));
  return out;
}
