'use client';

import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { useEffect, useMemo, useRef } from 'react';
import type { ChatMessage } from '@/lib/types';
import { Composer, ErrorLine, MessageList, type ShownMessage } from './messages';

/** `useChat` against a route handler; the compaction notice arrives as message metadata. */
export function Chat({ api, title }: { api: string; title: string }) {
  const transport = useMemo(() => new DefaultChatTransport<ChatMessage>({ api }), [api]);
  const { messages, sendMessage, status, error } = useChat<ChatMessage>({ transport });
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView({ block: 'end' });
  }, [messages.length, status]);

  const shown: ShownMessage[] = messages.map((message) => ({
    id: message.id,
    role: message.role,
    text: message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
    compaction: message.metadata?.compaction,
  }));
  const busy = status === 'submitted' || status === 'streaming';

  return (
    <main>
      <h1>{title}</h1>
      <p className="hint">
        <code>POST {api}</code> · <code>useChat</code> + <code>streamText</code>
      </p>
      <MessageList messages={shown} pending={status === 'submitted'} streamingId={status === 'streaming' ? messages.at(-1)?.id : undefined} />
      <ErrorLine message={error?.message} />
      <Composer status={status} disabled={busy} onSend={(text) => void sendMessage({ text })} />
      <div ref={end} />
    </main>
  );
}
