import { describe, expect, it } from 'vitest';
import { type UIMessage, convertToModelMessages, generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { compaction, recallTool } from '../../../src';
import { positionedMessages } from '../../../src/recall/messages';
import type { Message, Part } from '../../../src/prompt/types';
import { textOf } from '../../support/harness';
import { MockLanguageModel, SUMMARY, convertArrayToReadableStream, finish, isSummaryPrompt, textResult, usage } from '../../support/models';

/** The text of a tool output that reached the model (the recall tool's, read by the model as text). */
function toolOutputs(prompt: readonly Message[]): string[] {
  return prompt.flatMap((message) =>
    message.role === 'tool' ? (message.content as Part[]).map((part) => String((part.output as { value?: unknown } | undefined)?.value ?? '')) : [],
  );
}

const checkpointOf = (prompt: readonly Message[]) => prompt.map(textOf).find((text) => text.startsWith('<conversation-checkpoint>'));

/**
 * A model that reads a file a step (8,000 characters, `MARKER-n` in its middle) until its prompt
 * holds a checkpoint; then it asks `lookup` for the first file's marker, and answers with the
 * position the answer gives. It knows the tool only by the name it is given.
 */
function lookupAgent(lookup: string | undefined) {
  const prompts: Message[][] = [];
  let step = 0;
  const next = (prompt: Message[]) => {
    if (isSummaryPrompt(prompt)) return { summary: true as const };
    prompts.push(structuredClone(prompt));
    step++;
    const answered = toolOutputs(prompt).find((output) => output.startsWith('Page 1 of'));
    if (answered !== undefined) return { text: `Found at ${/--- #(\d+) tool/.exec(answered)?.[1]}` };
    if (checkpointOf(prompt) !== undefined) return lookup === undefined ? { text: 'Lost.' } : { call: { toolName: lookup, input: { query: 'MARKER-1' } } };
    return { call: { toolName: 'read_file', input: { path: `src/file-${step}.ts` } } };
  };
  const model = new MockLanguageModel({
    doGenerate: async ({ prompt }: { prompt: Message[] }) => {
      const turn = next(prompt);
      if ('summary' in turn) return textResult(SUMMARY, 1_000, 200);
      if ('text' in turn) return textResult(turn.text!, undefined, 10);
      return { content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: turn.call.toolName, input: JSON.stringify(turn.call.input) }], finishReason: finish('tool-calls'), usage: usage(undefined, 20), warnings: [] };
    },
    doStream: async ({ prompt }: { prompt: Message[] }) => {
      const turn = next(prompt);
      if ('summary' in turn) throw new Error('summaries are requested with doGenerate');
      const end = (reason: string) => ({ type: 'finish', finishReason: finish(reason), usage: usage(undefined, 10) });
      const parts: unknown[] =
        'text' in turn
          ? [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: turn.text }, { type: 'text-end', id: 't' }, end('stop')]
          : [{ type: 'stream-start', warnings: [] }, { type: 'tool-call', toolCallId: `call-${step}`, toolName: turn.call.toolName, input: JSON.stringify(turn.call.input) }, end('tool-calls')];
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return { model, prompts };
}

const readFile = tool({
  description: 'Read a file of the project',
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `// ${path}\n${'export const value = 1;\n'.repeat(160)}// MARKER-${/file-(\d+)/.exec(path)![1]}\n${'export const other = 2;\n'.repeat(160)}`,
});

/** Messages of a finished call, as a host would keep them (ai@6: `response.messages`; ai@7: `responseMessages`). */
async function responseMessages(result: unknown): Promise<Message[]> {
  const all = result as { responseMessages?: PromiseLike<Message[]>; response: PromiseLike<{ messages?: Message[] }> };
  return (all.responseMessages !== undefined ? await all.responseMessages : (await all.response).messages) ?? [];
}

describe('recallTool with the middleware', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`should let a ${mode} tool loop look up what a checkpoint covers, at the positions the checkpoint gives`, async () => {
      const agent = lookupAgent('lookup');
      const model = wrapLanguageModel({ model: agent.model as never, middleware: compaction({ contextWindow: 20_000, prepare: false }) });
      const options = { model, tools: { read_file: readFile, lookup: recallTool() }, stopWhen: stepCountIs(30), system: 'You are a coding agent.', prompt: 'Read the files.' };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      const text = await result.text;
      const held = [{ role: 'user', content: 'Read the files.' }, ...(await responseMessages(result))];

      const first = agent.prompts.findIndex((prompt) => checkpointOf(prompt) !== undefined);
      expect(first).toBeGreaterThan(0);
      const checkpoint = checkpointOf(agent.prompts[first]!)!;
      // the checkpoint names the tool as the host registered it, and the positions it covers
      const covered = /Messages 0 to (\d+) of this conversation stand behind this checkpoint: the `lookup` tool looks up their exact text/.exec(checkpoint);
      expect(covered).not.toBeNull();
      // each numbered record line is the message at that position, as the tool numbers the messages
      const positioned = positionedMessages(held);
      const lines = [...checkpoint.matchAll(/^#(\d+) \[(User|Assistant|Assistant tool call|Tool result)\]: ([^\n]*)/gm)];
      expect(lines.length).toBeGreaterThan(3);
      for (const [, at, , words] of lines) {
        expect(Number(at)).toBeLessThanOrEqual(Number(covered![1]));
        const message = positioned[Number(at)]!;
        // a call is shown as name(input) by both; an output or words, as written (the record cuts long outputs)
        expect(message.text.replace(/^read_file\(/, 'read_file(')).toContain(words!.slice(0, 60));
      }
      // the file holding MARKER-1 is covered; the tool found it where the messages hold it
      const marker = positioned.find((message) => message.role === 'tool' && message.text.includes('MARKER-1'))!;
      expect(marker.position).toBeLessThanOrEqual(Number(covered![1]));
      expect(text).toBe(`Found at ${marker.position}`);
      expect(JSON.stringify(held[marker.position])).toContain('MARKER-1');
    });
  }

  it('should leave the checkpoint as it was without the tool', async () => {
    const agent = lookupAgent(undefined);
    const model = wrapLanguageModel({ model: agent.model as never, middleware: compaction({ contextWindow: 20_000, prepare: false }) });
    const result = await generateText({ model, tools: { read_file: readFile }, stopWhen: stepCountIs(30), system: 'You are a coding agent.', prompt: 'Read the files.' });
    expect(result.text).toBe('Lost.');
    const checkpoint = agent.prompts.map(checkpointOf).find((text) => text !== undefined)!;
    expect(checkpoint).not.toContain('stand behind this checkpoint');
    expect(checkpoint).not.toMatch(/^#\d+ /m);
    expect(checkpoint).toContain('<recent-context>\n[User]: Read the files.\n\n');
  });

  it('should work in a useChat route: UI messages converted, no store, the positions those of the converted messages', async () => {
    const said = 'Ship it on Thursday; the invoice number is INV-77120.';
    const ui: UIMessage[] = [];
    for (let turn = 0; turn < 12; turn++) {
      ui.push({ id: `u${turn}`, role: 'user', parts: [{ type: 'text', text: turn === 2 ? said : `Question ${turn}: what comes next?` }] });
      ui.push({ id: `a${turn}`, role: 'assistant', parts: [{ type: 'text', text: `Answer ${turn}: ${'the plan goes on as agreed. '.repeat(100)}` }] });
    }
    ui.push({ id: 'last', role: 'user', parts: [{ type: 'text', text: 'When do we ship, and what was the invoice number?' }] });
    const prompts: Message[][] = [];
    const model = new MockLanguageModel({
      doGenerate: async () => textResult(SUMMARY, 1_000, 200),
      doStream: async ({ prompt }: { prompt: Message[] }) => {
        prompts.push(structuredClone(prompt));
        const answered = toolOutputs(prompt).find((output) => output.startsWith('Page 1 of'));
        const parts: unknown[] = answered
          ? [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: /--- #(\d+) user ---\n([^\n]+)/.exec(answered)!.slice(1).join(': ') }, { type: 'text-end', id: 't' }]
          : [{ type: 'tool-call', toolCallId: 'r1', toolName: 'recall', input: JSON.stringify({ query: 'the invoice number is' }) }];
        return { stream: convertArrayToReadableStream([{ type: 'stream-start', warnings: [] }, ...parts, { type: 'finish', finishReason: finish(answered ? 'stop' : 'tool-calls'), usage: usage(undefined, 10) }]) };
      },
    });
    // the route handler: POST({ messages }) -> streamText(...).toUIMessageStreamResponse()
    const route = async (messages: UIMessage[]) =>
      streamText({
        model: wrapLanguageModel({ model: model as never, middleware: compaction({ contextWindow: 8_000 }) }),
        messages: await convertToModelMessages(messages),
        tools: { recall: recallTool() },
        stopWhen: stepCountIs(3),
      }).toUIMessageStreamResponse();
    const body = await (await route(ui)).text();
    const converted = positionedMessages(await convertToModelMessages(ui));
    const position = converted.find((message) => message.text === said)!.position;
    expect(position).toBe(4);
    const checkpoint = checkpointOf(prompts[0]!)!;
    expect(checkpoint).toMatch(/Messages 0 to \d+ of this conversation stand behind this checkpoint: the `recall` tool/);
    expect(checkpoint).toContain(`#${position} [User]: ${said}`);
    expect(body).toContain(JSON.stringify(`${position}: ${said}`).slice(1, -1));
  });
});
