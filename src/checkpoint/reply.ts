import { TEMPLATE_HEADINGS } from './prompts';
import type { Part } from '../prompt/types';

const HEADINGS = new Set<string>(TEMPLATE_HEADINGS);

/** The summary text of a reply: text parts only, reasoning parts and `<think>` blocks dropped. */
export function replyText(content: readonly Part[]): string {
  const text = content
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('');
  return stripThinking(text).trim();
}

/** Removes `<think>...</think>` blocks, and an unclosed one to the end. */
export function stripThinking(text: string): string {
  return text.replace(/<think>[\s\S]*?(?:<\/think>|$)/gi, '');
}

/** Whether at least one line of the reply is one of the template's headings. */
export function hasTemplateHeading(summary: string): boolean {
  return summary.split('\n').some((line) => HEADINGS.has(line.trim()));
}

export type FinishReason = { unified: string } | string | undefined;

export function unifiedFinishReason(reason: FinishReason): string | undefined {
  return typeof reason === 'string' ? reason : reason?.unified;
}
