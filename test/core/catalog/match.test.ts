import { describe, expect, it } from 'vitest';
import { catalogModel, catalogModels, catalogWindow } from '../../../src/catalog/match';
import { CATALOG, CATALOG_DATE } from '../../../src/catalog/models';

// The model catalog (docs/design.md, "The window"): generated from the models.dev snapshot of
// CATALOG_DATE, a model found by the AI SDK's provider name and model id.

const found = (provider: string, modelId: string) => {
  const model = catalogModel({ provider, modelId });
  return model === undefined ? undefined : { catalog: model.provider, id: model.id, window: catalogWindow(model) };
};

describe('the catalog holds what models.dev states', () => {
  it('should be the snapshot of 2026-07-02', () => {
    expect(CATALOG_DATE).toBe('2026-07-02');
  });

  it("should hold gpt-5's 400,000-token context, 272,000-token input limit, 128,000 output and its prices", () => {
    expect(catalogModel({ provider: 'openai.responses', modelId: 'gpt-5' })).toEqual({
      provider: 'openai',
      id: 'gpt-5',
      context: 400_000,
      input: 272_000,
      output: 128_000,
      prices: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: undefined },
    });
  });

  it("should hold claude-sonnet-4-5's 200,000-token context (no input limit), 64,000 output and its prices with the cache write", () => {
    expect(catalogModel({ provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5-20250929' })).toEqual({
      provider: 'anthropic',
      id: 'claude-sonnet-4-5-20250929',
      context: 200_000,
      input: undefined,
      output: 64_000,
      prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    });
  });

  it("should hold gemini-2.5-pro's 1,048,576-token context", () => {
    expect(catalogModel({ provider: 'google.generative-ai', modelId: 'gemini-2.5-pro' })).toMatchObject({ context: 1_048_576, output: 65_536, prices: { input: 1.25, output: 10, cacheRead: 0.125 } });
  });

  it('should hold the providers the AI SDK has clients for, and no embedding model', () => {
    expect(Object.keys(CATALOG)).toEqual(
      expect.arrayContaining(['openai', 'azure', 'anthropic', 'google', 'google-vertex', 'amazon-bedrock', 'xai', 'mistral', 'deepseek', 'groq', 'vercel']),
    );
    for (const rows of Object.values(CATALOG)) expect(rows.length).toBeGreaterThan(0);
    expect(catalogModels().filter((model) => /embed/.test(model.id))).toEqual([]);
  });
});

describe('matching an AI SDK model', () => {
  it.each([
    ['openai.responses', 'gpt-5', { catalog: 'openai', id: 'gpt-5', window: 272_000 }],
    ['openai.chat', 'gpt-5', { catalog: 'openai', id: 'gpt-5', window: 272_000 }],
    ['openai.chat', 'gpt-5-2025-08-07', { catalog: 'openai', id: 'gpt-5', window: 272_000 }],
    ['anthropic.messages', 'claude-sonnet-4-5-20250929', { catalog: 'anthropic', id: 'claude-sonnet-4-5-20250929', window: 200_000 }],
    ['anthropic.messages', 'claude-sonnet-4-5', { catalog: 'anthropic', id: 'claude-sonnet-4-5', window: 200_000 }],
    ['anthropic.messages', 'claude-sonnet-4', { catalog: 'anthropic', id: 'claude-sonnet-4-20250514', window: 200_000 }],
    ['gateway', 'anthropic/claude-sonnet-4.5', { catalog: 'vercel', id: 'anthropic/claude-sonnet-4.5', window: 200_000 }],
    ['gateway', 'openai/gpt-5', { catalog: 'vercel', id: 'openai/gpt-5', window: 272_000 }],
    ['gateway', 'anthropic/claude-fable-5', { catalog: 'anthropic', id: 'claude-fable-5', window: 1_000_000 }],
    ['google.generative-ai', 'gemini-2.5-pro', { catalog: 'google', id: 'gemini-2.5-pro', window: 1_048_576 }],
    ['google.generative-ai', 'models/gemini-2.5-pro', { catalog: 'google', id: 'gemini-2.5-pro', window: 1_048_576 }],
    ['google.vertex.chat', 'gemini-2.5-pro', { catalog: 'google-vertex', id: 'gemini-2.5-pro', window: 1_048_576 }],
    ['vertex.anthropic.messages', 'claude-sonnet-4-5@20250929', { catalog: 'google-vertex', id: 'claude-sonnet-4-5@20250929', window: 200_000 }],
    ['amazon-bedrock', 'anthropic.claude-sonnet-4-5-20250929-v1:0', { catalog: 'amazon-bedrock', id: 'anthropic.claude-sonnet-4-5-20250929-v1:0', window: 200_000 }],
    ['amazon-bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', { catalog: 'amazon-bedrock', id: 'anthropic.claude-sonnet-4-5-20250929-v1:0', window: 200_000 }],
    ['amazon-bedrock', 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0', { catalog: 'amazon-bedrock', id: 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0', window: 200_000 }],
    ['bedrock.anthropic.messages', 'anthropic.claude-sonnet-4-5-20250929-v1:0', { catalog: 'amazon-bedrock', id: 'anthropic.claude-sonnet-4-5-20250929-v1:0', window: 200_000 }],
    ['azure.responses', 'gpt-5', { catalog: 'azure', id: 'gpt-5', window: 272_000 }],
    ['azure.chat', 'gpt-4o', { catalog: 'azure', id: 'gpt-4o', window: 128_000 }],
    ['azure.chat', 'o3-pro', { catalog: 'openai', id: 'o3-pro', window: 200_000 }],
    ['xai.responses', 'grok-4.3', { catalog: 'xai', id: 'grok-4.3', window: 1_000_000 }],
    ['mistral.chat', 'mistral-large-latest', { catalog: 'mistral', id: 'mistral-large-latest', window: 262_144 }],
    ['deepseek.chat', 'deepseek-chat', { catalog: 'deepseek', id: 'deepseek-chat', window: 1_000_000 }],
    ['groq.chat', 'llama-3.3-70b-versatile', { catalog: 'groq', id: 'llama-3.3-70b-versatile', window: 131_072 }],
  ])('should find %s + %s', (provider, modelId, expected) => {
    expect(found(provider, modelId)).toEqual(expected);
  });

  it.each([
    ['mock-provider', 'mock-model-id'],
    ['openai.chat', 'my-fine-tune'],
    ['my-proxy.chat', 'gpt-5'],
    ['gateway', 'acme/unknown-model'],
    ['anthropic.messages', 'claude-sonnet-4-5-20991231x'],
  ])('should find nothing for %s + %s', (provider, modelId) => {
    expect(catalogModel({ provider, modelId })).toBeUndefined();
  });
});
