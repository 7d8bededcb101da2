import { handleChat } from '@/lib/chat';
import { chatModel } from '@/lib/model';

// The same handler on the Edge runtime: the middleware needs no Node.js API (Web Crypto, Web streams).
// Next.js 16 deprecates `runtime = 'edge'` for routes (`next build` warns); see docs/nextjs.md.
export const runtime = 'edge';

// This isolate's own instance, its checkpoints in memory (ioredis needs TCP, which the Edge runtime lacks).
const model = chatModel();

export async function POST(request: Request) {
  return handleChat(request, model);
}
