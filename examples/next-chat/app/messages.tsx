import type { CompactionNotice } from '@/lib/types';

export interface ShownMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  text: string;
  compaction?: CompactionNotice;
}

const number = new Intl.NumberFormat('en-US');

/** The small line shown where the conversation was compacted. */
export function CompactionLine({ notice }: { notice: CompactionNotice }) {
  return (
    <div className="notice" data-testid="compaction-notice">
      <span>
        Conversation compacted: {notice.messagesCovered} messages summarized ({number.format(notice.tokensBefore)} →{' '}
        {number.format(notice.tokensAfter)} tokens{notice.reason === 'auto' ? '' : `, ${notice.reason}`})
      </span>
      <details>
        <summary>Summary</summary>
        <pre>{notice.summary}</pre>
      </details>
    </div>
  );
}

export function MessageList({ messages, pending }: { messages: ShownMessage[]; pending: boolean }) {
  return (
    <ol className="messages" data-testid="messages">
      {messages.length === 0 && <li className="empty">Ask anything. Paste long text to fill the small window quickly.</li>}
      {messages.map((message) => (
        <li key={message.id}>
          {message.compaction && <CompactionLine notice={message.compaction} />}
          <div className={`message ${message.role}`} data-testid="message" data-role={message.role}>
            <div className="role">{message.role === 'user' ? 'You' : 'Assistant'}</div>
            <div className="text">{message.text}</div>
          </div>
        </li>
      ))}
      {pending && (
        <li className="pending" data-testid="pending">
          Thinking…
        </li>
      )}
    </ol>
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
