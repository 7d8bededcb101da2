/** The 64-step tool loop of the end-to-end tests: a scripted agent that reads a file a step, and its tool. */
import { tool } from 'ai';
import { z } from 'zod';
import type { Message } from '../../src/prompt/types';
import { estimatePrompt } from '../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, convertArrayToReadableStream, isSummaryPrompt, textResult, usage } from './models';

/** The steps the agent takes: it answers at the 64th. */
export const STEPS = 64;

/**
 * An agent that calls `read_file` until step 64 (or `steps`), then answers; every tool output is 8,000
 * characters. It keeps each step's prompt (a copy with `clone`, for a test that looks at prompts
 * the middleware may pass on and the loop extends) and the tool definitions it was sent with.
 * `summary` writes the summary of each summary request (by its index from 0; by default the
 * template at once); `answered` runs as step `step` is answered, before its reply goes back.
 */
export function readFileAgent({
  clone = false,
  steps = STEPS,
  summary = () => undefined,
  answered = async () => undefined,
}: { clone?: boolean; steps?: number; summary?: (index: number) => Promise<void> | void; answered?: (step: number) => Promise<void> | void } = {}) {
  const prompts: Message[][] = [];
  /** The tool definitions each step was sent with. */
  const stepTools: unknown[] = [];
  let summaries = 0;
  let step = 0;
  const next = (prompt: Message[], tools: unknown) => {
    if (isSummaryPrompt(prompt)) {
      summaries++;
      return { kind: 'summary' as const };
    }
    prompts.push(clone ? structuredClone(prompt) : prompt);
    stepTools.push(tools);
    step++;
    return { kind: step < steps ? ('call' as const) : ('answer' as const), step, input: estimatePrompt(prompt, tools as never) };
  };
  const model = new MockLanguageModel({
    doGenerate: async ({ prompt, tools }: { prompt: Message[]; tools: unknown }) => {
      const turn = next(prompt, tools);
      if (turn.kind === 'summary') {
        await summary(summaries - 1);
        return textResult(SUMMARY, 1_000, 200);
      }
      await answered(turn.step);
      if (turn.kind === 'answer') return textResult(`All ${steps} files read.`, turn.input, 10);
      return {
        content: [{ type: 'tool-call', toolCallId: `call-${turn.step}`, toolName: 'read_file', input: JSON.stringify({ path: `src/file-${turn.step}.ts` }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: usage(turn.input, 20),
        warnings: [],
      };
    },
    doStream: async ({ prompt, tools }: { prompt: Message[]; tools: unknown }) => {
      const turn = next(prompt, tools);
      const end = (reason: string, input: number | undefined) => ({ type: 'finish', finishReason: { unified: reason, raw: reason }, usage: usage(input, 20) });
      if (turn.kind === 'summary') throw new Error('summaries are requested with doGenerate');
      await answered(turn.step);
      const parts: unknown[] =
        turn.kind === 'answer'
          ? [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: `All ${steps} files read.` }, { type: 'text-end', id: 't' }, end('stop', turn.input)]
          : [
              { type: 'stream-start', warnings: [] },
              { type: 'tool-call', toolCallId: `call-${turn.step}`, toolName: 'read_file', input: JSON.stringify({ path: `src/file-${turn.step}.ts` }) },
              end('tool-calls', turn.input),
            ];
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return { model, prompts, stepTools, summaries: () => summaries };
}

export const readFileTools = {
  read_file: tool({
    description: 'Read a file of the project',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => `// ${path}\n${'export const value = 1;\n'.repeat(400)}`.slice(0, 8_000),
  }),
};
