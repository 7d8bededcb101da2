import { describe, expect, it } from 'vitest';
import { recordBudget, selectRecord } from '../../../src/checkpoint/record';
import { RECORD_STYLE, RECORD_TOOL_OUTPUT_LIMIT, serialize, truncate } from '../../../src/checkpoint/serialize';
import type { Message } from '../../../src/prompt/types';
import { ceiling } from '../../../src/sizing/ceiling';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const call = (id: string, toolName: string, input: unknown): Message => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: id, toolName, input }],
});
const toolOutput = (id: string, output: unknown): Message => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: id, toolName: 'read', output }],
});
const result = (id: string, value: string): Message => toolOutput(id, { type: 'text', value });

describe('serialize', () => {
  it('should write each kind of line, joined by a blank line', () => {
    const messages: Message[] = [
      user('Fix the login bug'),
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'src/login.ts' } },
        ],
      },
      result('c1', 'export function login() {}'),
      call('c2', 'write', { path: 'src/login.ts', content: 'x' }),
      toolOutput('c2', { type: 'error-text', value: 'EACCES: permission denied' }),
      assistant('I could not write the file.'),
    ];
    expect(serialize(messages, RECORD_STYLE)).toBe(
      `[User]: Fix the login bug

[Assistant]: Looking.

[Assistant tool call]: read({"path":"src/login.ts"})

[Tool result]: export function login() {}

[Assistant tool call]: write({"path":"src/login.ts","content":"x"})

[Tool error]: EACCES: permission denied

[Assistant]: I could not write the file.`,
    );
  });

  it('should write a JSON tool result as JSON and a JSON error as a tool error', () => {
    expect(serialize([toolOutput('c', { type: 'json', value: { ok: true, files: ['a.ts'] } })], RECORD_STYLE)).toBe(
      '[Tool result]: {"ok":true,"files":["a.ts"]}',
    );
    expect(serialize([toolOutput('c', { type: 'error-json', value: { code: 'ENOENT' } })], RECORD_STYLE)).toBe(
      '[Tool error]: {"code":"ENOENT"}',
    );
    expect(serialize([toolOutput('c', { type: 'execution-denied', reason: 'not allowed' })], RECORD_STYLE)).toBe(
      '[Tool error]: Execution denied: not allowed',
    );
  });

  it('should write a tool input given as a string as it is', () => {
    expect(serialize([call('c', 'grep', '{"pattern":"TODO"}')], RECORD_STYLE)).toBe(
      '[Assistant tool call]: grep({"pattern":"TODO"})',
    );
  });

  it('should write a file as an attachment line, never its bytes', () => {
    const bytes = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]);
    const messages: Message[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'file', data: bytes, mediaType: 'image/png', filename: 'cat.png' },
          { type: 'file', data: btoa('%PDF-1.7'), mediaType: 'application/pdf' },
        ],
      },
    ];
    const text = serialize(messages, RECORD_STYLE);
    expect(text).toBe('[User]: What is this?\n\n[Attached image/png: cat.png]\n\n[Attached application/pdf]');
    expect(text).not.toContain(btoa('%PDF-1.7'));
  });

  it('should join the text parts of one message by a newline', () => {
    const message: Message = {
      role: 'user',
      content: [
        { type: 'text', text: 'first' },
        { type: 'text', text: 'second' },
      ],
    };
    expect(serialize([message], RECORD_STYLE)).toBe('[User]: first\nsecond');
  });

  it('should leave reasoning out', () => {
    const message: Message = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'The user seems upset; secret plan.' },
        { type: 'text', text: 'Done.' },
      ],
    };
    expect(serialize([message], RECORD_STYLE)).toBe('[Assistant]: Done.');
  });

  it('should leave out system messages and empty text', () => {
    expect(serialize([{ role: 'system', content: 'Be brief.' }, user(''), assistant('ok')], RECORD_STYLE)).toBe(
      '[Assistant]: ok',
    );
  });

  describe('tool output limit', () => {
    it('should cut a tool output at 1,250 characters with a [truncated] note', () => {
      expect(RECORD_TOOL_OUTPUT_LIMIT).toBe(1_250);
      const text = serialize([result('c', 'x'.repeat(1_250) + 'y'.repeat(500))], RECORD_STYLE);
      expect(text).toBe(`[Tool result]: ${'x'.repeat(1_250)}\n[truncated]`);
    });

    it('should keep a tool output of exactly 1,250 characters whole', () => {
      const text = serialize([result('c', 'x'.repeat(1_250))], RECORD_STYLE);
      expect(text).toBe(`[Tool result]: ${'x'.repeat(1_250)}`);
    });

    it('should never cut inside a surrogate pair', () => {
      // the emoji takes positions 1,249 (high surrogate) and 1,250 (low surrogate)
      const output = 'a'.repeat(1_249) + '😀' + 'b'.repeat(100);
      expect(output.charCodeAt(1_249)).toBe(0xd83d);
      const text = serialize([result('c', output)], RECORD_STYLE);
      expect(text).toBe(`[Tool result]: ${'a'.repeat(1_249)}\n[truncated]`);
      expect(text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    });

    it('should keep an emoji that ends exactly at 1,250 characters', () => {
      const output = 'a'.repeat(1_248) + '😀' + 'b'.repeat(100);
      expect(truncate(output, 1_250)).toBe(`${'a'.repeat(1_248)}😀\n[truncated]`);
    });

    it('should cut a tool error as well', () => {
      const text = serialize([toolOutput('c', { type: 'error-text', value: 'e'.repeat(2_000) })], RECORD_STYLE);
      expect(text).toBe(`[Tool error]: ${'e'.repeat(1_250)}\n[truncated]`);
    });
  });
});

