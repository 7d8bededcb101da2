import { type ReactNode, useEffect, useLayoutEffect, useRef } from 'react';
import { costLine } from '@/lib/cost';
import type { CompactionNotice } from '@/lib/types';
import type { Conversations } from './conversations';
import { Markdown } from './markdown';

export interface ShownMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  text: string;
  compaction?: CompactionNotice;
  /** A reply stopped before its end. */
  stopped?: boolean;
}

const number = new Intl.NumberFormat('en-US');
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** The small line shown above the reply whose request compacted the conversation. */
export function CompactionLine({ notice }: { notice: CompactionNotice }) {
  const { since } = notice.covered;
  // the middleware says so on the step that first sends a checkpoint prepared ahead
  const prepared = notice.prepared === true;
  const cost = costLine(notice);
  return (
    <div className="notice" data-testid="compaction-notice" data-since={since} data-prepared={prepared}>
      <span title="The middleware's own estimates of the prompt's size before and after the compaction (the provider's count where it had one), not the provider's bill">
        Conversation compacted: {plural(notice.covered.count, 'message')} summarized (estimated {number.format(notice.tokensBefore)} →{' '}
        {number.format(notice.tokensAfter)} tokens{notice.reason === 'auto' ? '' : `, ${notice.reason}`})
      </span>
      {cost !== undefined && (
        <span className="cost" data-testid="compaction-cost" title="What writing the summary cost: the requests the middleware made itself, the tokens as the provider reported them">
          {cost}
        </span>
      )}
      {prepared && (
        <span className="prepared" data-testid="prepared-note">
          Prepared ahead: the summary was written {since > 0 ? `${plural(since, 'message')} earlier` : 'earlier'}, where the divider is, while the chat went on; the
          messages after the divider are still sent in full.
        </span>
      )}
      <details>
        <summary>Summary</summary>
        <div className="summary">
          <Markdown text={notice.summary} />
        </div>
      </details>
    </div>
  );
}

/** Where a compaction's checkpoint ends: the messages above it are what its summary stands for. */
interface Cut {
  /** How many messages, from the first, the checkpoint covers. */
  at: number;
  notice: CompactionNotice;
  /** The newest compaction: the model sees its summary now. */
  current: boolean;
}

/**
 * The compactions of a conversation, from the notices on its replies: one cut per place (the
 * newest there). A checkpoint covers the messages before the request it was made for, at most.
 */
function cutsOf(messages: ShownMessage[]): Cut[] {
  const byPlace = new Map<number, Cut>();
  messages.forEach((message, index) => {
    if (message.compaction === undefined) return;
    const at = Math.min(message.compaction.covered.count, index);
    if (at === 0) return;
    byPlace.delete(at);
    byPlace.set(at, { at, notice: message.compaction, current: false });
  });
  const cuts = [...byPlace.values()];
  if (cuts.length > 0) cuts[cuts.length - 1]!.current = true;
  return cuts;
}

function Divider({ cut }: { cut: Cut }) {
  const { at, notice, current } = cut;
  const ahead = notice.prepared === true;
  return (
    <li className={`divider${current ? ' current' : ''}`} data-testid="compaction-divider" data-current={current} data-covered={at} data-ahead={ahead}>
      <span>
        {current
          ? `↑ The model now sees ${at === 1 ? 'the message' : `the ${at} messages`} above as the summary${notice.covered.partly ? ' (and the start of the next one)' : ''}${ahead ? ', written here ahead of time' : ''}`
          : `↑ Compacted here earlier (${plural(at, 'message')}); a later summary covers them now`}
      </span>
    </li>
  );
}

export function MessageList({
  messages,
  pending,
  streamingId,
  onRegenerate,
}: {
  messages: ShownMessage[];
  pending: boolean;
  streamingId?: string;
  /** Shown under the last reply when given. */
  onRegenerate?: () => void;
}) {
  const cuts = cutsOf(messages);
  const current = cuts.find((cut) => cut.current);
  const coverage = (index: number) => (current === undefined ? undefined : index < current.at ? 'covered' : index === current.at && current.notice.covered.partly ? 'partly' : undefined);
  const last = messages.at(-1);
  return (
    <ol className="messages" data-testid="messages">
      {messages.length === 0 && (
        <li className="empty" data-testid="empty">
          Tell the assistant a fact (“My order number is A-4471”), paste a long document, and ask about it later (“What was the order number I gave you?”).
          The context window is small: a few long pastes and the conversation is compacted.
        </li>
      )}
      {messages.map((message, index) => (
        <MessageItem
          key={message.id}
          message={message}
          coverage={coverage(index)}
          streaming={message.id === streamingId}
          cut={cuts.find((cut) => cut.at === index)}
          onRegenerate={message === last && message.role === 'assistant' ? onRegenerate : undefined}
        />
      ))}
      {pending && (
        <li className="pending" data-testid="pending">
          Thinking…
        </li>
      )}
    </ol>
  );
}

