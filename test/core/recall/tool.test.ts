import { describe, expect, it } from 'vitest';
import { recallTool, type RecallAnswer } from '../../../src';
import { answerText } from '../../../src/recall/answer';
import { positionedMessages } from '../../../src/recall/messages';
import { tokenize } from '../../../src/recall/search';

type Input = { query?: string; from?: number; to?: number; page?: number };
type Handed = Array<{ role: string; content: unknown }>;

/** Calls the tool as the AI SDK does: `execute(input, { messages, toolCallId })`. */
async function ask(messages: Handed, input: Input, tool = recallTool()): Promise<RecallAnswer> {
  const execute = tool.execute as (input: Input, options: { messages: Handed; toolCallId: string }) => Promise<RecallAnswer> | RecallAnswer;
  return execute(input, { messages, toolCallId: 'call-1' });
}

const call = (id: string, toolName: string, input: unknown) => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName, input }] });
const result = (id: string, toolName: string, value: string) => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName, output: { type: 'text', value } }] });

const LOG = Array.from({ length: 40 }, (_, index) => `[vite] transformed module ${index} in 3ms`).join('\n');
/** A conversation of a coding agent: the user's rule, a failing run, a file read. */
const CONVERSATION: Handed = [
  { role: 'user', content: 'Fix the failing tests. Never edit files under vendor/, they are generated.' },
  call('c1', 'run_command', { command: 'npm test' }),
  result('c1', 'run_command', `${LOG}\nFAIL test/cart.test.ts > totals\nCartError: E_CART_042 negative quantity\n    at src/cart/total.ts:17\n${LOG}`),
  { role: 'assistant', content: [{ type: 'text', text: 'Reading the cart.' }] },
  call('c2', 'read_file', { path: 'src/cart/total.ts' }),
  result('c2', 'read_file', 'export function total(items) {\n  return items.reduce((sum, item) => sum + item.price * item.qty, 0);\n}'),
  { role: 'user', content: 'Also keep the public API stable.' },
];

/** Every text the messages hold, as written (a tool output's value, a text part, a string content), and each tool call as the tool shows it: `name(input)`. */
function heldText(messages: Handed): string {
  const calls = messages.flatMap((message) =>
    Array.isArray(message.content) ? (message.content as Array<{ type: string; toolName?: string; input?: unknown }>).filter((part) => part.type === 'tool-call') : [],
  );
  return JSON.stringify([messages, calls.map((part) => `${part.toolName}(${JSON.stringify(part.input)})`)]);
}

