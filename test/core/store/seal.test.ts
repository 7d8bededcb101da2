import { afterEach, describe, expect, it, vi } from 'vitest';
import { compaction, memoryStore } from '../../../src';
import { checkpointText } from '../../../src/checkpoint/message';
import type { Message } from '../../../src/prompt/types';
import { redisStore } from '../../../src/redis';
import { MAX_SEALED_LENGTH, SEALED_PREFIX, UNOPENED_WARNING_INTERVAL_MS, createSealer, unopenedWarnings } from '../../../src/store/seal';
import { assistant, recordingLogger, scriptedModel, user, wrap } from '../../support/harness';
import { SUMMARY } from '../../support/models';

// Sealed values (option `secret`, docs/stores.md): AES-GCM through Web Crypto, an HKDF key per kind
// of record, the store key bound in. Runs on Node and in the Edge runtime (Web Crypto only).

const SECRET = 'correct horse battery staple, 32+';
const OTHER = 'another secret of thirty-two chars';

/** A store whose keys and values can be read and changed behind the middleware's back. */
function openStore() {
  const store = memoryStore();
  const keys = new Set<string>();
  return {
    store: { ...store, set: (key: string, value: string, options?: { ttlSeconds?: number }) => (keys.add(key), store.set(key, value, options)) },
    keys,
    raw: store,
    values: async () => Promise.all([...keys].map(async (key) => [key, (await store.get(key))!] as const)),
  };
}

/** A conversation of distinctive words, over three exchanges. */
const conversation = (tag: string): Message[] => [
  user(`${tag} the quartermaster counts marmalade jars`),
  assistant(`${tag} seventeen marmalade jars on the shelf`),
  user(`${tag} and the pomegranates?`),
  assistant(`${tag} nine pomegranates in the crate`),
  user(`${tag} what next`),
];

const checkpointFor = (record: string): Message => ({ role: 'user', content: [{ type: 'text', text: checkpointText(SUMMARY, record) }] });

async function compacted(store: ReturnType<typeof openStore>['store'], prompt: Message[], sealing: { secret?: string } = { secret: SECRET }) {
  const scripted = scriptedModel();
  const middleware = compaction({ contextWindow: 200_000, store, ...sealing });
  middleware.compactNext();
  await wrap(scripted.model, middleware).doGenerate({ prompt });
  return middleware.last()!;
}

/** A store where alpha's sealed checkpoint was copied over beta's, and beta's conversation. */
async function movedCheckpoint() {
  const shared = openStore();
  const beta = conversation('beta');
  await compacted(shared.store, conversation('alpha'));
  await compacted(shared.store, beta);
  const checkpoints = [...shared.keys].filter((key) => key.startsWith('cp:'));
  expect(checkpoints).toHaveLength(2);
  await shared.raw.set(checkpoints[1]!, (await shared.raw.get(checkpoints[0]!))!);
  return { shared, beta };
}

