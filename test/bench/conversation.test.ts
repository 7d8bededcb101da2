import type { LanguageModelV3Message } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { estimatedTokens, extendConversation, generateConversation } from '../../bench/conversation';

describe('bench conversation generator', () => {
  it.each([2_000, 10_000, 50_000, 200_000])('should hit a target of %i estimated tokens within 5 %%', (targetTokens) => {
    for (const seed of [1, 2, 3]) {
      const prompt = generateConversation({ targetTokens, seed });
      expect(Math.abs(estimatedTokens(prompt) - targetTokens) / targetTokens).toBeLessThanOrEqual(0.05);
    }
  });

  it('should be deterministic from the seed', () => {
    const one = generateConversation({ targetTokens: 30_000, seed: 7 });
    const two = generateConversation({ targetTokens: 30_000, seed: 7 });
    expect(two).toEqual(one);
    expect(extendConversation(two, 7)).toEqual(extendConversation(one, 7));
    expect(generateConversation({ targetTokens: 30_000, seed: 8 })).not.toEqual(one);
  });

  it('should be shaped like a coding agent conversation', () => {
    const prompt = generateConversation({ targetTokens: 50_000, seed: 1 });
    expect(prompt[0]!.role).toBe('system');
    expect(prompt[prompt.length - 1]!.role).toBe('tool');
    const parts = prompt.flatMap((message): Exclude<LanguageModelV3Message, { role: 'system' }>['content'][number][] =>
      message.role === 'system' ? [] : message.content,
    );
    const toolNames = new Set(parts.flatMap((part) => (part.type === 'tool-call' ? [part.toolName] : [])));
    expect([...toolNames].sort()).toEqual(['read_file', 'run_command', 'search']);
    const images = parts.filter((part) => part.type === 'file');
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) {
      expect(image.mediaType).toBe('image/png');
      expect(image.data).toBeInstanceOf(Uint8Array);
      expect((image.data as Uint8Array).length).toBeGreaterThan(45_000);
    }
    for (const part of parts) {
      if (part.type !== 'tool-result' || part.output.type !== 'text') continue;
      expect(part.output.value.length).toBeLessThanOrEqual(10_000);
    }
  });

  it('should carry screenshots as base64 strings when asked', () => {
    const prompt = generateConversation({ targetTokens: 20_000, seed: 1, imageData: 'base64' });
    const images = prompt.flatMap((message) => (message.role === 'user' ? message.content.filter((part) => part.type === 'file') : []));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(typeof image.data).toBe('string');
    expect(Math.abs(estimatedTokens(prompt) - 20_000) / 20_000).toBeLessThanOrEqual(0.05);
  });
});
