'use client';

import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ChatMessage } from '@/lib/types';
import { type Conversation, type Conversations, titleFrom, useConversations } from './conversations';
import { Composer, ComposerBar, ErrorLine, MessageList, type ShownMessage, Toolbar, useFollow } from './messages';

const textOf = (message: ChatMessage) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
const titleOf = (messages: ChatMessage[]) => titleFrom(textOf(messages.find((message) => message.role === 'user') ?? messages[0]!));

/** `useChat` against a route handler; the compaction notice arrives as message metadata. The conversations are kept in the browser. */
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

  const shown: ShownMessage[] = messages.map((message) => ({ id: message.id, role: message.role, text: textOf(message), compaction: message.metadata?.compaction }));
  const busy = status === 'submitted' || status === 'streaming';
  const retry = useCallback(() => void regenerate(), [regenerate]);
  return (
    <>
      <MessageList
        messages={shown}
        pending={status === 'submitted'}
        streamingId={status === 'streaming' ? messages.at(-1)?.id : undefined}
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
