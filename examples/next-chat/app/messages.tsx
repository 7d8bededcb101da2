import type { CompactionNotice } from '@/lib/types';
import { Markdown } from './markdown';

export interface ShownMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  text: string;
  compaction?: CompactionNotice;
}

const number = new Intl.NumberFormat('en-US');
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** The small line shown above the reply whose request compacted the conversation. */
export function CompactionLine({ notice }: { notice: CompactionNotice }) {
  return (
    <div className="notice" data-testid="compaction-notice">
      <span>
        Conversation compacted: {plural(notice.covered.count, 'message')} summarized ({number.format(notice.tokensBefore)} →{' '}
        {number.format(notice.tokensAfter)} tokens{notice.reason === 'auto' ? '' : `, ${notice.reason}`})
      </span>
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
  return (
    <li className={`divider${current ? ' current' : ''}`} data-testid="compaction-divider" data-current={current} data-covered={at}>
      <span>
        {current
          ? `↑ The model now sees ${at === 1 ? 'the message' : `the ${at} messages`} above as the summary${notice.covered.partly ? ' (and the start of the next one)' : ''}`
          : `↑ Compacted here earlier (${plural(at, 'message')}); a later summary covers them now`}
      </span>
    </li>
  );
}

export function MessageList({ messages, pending, streamingId }: { messages: ShownMessage[]; pending: boolean; streamingId?: string }) {
  const cuts = cutsOf(messages);
  const current = cuts.find((cut) => cut.current);
  const coverage = (index: number) => (current === undefined ? undefined : index < current.at ? 'covered' : index === current.at && current.notice.covered.partly ? 'partly' : undefined);
  return (
    <ol className="messages" data-testid="messages">
      {messages.length === 0 && <li className="empty">Ask anything. Paste long text to fill the small window quickly.</li>}
      {messages.map((message, index) => (
        <MessageItem key={message.id} message={message} coverage={coverage(index)} streaming={message.id === streamingId} cut={cuts.find((cut) => cut.at === index)} />
      ))}
      {pending && (
        <li className="pending" data-testid="pending">
          Thinking…
        </li>
      )}
    </ol>
  );
}

function MessageItem({ message, coverage, streaming, cut }: { message: ShownMessage; coverage: 'covered' | 'partly' | undefined; streaming: boolean; cut: Cut | undefined }) {
  return (
    <>
      {cut && <Divider cut={cut} />}
      <li className={coverage === undefined ? undefined : coverage} data-covered={coverage}>
        {message.compaction && <CompactionLine notice={message.compaction} />}
        <div className={`message ${message.role}`} data-testid="message" data-role={message.role}>
          <div className="role">{message.role === 'user' ? 'You' : 'Assistant'}</div>
          {message.role === 'assistant' ? (
            <div className="text">
              <Markdown text={message.text} streaming={streaming} />
            </div>
          ) : (
            <div className="text plain">{message.text}</div>
          )}
        </div>
      </li>
    </>
  );
}

export function Composer({
  status,
  disabled,
  onSend,
}: {
  status: string;
  disabled: boolean;
  onSend: (text: string) => void;
}) {
  return (
    <form
      className="composer"
      data-testid="composer"
      data-status={status}
      onSubmit={(event) => {
        event.preventDefault();
        const field = event.currentTarget.elements.namedItem('text') as HTMLTextAreaElement;
        const text = field.value.trim();
        if (text === '' || disabled) return;
        onSend(text);
        field.value = '';
      }}
    >
      <textarea
        name="text"
        data-testid="chat-input"
        placeholder="Message (Enter to send, Shift+Enter for a new line)"
        rows={3}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey) {
            event.preventDefault();
            event.currentTarget.form?.requestSubmit();
          }
        }}
      />
      <button type="submit" data-testid="send" disabled={disabled}>
        Send
      </button>
    </form>
  );
}

export function ErrorLine({ message }: { message: string | undefined }) {
  if (message === undefined) return null;
  return (
    <p className="error" role="alert" data-testid="chat-error">
      {message}
    </p>
  );
}
