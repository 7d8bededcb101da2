'use server';

import { generateText } from 'ai';
import { compactionOf } from 'ai-compaction';
import { model, SYSTEM } from '@/lib/model';
import type { ActionMessage, ActionReply } from '@/lib/types';

/** A server action: `generateText` through the same compaction middleware, for a page that keeps the conversation itself. */
export async function chat(messages: ActionMessage[]): Promise<ActionReply> {
  if (
    !Array.isArray(messages) ||
    messages.length === 0 ||
    !messages.every((m) => (m?.role === 'user' || m?.role === 'assistant') && typeof m.content === 'string')
  ) {
    return { error: 'messages must be a non-empty list of { role: "user" | "assistant", content: string }' };
  }
  try {
    const { text, steps } = await generateText({
      model,
      system: SYSTEM,
      messages: messages.map(({ role, content }) => ({ role, content })),
    });
    const notice = steps.map((step) => compactionOf(step.providerMetadata)).findLast((found) => found !== undefined);
    if (notice === undefined) return { text };
    // `messagesCovered` counts the model's messages: here one per turn (text only, no system turn),
    // so the checkpoint covers that many turns of the page, from its first (at most all of them)
    const count = Math.min(notice.messagesCovered, messages.length);
    return { text, compaction: { ...notice, covered: { count, partly: notice.messagesCovered > count } } };
  } catch (error) {
    // Thrown errors reach the client masked in production; return the message instead.
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
