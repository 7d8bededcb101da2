import { compactionOf } from 'ai-compaction';
import { conversationEnds, coveredMessages, isCompactionPart, turnStart } from './covered';
import type { ChatMessage, CompactionNotice } from './types';

/**
 * The notice of each reply whose request compacted, by message id. The middleware shows a
 * compaction as a `compaction` tool part at the start of that reply (a `dynamic-tool` part of
 * `useChat`, no route code needed); the part's call carries the step's `providerMetadata.compaction`
 * (`callProviderMetadata`), which `compactionOf` reads: what it covered, the estimates, the summary,
 * its cost, whether it was prepared ahead. Where its checkpoint ends among the page's messages is
 * worked out here, from the messages the request had (lib/covered.ts).
 */
export async function noticesOf(messages: readonly ChatMessage[]): Promise<Map<string, CompactionNotice>> {
  const notices = new Map<string, CompactionNotice>();
  const ends = await conversationEnds(messages);
  messages.forEach((message, index) => {
    const part = [...message.parts].reverse().find(isCompactionPart);
    const compaction = part === undefined ? undefined : compactionOf(part.callProviderMetadata);
    if (compaction === undefined) return;
    // the request's messages: those before the reply
    notices.set(message.id, { ...compaction, covered: coveredMessages(ends.slice(0, index), compaction.messagesCovered, turnStart(messages.slice(0, index))) });
  });
  return notices;
}
