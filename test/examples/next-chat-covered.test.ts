// examples/next-chat maps a compaction's `messagesCovered` (messages of the model's conversation)
// onto the page's UI messages, to draw the divider where the checkpoint ends. Checked here against
// what the middleware itself counts, for UI messages that become one model message each and for
// replies of several steps with tool calls, which become several. And how many messages lie
// between the divider and the turn that first sent the checkpoint (`since`), which the page's
// "prepared ahead" note gives as how far back the divider is: in a chat with the local chat
// assistant through the real `@ai-sdk/openai` client, the step's metadata says `prepared` (what
// the page reads) exactly where the middleware's own record does, and `since > 0` exactly there.
import { createOpenAI } from '@ai-sdk/openai';
import { type ModelMessage, type UIMessage, convertToModelMessages, generateText, wrapLanguageModel } from 'ai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CompactionRecord, compaction, compactionOf } from '../../src';
import { conversationEnds, coveredMessages } from '../../examples/next-chat/lib/covered';
import { noticesOf } from '../../examples/next-chat/lib/notices';
import { scriptedModel } from '../support/harness';
import { assistantAgent, chatSession, judgeRecall, type ProviderServer, type RecallVerdict, startProviderServer } from '../support/provider-server/index';

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

/** What a reply whose request compacted starts with: the middleware's `compaction` part, as `useChat` holds it. */
const compactionPart = (messagesCovered: number) => ({
  type: 'dynamic-tool' as const,
  toolName: 'compaction',
  toolCallId: 'ai-compaction-00112233aabbccdd',
  state: 'output-available' as const,
  input: {},
  output: { trigger: 'auto', summary: 'S', tokensBefore: 900, tokensAfter: 300 },
  providerExecuted: true,
  callProviderMetadata: { compaction: { reason: 'auto', kind: 'summary', messagesCovered, tokensBefore: 900, tokensAfter: 300, summary: 'S', usage: { requests: 1, outputTokens: 40, durationMs: 1200 } } },
});

/** A reply that starts with the compaction part, then text; `stopped`: stopped before its text began. */
const compactedReply = (id: string, messagesCovered: number, stopped = false): UIMessage => ({
  id,
  role: 'assistant',
  parts: [{ type: 'step-start' }, compactionPart(messagesCovered), ...(stopped ? [] : [{ type: 'text' as const, text: `Noted (${id}).` }])],
});

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
    name: 'a reply that starts with the compaction part (dropped from the prompt): one model message',
    messages: [text('u1', 'user', 'one'), compactedReply('a1', 1), text('u2', 'user', 'two'), text('a2', 'assistant', 'reply two'), text('u3', 'user', 'three')],
    modelMessages: 5,
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
    expect(coveredMessages(ends, covered, messages.length - 1)).toEqual({ count: messages.length - 1, partly: false, since: 0 });
  });

  it('should count no model message for a reply stopped after the compaction part, before its text (the middleware drops the message)', async () => {
    const messages = [text('u1', 'user', 'one'), text('a1', 'assistant', 'reply one'), text('u2', 'user', 'two'), compactedReply('a2', 2, true), text('u3', 'user', 'three')];
    expect(await conversationEnds(messages)).toEqual([1, 2, 3, 3, 4]);
    // the middleware sees [u1, a1, u2, u3]: it covers what comes before the two trailing user messages
    expect(await messagesCoveredFor(messages)).toBe(2);
  });

  it("should read each notice from its reply's compaction part, with where its checkpoint ends", async () => {
    const messages = [text('u1', 'user', 'one'), text('a1', 'assistant', 'reply one'), text('u2', 'user', 'two'), compactedReply('a2', 2), text('u3', 'user', 'three'), text('a3', 'assistant', 'reply three')];
    const notices = await noticesOf(messages as never);
    expect([...notices.keys()]).toEqual(['a2']);
    expect(notices.get('a2')).toEqual({
      reason: 'auto',
      kind: 'summary',
      messagesCovered: 2,
      tokensBefore: 900,
      tokensAfter: 300,
      summary: 'S',
      usage: { requests: 1, outputTokens: 40, durationMs: 1200 },
      covered: { count: 2, partly: false, since: 0 },
    });
  });

  it('should say when the checkpoint ends inside a reply of several steps', () => {
    const messages = [text('u1', 'user', 'one'), toolReply('a1'), text('u2', 'user', 'two')];
    // [user, assistant (call), tool (result), assistant (text), user]
    expect(coveredMessages([1, 4, 5], 2, 2)).toEqual({ count: 1, partly: true, since: 0 });
    expect(coveredMessages([1, 4, 5], 4, 2)).toEqual({ count: 2, partly: false, since: 0 });
    expect(coveredMessages([1, 4, 5], 0, 2)).toEqual({ count: 0, partly: false, since: 2 });
    // a later step of the reply being made: all of the page's messages, and part of the reply
    expect(coveredMessages([1, 4, 5], 7, 2)).toEqual({ count: 3, partly: true, since: 0 });
    expect(messages).toHaveLength(3);
  });

  it('should count the messages between the end of a checkpoint and the turn it is sent for', () => {
    // ten text messages, the turn being answered starts at the tenth (index 9)
    const ends = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(coveredMessages(ends, 9, 9)).toEqual({ count: 9, partly: false, since: 0 });
    expect(coveredMessages(ends, 4, 9)).toEqual({ count: 4, partly: false, since: 5 });
    // two user messages at the end (a reply stopped before it began): the turn starts at the first
    expect(coveredMessages(ends, 8, 8)).toEqual({ count: 8, partly: false, since: 0 });
  });
});

