import type { UIMessage } from 'ai';
import type { CompactionMetadata } from 'ai-compaction';
import type { CoveredMessages } from './covered';

/**
 * What the page shows about a compaction that happened while answering a message: the middleware's
 * metadata, and where the checkpoint ends in the page's conversation (`messagesCovered` counts the
 * model's messages, `covered` the page's).
 */
export type CompactionNotice = CompactionMetadata & { covered: CoveredMessages };

/**
 * `useChat` messages of this app. A reply whose request compacted holds the middleware's
 * `compaction` tool part (lib/notices.ts); a conversation kept by an earlier version of this app
 * has the notice in its metadata instead.
 */
export type ChatMessage = UIMessage<{ compaction?: CompactionNotice }>;

/** The server action's conversation: plain text turns kept in the page's state. */
export interface ActionMessage {
  role: 'user' | 'assistant';
  content: string;
}

export type ActionReply = { text: string; compaction?: CompactionNotice } | { error: string };