function MessageItem({
  message,
  coverage,
  streaming,
  cut,
  onRegenerate,
}: {
  message: ShownMessage;
  coverage: 'covered' | 'partly' | undefined;
  streaming: boolean;
  cut: Cut | undefined;
  onRegenerate?: () => void;
}) {
  return (
    <>
      {cut && <Divider cut={cut} />}
      <li className={coverage === undefined ? undefined : coverage} data-covered={coverage}>
        {message.compaction && <CompactionLine notice={message.compaction} />}
        <div className={`message ${message.role}`} data-testid="message" data-role={message.role}>
          <div className="role">{message.role === 'user' ? 'You' : 'Assistant'}</div>
          {message.role === 'assistant' ? (
            <div className="text">
              <Markdown text={message.text} streaming={streaming} unfinished={message.stopped === true} />
            </div>
          ) : (
            <div className="text plain">{message.text}</div>
          )}
          {message.stopped === true && (
            <p className="stopped" data-testid="stopped">
              ■ Stopped
            </p>
          )}
        </div>
        {onRegenerate && (
          <div className="actions">
            <button type="button" className="link" data-testid="regenerate" onClick={onRegenerate}>
              ↻ Regenerate
            </button>
          </div>
        )}
      </li>
    </>
  );
}

/** The message field and its button: Send, or Stop while a reply is on its way. */
export function Composer({ status, busy, onSend, onStop }: { status: string; busy: boolean; onSend: (text: string) => void; onStop: () => void }) {
  return (
    <form
      className="composer"
      data-testid="composer"
      data-status={status}
      onSubmit={(event) => {
        event.preventDefault();
        const field = event.currentTarget.elements.namedItem('text') as HTMLTextAreaElement;
        const text = field.value.trim();
        if (text === '' || busy) return;
        onSend(text);
        field.value = '';
      }}
    >
      <textarea
        name="text"
        data-testid="chat-input"
        aria-label="Message"
        placeholder="Message (Enter to send, Shift+Enter for a new line)"
        rows={2}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            event.currentTarget.form?.requestSubmit();
          }
        }}
      />
      {busy ? (
        <button type="button" className="stop" data-testid="stop" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" data-testid="send">
          Send
        </button>
      )}
    </form>
  );
}

export function ErrorLine({ message, onRetry }: { message: string | undefined; onRetry?: () => void }) {
  if (message === undefined) return null;
  return (
    <p className="error" role="alert" data-testid="chat-error">
      <span>{message}</span>
      {onRetry && (
        <button type="button" className="link" data-testid="retry" onClick={onRetry}>
          Retry
        </button>
      )}
    </p>
  );
}

/** The page's title, its conversations to pick from, and New chat. */
export function Toolbar<M>({ title, hint, conversations }: { title: string; hint: ReactNode; conversations: Conversations<M> | undefined }) {
  return (
    <div className="toolbar">
      <div className="heading">
        <h1>{title}</h1>
        <p className="hint">{hint}</p>
      </div>
      <div className="chats">
        <select
          aria-label="Conversations"
          data-testid="conversations"
          disabled={conversations === undefined}
          value={conversations?.current.id ?? ''}
          onChange={(event) => conversations?.select(event.target.value)}
        >
          {conversations?.list.map((conversation) => (
            <option key={conversation.id} value={conversation.id}>
              {conversation.title}
            </option>
          ))}
        </select>
        <button type="button" data-testid="new-chat" disabled={conversations === undefined} onClick={() => conversations?.create()}>
          New chat
        </button>
      </div>
    </div>
  );
}

/** The bottom bar: pinned under the messages, whatever their length. */
export function ComposerBar({ children }: { children: ReactNode }) {
  return <div className="composer-bar">{children}</div>;
}

/**
 * Keeps the page scrolled to its end as the conversation changes (after every render), unless the
 * reader scrolled up; when `force` changes (a message sent) it scrolls there whatever.
 */
export function useFollow(force: unknown): void {
  const following = useRef(true);
  useEffect(() => {
    const onScroll = () => {
      const page = document.scrollingElement ?? document.documentElement;
      following.current = page.scrollHeight - (page.scrollTop + window.innerHeight) < 120;
    };
    window.addEventListener('scroll', onScroll, { passive: true });
    return () => window.removeEventListener('scroll', onScroll);
  }, []);
  useLayoutEffect(() => {
    following.current = true;
  }, [force]);
  useLayoutEffect(() => {
    if (!following.current) return;
    const page = document.scrollingElement ?? document.documentElement;
    page.scrollTop = page.scrollHeight;
  });
}
