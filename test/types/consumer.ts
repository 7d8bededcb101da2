// Compiled by `npm run test:types` (and test/types/consumers.test.ts in `npm test`) twice, against ai@6 and against ai@7 (tsconfig.ai7.json maps
// `ai` and `@ai-sdk/openai` to the v7 installs): a consumer's code must type-check unchanged with either.
import { createOpenAI } from '@ai-sdk/openai';
import { type LanguageModelMiddleware, defaultSettingsMiddleware, generateText, streamText, wrapLanguageModel } from 'ai';
import { type CompactionCallOptions, CompactionError, type CompactionRecord, compaction, isContextOverflowError, isSummaryRequest } from '../../src';

const openai = createOpenAI({ apiKey: 'test' });
const middleware = compaction({ contextWindow: 200_000, buffer: '20%', keep: 10_000, onCompaction: (record: CompactionRecord) => record.reason });

const model = wrapLanguageModel({ model: openai('gpt-5'), middleware });
const chained = wrapLanguageModel({
  model: openai.chat('gpt-4.1'),
  middleware: [middleware, defaultSettingsMiddleware({ settings: { temperature: 0 } })],
});
const typed: LanguageModelMiddleware = middleware;

export async function consumer(): Promise<void> {
  await generateText({ model, prompt: 'hi', providerOptions: { compaction: { scope: 'tenant-1' } } });
  // useChat's chat id names the conversation: its checkpoint follows the name, whatever the system prompt.
  const call: CompactionCallOptions = { scope: 'tenant-1', conversation: 'chat-1', compact: false };
  await generateText({ model, system: `Today is ${new Date().toDateString()}.`, prompt: 'hi', providerOptions: { compaction: { ...call } } });
  streamText({ model: chained, prompt: 'hi' });
  middleware.compactNext();
  const last: CompactionRecord | undefined = middleware.last();
  const state = middleware.state();
  compaction({ state, summarizer: openai('gpt-5-mini'), contextWindow: (m) => (m.modelId === 'gpt-5' ? 400_000 : undefined) });
  void [last, typed, isSummaryRequest({ prompt: [] }), isContextOverflowError(new Error('x')), CompactionError.isInstance(null)];
}
