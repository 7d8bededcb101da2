import { type Tool, tool } from 'ai';
import { z } from 'zod';
import { describe } from '../errors';
import { CHARS_PER_TOKEN } from '../tunables';
import { answerText } from './answer';
import { RECALL_PROVIDER_OPTIONS } from './marker';
import { type HandedMessage, positionedMessages } from './messages';
import { searchMessages } from './search';
import type { RecallAnswer, RecallInput } from './types';

export interface RecallToolOptions {
  /**
   * The most an answer may take, in tokens (at 4 characters a token): a longer one is paged.
   * @default 4000
   */
  maxTokens?: number;
  /** The tool's description, as the model reads it. @default RECALL_DESCRIPTION */
  description?: string;
}

/** What the model reads of the tool (docs/design.md, "Recall"). */
export const RECALL_DESCRIPTION =
  'Look up the exact text of earlier messages of this conversation, tool outputs included, also what a summary of it left out. ' +
  'Ask with words you have (a file path, an error message or code, something the user said) or with positions (`from`, `to`: a range of messages, 0 is the first). ' +
  'The answer gives each match with its position, the best first, a page at a time; ask for `page` to read on.';

const inputSchema = z.object({
  query: z.string().optional().describe('Words to find: a file path, an error message or code, a sentence said earlier.'),
  from: z.number().int().min(0).optional().describe('The first position of a range of messages (0 is the first message).'),
  to: z.number().int().min(0).optional().describe('The last position of the range.'),
  page: z.number().int().min(1).optional().describe('The page of the answer, from 1.'),
});

/**
 * A tool with which the model looks up the exact words of this conversation that a checkpoint
 * stands in for (docs/design.md, "Recall"). It reads only the messages the AI SDK hands its
 * `execute` (the conversation as the caller holds it): no store, no other conversation.
 *
 * @example
 * ```ts
 * const result = streamText({ model, messages, tools: { ...tools, recall: recallTool() } });
 * ```
 */
export function recallTool({ maxTokens = 4_000, description = RECALL_DESCRIPTION }: RecallToolOptions = {}): Tool<RecallInput, RecallAnswer> {
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new TypeError(`ai-compaction: recallTool's maxTokens must be a whole number of tokens above 0, got ${describe(maxTokens)}`);
  }
  if (typeof description !== 'string' || description.trim() === '') {
    throw new TypeError(`ai-compaction: recallTool's description must be a non-empty string, got ${describe(description)}`);
  }
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  return tool({
    description,
    inputSchema,
    providerOptions: RECALL_PROVIDER_OPTIONS,
    execute: (input: RecallInput, { messages }: { messages: readonly unknown[] }): RecallAnswer =>
      searchMessages(positionedMessages(messages as readonly HandedMessage[]), input, maxChars),
    toModelOutput: ({ output }: { output: RecallAnswer }) => ({ type: 'text' as const, value: answerText(output) }),
  }) as Tool<RecallInput, RecallAnswer>;
}
