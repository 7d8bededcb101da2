import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { compaction, memoryStore } from '../../src';
import { createEngine } from '../../src/engine';
import { windowFor } from '../../src/model';
import { CATALOG_DATE } from '../../src/catalog/models';
import { band } from '../support/prepare-fixtures';
import { assistant, chat, recordingLogger, scriptedModel, user, wrap } from '../support/harness';

// The host's logger is the host's code (docs/design.md, "What the host can read"): whatever it
// throws, or a promise it returns rejects with, never reaches a step, a store's timer or a
// background compaction. An uncaught exception or an unhandled rejection there ends a Node process.

const throwing = {
  info: () => {
    throw new Error('logger down');
  },
  warn: () => {
    throw new Error('logger down');
  },
};
const rejecting = {
  info: () => Promise.reject(new Error('logger down')),
  warn: () => Promise.reject(new Error('logger down')),
};

/** Let timers and microtasks that are due run. */
/** A moment for what is pending to run and fail: turns of the event loop, no time. */
const moment = async () => {
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
};

describe('engine', () => {
  describe('a logger that fails', () => {
    const escaped: unknown[] = [];
    const record = (error: unknown) => void escaped.push(error);
    beforeEach(() => {
      escaped.length = 0;
      process.on('unhandledRejection', record);
      process.on('uncaughtException', record);
    });
    afterEach(() => {
      process.off('unhandledRejection', record);
      process.off('uncaughtException', record);
    });

    it.each([
      ['throws', throwing],
      ['returns a rejected promise', rejecting],
    ])('should drop what a logger that %s raises, at every call', async (_, logger) => {
      const engine = createEngine({ logger });
      expect(() => engine.warn('a warning')).not.toThrow();
      expect(() => engine.info('a line')).not.toThrow();
      await moment();
      expect(escaped).toEqual([]);
    });

    it('should call the logger as the host wrote it, with the logger as `this`', () => {
      const lines: string[] = [];
      const logger = {
        prefix: 'host',
        info(this: { prefix: string }, message: string) {
          lines.push(`${this.prefix} info ${message}`);
        },
        warn(this: { prefix: string }, message: string) {
          lines.push(`${this.prefix} warn ${message}`);
        },
      };
      const engine = createEngine({ logger });
      engine.info('one');
      engine.warn('two');
      expect(lines).toEqual(['host info one', 'host warn two']);
    });

    it.each([
      ['throws', throwing],
      ['returns a rejected promise', rejecting],
    ])('should let nothing escape a background preparation that fails and a logger that %s', async (_, logger) => {
      const scripted = scriptedModel({ summary: () => Promise.reject(new Error('outage')) });
      const middleware = compaction({ contextWindow: 20_000, logger });
      await wrap(scripted.model, middleware).doGenerate({ prompt: band() });
      expect(scripted.summaryCalls()).toHaveLength(1);
      await moment();
      expect(escaped).toEqual([]);
    });

    it('should let nothing escape the store\'s timers (an outage and the probe that ends it) when the logger throws', async () => {
      let connected = false;
      let probed = 0;
      const memory = memoryStore();
      const store = { ...memory, connected: () => connected, get: (key: string) => (key === 'probe' && probed++, memory.get(key)) };
      const scripted = scriptedModel();
      // The store's timers are faked: the probe's second passes at once.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
      const middleware = compaction({ contextWindow: 20_000, logger: throwing, store });
      // The client says it is not connected: the outage begins (a warning), and the first probe is
      // planned a second later; it finds the store answering (an info line from a timer).
      await wrap(scripted.model, middleware).doGenerate({ prompt: band().slice(-1) });
      connected = true;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(probed).toBe(1);
      vi.useRealTimers();
      await moment();
      expect(escaped).toEqual([]);
      expect(scripted.stepCalls()).toHaveLength(1);
    });
  });
});

describe('windowFor and the options it checks at each use', () => {
  const model = scriptedModel().model as unknown as Parameters<typeof windowFor>[1];
  const key = `${model.provider}:${model.modelId}`;

  it.each([
    ['NaN', Number.NaN, 'NaN'],
    ['-5', -5, '-5'],
    ['"40000"', '40000', '"40000"'],
    ['Infinity', Number.POSITIVE_INFINITY, 'Infinity'],
    ['an object', { tokens: 40_000 }, 'an object'],
  ])('should treat a step as having no window when contextWindow returns %s, and warn once', (_name, returned, shown) => {
    const log = recordingLogger();
    const engine = createEngine({ contextWindow: () => returned as never, logger: log.logger });
    expect(windowFor(engine, model)).toBeUndefined();
    expect(windowFor(engine, model)).toBeUndefined();
    expect(log.warn.filter((line) => line.includes('contextWindow returned'))).toEqual([
      `ai-compaction: option contextWindow returned ${shown} for ${key}, expected a positive number of tokens or undefined; its steps are treated as having no window`,
    ]);
  });

  it('should not compact on its own when contextWindow returns "40000", where a number would', async () => {
    const prompt = [...chat(30, 1_000), user('go')];
    const taken = scriptedModel();
    await wrap(taken.model, compaction({ contextWindow: () => 40_000 })).doGenerate({ prompt });
    expect(taken.summaryCalls()).toHaveLength(1);
    const text = scriptedModel();
    await wrap(text.model, compaction({ contextWindow: () => '40000' as never, logger: recordingLogger().logger })).doGenerate({ prompt });
    expect(text.summaryCalls()).toHaveLength(0);
  });

  it.each([
    ['40000 tokens', { buffer: 40_000 }, 40_000],
    ['50000 tokens', { buffer: 50_000 }, 40_000],
  ])('should keep the default free, with one warning naming the value, for a buffer of %s at or above the window', (shown, options, window) => {
    const log = recordingLogger();
    const engine = createEngine({ contextWindow: window, ...options, logger: log.logger });
    windowFor(engine, model);
    windowFor(engine, model);
    expect(log.warn).toEqual([
      `ai-compaction: option buffer ${shown} keeps the whole ${window}-token window of ${key} free or more; the default, 16000 tokens, is kept free instead`,
    ]);
  });

  it('should say once, at the first step of a model neither the catalog nor contextWindow knows, that only an overflow compacts, naming the option', async () => {
    const log = recordingLogger();
    const scripted = scriptedModel();
    const wrapped = wrap(scripted.model, compaction({ logger: log.logger }));
    await wrapped.doGenerate({ prompt: [user('hi')] });
    await wrapped.doGenerate({ prompt: [user('hi'), assistant('ok'), user('more')] });
    expect(log.warn).toEqual([
      `ai-compaction: ${key} is not in the model catalog (models.dev, ${CATALOG_DATE}) and no contextWindow is given: it compacts only when the provider rejects a prompt as too long (then it learns the window the rejection states); set option contextWindow to compact before`,
    ]);
  });

  it('should refuse an array as options', () => {
    expect(() => compaction([] as never)).toThrow(new TypeError('ai-compaction: options must be an object, got an array'));
  });
});
