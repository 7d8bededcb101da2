import { Chat } from './chat';

export default function Page() {
  return (
    <Chat
      api="/api/chat"
      title="Route handler (Node.js)"
      hint={
        <>
          <code>POST /api/chat</code> · <code>useChat</code> + <code>streamText</code>
        </>
      }
    />
  );
}
