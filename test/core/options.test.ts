import { describe, expect, it } from 'vitest';
import { compaction } from '../../src';
import { realClock } from '../../src/clock';
import { DEFAULT_KEEP, DEFAULT_SUMMARY_OUTPUT_TOKENS, resolveOptions } from '../../src/options';
import { ceiling } from '../../src/sizing/ceiling';

function refusal(options: Record<string, unknown>): TypeError {
  try {
    resolveOptions(options);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return error as TypeError;
  }
  throw new Error(`options ${JSON.stringify(options)} were accepted`);
}

describe('resolveOptions', () => {
  describe('defaults', () => {
    it('should fill in every default when no option is given', () => {
      expect(resolveOptions({})).toEqual({
        contextWindow: undefined,
        buffer: undefined,
        keep: 15_000,
        auto: true,
        summaryOutputTokens: 32_000,
        summaryTimeout: 120_000,
        summarizer: undefined,
        logger: undefined,
        store: undefined,
        onCompaction: undefined,
        native: false,
        prepare: 0.8,
        waitUntil: undefined,
        clearToolResults: false,
        secret: undefined,
        clock: realClock,
        streamPart: true,
        compactAt: 'cost',
        pricing: undefined,
      });
      expect(DEFAULT_KEEP).toBe(15_000);
      expect(DEFAULT_SUMMARY_OUTPUT_TOKENS).toBe(32_000);
    });

    it('should treat an option given as undefined as unset', () => {
      expect(resolveOptions({ keep: undefined, buffer: undefined }).keep).toBe(15_000);
    });
  });

  describe('accepted values', () => {
    it('should read a share buffer as a share of the window', () => {
      const { buffer } = resolveOptions({ buffer: '20%' });
      expect(buffer).toEqual({ share: 20 });
      expect(ceiling(200_000, buffer)).toBe(160_000);
    });

    it('should accept the shares at both ends, "1%" and "99%"', () => {
      expect(resolveOptions({ buffer: '1%' }).buffer).toEqual({ share: 1 });
      expect(resolveOptions({ buffer: '99%' }).buffer).toEqual({ share: 99 });
    });

    it('should read a number buffer as tokens', () => {
      const { buffer } = resolveOptions({ buffer: 10_000 });
      expect(buffer).toEqual({ tokens: 10_000 });
      expect(ceiling(200_000, buffer)).toBe(190_000);
    });

    it('should keep a number or a function as the window', () => {
      expect(resolveOptions({ contextWindow: 200_000 }).contextWindow).toBe(200_000);
      const byModel = () => 128_000;
      expect(resolveOptions({ contextWindow: byModel }).contextWindow).toBe(byModel);
    });

    it('should keep the given keep, auto, summaryOutputTokens and native', () => {
      const resolved = resolveOptions({ keep: 0, auto: false, summaryOutputTokens: 8_000, native: true });
      expect(resolved.keep).toBe(0);
      expect(resolved.auto).toBe(false);
      expect(resolved.summaryOutputTokens).toBe(8_000);
      expect(resolved.native).toBe(true);
    });

    it('should accept console as a logger', () => {
      expect(resolveOptions({ logger: console }).logger).toBe(console);
    });
  });

  describe('refused values', () => {
    it.each([
      ['"0%"', { buffer: '0%' }, 'buffer', '"0%"'],
      ['"150%"', { buffer: '150%' }, 'buffer', '"150%"'],
      ['"100%"', { buffer: '100%' }, 'buffer', '"100%"'],
      ['-1 tokens', { buffer: -1 }, 'buffer', '-1'],
      ['1.5 tokens', { buffer: 1.5 }, 'buffer', '1.5'],
      ['"abc"', { buffer: 'abc' }, 'buffer', '"abc"'],
    ])('should refuse a buffer of %s naming the option and the value', (_label, options, name, shown) => {
      const error = refusal(options);
      expect(error.message).toContain(name);
      expect(error.message).toContain(shown);
    });

    it('should keep the pricing fields given, and none given as undefined', () => {
      expect(resolveOptions({ pricing: { cachedInput: 0.1, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 } }).pricing).toEqual({ cachedInput: 0.1, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 });
      expect(resolveOptions({ pricing: { output: 8, cacheWrite: undefined } }).pricing).toStrictEqual({ output: 8 });
      expect(resolveOptions({ pricing: {} }).pricing).toStrictEqual({});
    });

    it.each([
      ['a string', { pricing: 'cheap' }, '"cheap"'],
      ['a negative ratio', { pricing: { output: -1 } }, '{ output: -1 }'],
      ['an infinite ratio', { pricing: { cachedInput: Number.POSITIVE_INFINITY } }, '{ cachedInput: Infinity }'],
      ['a ratio as a string', { pricing: { output: '8' } }, '{ output: "8" }'],
      ['a fraction of a millisecond', { pricing: { cacheTtl: 1.5 } }, '{ cacheTtl: 1.5 }'],
      ['an unknown field', { pricing: { input: 1.25 } }, '{ input: 1.25 }'],
      ['null', { pricing: null }, 'null'],
    ])('should refuse a pricing that is %s naming the option and the value', (_label, options, shown) => {
      const error = refusal(options);
      expect(error.message).toBe(
        `ai-compaction: option pricing must be an object { cachedInput?, cacheWrite?, output? } of ratios to the input price (finite numbers, 0 or more) and cacheTtl? in milliseconds (a whole number, above 0), got ${shown}`,
      );
    });

    it.each([
      ['0', { compactAt: 0 }, 'compactAt', '0'],
      ['1.5', { compactAt: 1.5 }, 'compactAt', '1.5'],
      ['"half"', { compactAt: 'half' }, 'compactAt', '"half"'],
      ['a negative cached price', { pricing: { cachedInput: -0.1 } }, 'pricing', 'cachedInput: -0.1'],
      ['an infinite output price', { pricing: { output: Number.POSITIVE_INFINITY } }, 'pricing', 'output: Infinity'],
      ['a cache lifetime of 0', { pricing: { cacheTtl: 0 } }, 'pricing', 'cacheTtl: 0'],
      ['an unknown price', { pricing: { input: 1 } }, 'pricing', 'input: 1'],
    ])('should refuse %s naming the option and the value', (_label, options, name, shown) => {
      const error = refusal(options as Record<string, unknown>);
      expect(error.message).toContain(`option ${name}`);
      expect(error.message).toContain(shown);
    });

    it('should keep compactAt and the prices given, a share of 1 and a price of 0 included', () => {
      expect(resolveOptions({ compactAt: 1, pricing: { cachedInput: 0, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 } })).toMatchObject({ compactAt: 1, pricing: { cachedInput: 0, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 } });
      expect(resolveOptions({ compactAt: 'ceiling' }).compactAt).toBe('ceiling');
    });

    it.each([
      ['a string', { contextWindow: '200000' }, '"200000"'],
      ['a string with a unit', { contextWindow: '200k' }, '"200k"'],
      ['zero', { contextWindow: 0 }, '0'],
      ['a negative number', { contextWindow: -200_000 }, '-200000'],
      ['a fraction', { contextWindow: 1.5 }, '1.5'],
      ['NaN', { contextWindow: Number.NaN }, 'NaN'],
      ['an object', { contextWindow: { tokens: 200_000 } }, 'an object'],
    ])('should refuse a window that is %s naming the option and the value', (_label, options, shown) => {
      const error = refusal(options);
      expect(error.message).toContain('contextWindow');
      expect(error.message).toContain(shown);
    });

    it('should refuse a negative keep naming the option and the value', () => {
      const error = refusal({ keep: -5 });
      expect(error.message).toContain('keep');
      expect(error.message).toContain('-5');
    });

    it('should refuse a summaryOutputTokens of 0', () => {
      const error = refusal({ summaryOutputTokens: 0 });
      expect(error.message).toContain('summaryOutputTokens');
      expect(error.message).toContain('got 0');
    });

    it('should refuse a non-boolean auto', () => {
      const error = refusal({ auto: 'false' });
      expect(error.message).toContain('auto');
      expect(error.message).toContain('"false"');
    });

    it('should refuse a logger without warn', () => {
      const error = refusal({ logger: { info() {} } });
      expect(error.message).toContain('logger');
    });

    it('should refuse a store without get, set and delete', () => {
      const error = refusal({ store: { get() {} } });
      expect(error.message).toContain('store');
    });

    it('should refuse a summarizer that is not a model', () => {
      const error = refusal({ summarizer: 'openai/gpt-5' });
      expect(error.message).toContain('summarizer');
      expect(error.message).toContain('"openai/gpt-5"');
    });

    it('should keep a secret as a list, the one given or the list given', () => {
      const secret = 's'.repeat(32);
      expect(resolveOptions({ secret }).secret).toEqual([secret]);
      expect(resolveOptions({ secret: [secret, 't'.repeat(40)] }).secret).toEqual([secret, 't'.repeat(40)]);
    });

    it.each([
      ['s'.repeat(31), 'a string of 31 characters'],
      [[], 'an empty list'],
      [['s'.repeat(32), 'short'], 'a list whose entry 1 is a string of 5 characters'],
      [[42], 'a list whose entry 0 is 42'],
      [32, '32'],
    ])('should refuse the secret %j naming the option, never showing the secret', (secret, shown) => {
      const error = refusal({ secret });
      expect(error.message).toBe(`ai-compaction: option secret must be a string of at least 32 characters, or a non-empty list of them (the first seals, any opens), got ${shown}`);
      expect(error.message).not.toContain('short');
      expect(() => compaction({ secret: secret as string })).toThrow(error.message);
    });

    it('should refuse an unknown option by name', () => {
      const error = refusal({ window: 200_000 });
      expect(error.message).toContain('window');
    });
  });

  describe('compaction()', () => {
    it('should refuse bad options at construction with the same TypeError', () => {
      expect(() => compaction({ buffer: '150%' })).toThrow(TypeError);
      expect(() => compaction({ buffer: '150%' })).toThrow(/buffer.*"150%"/);
      expect(() => compaction({ keep: -1 })).toThrow(/keep.*-1/);
      expect(() => compaction({ contextWindow: 'abc' as never })).toThrow(/contextWindow.*"abc"/);
    });

    it('should refuse a summaryTimeout a timer cannot hold (over 2,147,483,647 ms), naming the option and the value', () => {
      expect(() => compaction({ summaryTimeout: 2_147_483_648 })).toThrow(TypeError);
      expect(() => compaction({ summaryTimeout: 2_147_483_648 })).toThrow(/summaryTimeout.*2147483648/);
      expect(() => compaction({ summaryTimeout: 30 * 24 * 3_600_000 })).toThrow(/summaryTimeout.*2592000000/);
      expect(() => compaction({ summaryTimeout: 2_147_483_647 })).not.toThrow();
    });

    it('should construct with good options', () => {
      const middleware = compaction({ contextWindow: 200_000, buffer: '20%', keep: 10_000 });
      expect(typeof middleware.transformParams).toBe('function');
      expect(middleware.last()).toBeUndefined();
    });
  });
});
