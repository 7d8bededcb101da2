import { describe, expect, it } from 'vitest';
import * as ai from 'ai';
import * as aiTest from 'ai/test';

describe('test setup', () => {
  it('should load the AI SDK major this project runs against', () => {
    const major = process.env.AI_SDK_MAJOR === '7' ? 'MockLanguageModelV4' : 'MockLanguageModelV3';
    expect(typeof (aiTest as Record<string, unknown>)[major]).toBe('function');
    expect(typeof ai.wrapLanguageModel).toBe('function');
  });
});
