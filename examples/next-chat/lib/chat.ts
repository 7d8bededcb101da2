import { convertToModelMessages, type LanguageModel, streamText } from 'ai';
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
  // The step that compacted starts with a `compaction` tool part (the middleware's `streamPart`):
  // `useChat` holds it as a `dynamic-tool` part, which the page shows as a notice above the reply
  // and a divider where the checkpoint ends (lib/notices.ts). Nothing to pass on here.
  return result.toUIMessageStreamResponse<ChatMessage>({
    originalMessages: messages,
    // A demo shows the real error; a production app may prefer a generic message.
    onError: (error) => (error instanceof Error ? error.message : String(error)),
  });
}
