import { convertToModelMessages, type DynamicToolUIPart, type ModelMessage, type UIMessage } from 'ai';

/** Where a checkpoint ends in the page's conversation. */
export interface CoveredMessages {
  /** How many messages of the page's conversation, from its first, the checkpoint stands in for. */
  count: number;
  /** The checkpoint also covers the start of the message after those (a reply of several steps, or the reply being made). */
  partly: boolean;
  /**
   * Messages of the page between where the checkpoint ends and the turn it was first sent for: 0
   * when it was written for this turn. More for a checkpoint prepared ahead (the middleware's
   * `prepare`, which says so with `prepared: true`): written in the background at an earlier turn,
   * while the conversation went on, and first sent now, with the messages after it still sent in
   * full. That is how far the notice (on this turn's reply) and the divider (where the summary was
   * written) are apart.
   */
  since: number;
}

/**
 * The length of the model's conversation after each UI message, as the middleware counts it: the
 * messages of the model's prompt after its leading system messages. That is what
 * `convertToModelMessages` makes of the UI messages, where an assistant message of several steps
 * becomes an assistant message per step and a tool message per step with tool results, and where
 * `streamText` / `generateText` then merge consecutive tool messages into one. A text-only chat
 * like this one gets one model message per UI message; this does not rely on that.
 */
export async function conversationEnds(messages: readonly UIMessage[]): Promise<number[]> {
  const ends: number[] = [];
  let length = 0;
  let previous: ModelMessage['role'] | undefined;
  for (const message of messages) {
    // the conversion goes message by message: converting one at a time gives the same messages;
    // the middleware drops the `compaction` parts it showed, and a message they alone made
    const parts = message.parts.filter((part) => !isCompactionPart(part));
    for (const model of await convertToModelMessages([{ ...message, parts }])) {
      if (Array.isArray(model.content) && model.content.length === 0) continue;
      if (length === 0 && model.role === 'system') continue; // leading system messages join `system`
      if (model.role === 'tool' && previous === 'tool') continue; // merged into the one before
      previous = model.role;
      length++;
    }
    ends.push(length);
  }
  return ends;
}

/**
 * Maps a compaction's `messagesCovered` (model messages) onto the UI messages whose
 * `conversationEnds` are given; `turnStart` is the index of the first message of the turn being
 * answered (its user messages at the end of the conversation).
 */
export function coveredMessages(ends: readonly number[], messagesCovered: number, turnStart: number): CoveredMessages {
  const count = ends.filter((end) => end <= messagesCovered).length;
  const partly = messagesCovered > (count === 0 ? 0 : ends[count - 1]!);
  return { count, partly, since: partly ? 0 : Math.max(0, turnStart - count) };
}

/** The part a reply holds when its request compacted: the middleware's `compaction` tool (its option `streamPart`). */
export function isCompactionPart(part: UIMessage['parts'][number]): part is DynamicToolUIPart {
  return part.type === 'dynamic-tool' && part.toolName === 'compaction';
}

/** Where the turn being answered starts: its user messages at the end of the conversation. */
export function turnStart(messages: readonly UIMessage[]): number {
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role === 'user') start--;
  return start;
}
