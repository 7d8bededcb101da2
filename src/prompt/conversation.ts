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