describe('record', () => {
  describe('recordBudget', () => {
    it('should give at most 4,000 tokens of record in a 32k window (ceiling 16,000)', () => {
      expect(ceiling(32_000, undefined)).toBe(16_000);
      expect(recordBudget(15_000, ceiling(32_000, undefined))).toBe(4_000);
    });

    it('should keep keep when a quarter of the ceiling is larger', () => {
      expect(recordBudget(15_000, 170_000)).toBe(15_000);
      expect(recordBudget(3_000, 16_000)).toBe(3_000);
    });

    it('should keep keep without a ceiling', () => {
      expect(recordBudget(15_000, undefined)).toBe(15_000);
    });

    it('should be min(keep, ceiling / 4)', () => {
      expect(recordBudget(15_000, 20_000)).toBe(5_000);
      expect(recordBudget(15_000, 0)).toBe(0);
    });
  });

  describe('selectRecord', () => {
    const conversation: Message[] = [
      user('Fix the login bug'),
      call('c1', 'read', { path: 'src/login.ts' }),
      result('c1', 'export function login() {}'),
      assistant('Fixed it.'),
      user('Now add a test'),
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'I should write a test file.' },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'write', input: { path: 'test/login.test.ts' } },
        ],
      },
      toolOutput('c2', { type: 'error-text', value: 'EACCES: permission denied' }),
      assistant('I could not write the file.'),
    ];

    it('should keep only the newest half when the whole conversation fits, starting at a user message', () => {
      const messages: Message[] = [user('q'), assistant('a'.repeat(400)), ...conversation.slice(4)];
      // 144 tokens in all; the newest exchange (40 tokens) is within half of it (72)
      const record = selectRecord(messages, 15_000);
      expect(record.start).toBe(2);
      expect(record.text).toBe(
        `[User]: Now add a test

[Assistant tool call]: write({"path":"test/login.test.ts"})

[Tool error]: EACCES: permission denied

[Assistant]: I could not write the file.`,
      );
      expect(record.tokens).toBe(Math.round(record.text.length / 4));
    });

    it('should keep the newest half of a turn that fits, opening with its user message', () => {
      // 62 tokens in all, the newest exchange 40: more than half (31). The record starts inside it:
      // the task, the note, and the newest step within what is left of the half.
      const record = selectRecord(conversation, 15_000);
      expect(record).toEqual({
        start: 7,
        text: '[User]: Now add a test\n\n[1 earlier steps of this turn are summarized above]\n\n[Assistant]: I could not write the file.',
        tokens: 29,
      });
    });

    it('should keep the task of a single exchange, never an empty record', () => {
      expect(selectRecord(conversation.slice(0, 4), 15_000)).toEqual({
        start: 4,
        text: '[User]: Fix the login bug\n\n[2 earlier steps of this turn are summarized above]',
        tokens: 20,
      });
    });

    it('should be the user message when that message is all it covers', () => {
      expect(selectRecord([user('Fix the login bug')], 15_000)).toEqual({ start: 1, text: '[User]: Fix the login bug', tokens: 6 });
    });

    it('should start inside a long turn at an assistant message: the task, the note, the newest steps', () => {
      const steps: Message[] = [user('Read every file.')];
      for (let index = 0; index < 20; index++) steps.push(call(`c${index}`, 'read', { path: `src/f${index}.ts` }), result(`c${index}`, `${index}`.repeat(1_000)));
      // each step serializes to ~333 tokens (its result cut at 1,250 characters): 1,000 tokens less
      // the task and the note hold the newest 2
      const record = selectRecord(steps, 1_000);
      expect(record.start).toBe(37);
      expect(record.text.startsWith('[User]: Read every file.\n\n[18 earlier steps of this turn are summarized above]\n\n[Assistant tool call]: read({"path":"src/f18.ts"})\n\n[Tool result]: ')).toBe(true);
      expect(record.text).toContain('read({"path":"src/f19.ts"})');
      expect(record.text).not.toContain('src/f17.ts');
      expect(record.tokens).toBeLessThanOrEqual(1_000);
    });

    it('should budget at the characters a token the model was measured at (code runs near 3, not 4)', () => {
      const steps: Message[] = [user('Read every file.')];
      for (let index = 0; index < 20; index++) steps.push(call(`c${index}`, 'read', { path: `src/f${index}.ts` }), result(`c${index}`, `${index}`.repeat(1_000)));
      // each step is ~1,330 characters: 4,000 characters (1,000 tokens at 4) hold 2, 2,000 (at 2) hold 1
      expect(selectRecord(steps, 1_000).start).toBe(37);
      expect(selectRecord(steps, 1_000, 0, steps.length, 2).start).toBe(39);
      expect(selectRecord(steps, 1_000, 0, steps.length, 2).tokens).toBeLessThanOrEqual(1_000);
    });

    it('should find the turn\'s user message before what it covers (covered by an earlier checkpoint)', () => {
      const steps: Message[] = [user('Read every file.')];
      for (let index = 0; index < 6; index++) steps.push(call(`c${index}`, 'read', { path: `f${index}` }), result(`c${index}`, 'x'.repeat(2_000)));
      // the earlier checkpoint covered the task and 2 steps; this one covers steps 3 to 6
      const record = selectRecord(steps, 400, 5, 13);
      expect(record.text.startsWith('[User]: Read every file.\n\n[5 earlier steps of this turn are summarized above]\n\n[Assistant tool call]: read({"path":"f5"})')).toBe(true);
      expect(record.start).toBe(11);
    });

    it('should keep the first and last parts of a user message longer than a quarter of the budget', () => {
      const long = `start ${'w'.repeat(8_000)} end`;
      const record = selectRecord([user(long), call('c1', 'read', {}), result('c1', 'ok')], 1_000);
      // a quarter of the budget is 250 tokens: 500 characters at each end
      expect(record.text.startsWith(`[User]: start ${'w'.repeat(494)}\n[7010 characters cut]\n`)).toBe(true);
      expect(record.text).toContain(`${'w'.repeat(496)} end\n\n[Assistant tool call]: read({})\n\n[Tool result]: ok`);
      expect(record.tokens).toBeLessThanOrEqual(1_000);
    });

    it('should leave the record empty for no messages', () => {
      expect(selectRecord([], 15_000)).toEqual({ start: 0, text: '', tokens: 0 });
    });

    // three exchanges of about 1,000 tokens each
    const big = (index: number): Message[] => [
      user(`Question ${index}`),
      assistant(`${index}`.repeat(4_000)),
    ];
    const three = [...big(1), ...big(2), ...big(3)];

    it('should keep the newest exchanges within the budget', () => {
      const record = selectRecord(three, 2_500);
      expect(record.start).toBe(2);
      expect(record.text).toBe(`[User]: Question 2\n\n[Assistant]: ${'2'.repeat(4_000)}\n\n[User]: Question 3\n\n[Assistant]: ${'3'.repeat(4_000)}`);
      expect(record.tokens).toBeLessThanOrEqual(2_500);
    });

    it('should keep only what fits: one exchange at a 1,500 budget', () => {
      const record = selectRecord(three, 1_500);
      expect(record.start).toBe(4);
      expect(record.text).toBe(`[User]: Question 3\n\n[Assistant]: ${'3'.repeat(4_000)}`);
    });

    it('should keep the newest turn\'s user message when not even its newest step fits', () => {
      expect(selectRecord(three, 500)).toEqual({ start: 6, text: '[User]: Question 3\n\n[1 earlier steps of this turn are summarized above]', tokens: 18 });
    });

    it('should start at a user message so a tool call stays with its result', () => {
      const messages: Message[] = [
        user('Start'),
        assistant('s'.repeat(4_000)),
        user('Read the config'),
        call('c1', 'read', { path: 'config.json' }),
        result('c1', 'r'.repeat(1_200)),
        assistant('f'.repeat(2_000)),
        user('Thanks'),
        assistant('You are welcome.'),
      ];
      // from the tool result on: 820 tokens, from the tool call: 833, from its user message: 839;
      // at 830 the tool result would fit but the call would not: the record starts at "Thanks"
      const short = selectRecord(messages, 830);
      expect(short.start).toBe(6);
      expect(short.text).toBe('[User]: Thanks\n\n[Assistant]: You are welcome.');
      // with room for the whole exchange, the call comes with its result
      const whole = selectRecord(messages, 1_000);
      expect(whole.start).toBe(2);
      expect(whole.text.startsWith('[User]: Read the config\n\n[Assistant tool call]: read({"path":"config.json"})\n\n[Tool result]: ')).toBe(
        true,
      );
    });

    it('should cut tool outputs in the record at 1,250 characters', () => {
      const messages: Message[] = [user('a'), assistant('b'.repeat(4_000)), user('c'), call('c1', 'read', {}), result('c1', 'z'.repeat(5_000))];
      const record = selectRecord(messages, 600);
      expect(record.start).toBe(2);
      expect(record.text).toBe(`[User]: c\n\n[Assistant tool call]: read({})\n\n[Tool result]: ${'z'.repeat(1_250)}\n[truncated]`);
    });
  });
});
