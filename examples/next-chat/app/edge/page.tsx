import { Chat } from '../chat';

export default function EdgePage() {
  return <Chat api="/api/chat-edge" title="Route handler (Edge runtime)" />;
}
