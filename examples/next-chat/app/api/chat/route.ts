import { handleChat } from '@/lib/chat';
import { model } from '@/lib/node-model';

// Node.js runtime: streamText + wrapLanguageModel + compaction() (see lib/model.ts and lib/chat.ts),
// checkpoints in Redis when REDIS_URL is set (lib/redis.ts).
export async function POST(request: Request) {
  return handleChat(request, model);
}
