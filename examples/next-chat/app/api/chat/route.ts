import { handleChat } from '@/lib/chat';

// Node.js runtime: streamText + wrapLanguageModel + compaction() (see lib/model.ts and lib/chat.ts).
export async function POST(request: Request) {
  return handleChat(request);
}