describe('sealed values', () => {
  it('should seal every stored value, hold no conversation text, and let another instance with the secret send the checkpoint', async () => {
    const shared = openStore();
    const prompt = conversation('alpha');
    const made = await compacted(shared.store, prompt);
    const values = await shared.values();
    expect(values.map(([key]) => key.split(':')[0]).sort()).toEqual(['cp', 'sizing', 'thread']);
    for (const [, value] of values) {
      expect(value.startsWith(SEALED_PREFIX)).toBe(true);
      for (const word of ['quartermaster', 'marmalade', 'pomegranates', 'alpha', SUMMARY.slice(0, 20)]) expect(value).not.toContain(word);
    }

    const reader = scriptedModel();
    const next = [...prompt, assistant('done'), user('more')];
    await wrap(reader.model, compaction({ contextWindow: 200_000, store: shared.store, secret: SECRET })).doGenerate({ prompt: next });
    expect(reader.summaryCalls()).toHaveLength(0);
    expect(reader.stepCalls()[0]!.prompt).toEqual([checkpointFor(made.record), ...next.slice(made.messagesCovered)]);
  });

  it('should never send a checkpoint moved under another key, and warn once per kind', async () => {
    const { shared, beta } = await movedCheckpoint();

    const log = recordingLogger();
    const reader = scriptedModel();
    const wrapped = wrap(reader.model, compaction({ contextWindow: 200_000, store: shared.store, secret: SECRET, logger: log.logger }));
    const next = [...beta, assistant('done'), user('more')];
    await wrapped.doGenerate({ prompt: next });
    await wrapped.doGenerate({ prompt: [...next, assistant('again'), user('once more')] });
    expect(reader.stepCalls().map((call) => call.prompt)).toEqual([next, [...next, assistant('again'), user('once more')]]);
    expect(JSON.stringify(reader.calls)).not.toContain('alpha');
    expect(log.warn).toEqual([expect.stringMatching(/^ai-compaction: ignored a checkpoint under cp:[0-9a-f]{64} that does not open with the secret/)]);
  });

  it('should go on warning about values that do not open for an instance\'s life, at most once a minute per kind', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { shared, beta } = await movedCheckpoint();

      const log = recordingLogger();
      const wrapped = wrap(scriptedModel().model, compaction({ contextWindow: 200_000, store: shared.store, secret: SECRET, logger: log.logger }));
      const next = (tag: string) => [...beta, assistant('done'), user(tag)];
      await wrapped.doGenerate({ prompt: next('one') });
      await wrapped.doGenerate({ prompt: next('two') });
      expect(log.warn).toHaveLength(1);
      vi.advanceTimersByTime(UNOPENED_WARNING_INTERVAL_MS);
      await wrapped.doGenerate({ prompt: next('three') });
      expect(log.warn).toHaveLength(2);
      expect(log.warn[1]).toMatch(/^ai-compaction: ignored a checkpoint under cp:[0-9a-f]{64} .*; 1 more checkpoint did not open since the last warning;/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('should ignore a value with one byte changed', async () => {
    const shared = openStore();
    const prompt = conversation('gamma');
    await compacted(shared.store, prompt);
    const key = [...shared.keys].find((each) => each.startsWith('cp:'))!;
    const value = (await shared.raw.get(key))!;
    const at = SEALED_PREFIX.length + 30;
    await shared.raw.set(key, value.slice(0, at) + (value[at] === 'A' ? 'B' : 'A') + value.slice(at + 1));

    const log = recordingLogger();
    const reader = scriptedModel();
    const next = [...prompt, assistant('done'), user('more')];
    await wrap(reader.model, compaction({ contextWindow: 200_000, store: shared.store, secret: SECRET, logger: log.logger })).doGenerate({ prompt: next });
    expect(reader.stepCalls()[0]!.prompt).toEqual(next);
    expect(log.warn).toEqual([expect.stringContaining('does not open with the secret')]);
  });

  it('should open nothing sealed with another secret, nor a value stored in the clear', async () => {
    const shared = openStore();
    const prompt = conversation('delta');
    await compacted(shared.store, prompt);
    const log = recordingLogger();
    const reader = scriptedModel();
    const next = [...prompt, assistant('done'), user('more')];
    await wrap(reader.model, compaction({ contextWindow: 200_000, store: shared.store, secret: OTHER, logger: log.logger })).doGenerate({ prompt: next });
    expect(reader.stepCalls()[0]!.prompt).toEqual(next);
    expect(log.warn).toEqual([expect.stringContaining('ignored a sizing record under sizing:'), expect.stringContaining('ignored a thread record under thread:')]);

    // Written in the clear by an instance without the secret: refused by one with it.
    const clear = openStore();
    await compacted(clear.store, prompt, {});
    const plain = [...clear.keys].find((key) => key.startsWith('cp:'))!;
    expect((await clear.raw.get(plain))!.startsWith('{')).toBe(true);
    const sealedReader = scriptedModel();
    const warned = recordingLogger();
    await wrap(sealedReader.model, compaction({ contextWindow: 200_000, store: clear.store, secret: SECRET, logger: warned.logger })).doGenerate({ prompt: next });
    expect(sealedReader.stepCalls()[0]!.prompt).toEqual(next);
    expect(warned.warn.some((line) => line.includes('does not open with the secret'))).toBe(true);
  });

  it('should rotate: the first secret seals, any opens', async () => {
    const shared = openStore();
    const prompt = conversation('epsilon');
    const made = await compacted(shared.store, prompt, { secret: OTHER });

    // The new secret first, the old one after: old values open, new ones are sealed with the new one.
    const rotated = scriptedModel();
    const next = [...prompt, assistant('done'), user('more')];
    const middleware = compaction({ contextWindow: 200_000, store: shared.store, secret: [SECRET, OTHER] });
    await wrap(rotated.model, middleware).doGenerate({ prompt: next });
    expect(rotated.summaryCalls()).toHaveLength(0);
    expect(rotated.stepCalls()[0]!.prompt).toEqual([checkpointFor(made.record), ...next.slice(made.messagesCovered)]);
    const thread = [...shared.keys].find((key) => key.startsWith('thread:'))!;
    const sealed = (await shared.raw.get(thread))!;
    expect(await createSealer([SECRET]).open(thread, sealed)).toBeDefined();
    expect(await createSealer([OTHER]).open(thread, sealed)).toBeUndefined();

    // An instance with only the new secret reads the thread record the rotated one wrote, but not the
    // checkpoint still sealed with the old one (a checkpoint is written once): the old secret stays
    // listed until what it sealed has expired.
    const later = scriptedModel();
    const log = recordingLogger();
    const last = [...next, assistant('ok'), user('last')];
    await wrap(later.model, compaction({ contextWindow: 200_000, store: shared.store, secret: SECRET, logger: log.logger })).doGenerate({ prompt: last });
    expect(later.stepCalls()[0]!.prompt).toEqual(last);
    expect(log.warn).toEqual([expect.stringMatching(/^ai-compaction: ignored a checkpoint under cp:/)]);
  });
});

describe('sealed values under a Redis prefix', () => {
  /** A Redis client of a Map: what two redisStores of different prefixes share. */
  function mapClient() {
    const data = new Map<string, string>();
    return {
      data,
      client: {
        get: async (key: string) => data.get(key) ?? null,
        set: async (key: string, value: string) => void data.set(key, value),
        del: async (key: string) => void data.delete(key),
      },
    };
  }

  it('should not open a value copied from prefix p1: to p2: under the same secret', async () => {
    const redis = mapClient();
    const prompt = conversation('zeta');
    const made = await compacted(redisStore({ client: redis.client, prefix: 'p1:' }) as never, prompt);
    expect(made.messagesCovered).toBeGreaterThan(0);
    // Every value of p1: copied, byte for byte, under p2:.
    for (const [key, value] of [...redis.data]) redis.data.set(key.replace(/^p1:/, 'p2:'), value);

    const log = recordingLogger();
    const reader = scriptedModel();
    const next = [...prompt, assistant('done'), user('more')];
    const store = redisStore({ client: redis.client, prefix: 'p2:' });
    await wrap(reader.model, compaction({ contextWindow: 200_000, store, secret: SECRET, logger: log.logger })).doGenerate({ prompt: next });
    expect(reader.stepCalls()[0]!.prompt).toEqual(next);
    expect(log.warn.some((line) => line.includes('does not open with the secret'))).toBe(true);

    // Under its own prefix, the same value opens.
    const own = scriptedModel();
    await wrap(own.model, compaction({ contextWindow: 200_000, store: redisStore({ client: redis.client, prefix: 'p1:' }), secret: SECRET })).doGenerate({ prompt: next });
    expect(own.stepCalls()[0]!.prompt).toEqual([checkpointFor(made.record), ...next.slice(made.messagesCovered)]);
  });
});

describe('unopenedWarnings', () => {
  afterEach(() => vi.useRealTimers());

  it('should warn at once, then at most once a minute per kind, counting the values ignored since', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const warned: string[] = [];
    const unopened = unopenedWarnings((message) => void warned.push(message));
    unopened('cp:a');
    unopened('cp:b');
    unopened('cp:c');
    unopened('thread:a');
    expect(warned).toHaveLength(2);
    expect(warned[0]).toMatch(/^ai-compaction: ignored a checkpoint under cp:a that does not open with the secret/);
    expect(warned[1]).toMatch(/^ai-compaction: ignored a thread record under thread:a /);
    vi.advanceTimersByTime(UNOPENED_WARNING_INTERVAL_MS - 1);
    unopened('cp:d');
    expect(warned).toHaveLength(2);
    vi.advanceTimersByTime(1);
    unopened('cp:e');
    expect(warned).toHaveLength(3);
    expect(warned[2]).toMatch(/^ai-compaction: ignored a checkpoint under cp:e .*; 3 more checkpoints did not open since the last warning;/);
    // An hour on, a tampered value is still reported.
    vi.advanceTimersByTime(60 * UNOPENED_WARNING_INTERVAL_MS);
    unopened('cp:f');
    expect(warned).toHaveLength(4);
    expect(warned[3]).not.toContain('more checkpoints');
  });
});

describe('createSealer', () => {
  it('should bind a value to its key and its kind of record', async () => {
    const sealer = createSealer([SECRET]);
    const sealed = await sealer.seal(`cp:${'a'.repeat(64)}`, '{"v":1}');
    expect(await sealer.open(`cp:${'a'.repeat(64)}`, sealed)).toBe('{"v":1}');
    expect(await sealer.open(`cp:${'b'.repeat(64)}`, sealed)).toBeUndefined();
    expect(await sealer.open(`thread:${'a'.repeat(64)}`, sealed)).toBeUndefined();
    // A fresh nonce each time: the same value seals differently.
    expect(await sealer.seal(`cp:${'a'.repeat(64)}`, '{"v":1}')).not.toBe(sealed);
  });

  it('should open nothing that is not a sealed value', async () => {
    const sealer = createSealer([SECRET]);
    for (const value of ['{"v":1}', SEALED_PREFIX, `${SEALED_PREFIX}not base64!`, `${SEALED_PREFIX}AAAA`]) expect(await sealer.open('cp:x', value)).toBeUndefined();
  });

  it('should bind the store\'s prefix with the key', async () => {
    const sealed = await createSealer([SECRET], 'p1:').seal('cp:x', '{"v":1}');
    expect(await createSealer([SECRET], 'p1:').open('cp:x', sealed)).toBe('{"v":1}');
    expect(await createSealer([SECRET], 'p2:').open('cp:x', sealed)).toBeUndefined();
  });

  it('should not decode a value longer than the longest sealed value', async () => {
    const decode = vi.spyOn(globalThis, 'atob');
    try {
      const long = SEALED_PREFIX + 'A'.repeat(MAX_SEALED_LENGTH - SEALED_PREFIX.length + 4);
      expect(await createSealer([SECRET]).open('cp:x', long)).toBeUndefined();
      expect(decode).not.toHaveBeenCalled();
    } finally {
      decode.mockRestore();
    }
  });
});
