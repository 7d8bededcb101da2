import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStore } from '../../../src/store/memory';

/** Bytes the store counts for one entry: 2 per UTF-16 code unit of key and value. */
const size = (key: string, value: string) => 2 * (key.length + value.length);

describe('memoryStore', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  describe('get, set and delete', () => {
    it('should return undefined for a key never set', async () => {
      const store = memoryStore();
      expect(await store.get('missing')).toBeUndefined();
      expect(store.bytes()).toBe(0);
    });

    it('should return the value set under a key', async () => {
      const store = memoryStore();
      await store.set('conversation:1', '{"summary":"hello"}');
      expect(await store.get('conversation:1')).toBe('{"summary":"hello"}');
      expect(await store.get('conversation:2')).toBeUndefined();
    });

    it('should replace the value of a key set twice and count only the newest', async () => {
      const store = memoryStore();
      await store.set('k', 'first value');
      await store.set('k', 'v2');
      expect(await store.get('k')).toBe('v2');
      expect(store.bytes()).toBe(size('k', 'v2'));
    });

    it('should forget a deleted key and give its bytes back', async () => {
      const store = memoryStore();
      await store.set('a', 'alpha');
      await store.set('b', 'beta');
      await store.delete('a');
      expect(await store.get('a')).toBeUndefined();
      expect(await store.get('b')).toBe('beta');
      expect(store.bytes()).toBe(size('b', 'beta'));
    });

    it('should resolve when deleting a key that is not there', async () => {
      const store = memoryStore();
      await expect(store.delete('never-set')).resolves.toBeUndefined();
      expect(store.bytes()).toBe(0);
    });

    it('should keep an empty string as a value distinct from a missing one', async () => {
      const store = memoryStore();
      await store.set('empty', '');
      expect(await store.get('empty')).toBe('');
    });

    it('should count 2 bytes per UTF-16 code unit of key and value', async () => {
      const store = memoryStore();
      await store.set('ключ', 'значение');
      await store.set('emoji', '😀😀');
      expect(store.bytes()).toBe(2 * (4 + 8) + 2 * (5 + 4));
    });

    it('should keep separate instances separate', async () => {
      const one = memoryStore();
      const two = memoryStore();
      await one.set('k', 'one');
      expect(await two.get('k')).toBeUndefined();
    });
  });

  describe('least recently used out', () => {
    it('should drop the least recently written value when full', async () => {
      // Each entry is 2 * (2 + 8) = 20 bytes; three fit.
      const store = memoryStore({ maxBytes: 60 });
      await store.set('k1', 'value-01');
      await store.set('k2', 'value-02');
      await store.set('k3', 'value-03');
      await store.set('k4', 'value-04');
      expect(await store.get('k1')).toBeUndefined();
      expect(await store.get('k2')).toBe('value-02');
      expect(await store.get('k3')).toBe('value-03');
      expect(await store.get('k4')).toBe('value-04');
      expect(store.bytes()).toBe(60);
    });

    it('should count a read as a use, so a value just read survives', async () => {
      const store = memoryStore({ maxBytes: 60 });
      await store.set('k1', 'value-01');
      await store.set('k2', 'value-02');
      await store.set('k3', 'value-03');
      expect(await store.get('k1')).toBe('value-01');
      await store.set('k4', 'value-04');
      expect(await store.get('k2')).toBeUndefined();
      expect(await store.get('k1')).toBe('value-01');
      expect(await store.get('k3')).toBe('value-03');
      expect(await store.get('k4')).toBe('value-04');
    });

    it('should count a rewrite as a use', async () => {
      const store = memoryStore({ maxBytes: 60 });
      await store.set('k1', 'value-01');
      await store.set('k2', 'value-02');
      await store.set('k3', 'value-03');
      await store.set('k1', 'value-11');
      await store.set('k4', 'value-04');
      expect(await store.get('k2')).toBeUndefined();
      expect(await store.get('k1')).toBe('value-11');
    });

    it('should drop as many old values as a large new one needs', async () => {
      const store = memoryStore({ maxBytes: 60 });
      await store.set('k1', 'value-01');
      await store.set('k2', 'value-02');
      await store.set('k3', 'value-03');
      // 2 * (2 + 18) = 40 bytes: k1 and k2 must go.
      await store.set('k4', 'a-much-longer-valu');
      expect(await store.get('k1')).toBeUndefined();
      expect(await store.get('k2')).toBeUndefined();
      expect(await store.get('k3')).toBe('value-03');
      expect(await store.get('k4')).toBe('a-much-longer-valu');
      expect(store.bytes()).toBe(60);
    });
  });

  describe('byte bound', () => {
    it('should never hold more than maxBytes and keep exactly the newest values that fit', async () => {
      const maxBytes = 1_000;
      const store = memoryStore({ maxBytes });
      const written: Array<[string, string]> = [];
      for (let i = 0; i < 200; i++) {
        const key = `key-${i}`;
        const value = 'x'.repeat((i * 37) % 90);
        await store.set(key, value);
        written.push([key, value]);
        expect(store.bytes()).toBeLessThanOrEqual(maxBytes);
      }
      // With no reads, recency is write order: the survivors are the longest newest run that fits.
      const survivors: Array<[string, string]> = [];
      let total = 0;
      for (let i = written.length - 1; i >= 0; i--) {
        const [key, value] = written[i]!;
        if (total + size(key, value) > maxBytes) break;
        total += size(key, value);
        survivors.unshift([key, value]);
      }
      expect(store.bytes()).toBe(total);
      const oldestSurvivor = written.length - survivors.length;
      for (let i = 0; i < written.length; i++) {
        const [key, value] = written[i]!;
        expect(await store.get(key)).toBe(i >= oldestSurvivor ? value : undefined);
      }
    });

    it('should keep a value of exactly maxBytes, alone', async () => {
      const store = memoryStore({ maxBytes: 100 });
      await store.set('a', 'aaaa');
      await store.set('k', 'v'.repeat(49));
      expect(await store.get('k')).toBe('v'.repeat(49));
      expect(await store.get('a')).toBeUndefined();
      expect(store.bytes()).toBe(100);
    });

    it('should not keep a value larger than maxBytes and leave the others alone', async () => {
      const store = memoryStore({ maxBytes: 100 });
      await store.set('a', 'aaaa');
      await store.set('k', 'v'.repeat(50));
      expect(await store.get('k')).toBeUndefined();
      expect(await store.get('a')).toBe('aaaa');
      expect(store.bytes()).toBe(size('a', 'aaaa'));
    });

    it('should drop the old value of a key whose new value is too large', async () => {
      const store = memoryStore({ maxBytes: 100 });
      await store.set('k', 'small');
      await store.set('k', 'v'.repeat(50));
      expect(await store.get('k')).toBeUndefined();
      expect(store.bytes()).toBe(0);
    });

    it('should hold up to 50 MiB by default', async () => {
      const store = memoryStore();
      const fits = 'v'.repeat(25 * 1024 * 1024 - 1);
      await store.set('k', fits);
      expect(store.bytes()).toBe(50 * 1024 * 1024);
      expect((await store.get('k'))?.length).toBe(25 * 1024 * 1024 - 1);
      await store.set('j', `${fits}v`);
      expect(await store.get('j')).toBeUndefined();
      expect(store.bytes()).toBe(50 * 1024 * 1024);
    });
  });

  describe('time to live', () => {
    it('should keep a value for exactly ttlSeconds and drop it after', async () => {
      vi.useFakeTimers();
      const store = memoryStore();
      await store.set('k', 'v', { ttlSeconds: 10 });
      vi.advanceTimersByTime(9_999);
      expect(await store.get('k')).toBe('v');
      vi.advanceTimersByTime(1);
      expect(await store.get('k')).toBe('v');
      vi.advanceTimersByTime(1);
      expect(await store.get('k')).toBeUndefined();
    });

    it('should not count a read as extending the time to live', async () => {
      vi.useFakeTimers();
      const store = memoryStore();
      await store.set('k', 'v', { ttlSeconds: 2 });
      vi.advanceTimersByTime(1_500);
      expect(await store.get('k')).toBe('v');
      vi.advanceTimersByTime(1_000);
      expect(await store.get('k')).toBeUndefined();
    });

    it('should keep a value set without ttlSeconds however long it waits', async () => {
      vi.useFakeTimers();
      const store = memoryStore();
      await store.set('forever', 'v');
      await store.set('brief', 'v', { ttlSeconds: 1 });
      vi.advanceTimersByTime(30 * 24 * 60 * 60 * 1000);
      expect(await store.get('forever')).toBe('v');
      expect(await store.get('brief')).toBeUndefined();
    });

    it('should restart the time to live when a key is set again', async () => {
      vi.useFakeTimers();
      const store = memoryStore();
      await store.set('k', 'v1', { ttlSeconds: 10 });
      vi.advanceTimersByTime(8_000);
      await store.set('k', 'v2', { ttlSeconds: 10 });
      vi.advanceTimersByTime(8_000);
      expect(await store.get('k')).toBe('v2');
      await store.set('k', 'v3');
      vi.advanceTimersByTime(60_000);
      expect(await store.get('k')).toBe('v3');
    });

    it('should honour a fractional ttlSeconds to the millisecond', async () => {
      vi.useFakeTimers();
      const store = memoryStore();
      await store.set('k', 'v', { ttlSeconds: 0.25 });
      vi.advanceTimersByTime(250);
      expect(await store.get('k')).toBe('v');
      vi.advanceTimersByTime(1);
      expect(await store.get('k')).toBeUndefined();
    });

    it('should set a value only when none is there (setIfAbsent), for exactly ttlMs', async () => {
      vi.useFakeTimers();
      const store = memoryStore();
      expect(await store.setIfAbsent!('lease', 'a', { ttlMs: 1_000 })).toBe(true);
      expect(await store.setIfAbsent!('lease', 'b', { ttlMs: 1_000 })).toBe(false);
      expect(await store.get('lease')).toBe('a');
      vi.advanceTimersByTime(1_000);
      expect(await store.setIfAbsent!('lease', 'b', { ttlMs: 1_000 })).toBe(false);
      vi.advanceTimersByTime(1);
      expect(await store.get('lease')).toBeUndefined();
      expect(await store.setIfAbsent!('lease', 'b', { ttlMs: 1_000 })).toBe(true);
      expect(await store.get('lease')).toBe('b');
      await store.delete('lease');
      expect(await store.setIfAbsent!('lease', 'c', { ttlMs: 1_000 })).toBe(true);
      await expect(store.setIfAbsent!('other', 'v', { ttlMs: 0 })).rejects.toThrow('ai-compaction: memoryStore ttlMs must be a positive number, got 0');
    });

    it('should not count expired values in bytes()', async () => {
      vi.useFakeTimers();
      const store = memoryStore();
      await store.set('short', 'v', { ttlSeconds: 1 });
      await store.set('long', 'v', { ttlSeconds: 100 });
      expect(store.bytes()).toBe(size('short', 'v') + size('long', 'v'));
      vi.advanceTimersByTime(1_001);
      expect(store.bytes()).toBe(size('long', 'v'));
    });

    it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])(
      'should reject ttlSeconds %s with a TypeError and keep nothing',
      async (ttlSeconds) => {
        const store = memoryStore();
        await expect(store.set('k', 'v', { ttlSeconds })).rejects.toThrow(
          new TypeError(
            `ai-compaction: memoryStore ttlSeconds must be a positive number, got ${String(ttlSeconds)}`,
          ),
        );
        expect(await store.get('k')).toBeUndefined();
      },
    );
  });

  describe('concurrent use', () => {
    it('should end in the state of the calls in the order they were made', async () => {
      const store = memoryStore({ maxBytes: 10_000 });
      const model = new Map<string, string>();
      const expected: Array<string | undefined> = [];
      const calls: Array<Promise<string | undefined | void>> = [];
      for (let i = 0; i < 2_000; i++) {
        const key = `k${(i * 7) % 53}`;
        if (i % 5 === 0) {
          calls.push(store.delete(key));
          model.delete(key);
          expected.push(undefined);
        } else if (i % 3 === 0) {
          calls.push(store.get(key));
          expected.push(model.get(key));
        } else {
          const value = `value-${i}`;
          calls.push(store.set(key, value));
          model.set(key, value);
          expected.push(undefined);
        }
      }
      expect(await Promise.all(calls)).toEqual(expected);
      let total = 0;
      for (const [key, value] of model) total += size(key, value);
      expect(total).toBeLessThanOrEqual(10_000);
      expect(store.bytes()).toBe(total);
      for (let k = 0; k < 53; k++) {
        expect(await store.get(`k${k}`)).toBe(model.get(`k${k}`));
      }
    });

    it('should keep the byte bound under many parallel writers', async () => {
      const store = memoryStore({ maxBytes: 2_048 });
      await Promise.all(
        Array.from({ length: 500 }, async (_, i) => {
          await store.set(`w${i}`, 'y'.repeat(i % 64));
          await store.get(`w${i - 1}`);
          expect(store.bytes()).toBeLessThanOrEqual(2_048);
        }),
      );
      expect(store.bytes()).toBeLessThanOrEqual(2_048);
      expect(await store.get('w499')).toBe('y'.repeat(499 % 64));
    });
  });

  describe('options', () => {
    it('should accept no options and an empty options object', async () => {
      for (const store of [memoryStore(), memoryStore({}), memoryStore({ maxBytes: undefined })]) {
        await store.set('k', 'v');
        expect(await store.get('k')).toBe('v');
      }
    });

    it.each([
      [-1, '-1'],
      [0, '0'],
      [1.5, '1.5'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      ['1024', '"1024"'],
      [null, 'null'],
    ])('should refuse maxBytes %s with a TypeError naming it', (maxBytes, shown) => {
      expect(() => memoryStore({ maxBytes: maxBytes as number })).toThrow(
        new TypeError(`ai-compaction: memoryStore maxBytes must be a positive integer, got ${shown}`),
      );
    });
  });
});
