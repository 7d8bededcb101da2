import { compactionOf } from 'ai-compaction';
import { conversationEnds, coveredMessages, isCompactionPart, turnStart } from './covered';
import type { ChatMessage, CompactionNotice } from './types';

/**
 * The notice of each reply whose request compacted, by message id. The middleware shows a
 * compaction as a `compaction` tool part at the start of that reply (a `dynamic-tool` part of
 * `useChat`, no route code needed), and `compactionOf(part)` reads the compaction from it: what it
 * covered, the estimates and its cost, whether it was prepared ahead (the call's metadata), the
 * summary (its output). A regenerated reply that sends the same checkpoint shows it again. Where its checkpoint ends among the page's messages is
 * worked out here, from the messages the request had (lib/covered.ts).
 */
export async function noticesOf(messages: readonly ChatMessage[]): Promise<Map<string, CompactionNotice>> {
  const notices = new Map<string, CompactionNotice>();
  const ends = await conversationEnds(messages);
  messages.forEach((message, index) => {
    const part = [...message.parts].reverse().find(isCompactionPart);
    const compaction = part === undefined ? undefined : compactionOf(part);
    if (compaction === undefined) return;
    // the request's messages: those before the reply
    notices.set(message.id, { ...compaction, covered: coveredMessages(ends.slice(0, index), compaction.messagesCovered, turnStart(messages.slice(0, index))) });
  });
  return notices;
}
