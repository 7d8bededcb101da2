import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compaction, memoryStore } from '../../src';
import { createEngine } from '../../src/engine';
import { band } from '../support/prepare-fixtures';
import { scriptedModel, wrap } from '../support/harness';

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
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
      await pause(10);
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
      await pause(20);
      expect(escaped).toEqual([]);
    });

    it('should let nothing escape the store\'s timers (an outage and the probe that ends it) when the logger throws', async () => {
      let connected = false;
      const store = { ...memoryStore(), connected: () => connected };
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 20_000, logger: throwing, store });
      // The client says it is not connected: the outage begins (a warning), and the first probe is
      // planned a second later; it finds the store answering (an info line from a timer).
      await wrap(scripted.model, middleware).doGenerate({ prompt: band().slice(-1) });
      connected = true;
      await pause(1_200);
      expect(escaped).toEqual([]);
      expect(scripted.stepCalls()).toHaveLength(1);
    });
  });
});
