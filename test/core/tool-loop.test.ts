import { describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { compaction } from '../../src';
import type { Message } from '../../src/prompt/types';
import { estimatePrompt } from '../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, convertArrayToReadableStream, isSummaryPrompt, textResult, usage } from '../support/models';
import { textOf } from '../support/harness';

const STEPS = 64;
const WINDOW = 20_000;

/** An agent that calls `read_file` until step 64, then answers; every tool output is 8,000 characters. */
function agentModel() {
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
    prompts.push(prompt);
    stepTools.push(tools);
    step++;
    return { kind: step < STEPS ? ('call' as const) : ('answer' as const), step, input: estimatePrompt(prompt, tools as never) };
  };
  const model = new MockLanguageModel({
    doGenerate: async ({ prompt, tools }: { prompt: Message[]; tools: unknown }) => {
      const turn = next(prompt, tools);
      if (turn.kind === 'summary') return textResult(SUMMARY, 1_000, 200);
      if (turn.kind === 'answer') return textResult('All 64 files read.', turn.input, 10);
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
      const parts: unknown[] =
        turn.kind === 'answer'
          ? [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'All 64 files read.' }, { type: 'text-end', id: 't' }, end('stop', turn.input)]
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

const tools = {
  read_file: tool({
    description: 'Read a file of the project',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => `// ${path}\n${'export const value = 1;\n'.repeat(400)}`.slice(0, 8_000),
  }),
};

describe('compaction end to end', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`should keep a ${STEPS}-step ${mode} tool loop under a 20,000-token window`, async () => {
      const agent = agentModel();
      const middleware = compaction({ contextWindow: WINDOW });
      const model = wrapLanguageModel({ model: agent.model as never, middleware });
      const options = { model, tools, stopWhen: stepCountIs(STEPS + 5), system: 'You are a coding agent.', prompt: 'Read every file of the project.' };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      const text = await result.text;
      const steps = await result.steps;
      // ai@6: response.messages holds every step's messages; ai@7 moved them to responseMessages.
      const all = result as unknown as { responseMessages?: PromiseLike<Message[]>; response: PromiseLike<{ messages?: Message[] }> };
      const messages = (all.responseMessages !== undefined ? await all.responseMessages : (await all.response).messages) ?? [];

      expect(text).toBe('All 64 files read.');
      expect(steps).toHaveLength(STEPS);
      expect(agent.prompts).toHaveLength(STEPS);
      agent.prompts.forEach((prompt, index) => {
        expect(agent.stepTools[index]).toHaveLength(1);
        expect(estimatePrompt(prompt, agent.stepTools[index] as never)).toBeLessThan(17_000);
      });
      // 20,000 window -> ceiling 17,000. Each step adds a call and an 8,000-character (2,000-token)
      // result: steps go 62, 2,070, ..., 16,128 (step 9); step 10 (~18,136) compacts. A step after a
      // compaction is the system, the tool definition, the checkpoint (summary, a record of the
      // newest covered steps that opens with the task, identifiers) and the newest step, live: ~3,300
      // tokens after the first, ~6,400 once the record is full (4,250 tokens). So steps 10 and 17
      // compact, then every 6th: 23, 29, 35, 41, 47, 53, 59.
      expect(agent.summaries()).toBe(9);
      // After every compaction the model continues from its own newest step, knows its task in the
      // user's words, and finds every file it read, though the summary names none of them.
      const checkpointed = agent.prompts.map((prompt) => prompt.findIndex((message) => message.role === 'user' && textOf(message).startsWith('<conversation-checkpoint>')));
      expect(checkpointed.filter((at) => at >= 0)).toHaveLength(STEPS - 9);
      agent.prompts.forEach((prompt, index) => {
        const at = checkpointed[index]!;
        if (at < 0) return;
        const checkpoint = textOf(prompt[at]!);
        const record = checkpoint.slice(checkpoint.indexOf('<recent-context>'));
        expect(record.startsWith('<recent-context>\n[User]: Read every file of the project.\n\n[')).toBe(true);
        const [call, results] = prompt.slice(-2);
        expect(call!.role).toBe('assistant');
        expect(results!.role).toBe('tool');
        const callIds = (call!.content as Array<{ type: string; toolCallId?: string }>).filter((part) => part.type === 'tool-call').map((part) => part.toolCallId);
        const resultIds = (results!.content as unknown as Array<{ toolCallId: string }>).map((part) => part.toolCallId);
        expect(resultIds).toEqual(callIds);
        expect(callIds).toEqual([`call-${index}`]);
        // step index + 1 sees the calls of files 1..index: those not sent verbatim after the
        // checkpoint are covered by it, and it names each of them exactly
        const after = JSON.stringify(prompt.slice(at + 1));
        for (let file = 1; file <= index; file++) {
          if (!after.includes(`src/file-${file}.ts`)) expect(checkpoint).toContain(`src/file-${file}.ts`);
        }
      });
      expect(SUMMARY).not.toContain('src/file-');
      // The caller gets every message back: 63 tool calls, 63 results, one answer.
      const results = messages.filter((message) => message.role === 'tool').flatMap((message) => message.content as unknown[]);
      expect(results).toHaveLength(STEPS - 1);
      expect(messages.filter((message) => message.role === 'assistant')).toHaveLength(STEPS);
      expect(middleware.last()!.reason).toBe('auto');
    });
  }
});
