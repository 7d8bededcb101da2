'use client';

import { useEffect, useRef, useState } from 'react';
import type { ActionMessage, CompactionNotice } from '@/lib/types';
import { chat } from '../actions';
import { type Conversation, type Conversations, newId, titleFrom, useConversations } from '../conversations';
import { Composer, ComposerBar, ErrorLine, MessageList, type ShownMessage, Toolbar, useFollow } from '../messages';

type Turn = ActionMessage & { id: string; compaction?: CompactionNotice };

const titleOf = (turns: Turn[]) => titleFrom((turns.find((turn) => turn.role === 'user') ?? turns[0])?.content);

/** The conversation lives in this page's state (and the browser's storage); each turn calls the `chat` server action with all of it. */
export function ActionChat() {
  const conversations = useConversations<Turn>('next-chat:action', titleOf);
  return (
    <main>
      <Toolbar
        title="Server action"
        hint={
          <>
            <code>&apos;use server&apos;</code> · <code>generateText</code> · the page keeps the conversation
          </>
        }
        conversations={conversations}
      />
      {conversations === undefined ? (
        <p className="loading">Loading the conversation…</p>
      ) : (
        <ActionSession key={conversations.current.id} conversation={conversations.current} save={conversations.save} />
      )}
    </main>
  );
}

function ActionSession({ conversation, save }: { conversation: Conversation<Turn>; save: Conversations<Turn>['save'] }) {
  const [turns, setTurns] = useState<Turn[]>(conversation.messages);
  const [status, setStatus] = useState<'ready' | 'submitted' | 'error'>('ready');
  const [error, setError] = useState<string>();
  const [sent, setSent] = useState(0);
  // the call being waited for: Stop, or leaving the page, forgets it
  const pending = useRef<string | undefined>(undefined);
  useFollow(sent);
  useEffect(() => () => void (pending.current = undefined), []);

  function keep(next: Turn[]) {
    setTurns(next);
    save(conversation.id, next);
  }

  async function ask(history: Turn[]) {
    const call = newId();
    pending.current = call;
    setStatus('submitted');
    setError(undefined);
    try {
      const reply = await chat(history.map(({ role, content }) => ({ role, content })));
      if (pending.current !== call) return;
      if ('error' in reply) throw new Error(reply.error);
      keep([...history, { id: newId(), role: 'assistant', content: reply.text, compaction: reply.compaction }]);
      setStatus('ready');
    } catch (failure) {
      if (pending.current !== call) return;
      setError(failure instanceof Error ? failure.message : String(failure));
      setStatus('error');
    } finally {
      if (pending.current === call) pending.current = undefined;
    }
  }

  const send = (text: string) => {
    const next: Turn[] = [...turns, { id: newId(), role: 'user', content: text }];
    keep(next);
    setSent((count) => count + 1);
    void ask(next);
  };
  // a server action cannot be aborted from the page: Stop stops waiting, and its reply is dropped
  const stop = () => {
    pending.current = undefined;
    setStatus('ready');
  };
  const regenerate = () => {
    const history = turns.at(-1)?.role === 'assistant' ? turns.slice(0, -1) : turns;
    if (history.length === 0) return;
    keep(history);
    void ask(history);
  };

  const shown: ShownMessage[] = turns.map(({ id, role, content, compaction }) => ({ id, role, text: content, compaction }));
  const busy = status === 'submitted';
  return (
    <>
      <MessageList messages={shown} pending={busy} onRegenerate={busy ? undefined : regenerate} />
      <ComposerBar>
        <ErrorLine message={error} onRetry={busy ? undefined : regenerate} />
        <Composer status={status} busy={busy} onSend={send} onStop={stop} />
      </ComposerBar>
    </>
  );
}
