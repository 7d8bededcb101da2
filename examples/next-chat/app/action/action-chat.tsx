'use client';

import { useEffect, useRef, useState } from 'react';
import type { ActionMessage, CompactionNotice } from '@/lib/types';
import { chat } from '../actions';
import { Composer, ErrorLine, MessageList, type ShownMessage } from '../messages';

type Turn = ActionMessage & { id: string; compaction?: CompactionNotice };

/** The conversation lives in this component's state; each turn calls the `chat` server action with all of it. */
export function ActionChat() {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [status, setStatus] = useState<'ready' | 'submitted' | 'error'>('ready');
  const [error, setError] = useState<string>();
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView({ block: 'end' });
  }, [turns.length, status]);

  async function send(text: string) {
    const next: Turn[] = [...turns, { id: crypto.randomUUID(), role: 'user', content: text }];
    setTurns(next);
    setStatus('submitted');
    setError(undefined);
    try {
      const reply = await chat(next.map(({ role, content }) => ({ role, content })));
      if ('error' in reply) throw new Error(reply.error);
      setTurns([...next, { id: crypto.randomUUID(), role: 'assistant', content: reply.text, compaction: reply.compaction }]);
      setStatus('ready');
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
      setStatus('error');
    }
  }

  const shown: ShownMessage[] = turns.map(({ id, role, content, compaction }) => ({ id, role, text: content, compaction }));
  return (
    <main>
      <h1>Server action</h1>
      <p className="hint">
        <code>&apos;use server&apos;</code> · <code>generateText</code> · the conversation is kept in client state
      </p>
      <MessageList messages={shown} pending={status === 'submitted'} />
      <ErrorLine message={error} />
      <Composer status={status} disabled={status === 'submitted'} onSend={(text) => void send(text)} />
      <div ref={end} />
    </main>
  );
}
