'use server';

import { generateText } from 'ai';
import { compactionOf } from 'ai-compaction';
import { coveredMessages } from '@/lib/covered';
import { SYSTEM } from '@/lib/model';
import { model } from '@/lib/node-model';
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
    // `messagesCovered` counts the model's messages: here one per turn (text only, no system turn)
    const ends = messages.map((_, index) => index + 1);
    let turnStart = messages.length;
    while (turnStart > 0 && messages[turnStart - 1]!.role === 'user') turnStart--;
    return { text, compaction: { ...notice, covered: coveredMessages(ends, notice.messagesCovered, turnStart) } };
  } catch (error) {
    // Thrown errors reach the client masked in production; return the message instead.
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
