import { createOpenAI } from '@ai-sdk/openai';
import { wrapLanguageModel } from 'ai';
import { compaction } from 'ai-compaction';

// Any OpenAI-compatible server: OPENAI_BASE_URL unset means api.openai.com.
const openai = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY ?? 'local',
});

export const SYSTEM = 'You are a helpful assistant. Answer briefly.';

/**
 * One module-level instance serves every request and every conversation of this server (on the
 * Edge runtime: of this isolate). A small window so the demo compacts after a few long messages.
 */
export const model = wrapLanguageModel({
  model: openai.chat(process.env.OPENAI_MODEL ?? 'gpt-4o-mini'),
  middleware: compaction({ contextWindow: Number(process.env.CONTEXT_WINDOW ?? 8_000) }),
});
