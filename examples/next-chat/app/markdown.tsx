'use client';

import { type LinkSafetyConfig, Streamdown } from 'streamdown';

const NO_LINK_CHECK: LinkSafetyConfig = { enabled: false };

/**
 * A reply or a summary, rendered from markdown with Streamdown (made for text that arrives in
 * pieces: an unclosed `**` or code span mid-stream is drawn as if closed). A reply that was stopped
 * stays unfinished: it is drawn the same way, so no stray `**` is left. Its copy and download
 * buttons and its link-check dialog are styled with Tailwind, which this app does not use: they are
 * off, and globals.css styles the elements it renders.
 */
export function Markdown({ text, streaming = false, unfinished = false }: { text: string; streaming?: boolean; unfinished?: boolean }) {
  // Streamdown re-renders only when a prop changes identity: the options are module constants, so
  // a streamed reply does not re-render every message above it
  return (
    <Streamdown className="markdown" mode={streaming || unfinished ? 'streaming' : 'static'} isAnimating={streaming} controls={false} linkSafety={NO_LINK_CHECK}>
      {text}
    </Streamdown>
  );
}
