import * as aiTest from 'ai/test';
import type { Message, Part } from '../../src/prompt/types';
import { SUMMARY_FIRST_LINE } from '../../src/checkpoint/prompts';

/** The AI SDK major this run is against: the ai7 vitest project sets AI_SDK_MAJOR=7. */
export const AI_SDK_MAJOR = process.env.AI_SDK_MAJOR === '7' ? 7 : 6;

type MockConstructor = new (options: Record<string, unknown>) => {
  doGenerateCalls: Array<{ prompt: Message[]; [key: string]: unknown }>;
  doStreamCalls: Array<{ prompt: Message[]; [key: string]: unknown }>;
  specificationVersion: string;
  provider: string;
  modelId: string;
};

/** `MockLanguageModelV3` under ai@6, `MockLanguageModelV4` under ai@7. */
export const MockLanguageModel: MockConstructor = ((aiTest as Record<string, unknown>)[
  AI_SDK_MAJOR === 7 ? 'MockLanguageModelV4' : 'MockLanguageModelV3'
] ?? aiTest.MockLanguageModelV3) as MockConstructor;

export const { convertArrayToReadableStream, convertReadableStreamToArray } = aiTest;

export const SUMMARY = [
  '## Objective',
  '- Fix the failing users route test',
  '## Requirements',
  '- "keep the API stable"',
  '## Decisions',
  '- Guard `req.user` before reading `id`',
  '## Work State',
  '### Completed',
  '- Read `src/server/routes/users.ts` (uncommitted)',
  '### Active',
  '- Patching the guard',
  '### Blocked',
  '- none',
  '## Next Move',
  '1. Run `npm test`',
  '## Relevant Files',
  '- `src/server/routes/users.ts`: the failing route',
  '## Important Context',
  "- TypeError: Cannot read properties of undefined (reading 'id')",
].join('\n');

export function usage(input: number | undefined, output: number | undefined) {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

export function finish(unified: string) {
  return { unified, raw: unified };
}

/** Text of the last message of a prompt. */
export function lastText(prompt: readonly Message[]): string {
  const last = prompt[prompt.length - 1];
  if (last === undefined) return '';
  if (last.role === 'system') return last.content;
  return last.content
    .filter((part: Part) => part.type === 'text')
    .map((part: Part) => part.text as string)
    .join('');
}

export function isSummaryPrompt(prompt: readonly Message[]): boolean {
  const text = lastText(prompt);
  return text.startsWith(SUMMARY_FIRST_LINE) || text.startsWith('The previous response did not fill in');
}

export function textResult(text: string, input?: number, output = 10) {
  return { content: [{ type: 'text', text }], finishReason: finish('stop'), usage: usage(input, output), warnings: [] };
}

export function toolCallResult(toolCallId: string, toolName: string, input: unknown, inputTokens?: number) {
  return {
    content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: finish('tool-calls'),
    usage: usage(inputTokens, 20),
    warnings: [],
  };
}

/** A `doStream` result that answers `ok`, reporting `input` tokens in and 10 out. */
export function okStream(input: number | undefined) {
  return {
    stream: convertArrayToReadableStream([
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: '1' },
      { type: 'text-delta', id: '1', delta: 'ok' },
      { type: 'text-end', id: '1' },
      { type: 'finish', finishReason: finish('stop'), usage: usage(input, 10) },
    ]),
  };
}
