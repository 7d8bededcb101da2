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
  const prompt = withoutCompaction(params.prompt);
  return prompt === params.prompt ? params : { ...params, prompt };
}

/**
 * A saved history without the `compaction` parts: send that to a call without the middleware.
 *
 * Model messages (`response.messages`) and `useChat`'s UI messages alike (docs/design.md, "Compaction
 * in the stream"): a provider's client turns a part of this package's own into something the
 * provider refuses (the OpenAI Responses client sends it as a reference to a stored item the
 * provider never made). A message left with nothing is dropped; the same array when there is none.
 */
export function withoutCompaction<M extends object>(messages: readonly M[]): M[] {
  if (!messages.some(holdsOwnPart)) return messages as M[];
  const kept: M[] = [];
  for (const message of messages) {
    if (!holdsOwnPart(message)) {
      kept.push(message);
      continue;
    }
    const { parts, content } = message as { parts?: UIPart[]; content?: Part[] };
    if (parts !== undefined) {
      const left = parts.filter((part) => !isOwnUIPart(part));
      if (left.some((part) => part.type !== 'step-start')) kept.push({ ...message, parts: left });
    } else {
      const left = content!.filter((part) => !isOwnPart(part));
      if (left.length > 0) kept.push({ ...message, content: left });
    }
  }
  return kept;
}

/** A part of a `useChat` message, as far as it is read here. */
export interface UIPart {
  type?: unknown;
  toolName?: unknown;
  toolCallId?: unknown;
}

/** The `compaction` part as `useChat` holds it: a `dynamic-tool` part. */
export function isOwnUIPart(part: UIPart | null | undefined): boolean {
  return typeof part === 'object' && part !== null && part.type === 'dynamic-tool' && part.toolName === COMPACTION_TOOL_NAME && typeof part.toolCallId === 'string' && part.toolCallId.startsWith(COMPACTION_CALL_ID_PREFIX);
}

/** Whether a message (model or UI, not a system message) holds a part of this package's own. */
/** The call ids of this package's own parts in a prompt (hooks/part.ts: a checkpoint whose part it holds is not shown again). */
export function ownPartIds(prompt: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of prompt) {
    if (message.role === 'system' || !Array.isArray(message.content)) continue;
    for (const part of message.content as Part[]) if (isOwnPart(part)) ids.add(part.toolCallId as string);
  }
  return ids;
}

function holdsOwnPart(message: object): boolean {
  const { role, parts, content } = message as { role?: unknown; parts?: unknown; content?: unknown };
  if (role === 'system') return false;
  if (Array.isArray(parts)) return (parts as UIPart[]).some(isOwnUIPart);
  return Array.isArray(content) && (content as Part[]).some(isOwnPart);
}
