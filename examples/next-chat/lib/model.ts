import { createOpenAI } from '@ai-sdk/openai';
import { wrapLanguageModel } from 'ai';
import { compaction, type CompactionStore } from 'ai-compaction';
import { after } from 'next/server';

// Any OpenAI-compatible server: OPENAI_BASE_URL unset means api.openai.com. `npm run example`
// (at the repository's root) points it at the local chat assistant when no OPENAI_API_KEY is set.
const openai = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY ?? 'local',
});

export const SYSTEM = 'You are a helpful assistant. Answer briefly.';

/** What a serverless host puts on `globalThis` for the request being served (what `@vercel/functions` reads). */
const REQUEST_CONTEXT = Symbol.for('@next/request-context');

/**
 * Near the ceiling the middleware prepares the next checkpoint beside the step (`prepare`), so that
 * no reply waits for a summary. That work must outlive the response: the route handlers and the
 * server action hand it to `after()` of `next/server`; the Edge route to the runtime's own
 * `waitUntil` where it has one (Vercel's request context), else to `after()` as well.
 */
function waitUntil(promise: Promise<unknown>): void {
  if (process.env.NEXT_RUNTIME === 'edge') {
    const context = (globalThis as { [REQUEST_CONTEXT]?: { get?: () => { waitUntil?: (promise: Promise<unknown>) => void } | undefined } })[REQUEST_CONTEXT];
    const hostWaitUntil = context?.get?.()?.waitUntil;
    if (hostWaitUntil !== undefined) return hostWaitUntil(promise);
  }
  after(promise);
}

/**
 * The chat model wrapped with the compaction middleware. Call it once per runtime, at module level:
 * one instance serves every request and every conversation of this server (on the Edge runtime: of
 * this isolate). A small window so the demo compacts after a few long messages. The server log gets
 * one line per compaction and a warning per failure. `store`: where checkpoints live (default: in
 * memory, per instance).
 */
export function chatModel(options: { store?: CompactionStore } = {}) {
  return wrapLanguageModel({
    model: openai.chat(process.env.OPENAI_MODEL ?? 'gpt-4o-mini'),
    middleware: compaction({ contextWindow: Number(process.env.CONTEXT_WINDOW ?? 8_000), waitUntil, logger: console, store: options.store }),
  });
}
