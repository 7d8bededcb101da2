import { Chat } from '../chat';

export default function EdgePage() {
  return (
    <Chat
      api="/api/chat-edge"
      title="Route handler (Edge runtime)"
      hint={
        <>
          <code>POST /api/chat-edge</code> · <code>runtime = &apos;edge&apos;</code>, which Next.js 16 deprecates for routes
        </>
      }
    />
  );
}
