import { handleChat } from '@/lib/chat';

// The same handler on the Edge runtime: the middleware needs no Node.js API (Web Crypto, Web streams).
export const runtime = 'edge';

export async function POST(request: Request) {
  return handleChat(request);
}