describe('examples/next-chat: a checkpoint prepared ahead is the one whose divider stands before the turn', () => {
  let server: ProviderServer;
  beforeAll(async () => {
    server = await startProviderServer({ contextWindow: 8_000, agent: assistantAgent() });
  });
  afterAll(() => server.close());
  // The clock stands still: this chat's summaries are timed by how long they take (docs/design.md,
  // "Timed to the summary"), which on a busy machine would move where each checkpoint is prepared.
  beforeEach(() => vi.useFakeTimers({ toFake: ['Date'] }));
  afterEach(() => vi.useRealTimers());

  it('should find `prepared` in the metadata and `since > 0` exactly where the record says `prepared`, and the facts answered after each compaction', async () => {
    const records: CompactionRecord[] = [];
    const model = wrapLanguageModel({
      model: createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' }).chat('gpt-4o-mini'),
      middleware: compaction({ contextWindow: 8_000, onCompaction: (record) => void records.push(record) }),
    });
    // a chat like the example's server action: one model message per turn, no system turn
    const messages: ModelMessage[] = [];
    const seen: Array<{ prepared: boolean; metadata: boolean; since: number }> = [];
    const verdicts: RecallVerdict[] = [];
    for (const [index, turn] of chatSession({ seed: 'covered', turns: 60, pasteChars: [3_000, 6_000] }).entries()) {
      messages.push({ role: 'user', content: turn.text });
      const before = records.length;
      // One turn asks for a compaction (as a "compact now" button would): it is written for that
      // turn, where the others are prepared ahead.
      const providerOptions = index === 30 ? { compaction: { compact: true } } : undefined;
      const { text, steps } = await generateText({ model, system: 'You are a helpful assistant.', messages, ...(providerOptions === undefined ? {} : { providerOptions }) });
      messages.push({ role: 'assistant', content: text });
      if (turn.kind === 'question') verdicts.push(judgeRecall(text, turn.question));
      const notice = steps.map((step) => compactionOf(step.providerMetadata)).filter((found) => found !== undefined).at(-1);
      expect(notice === undefined, 'a notice exactly when the middleware reports a compaction').toBe(records.length === before);
      if (notice === undefined) continue;
      const ends = messages.slice(0, -1).map((_, index) => index + 1);
      const covered = coveredMessages(ends, notice.messagesCovered, messages.length - 2);
      seen.push({ prepared: records.at(-1)!.prepared === true, metadata: notice.prepared === true, since: covered.since });
    }
    expect(seen.length, 'compactions').toBeGreaterThanOrEqual(4);
    expect(seen.some((s) => s.prepared), 'a prepared one').toBe(true);
    expect(seen.some((s) => !s.prepared), 'one written for its turn').toBe(true);
    for (const { prepared, metadata, since } of seen) {
      expect(metadata, `the metadata's prepared, the record's ${prepared}`).toBe(prepared);
      expect(since > 0, `since ${since}, prepared ${prepared}`).toBe(prepared);
    }
    // the assistant's summaries keep every fact here (a few dozen): each question is answered right
    expect(verdicts.length, 'questions').toBeGreaterThanOrEqual(10);
    expect(verdicts.filter((verdict) => verdict !== 'right')).toEqual([]);
  }, 60_000);
});
