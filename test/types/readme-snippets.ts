// The README's code snippets, type-checked by `npm run typecheck` (against ai@6) so the README
// stays true to the API. Keep them in step with README.md.
import { openai } from '@ai-sdk/openai';
import { convertToModelMessages, type LanguageModelMiddleware, streamText, type UIMessage, wrapLanguageModel } from 'ai';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { type CompactionCallOptions, type CompactionMetadata, compaction, compactionOf, isSummaryRequest, memoryStore } from '../../src';
import { redisStore } from '../../src/redis';

export function reminderSnippet() {
  const model = openai('gpt-5');
  const note = { role: 'user' as const, content: [{ type: 'text' as const, text: `Today is ${new Date().toDateString()}.` }] };
  const reminder: LanguageModelMiddleware = {
    specificationVersion: 'v3', // 'v4' with AI SDK 7
    transformParams: async ({ params }) => (isSummaryRequest(params) ? params : { ...params, prompt: [...params.prompt, note] }),
  };
  return wrapLanguageModel({ model, middleware: [compaction(), reminder] });
}

export async function storeSnippets() {
  const ioredisStore = redisStore({ client: new Redis(process.env.REDIS_URL!) });
  const client = await createClient({ url: process.env.REDIS_URL }).connect();
  const nodeRedisStore = redisStore({ client, prefix: 'chat:', ttlSeconds: 24 * 3600 });
  return [compaction({ contextWindow: 200_000, store: ioredisStore }), compaction({ store: nodeRedisStore }), compaction({ store: memoryStore({ maxBytes: 100 * 1024 * 1024 }) })];
}

export function scopeSnippet(userId: string) {
  return { compaction: { scope: userId } satisfies CompactionCallOptions };
}

type ChatMessage = UIMessage<{ compaction?: CompactionMetadata }>;
const model = wrapLanguageModel({ model: openai('gpt-5'), middleware: compaction({ contextWindow: 400_000 }) });

export async function POST(request: Request) {
  const { messages }: { messages: ChatMessage[] } = await request.json();
  const result = streamText({ model, messages: await convertToModelMessages(messages) });
  return result.toUIMessageStreamResponse<ChatMessage>({
    originalMessages: messages,
    messageMetadata: ({ part }) => {
      const compaction = part.type === 'finish-step' ? compactionOf(part.providerMetadata) : undefined;
      return compaction && { compaction };
    },
  });
}
