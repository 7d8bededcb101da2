import { Chat } from './chat';

export default function Page() {
  return <Chat api="/api/chat" title="Route handler (Node.js)" />;
}
