import { convertToModelMessages, type LanguageModel, streamText } from 'ai';
import { compactionOf } from 'ai-compaction';
import { conversationEnds, coveredMessages } from './covered';
import { SYSTEM } from './model';
import type { ChatMessage } from './types';

/** The chat route handler, shared by the Node.js route (`/api/chat`) and the Edge route (`/api/chat-edge`), each with its own model. */
export async function handleChat(request: Request, model: LanguageModel): Promise<Response> {
  const { messages }: { messages: ChatMessage[] } = await request.json();
  const result = streamText({
    model,
    system: SYSTEM,
    messages: await convertToModelMessages(messages),
    // the page's stop button closes the request: the model's stream is aborted with it
    abortSignal: request.signal,
  });
  // where each message ends in the conversation the middleware counts, to place a compaction's cut
  const ends = await conversationEnds(messages);
  return result.toUIMessageStreamResponse<ChatMessage>({
    originalMessages: messages,
    // The step that compacted carries the compaction in its provider metadata: pass it on as
    // message metadata, which the page shows as a notice above the reply and a divider where the
    // checkpoint ends.
    messageMetadata: ({ part }) => {
      const compaction = part.type === 'finish-step' ? compactionOf(part.providerMetadata) : undefined;
      if (compaction === undefined) return undefined;
      return { compaction: { ...compaction, covered: coveredMessages(ends, compaction.messagesCovered, turnStart(messages)) } };
    },
    // A demo shows the real error; a production app may prefer a generic message.
    onError: (error) => (error instanceof Error ? error.message : String(error)),
  });
}

/** Where the turn being answered starts: its user messages at the end of the conversation. */
function turnStart(messages: readonly ChatMessage[]): number {
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role === 'user') start--;
  return start;
}
