// examples/next-chat maps a compaction's `messagesCovered` (messages of the model's conversation)
// onto the page's UI messages, to draw the divider where the checkpoint ends. Checked here against
// what the middleware itself counts, for UI messages that become one model message each and for
// replies of several steps with tool calls, which become several.
import { type UIMessage, convertToModelMessages, generateText, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { compaction, compactionOf } from '../../src';
import { conversationEnds, coveredMessages } from '../../examples/next-chat/lib/covered';
import { scriptedModel } from '../support/harness';

const text = (id: string, role: UIMessage['role'], value: string): UIMessage => ({ id, role, parts: [{ type: 'text', text: value }] });

/** An assistant reply of two steps: a tool call and its result, then text (three model messages). */
const toolReply = (id: string): UIMessage => ({
  id,
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    { type: 'tool-read_file', toolCallId: `${id}-call`, state: 'output-available', input: { path: 'src/a.ts' }, output: 'export const a = 1;' },
    { type: 'step-start' },
    { type: 'text', text: `Read it (${id}).` },
  ],
});

/** What the middleware reports for a step over these UI messages that it is told to compact. */
async function messagesCoveredFor(messages: UIMessage[]): Promise<number> {
  const { model } = scriptedModel();
  const { providerMetadata } = await generateText({
    model: wrapLanguageModel({ model: model as never, middleware: compaction({ contextWindow: 100_000 }) }),
    system: 'You are a helpful assistant.',
    messages: await convertToModelMessages(messages),
    providerOptions: { compaction: { compact: true } },
  });
  return compactionOf(providerMetadata)!.messagesCovered;
}

const cases: Array<{ name: string; messages: UIMessage[]; modelMessages: number }> = [
  {
    name: 'text only: one model message per UI message',
    messages: [text('u1', 'user', 'one'), text('a1', 'assistant', 'reply one'), text('u2', 'user', 'two'), text('a2', 'assistant', 'reply two'), text('u3', 'user', 'three')],
    modelMessages: 5,
  },
  {
    name: 'replies with a tool step: three model messages each',
    messages: [text('u1', 'user', 'one'), toolReply('a1'), text('u2', 'user', 'two'), toolReply('a2'), text('u3', 'user', 'three')],
    modelMessages: 9,
  },
  {
    name: 'a leading system message (joins the system prompt) and one later (counted)',
    messages: [text('s1', 'system', 'be brief'), text('u1', 'user', 'one'), toolReply('a1'), text('s2', 'system', 'now in French'), text('u2', 'user', 'two')],
    modelMessages: 6,
  },
];

describe('examples/next-chat: where a checkpoint ends among the UI messages', () => {
  it.each(cases)('$name', async ({ messages, modelMessages }) => {
    const ends = await conversationEnds(messages);
    expect(ends.at(-1)).toBe(modelMessages);
    const covered = await messagesCoveredFor(messages);
    // the middleware covers everything before the trailing user message
    expect(covered).toBe(modelMessages - 1);
    expect(coveredMessages(ends, covered)).toEqual({ count: messages.length - 1, partly: false });
  });

  it('should say when the checkpoint ends inside a reply of several steps', () => {
    const messages = [text('u1', 'user', 'one'), toolReply('a1'), text('u2', 'user', 'two')];
    // [user, assistant (call), tool (result), assistant (text), user]
    expect(coveredMessages([1, 4, 5], 2)).toEqual({ count: 1, partly: true });
    expect(coveredMessages([1, 4, 5], 4)).toEqual({ count: 2, partly: false });
    expect(coveredMessages([1, 4, 5], 0)).toEqual({ count: 0, partly: false });
    // a later step of the reply being made: all of the page's messages, and part of the reply
    expect(coveredMessages([1, 4, 5], 7)).toEqual({ count: 3, partly: true });
    expect(messages).toHaveLength(3);
  });
});
