'use client';

import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { noticesOf } from '@/lib/notices';
import type { ChatMessage, CompactionNotice } from '@/lib/types';
import { type Conversation, type Conversations, titleFrom, useConversations } from './conversations';
import { Composer, ComposerBar, ErrorLine, MessageList, type ShownMessage, Toolbar, useFollow } from './messages';

const textOf = (message: ChatMessage) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
/** A reply whose text never ended: it was stopped (its text part is still `streaming` once the stream is over). */
const unfinished = (message: ChatMessage) => message.role === 'assistant' && message.parts.some((part) => part.type === 'text' && part.state === 'streaming');
const titleOf = (messages: ChatMessage[]) => titleFrom(textOf(messages.find((message) => message.role === 'user') ?? messages[0]!));

/** `useChat` against a route handler; a compaction arrives as the reply's `compaction` tool part. The conversations are kept in the browser. */
export function Chat({ api, title, hint }: { api: string; title: string; hint: ReactNode }) {
  const conversations = useConversations<ChatMessage>(`next-chat:${api}`, titleOf);
  return (
    <main>
      <Toolbar title={title} hint={hint} conversations={conversations} />
      {conversations === undefined ? (
        <p className="loading">Loading the conversation…</p>
      ) : (
        // one `useChat` per conversation: opening another one starts afresh from its saved messages
        <ChatSession key={conversations.current.id} api={api} conversation={conversations.current} save={conversations.save} />
      )}
    </main>
  );
}

function ChatSession({ api, conversation, save }: { api: string; conversation: Conversation<ChatMessage>; save: Conversations<ChatMessage>['save'] }) {
  const transport = useMemo(() => new DefaultChatTransport<ChatMessage>({ api }), [api]);
  const { messages, sendMessage, regenerate, stop, status, error } = useChat<ChatMessage>({ id: conversation.id, messages: conversation.messages, transport });
  const [sent, setSent] = useState(0);
  useFollow(sent);

  // kept whenever it changes, except during a stream (once it ends, or is stopped, the reply is kept whole)
  const kept = useRef(JSON.stringify(conversation.messages));
  useEffect(() => {
    if (status === 'streaming') return;
    const json = JSON.stringify(messages);
    if (json === kept.current) return;
    kept.current = json;
    save(conversation.id, messages);
  }, [messages, status, conversation.id, save]);
  // leaving the conversation (New chat, another one) ends its reply
  useEffect(() => () => void stop(), [stop]);

  const notices = useNotices(messages);
  const streamingId = status === 'streaming' ? messages.at(-1)?.id : undefined;
  const shown: ShownMessage[] = messages.map((message) => ({
    id: message.id,
    role: message.role,
    text: textOf(message),
    // a conversation kept by an earlier version of this app has its notice in the metadata
    compaction: notices.get(message.id) ?? message.metadata?.compaction,
    stopped: message.id !== streamingId && unfinished(message),
  }));
  const busy = status === 'submitted' || status === 'streaming';
  const retry = useCallback(() => void regenerate(), [regenerate]);
  return (
    <>
      <MessageList
        messages={shown}
        pending={status === 'submitted'}
        streamingId={streamingId}
        onRegenerate={busy ? undefined : retry}
      />
      <ComposerBar>
        <ErrorLine message={error?.message} onRetry={busy ? undefined : retry} />
        <Composer
          status={status}
          busy={busy}
          onSend={(text) => {
            setSent((count) => count + 1);
            void sendMessage({ text });
          }}
          onStop={() => void stop()}
        />
      </ComposerBar>
    </>
  );
}

/** The notices of the conversation's compactions, from the `compaction` parts of its replies (lib/notices.ts), as soon as one arrives. */
function useNotices(messages: ChatMessage[]): Map<string, CompactionNotice> {
  const [notices, setNotices] = useState(() => new Map<string, CompactionNotice>());
  useEffect(() => {
    let current = true;
    void noticesOf(messages).then((found) => current && setNotices(found));
    return () => void (current = false);
  }, [messages]);
  return notices;
}
