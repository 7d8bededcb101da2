import type { UIMessage } from 'ai';
import type { CompactionMetadata } from 'ai-compaction';
import type { CoveredMessages } from './covered';

/**
 * What the page shows about a compaction that happened while answering a message: the middleware's
 * metadata, and where the checkpoint ends in the page's conversation (`messagesCovered` counts the
 * model's messages, `covered` the page's).
 */
export type CompactionNotice = CompactionMetadata & { covered: CoveredMessages };

/** `useChat` messages of this app: an assistant message may carry the compaction its request made. */
export type ChatMessage = UIMessage<{ compaction?: CompactionNotice }>;

/** The server action's conversation: plain text turns kept in the page's state. */
export interface ActionMessage {
  role: 'user' | 'assistant';
  content: string;
}

export type ActionReply = { text: string; compaction?: CompactionNotice } | { error: string };
