import type { ContentMessage, Message, SystemMessage } from './types';

/** A step's prompt split into its leading system messages and the conversation after them. */
export interface SplitPrompt {
  system: SystemMessage[];
  conversation: Message[];
}

export function splitPrompt(prompt: readonly Message[]): SplitPrompt {
  let index = 0;
  while (index < prompt.length && prompt[index]!.role === 'system') index++;
  return {
    system: prompt.slice(0, index) as SystemMessage[],
    conversation: prompt.slice(index),
  };
}

/**
 * Where the user messages at the very end of the conversation begin: a new turn the model has not
 * answered yet. Those are never covered by a checkpoint.
 */
export function trailingUserStart(conversation: readonly Message[]): number {
  let index = conversation.length;
  while (index > 0 && conversation[index - 1]!.role === 'user') index--;
  return index;
}

/**
 * Where what stays live after a checkpoint begins (docs/design.md, "What stays live"): the user
 * messages at the very end (a new turn the model has not answered), or else the newest step: the
 * last assistant message and the tool results after it, so the model continues from its own last
 * action. 0 when there is nothing before it.
 */
export function liveStart(conversation: readonly Message[]): number {
  const users = trailingUserStart(conversation);
  if (users < conversation.length) return users;
  for (let index = conversation.length - 1; index >= 0; index--) {
    if (conversation[index]!.role === 'assistant') return index;
  }
  return 0;
}

/** Where the step that starts at `start` ends: past an assistant message and the tool messages after it. */
export function stepEnd(conversation: readonly Message[], start: number): number {
  if (conversation[start]?.role !== 'assistant') return start;
  let end = start + 1;
  while (end < conversation.length && conversation[end]!.role === 'tool') end++;
  return end;
}

/**
 * Where the live part that starts at `start` ends (what `liveStart` found, as the conversation was
 * then): past the user messages of a new turn, or past the step that starts there.
 */
export function liveEnd(conversation: readonly Message[], start: number): number {
  if (conversation[start]?.role !== 'user') return stepEnd(conversation, start);
  let end = start;
  while (end < conversation.length && conversation[end]!.role === 'user') end++;
  return end;
}

/**
 * Splits messages into exchanges: a user message and everything up to the next user message. Messages
 * before the first user message form an exchange of their own.
 */
export function exchanges(messages: readonly Message[]): Message[][] {
  const result: Message[][] = [];
  for (const message of messages) {
    const current = result[result.length - 1];
    if (current === undefined || message.role === 'user') result.push([message]);
    else current.push(message);
  }
  return result;
}

export function textMessage(role: 'user', text: string, providerOptions?: ContentMessage['providerOptions']): ContentMessage {
  return providerOptions === undefined
    ? { role, content: [{ type: 'text', text }] }
    : { role, content: [{ type: 'text', text }], providerOptions };
}
