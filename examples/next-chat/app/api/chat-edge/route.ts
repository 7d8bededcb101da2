import { handleChat } from '@/lib/chat';
import { chatModel } from '@/lib/model';
import { upstashStoreFromEnvironment } from '@/lib/upstash';

// The same handler on the Edge runtime: the middleware needs no Node.js API (Web Crypto, Web streams).
// Next.js 16 deprecates `runtime = 'edge'` for routes (`next build` warns); see docs/nextjs.md.
export const runtime = 'edge';

// This isolate's own instance: its checkpoints in Redis over HTTP when UPSTASH_REDIS_REST_URL and
// UPSTASH_REDIS_REST_TOKEN are set (lib/upstash.ts), else in its memory (ioredis needs TCP, which
// the Edge runtime lacks).
const model = chatModel({ store: upstashStoreFromEnvironment() });

export async function POST(request: Request) {
  return handleChat(request, model);
}
