import { Redis as Upstash } from '@upstash/redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { type CompactionStore, compaction } from '../../src';
import { checkpointText } from '../../src/checkpoint/message';
import type { Message } from '../../src/prompt/types';
import { redisStore } from '../../src/redis';
import { assistant, chat, recordingLogger, scriptedModel, user, wrap } from '../support/harness';
import { SUMMARY } from '../support/models';
import { type RedisServer, startRedisServer } from '../support/redis-server';
import { type UpstashEndpoint, startUpstashEndpoint } from '../support/upstash-endpoint';

// The outage rule (docs/stores.md) against a real redis-server, through each client at its
// defaults (offline queues on, their own retries): Redis killed, stopped (SIGSTOP) and continued,
// restarted empty, restarted with append-only persistence. Store calls are counted; nothing here
// measures time (the 5-second budget itself is tested with fake timers in test/core/store/keeper.test.ts).

/** One client library at its defaults, and how its service goes away and comes back. */
interface Connection {
  client: Parameters<typeof redisStore>[0]['client'];
  /** The service is gone: for a TCP client the server is killed and the client has noticed; for Upstash its REST endpoint refuses connections too. */
  kill(): Promise<void>;
  /** The service is back (the server started again) and the client can use it. */
  revive(): Promise<void>;
  close(): Promise<void>;
}

interface Flavour {
  name: string;
  /** A TCP client, whose own state says when it has lost its connection. */
  tcp: boolean;
  connect(server: RedisServer): Promise<Connection>;
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const flavours: Flavour[] = [
  {
    name: 'ioredis',
    tcp: true,
    async connect(server) {
      const client = new Redis({ host: '127.0.0.1', port: server.port });
      client.on('error', () => {});
      await waitFor(() => client.status === 'ready');
      return {
        client,
        async kill() {
          await server.stop();
          await waitFor(() => client.status !== 'ready');
        },
        async revive() {
          await server.start();
          await waitFor(() => client.status === 'ready');
        },
        async close() {
          client.disconnect();
        },
      };
    },
  },
  {
    name: 'node-redis',
    tcp: true,
    async connect(server) {
      const client = createClient({ url: server.url });
      client.on('error', () => {});
      await client.connect();
      return {
        client,
        async kill() {
          await server.stop();
          await waitFor(() => !client.isReady);
        },
        async revive() {
          await server.start();
          await waitFor(() => client.isReady);
        },
        async close() {
          client.destroy();
        },
      };
    },
  },
  {
    name: '@upstash/redis',
    tcp: false,
    async connect(server) {
      const endpoint: UpstashEndpoint = await startUpstashEndpoint(server.port);
      const client = new Upstash({ url: endpoint.url, token: endpoint.token, enableTelemetry: false });
      return {
        client,
        async kill() {
          await endpoint.stop();
          await server.stop();
        },
        async revive() {
          await server.start();
          await endpoint.start();
        },
        close: () => endpoint.close(),
      };
    },
  },
];

/** A store that counts the calls made to it, and passes on the client's own state. */
function counting(store: CompactionStore) {
  const calls = { count: 0 };
  const counted: CompactionStore = {
    get: (key) => (calls.count++, store.get(key)),
    set: (key, value, options) => (calls.count++, store.set(key, value, options)),
    delete: (key) => (calls.count++, store.delete(key)),
    ...(store.connected === undefined ? {} : { connected: () => store.connected!() }),
  };
  return { store: counted, calls };
}

const checkpointFor = (record: string): Message => ({ role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, record) }] });
const outageWarnings = (lines: string[]) => lines.filter((line) => line.includes('the store is unavailable'));
const backInfo = (lines: string[]) => lines.filter((line) => line.includes('the store answers again'));

let server: RedisServer | undefined;
let connection: Connection | undefined;

afterEach(async () => {
  await connection?.close();
  await server?.stop();
  connection = undefined;
  server = undefined;
});

