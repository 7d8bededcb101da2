import type { CallOptions, Message, Part } from './types';

/** The tool name a compaction is shown as in a step's content and stream (docs/design.md, "Compaction in the stream"). */
export const COMPACTION_TOOL_NAME = 'compaction';

/**
 * How the ids of those tool calls begin: with the name, what tells a part of this package's own
 * from a tool of the host's named alike. The id is all that survives every way a host sends its
 * messages back (`response.messages`, `convertToModelMessages` of `useChat` messages).
 */
export const COMPACTION_CALL_ID_PREFIX = 'ai-compaction-';

/** A tool call or result this package put into a step's content or stream. */
export function isOwnPart(part: Part): boolean {
  return (
    (part.type === 'tool-call' || part.type === 'tool-result') &&
    part.toolName === COMPACTION_TOOL_NAME &&
    typeof part.toolCallId === 'string' &&
    part.toolCallId.startsWith(COMPACTION_CALL_ID_PREFIX)
  );
}

/**
 * The params without this package's own parts, which a host's messages bring back: a provider
 * never receives them, and a conversation is hashed and measured as if they had never been shown.
 * A message left empty is dropped. The same params when there is none.
 */
export function withoutOwnParts(params: CallOptions): CallOptions {
  if (!params.prompt.some(holdsOwnPart)) return params;
  const prompt: Message[] = [];
  for (const message of params.prompt) {
    if (!holdsOwnPart(message)) {
      prompt.push(message);
      continue;
    }
    const content = (message.content as Part[]).filter((part) => !isOwnPart(part));
    if (content.length > 0) prompt.push({ ...message, content } as Message);
  }
  return { ...params, prompt };
}

function holdsOwnPart(message: Message): boolean {
  return message.role !== 'system' && Array.isArray(message.content) && message.content.some(isOwnPart);
}
