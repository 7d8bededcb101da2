import { toolOutputFileTokens, toolOutputText } from '../prompt/parts';
import type { ContentMessage, Message, Part } from '../prompt/types';
import { type Estimator, FIXED_ESTIMATOR, addMessage, emptyMeasure, toTokens } from '../sizing/estimate';
import { CLEAR_AT_LEAST_DIVISOR, CLEAR_AT_MOST_DIVISOR } from '../tunables';

/** What replaces a cleared tool output (docs/design.md, "Clearing old tool results"): `N` is the length of the output's text. */
export function clearedNote(characters: number): string {
  return `[tool result cleared: ${characters} characters]`;
}

/** What clearing did to a range of messages: the messages as they go out, and what it cleared. */
export interface ClearedMessages {
  /** The conversation with the outputs cleared; untouched messages are the caller's own objects. */
  messages: Message[];
  /** Tool results whose output was cleared. */
  outputs: number;
  /** Characters of text those outputs held. */
  characters: number;
}

/** The output types clearing replaces; an execution denial is a few words and stays. */
const CLEARABLE = new Set(['text', 'json', 'error-text', 'error-json', 'content']);

/**
 * The conversation with the output of every tool result in `conversation[from..to)` replaced by
 * `[tool result cleared: N characters]` (docs/design.md, "Clearing old tool results"). Only the
 * `output` of a result part in a tool message changes: the part, its `toolCallId` and `toolName`,
 * the tool call it answers, and every user and assistant word stay, so each call keeps its result.
 * An error stays an error (`error-text`). An output no longer than its note (and holding no file)
 * is left as it is. The same messages always give the same bytes, so the provider's cache holds
 * from step to step; the caller's messages are not changed.
 */
export function clearToolOutputs(conversation: Message[], from: number, to: number): ClearedMessages {
  let messages = conversation;
  let outputs = 0;
  let characters = 0;
  for (let index = Math.max(0, from); index < Math.min(to, conversation.length); index++) {
    const message = conversation[index]!;
    if (message.role !== 'tool') continue;
    let changed = false;
    const content = message.content.map((part) => {
      const cleared = clearedPart(part);
      if (cleared === undefined) return part;
      changed = true;
      outputs++;
      characters += cleared.characters;
      return cleared.part;
    });
    if (!changed) continue;
    if (messages === conversation) messages = [...conversation];
    messages[index] = { ...message, content } as ContentMessage;
  }
  return { messages, outputs, characters };
}

function clearedPart(part: Part): { part: Part; characters: number } | undefined {
  if (part.type !== 'tool-result') return undefined;
  const output = part.output as { type?: unknown } | undefined;
  if (typeof output?.type !== 'string' || !CLEARABLE.has(output.type)) return undefined;
  const { text, error } = toolOutputText(output);
  const note = clearedNote(text.length);
  if (text.length <= note.length && toolOutputFileTokens(output) === 0) return undefined;
  return { part: { ...part, output: { type: error ? 'error-text' : 'text', value: note } }, characters: text.length };
}

/**
 * Where clearing stops (docs/design.md, "Clearing old tool results"): before the newest `keep`
 * tokens of the conversation (a message partly within them is kept whole, measured by the model's
 * estimator) and before `end`, where the live part begins. Clearing covers
 * `conversation[from..result)`; `from` when there is nothing older to clear.
 */
export function clearingEnd(conversation: readonly Message[], from: number, end: number, keep: number, estimator: Estimator = FIXED_ESTIMATOR): number {
  const newest = emptyMeasure();
  let start = conversation.length;
  while (start > from) {
    addMessage(newest, conversation[start - 1]!, estimator.tokenizer?.tokenize);
    if (toTokens(newest, estimator) > keep) break;
    start--;
  }
  return Math.max(from, Math.min(start, end));
}

/** The thresholds a clearing must meet to be used instead of a summary (docs/design.md, "Clearing old tool results"). */
export interface ClearingThresholds {
  /** Tokens it must free at least. */
  atLeast: number;
  /** The most the prompt may take after it: half the ceiling. */
  atMost: number;
}

/** `atLeast` defaults to a quarter of the ceiling; the prompt must come to at most half of it. */
export function clearingThresholds(limit: number, atLeast: number | undefined): ClearingThresholds {
  return { atLeast: atLeast ?? Math.ceil(limit / CLEAR_AT_LEAST_DIVISOR), atMost: Math.floor(limit / CLEAR_AT_MOST_DIVISOR) };
}