describe.each(flavours)('an outage of Redis through $name at its defaults', ({ tcp, connect }) => {
  it('should go on in memory while Redis is killed, skip it, and write what was stored meanwhile once it is restarted (empty)', async () => {
    server = await startRedisServer();
    connection = await connect(server);
    const prefix = `kill-${Date.now()}:`;
    const log = recordingLogger();
    const { store, calls } = counting(redisStore({ client: connection.client, prefix }));
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000, store, logger: log.logger });
    const wrapped = wrap(scripted.model, middleware);
    const conversation: Message[] = [...chat(2, 20, 'k'), user('before')];
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    expect(scripted.summaryCalls()).toHaveLength(1);

    await connection.kill();
    const callsBefore = calls.count;
    // A compaction during the outage: made and sent, its checkpoint kept in memory.
    conversation.push(assistant('answer'), user('during'));
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    expect(scripted.summaryCalls()).toHaveLength(2);
    const during = middleware.last()!;
    expect(scripted.stepCalls()[1]!.prompt).toEqual([checkpointFor(during.record), user('during')]);
    expect(outageWarnings(log.warn)).toHaveLength(1);
    // A TCP client says it is not connected: not one call is made. Upstash has no such state: its
    // calls are tried until the step's budget is spent.
    const callsDuring = calls.count;
    if (tcp) expect(callsDuring).toBe(callsBefore);
    else expect(callsDuring).toBeGreaterThan(callsBefore);

    // The next step skips the store at once, and finds the checkpoint made in memory.
    conversation.push(assistant('answer 2'), user('still down'));
    await wrapped.doGenerate({ prompt: conversation });
    expect(calls.count).toBe(callsDuring);
    expect(scripted.summaryCalls()).toHaveLength(2);
    expect(scripted.stepCalls()[2]!.prompt).toEqual([checkpointFor(during.record), ...conversation.slice(during.messagesCovered)]);
    expect(outageWarnings(log.warn)).toHaveLength(1);

    await connection.revive();
    // The first answer of a probe ends the outage: what was stored meanwhile is written, then said.
    await waitFor(() => backInfo(log.info).length > 0);
    expect(backInfo(log.info)).toEqual([expect.stringContaining('what one conversation stored meanwhile was written to it')]);
    // The restarted Redis was empty: another instance continues from what was written back.
    const other = scriptedModel();
    const second = compaction({ contextWindow: 200_000, store: redisStore({ client: connection.client, prefix }) });
    conversation.push(assistant('answer 3'), user('after'));
    await wrap(other.model, second).doGenerate({ prompt: conversation });
    expect(other.summaryCalls()).toHaveLength(0);
    expect(other.stepCalls()[0]!.prompt).toEqual([checkpointFor(during.record), ...conversation.slice(during.messagesCovered)]);
    expect(backInfo(log.info)).toHaveLength(1);
    expect(outageWarnings(log.warn)).toHaveLength(1);
  });

  it('should give up on a stopped Redis after one timeout, skip it until it is continued, then use it again', async () => {
    server = await startRedisServer();
    connection = await connect(server);
    const prefix = `stop-${Date.now()}:`;
    const log = recordingLogger();
    const { store, calls } = counting(redisStore({ client: connection.client, prefix }));
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000, store, logger: log.logger });
    const wrapped = wrap(scripted.model, middleware);
    const conversation: Message[] = [...chat(2, 20, 's'), user('before')];
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    const made = middleware.last()!;

    server.pause();
    try {
      conversation.push(assistant('answer'), user('stopped'));
      await wrapped.doGenerate({ prompt: conversation });
      // The thread could not be read: the conversation goes out whole, never with a wrong checkpoint.
      expect(scripted.stepCalls()[1]!.prompt).toEqual(conversation);
      expect(outageWarnings(log.warn)).toEqual([expect.stringContaining('did not answer within 5000 ms')]);
      const callsDown = calls.count;
      conversation.push(assistant('answer 2'), user('still stopped'));
      await wrapped.doGenerate({ prompt: conversation });
      expect(calls.count).toBe(callsDown);
      expect(backInfo(log.info)).toHaveLength(0);
    } finally {
      server.resume();
    }
    await waitFor(() => backInfo(log.info).length > 0);
    expect(backInfo(log.info)).toHaveLength(1);
    // Redis kept everything: the checkpoint made before is found again.
    const callsUp = calls.count;
    conversation.push(assistant('answer 3'), user('continued'));
    await wrapped.doGenerate({ prompt: conversation });
    expect(calls.count).toBeGreaterThan(callsUp);
    expect(scripted.stepCalls()[3]!.prompt).toEqual([checkpointFor(made.record), ...conversation.slice(made.messagesCovered)]);
    expect(scripted.summaryCalls()).toHaveLength(1);
    expect(outageWarnings(log.warn)).toHaveLength(1);
  });

  it('should go on after Redis restarts empty: no checkpoint, no wrong one, no failed step', async () => {
    server = await startRedisServer();
    connection = await connect(server);
    const prefix = `empty-${Date.now()}:`;
    const log = recordingLogger();
    const scripted = scriptedModel();
    const conversation: Message[] = [...chat(2, 20, 'e'), user('before')];
    const first = compaction({ contextWindow: 200_000, store: redisStore({ client: connection.client, prefix }), logger: log.logger });
    first.compactNext();
    await wrap(scripted.model, first).doGenerate({ prompt: conversation });

    await connection.kill();
    await connection.revive();
    const reader = scriptedModel();
    const second = compaction({ contextWindow: 200_000, store: redisStore({ client: connection.client, prefix }), logger: log.logger });
    conversation.push(assistant('answer'), user('after'));
    await wrap(reader.model, second).doGenerate({ prompt: conversation });
    expect(reader.stepCalls()[0]!.prompt).toEqual(conversation);
    expect(reader.summaryCalls()).toHaveLength(0);
  });

  it('should find a checkpoint again after Redis restarts with append-only persistence', async () => {
    server = await startRedisServer({ appendOnly: true });
    connection = await connect(server);
    const prefix = `aof-${Date.now()}:`;
    const scripted = scriptedModel();
    const conversation: Message[] = [...chat(2, 20, 'a'), user('before')];
    const first = compaction({ contextWindow: 200_000, store: redisStore({ client: connection.client, prefix }) });
    first.compactNext();
    await wrap(scripted.model, first).doGenerate({ prompt: conversation });
    const made = first.last()!;

    await connection.kill();
    await connection.revive();
    const reader = scriptedModel();
    const second = compaction({ contextWindow: 200_000, store: redisStore({ client: connection.client, prefix }) });
    conversation.push(assistant('answer'), user('after'));
    await wrap(reader.model, second).doGenerate({ prompt: conversation });
    expect(reader.summaryCalls()).toHaveLength(0);
    expect(reader.stepCalls()[0]!.prompt).toEqual([checkpointFor(made.record), ...conversation.slice(made.messagesCovered)]);
  });
});
