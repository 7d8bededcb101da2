'use client';

import { useCallback, useEffect, useRef, useState } from 'react';

/** One conversation as the browser keeps it. */
export interface Conversation<M> {
  id: string;
  title: string;
  /** `Date.now()` of its last change. */
  updatedAt: number;
  messages: M[];
}

/** What a page keeps in `localStorage`, under its own key. */
interface Saved<M> {
  version: 1;
  current: string;
  conversations: Conversation<M>[];
}

/** The most conversations a page keeps (the oldest go first). */
const LIMIT = 20;

/** An id; `crypto.randomUUID` only exists on secure origins (a page opened over plain http on a LAN address is not one). */
export function newId(): string {
  return typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

const empty = <M,>(): Conversation<M> => ({ id: newId(), title: 'New chat', updatedAt: Date.now(), messages: [] });

function isSaved<M>(value: unknown): value is Saved<M> {
  if (typeof value !== 'object' || value === null) return false;
  const { version, current, conversations } = value as Partial<Saved<M>>;
  return (
    version === 1 &&
    typeof current === 'string' &&
    Array.isArray(conversations) &&
    conversations.every((c) => typeof c?.id === 'string' && typeof c.title === 'string' && typeof c.updatedAt === 'number' && Array.isArray(c.messages))
  );
}

function read<M>(key: string): Saved<M> {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(key) ?? 'null');
    if (isSaved<M>(value) && value.conversations.some((c) => c.id === value.current)) return value;
    if (value !== null) console.warn(`next-chat: the conversations saved under "${key}" are not in a shape this page reads; starting afresh`);
  } catch (error) {
    console.warn(`next-chat: could not read the conversations saved under "${key}": ${String(error)}`);
  }
  const first = empty<M>();
  return { version: 1, current: first.id, conversations: [first] };
}

/** Writes, dropping the oldest conversations (never the current one) while the browser's storage is full. */
function write<M>(key: string, saved: Saved<M>): void {
  let conversations = saved.conversations;
  for (;;) {
    try {
      localStorage.setItem(key, JSON.stringify({ ...saved, conversations }));
      return;
    } catch (error) {
      const oldest = conversations.findLast((c) => c.id !== saved.current);
      if (oldest === undefined) {
        console.warn(`next-chat: the conversation is too large for the browser's storage and is not kept: ${String(error)}`);
        return;
      }
      conversations = conversations.filter((c) => c !== oldest);
    }
  }
}

export interface Conversations<M> {
  current: Conversation<M>;
  /** The conversations to pick from, newest first: those with messages, and the current one. */
  list: Conversation<M>[];
  save(id: string, messages: M[]): void;
  select(id: string): void;
  /** Starts an empty conversation (or stays on the current one when it is empty). */
  create(): void;
}

/**
 * A page's conversations, kept in the browser's `localStorage` under `key`, so that a reload
 * finds them (and the one that was open). `undefined` until read: storage exists only in the
 * browser, so the server renders the page without them.
 */
export function useConversations<M>(key: string, titleOf: (messages: M[]) => string): Conversations<M> | undefined {
  const [saved, setSaved] = useState<Saved<M>>();
  const latest = useRef<Saved<M> | undefined>(undefined);
  useEffect(() => {
    latest.current = read<M>(key);
    setSaved(latest.current);
  }, [key]);

  const update = useCallback(
    (change: (saved: Saved<M>) => Saved<M>) => {
      if (latest.current === undefined) return;
      const next = change(latest.current);
      next.conversations = [...next.conversations].sort((a, b) => b.updatedAt - a.updatedAt).slice(0, LIMIT);
      // the current conversation stays, whatever its age
      if (!next.conversations.some((c) => c.id === next.current)) {
        const current = latest.current.conversations.find((c) => c.id === next.current);
        if (current !== undefined) next.conversations.push(current);
      }
      latest.current = next;
      write(key, next);
      setSaved(next);
    },
    [key],
  );

  const save = useCallback(
    (id: string, messages: M[]) =>
      update((saved) => {
        const known = saved.conversations.find((c) => c.id === id);
        const conversation: Conversation<M> = { id, title: messages.length === 0 ? 'New chat' : titleOf(messages), updatedAt: Date.now(), messages };
        return { ...saved, conversations: known === undefined ? [conversation, ...saved.conversations] : saved.conversations.map((c) => (c.id === id ? conversation : c)) };
      }),
    [update, titleOf],
  );
  const select = useCallback((id: string) => update((saved) => (saved.conversations.some((c) => c.id === id) ? { ...saved, current: id } : saved)), [update]);
  const create = useCallback(
    () =>
      update((saved) => {
        if (saved.conversations.find((c) => c.id === saved.current)?.messages.length === 0) return saved;
        // an empty conversation left behind is not kept
        const next = empty<M>();
        return { ...saved, current: next.id, conversations: [next, ...saved.conversations.filter((c) => c.messages.length > 0)] };
      }),
    [update],
  );

  if (saved === undefined) return undefined;
  const current = saved.conversations.find((c) => c.id === saved.current)!;
  const list = saved.conversations.filter((c) => c.messages.length > 0 || c.id === current.id);
  return { current, list, save, select, create };
}

/** A conversation's title: the start of its first message. */
export function titleFrom(text: string | undefined): string {
  const line = (text ?? '').trim().split('\n')[0]!.trim();
  if (line === '') return 'New chat';
  return line.length > 48 ? `${line.slice(0, 47)}…` : line;
}
