import type { Message, Part } from './types';

/**
 * Whether a part is a provider's own compaction item: an OpenAI `custom` part of kind
 * `openai.compaction`, or an Anthropic text part whose provider options say `type: 'compaction'`.
 * Such an item stands for everything before it; it is sent back unchanged, never summarized again.
 */
export function isProviderCompactionPart(part: Part): boolean {
  if (part.type === 'custom') return part.kind === 'openai.compaction';
  if (part.type === 'text') return part.providerOptions?.anthropic?.type === 'compaction';
  return false;
}

/** The index of the last message holding a provider compaction item, or -1. */
export function nativeBoundary(conversation: readonly Message[]): number {
  for (let index = conversation.length - 1; index >= 0; index--) {
    const message = conversation[index]!;
    if (message.role === 'assistant' && message.content.some(isProviderCompactionPart)) return index;
  }
  return -1;
}

/**
 * Where what a provider item leads begins after it: past the item's message and the tool results
 * answering tool calls of that message, so a call is never separated from its result.
 */
export function boundaryEnd(conversation: readonly Message[], boundary: number): number {
  if (boundary < 0) return 0;
  let end = boundary + 1;
  while (end < conversation.length && conversation[end]!.role === 'tool') end++;
  return end;
}
