// End to end, the model catalog (docs/design.md, "The window"): `compaction()` with no
// `contextWindow`, the real @ai-sdk/openai and @ai-sdk/anthropic clients, and the local provider
// server holding the window the catalog states for the model (gpt-5: its 272,000-token input
// limit, not its 400,000-token context; claude-sonnet-4-5: 200,000). A conversation grows by
// about 45,000 tokens a turn; the middleware compacts before the server rejects anything. The
// same run with a model the catalog lacks is rejected as too long: what the catalog spares.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, wrapLanguageModel } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { type CompactionRecord, compaction } from '../../src';
import { catalogModel, catalogWindow } from '../../src/catalog/match';
import { assistantAgent, type ProviderServer, startProviderServer } from '../support/provider-server/index';

const servers: ProviderServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const WORDS = 'the project keeps every record of the meeting where the team decided how orders move from the warehouse to the customer and which report goes out first'.split(' ');

/** About `tokens` tokens of plain prose (some 4.1 characters a token for the server's tokenizer). */
function prose(turn: number, tokens: number): string {
  const sentences: string[] = [`Turn ${turn}.`];
  let length = 0;
  for (let index = 0; length < tokens * 4; index++) {
    const sentence = `${WORDS[(index * 7 + turn) % WORDS.length]} ${WORDS[(index * 3) % WORDS.length]} ${WORDS[(index + turn) % WORDS.length]}.`;
    sentences.push(sentence);
    length += sentence.length + 1;
  }
  return sentences.join(' ');
}

type Api = 'openai.responses' | 'openai.chat' | 'anthropic.messages';

async function run(api: Api, modelId: string, window: number, turns: number) {
  const server = await startProviderServer({ contextWindow: window, agent: assistantAgent() });
  servers.push(server);
  const records: CompactionRecord[] = [];
  const middleware = compaction({ onCompaction: (record) => records.push(record) });
  const openai = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' });
  const client =
    api === 'anthropic.messages'
      ? createAnthropic({ baseURL: server.anthropicBaseURL, apiKey: 'test' })(modelId)
      : api === 'openai.chat'
        ? openai.chat(modelId)
        : openai.responses(modelId);
  expect(client.provider).toBe(api);
  const model = wrapLanguageModel({ model: client, middleware });
  const messages: Parameters<typeof generateText>[0]['messages'] & unknown[] = [];
  const errors: unknown[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    messages.push({ role: 'user', content: prose(turn, 45_000) });
    try {
      const result = await generateText({ model, messages, maxRetries: 0 });
      messages.push(...result.response.messages);
    } catch (error) {
      errors.push(error);
      break;
    }
  }
  return { server, records, errors, middleware };
}

describe('compaction() with no contextWindow knows the window from the catalog', () => {
  it.each([
    ['openai.responses', 'gpt-5', 272_000],
    ['openai.chat', 'gpt-5', 272_000],
    ['anthropic.messages', 'claude-sonnet-4-5', 200_000],
  ] as const)('should compact %s %s before the server rejects a prompt over its %i-token window', async (api, modelId, window) => {
    // The server's window is the catalog's for the model.
    expect(catalogWindow(catalogModel({ provider: api, modelId })!)).toBe(window);
    const turns = Math.ceil(window / 45_000) + 2;
    const { server, records, errors, middleware } = await run(api, modelId, window, turns);
    expect(errors).toEqual([]);
    expect(server.requests.filter((request) => request.rejected)).toEqual([]);
    expect(server.requests.filter((request) => !request.isSummaryRequest)).toHaveLength(turns);
    expect(Math.max(...server.requests.map((request) => request.promptTokens))).toBeLessThanOrEqual(window);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((record) => record.reason === 'auto')).toBe(true);
    expect(middleware.last()?.window).toEqual({ tokens: window, source: 'catalog' });
  });

  it('should be rejected as too long with a model the catalog lacks, on the same server and conversation', async () => {
    const { server, records } = await run('openai.chat', 'gpt-5-in-house', 272_000, 8);
    expect(server.requests.filter((request) => request.error === 'context_length_exceeded').length).toBeGreaterThan(0);
    expect(records[0]?.reason).toBe('overflow');
    expect(records[0]?.window).toEqual({ tokens: 272_000, source: 'learned' });
  });
});
