import { describe, expect, it } from 'vitest';
import { bufferTokens, ceiling, defaultBuffer } from '../../../src/sizing/ceiling';

describe('ceiling', () => {
  describe('default buffer', () => {
    it('should keep 15 % free on a 200k window: ceiling 170,000', () => {
      expect(ceiling(200_000, undefined)).toBe(170_000);
    });

    it('should keep at least 16,000 free on a 100k window: ceiling 84,000', () => {
      expect(ceiling(100_000, undefined)).toBe(84_000);
    });

    it('should keep 15 % free below a 32,000 window: 20k -> 17,000', () => {
      expect(ceiling(20_000, undefined)).toBe(17_000);
    });

    it('should keep 16,000 free on a 32k window: ceiling 16,000', () => {
      expect(ceiling(32_000, undefined)).toBe(16_000);
    });

    it('should apply the 16,000 floor from 32,000 up and not below', () => {
      expect(defaultBuffer(32_000)).toBe(16_000);
      expect(defaultBuffer(31_999)).toBe(4_800);
      expect(defaultBuffer(200_000)).toBe(30_000);
    });
  });

  describe('buffer option', () => {
    it('should take a share of the window: "20%" of 200k -> 160,000', () => {
      expect(ceiling(200_000, { share: 20 })).toBe(160_000);
    });

    it('should take a number of tokens: 10,000 on 200k -> 190,000', () => {
      expect(ceiling(200_000, { tokens: 10_000 })).toBe(190_000);
    });

    it('should fall back to the default when the buffer is the whole window or more', () => {
      expect(ceiling(200_000, { tokens: 200_000 })).toBe(170_000);
      expect(ceiling(200_000, { tokens: 500_000 })).toBe(170_000);
      expect(bufferTokens(100_000, { tokens: 100_000 })).toBe(16_000);
    });

    it('should keep a buffer just under the window', () => {
      expect(ceiling(200_000, { tokens: 199_999 })).toBe(1);
    });

    it('should accept a buffer of 0 tokens', () => {
      expect(ceiling(200_000, { tokens: 0 })).toBe(200_000);
    });
  });

  describe('maxOutputTokens', () => {
    it('should keep maxOutputTokens free when it is above the buffer: 50,000 on 200k -> 150,000', () => {
      expect(ceiling(200_000, undefined, 50_000)).toBe(150_000);
    });

    it('should keep the buffer when maxOutputTokens is below it', () => {
      expect(ceiling(200_000, undefined, 500)).toBe(170_000);
      expect(ceiling(200_000, { tokens: 10_000 }, 5_000)).toBe(190_000);
    });

    it('should compare maxOutputTokens with a token or share buffer alike', () => {
      expect(ceiling(200_000, { tokens: 10_000 }, 50_000)).toBe(150_000);
      expect(ceiling(200_000, { share: 20 }, 50_000)).toBe(150_000);
    });
  });
});