describe('recallTool', () => {
  it('should find a path, with the position of each message that holds it, the best first', async () => {
    const answer = await ask(CONVERSATION, { query: 'src/cart/total.ts' });
    // BM25: the short call that names the path ranks above the long log that also holds it
    expect(answer.matches.map((match) => match.position)).toEqual([4, 2]);
    const failure = answer.matches[1]!;
    expect(failure.role).toBe('tool');
    expect(failure.text).toContain('FAIL test/cart.test.ts > totals\nCartError: E_CART_042 negative quantity\n    at src/cart/total.ts:17');
    expect(failure.excerpt).toBeDefined();
    expect(answer.matches[0]).toEqual({ position: 4, role: 'assistant', text: 'read_file({"path":"src/cart/total.ts"})' });
  });

  it('should find an error code in a long tool output and say which characters of it the excerpt holds', async () => {
    const answer = await ask(CONVERSATION, { query: 'E_CART_042' });
    expect(answer.matches).toHaveLength(1);
    const [match] = answer.matches;
    const output = (CONVERSATION[2]!.content as Array<{ output: { value: string } }>)[0]!.output.value;
    expect(match!.position).toBe(2);
    expect(match!.excerpt!.length).toBe(output.length);
    expect(output.slice(match!.excerpt!.start, match!.excerpt!.end)).toBe(match!.text);
    expect(match!.text).toContain('CartError: E_CART_042 negative quantity');
  });

  it("should find the user's sentence verbatim, the message that says it first", async () => {
    const answer = await ask(CONVERSATION, { query: 'never edit files under vendor/' });
    expect(answer.matches[0]).toEqual({ position: 0, role: 'user', text: 'Fix the failing tests. Never edit files under vendor/, they are generated.' });
  });

  it('should give a range of positions in order, whole', async () => {
    const answer = await ask(CONVERSATION, { from: 3, to: 6 });
    expect(answer.matches.map((match) => [match.position, match.role])).toEqual([
      [3, 'assistant'],
      [4, 'assistant'],
      [5, 'tool'],
      [6, 'user'],
    ]);
    expect(answer.matches[3]!.text).toBe('Also keep the public API stable.');
    // words within a range: only that range is searched
    expect((await ask(CONVERSATION, { query: 'src/cart/total.ts', from: 3 })).matches.map((match) => match.position)).toEqual([4]);
  });

  it('should answer no match with an empty answer, not an error', async () => {
    const answer = await ask(CONVERSATION, { query: 'kubernetes ingress' });
    expect(answer).toEqual({ matches: [], page: 1, pages: 0, messages: 7 });
    expect(answerText(answer)).toBe('No match (positions 0 to 6).');
    expect((await ask(CONVERSATION, {})).matches).toEqual([]);
    expect((await ask([], { query: 'anything' })).matches).toEqual([]);
    expect((await ask(CONVERSATION, { from: 50, to: 60 })).matches).toEqual([]);
  });

  it('should search only the messages it is handed: nothing of another conversation', async () => {
    const tool = recallTool();
    const other: Handed = [{ role: 'user', content: 'My card number is 4111 1111 1111 1111; the staging password is hunter2.' }];
    expect((await ask(other, { query: 'hunter2' }, tool)).matches).toHaveLength(1);
    const answer = await ask(CONVERSATION, { query: 'hunter2 password card number 4111' }, tool);
    expect(answer.matches).toEqual([]);
    expect(JSON.stringify(answer)).not.toContain('hunter2');
  });

  it('should page an answer over 200,000 characters of tool output, each page within the bound, every page different', async () => {
    const outputs = Array.from({ length: 20 }, (_, index) =>
      Array.from({ length: 250 }, (_, line) => `src/module-${index}/file-${line}.ts:${line} warning TS6133 unused variable 'value${line}'`).join('\n').slice(0, 10_000),
    );
    const messages: Handed = [{ role: 'user', content: 'Clean up the warnings.' }];
    outputs.forEach((output, index) => messages.push(call(`c${index}`, 'run_command', { command: `tsc -p module-${index}` }), result(`c${index}`, 'run_command', output)));
    expect(outputs.join('').length).toBe(200_000);
    const tool = recallTool();
    const seen = new Set<string>();
    let page: number | undefined = 1;
    let pages = 0;
    let excerpts = 0;
    while (page !== undefined) {
      const answer = await ask(messages, { query: 'TS6133 unused variable', page }, tool);
      // about 4,000 tokens a call: the text the model reads is at most 16,000 characters
      expect(answerText(answer).length).toBeLessThanOrEqual(16_000);
      expect(answer.matches.length).toBeGreaterThan(0);
      for (const match of answer.matches) {
        const key = `${match.position}:${match.excerpt?.start ?? 0}`;
        expect(seen.has(key)).toBe(false);
        seen.add(key);
        excerpts += match.text.length;
        expect(heldText(messages)).toContain(JSON.stringify(match.text).slice(1, -1));
      }
      pages = answer.pages;
      page = answer.nextPage;
    }
    // every character of the 20 outputs, once, over the pages
    expect(excerpts).toBe(200_000);
    expect(pages).toBeGreaterThanOrEqual(13);
    // a smaller bound, more pages
    const small = await ask(messages, { query: 'TS6133', page: 1 }, recallTool({ maxTokens: 1_000 }));
    expect(answerText(small).length).toBeLessThanOrEqual(4_000);
    expect(small.nextPage).toBe(2);
  });

  it('should never answer text the messages do not hold', async () => {
    for (const input of [{ query: 'cart' }, { query: 'total API' }, { from: 0, to: 6 }, { query: 'E_CART_042 vendor' }]) {
      for (const match of (await ask(CONVERSATION, input)).matches) {
        expect(heldText(CONVERSATION)).toContain(JSON.stringify(match.text).slice(1, -1));
      }
    }
  });

  it('should number messages as the middleware does: leading system messages out, consecutive tool messages one, its own compaction parts out', () => {
    const own = { type: 'tool-call', toolCallId: 'ai-compaction-1', toolName: 'compaction', input: {}, providerExecuted: true };
    const positioned = positionedMessages([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: [own] },
      { role: 'assistant', content: [own, { type: 'text', text: 'Hi' }] },
      result('a', 'x', 'one'),
      result('b', 'y', 'two'),
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'p1', approved: true }] },
      { role: 'user', content: [{ type: 'text', text: 'Bye' }] },
    ]);
    expect(positioned).toEqual([
      { position: 0, role: 'user', text: 'Hello' },
      { position: 1, role: 'assistant', text: 'Hi' },
      { position: 2, role: 'tool', text: 'one\n\ntwo' },
      { position: 3, role: 'user', text: 'Bye' },
    ]);
  });

  it('should keep a path, an error code and their words as terms', () => {
    expect(tokenize('at (src/cart/total.ts:17) E_CART_042,')).toEqual(['at', 'src/cart/total.ts:17', 'src/cart/total.ts', 'src', 'cart', 'total', 'ts', '17', 'E_CART_042']);
  });

  it('should carry the marker the middleware finds it by, and refuse a bad bound naming it', () => {
    expect(recallTool().providerOptions).toEqual({ compaction: { recall: true } });
    expect(() => recallTool({ maxTokens: 0 })).toThrow("ai-compaction: recallTool's maxTokens must be a whole number of tokens above 0, got 0");
    expect(() => recallTool({ maxTokens: '4000' as never })).toThrow('got "4000"');
    expect(() => recallTool({ description: '' })).toThrow("recallTool's description must be a non-empty string");
  });
});
