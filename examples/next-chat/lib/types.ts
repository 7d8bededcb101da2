import type { UIMessage } from 'ai';

/** What the page shows about a compaction that happened while answering a message. */
export interface CompactionNotice {
  reason: 'auto' | 'overflow' | 'manual';
  /** Messages of the conversation the checkpoint now stands in for. */
  messagesCovered: number;
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
}

/** `useChat` messages of this app: an assistant message may carry the compaction its request made. */
export type ChatMessage = UIMessage<{ compaction?: CompactionNotice }>;

/** The server action's conversation: plain text turns kept in the page's state. */
export interface ActionMessage {
  role: 'user' | 'assistant';
  content: string;
}

export type ActionReply = { text: string; compaction?: CompactionNotice } | { error: string };
