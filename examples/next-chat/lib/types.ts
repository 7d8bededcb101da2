import type { UIMessage } from 'ai';
import type { CompactionMetadata } from 'ai-compaction';

/** What the page shows about a compaction that happened while answering a message. */
export type CompactionNotice = CompactionMetadata;

/** `useChat` messages of this app: an assistant message may carry the compaction its request made. */
export type ChatMessage = UIMessage<{ compaction?: CompactionNotice }>;

/** The server action's conversation: plain text turns kept in the page's state. */
export interface ActionMessage {
  role: 'user' | 'assistant';
  content: string;
}

export type ActionReply = { text: string; compaction?: CompactionNotice } | { error: string };
