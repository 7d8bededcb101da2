import { describe, expect, it } from 'vitest';
import { climbLadder, renderTranscript, shortenTranscript, transcriptMessageText } from '../../../src/checkpoint/shorten';
import { exchanges } from '../../../src/prompt/conversation';
import type { Message } from '../../../src/prompt/types';

/** Tokens of a text at 4 characters a token, rounded: the budget that text just fits. */
const tokens = (text: string) => Math.round(text.length / 4);

// Three exchanges, each: a user question, a tool call with a 300-character path, a 5,000-character
// tool output, and an answer. Every rung of the ladder shortens the transcript, so each budget
// below lands on one known state.
const question = (index: number) => `Question ${index}: ${'q'.repeat(100)}`;
const answer = (index: number) => `Answer ${index}: ${'a'.repeat(100)}`;
const path = 'p'.repeat(300);
const output = 'H'.repeat(1_000) + 'm'.repeat(3_000) + 'T'.repeat(1_000);

function exchange(index: number): Message[] {
  return [
    { role: 'user', content: [{ type: 'text', text: question(index) }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${index}`, toolName: 'read', input: { path } }] },
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: `c${index}`, toolName: 'read', output: { type: 'text', value: output } }],
    },
    { role: 'assistant', content: [{ type: 'text', text: answer(index) }] },
  ];
}

const conversation = [...exchange(1), ...exchange(2), ...exchange(3)];

// The exchange at each level, written out.
const level0 = (index: number) =>
  `[User]: ${question(index)}\n\n[Assistant tool call]: read({"path":"${path}"})\n\n[Tool result]: ${output}\n\n[Assistant]: ${answer(index)}`;
const level1 = (index: number) =>
  `[User]: ${question(index)}\n\n[Assistant tool call]: read({"path":"${path}"})\n\n[Tool result]: ${'H'.repeat(1_000)}\n[3000 characters cut]\n${'T'.repeat(1_000)}\n\n[Assistant]: ${answer(index)}`;
const level2 = (index: number) =>
  `[User]: ${question(index)}\n\n[Assistant tool call]: read({"path":"${'p'.repeat(191)}\n[truncated])\n\n[Assistant]: ${answer(index)}`;
const level3 = (index: number) => `[User]: ${question(index)}`;
const byLevel = [level0, level1, level2, level3];

const transcript = (levels: number[]) => {
  const omitted = levels.filter((level) => level === 4).length;
  const shown = levels.flatMap((level, index) => (level === 4 ? [] : [byLevel[level]!(index + 1)]));
  const note = omitted === 0 ? [] : [omitted === 1 ? '[1 older exchange omitted]' : `[${omitted} older exchanges omitted]`];
  return [...note, ...shown].join('\n\n');
};

// The ladder, rung by rung: each exchange taken one level, oldest first, before any goes further.
const ladder = [
  [0, 0, 0],
  [1, 0, 0],
  [1, 1, 0],
  [1, 1, 1],
  [2, 1, 1],
  [2, 2, 1],
  [2, 2, 2],
  [3, 2, 2],
  [3, 3, 2],
  [3, 3, 3],
  [4, 3, 3],
  [4, 4, 3],
];

describe('shorten', () => {
  it('should leave the transcript whole when it fits', () => {
    const whole = shortenTranscript(conversation, 1_000_000);
    expect(whole).toBe(`${level0(1)}\n\n${level0(2)}\n\n${level0(3)}`);
  });

  it('should cut tool outputs to their first and last 1,000 characters at level 1', () => {
    expect(level1(1)).toContain('[3000 characters cut]');
    const text = shortenTranscript(conversation, tokens(transcript([1, 0, 0])));
    expect(text).toBe(`${level1(1)}\n\n${level0(2)}\n\n${level0(3)}`);
  });

  it('should leave tool outputs out and cut tool inputs at level 2', () => {
    const text = shortenTranscript(conversation, tokens(transcript([2, 1, 1])));
    expect(text).toBe(`${level2(1)}\n\n${level1(2)}\n\n${level1(3)}`);
  });

  it("should keep only the user's words at level 3", () => {
    const text = shortenTranscript(conversation, tokens(transcript([3, 2, 2])));
    expect(text).toBe(`[User]: ${question(1)}\n\n${level2(2)}\n\n${level2(3)}`);
  });

  it('should omit an exchange at level 4 with the singular note', () => {
    const text = shortenTranscript(conversation, tokens(transcript([4, 3, 3])));
    expect(text).toBe(`[1 older exchange omitted]\n\n[User]: ${question(2)}\n\n[User]: ${question(3)}`);
  });

  it('should count omitted exchanges in a plural note', () => {
    const text = shortenTranscript(conversation, tokens(transcript([4, 4, 3])));
    expect(text).toBe(`[2 older exchanges omitted]\n\n[User]: ${question(3)}`);
  });

  it('should take every exchange one level before any goes further, oldest first', () => {
    for (let rung = 0; rung < ladder.length; rung++) {
      const expected = transcript(ladder[rung]!);
      if (rung > 0) expect(tokens(transcript(ladder[rung - 1]!)), `rung ${rung} is shorter`).toBeGreaterThan(tokens(expected));
      expect(shortenTranscript(conversation, tokens(expected)), `levels ${ladder[rung]!.join(',')}`).toBe(expected);
    }
  });

  it("should measure the budget at the model's learned characters a token", () => {
    // At 2 characters a token every rung takes twice the tokens: the budget that [1, 1, 1] just
    // fits at 4 is over [2, 1, 1] at 2, so the ladder goes one rung further, to [2, 2, 1].
    const budget = tokens(transcript([1, 1, 1]));
    const atTwo = (text: string) => Math.round(text.length / 2);
    expect(shortenTranscript(conversation, budget)).toBe(transcript([1, 1, 1]));
    expect(atTwo(transcript([2, 1, 1]))).toBeGreaterThan(budget);
    expect(atTwo(transcript([2, 2, 1]))).toBeLessThanOrEqual(budget);
    expect(shortenTranscript(conversation, budget, 2)).toBe(transcript([2, 2, 1]));
    expect(shortenTranscript(conversation, atTwo(transcript([1, 1, 0])), 2)).toBe(transcript([1, 1, 0]));
  });

  it('should give the shortest rung for any budget between two rungs', () => {
    const upper = transcript([2, 2, 1]);
    const lower = transcript([2, 2, 2]);
    const between = Math.floor((tokens(upper) + tokens(lower)) / 2);
    expect(between).toBeLessThan(tokens(upper));
    expect(shortenTranscript(conversation, between)).toBe(lower);
  });

  it('should never omit the newest exchange: undefined when it cannot fit at level 3', () => {
    const last = `[2 older exchanges omitted]\n\n[User]: ${question(3)}`;
    expect(shortenTranscript(conversation, tokens(last))).toBe(last);
    expect(shortenTranscript(conversation, tokens(last) - 1)).toBeUndefined();
    expect(shortenTranscript(conversation, 0)).toBeUndefined();
  });

  it('should keep a single exchange at level 3 and never omit it', () => {
    const single = exchange(1);
    expect(shortenTranscript(single, tokens(level3(1)))).toBe(level3(1));
    expect(shortenTranscript(single, tokens(level3(1)) - 1)).toBeUndefined();
  });

  it('should render exchanges at given levels', () => {
    const parts = exchanges(conversation);
    expect(renderTranscript(parts, [5, 2, 0])).toBe(`[1 older exchange omitted]\n\n${level2(2)}\n\n${level0(3)}`);
  });

  it('should ask each exchange its length at most once a level, however many exchanges (linear, not quadratic)', () => {
    // 40,000 exchanges of 10 characters at every level but the user's words alone (2): a budget
    // that only the newest exchange fits makes the ladder climb every rung of every exchange.
    const count = 40_000;
    let asked = 0;
    let tries = 0;
    const levels = climbLadder(
      count,
      (_, level) => {
        asked++;
        return level === 3 || level === 4 ? 2 : 10;
      },
      (length) => {
        tries++;
        return length <= `[${count - 1} older exchanges omitted]`.length + 2 + 2;
      },
    );
    expect(levels?.slice(-2)).toEqual([5, 4]);
    expect(levels?.filter((level) => level === 5)).toHaveLength(count - 1);
    // Levels 0 to 4 of each exchange, once each; a try per rung of each exchange, and the first.
    expect(asked).toBe(5 * count);
    expect(tries).toBe(1 + 5 * (count - 1) + 4);
  });

  it('should shorten a conversation of 40,000 messages to its newest exchange', () => {
    const messages: Message[] = [];
    for (let index = 0; index < 20_000; index++) {
      messages.push({ role: 'user', content: [{ type: 'text', text: `question ${index}` }] });
      messages.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${index}` }] });
    }
    const newest = '[19999 older exchanges omitted]\n\n[User]: question 19999';
    expect(shortenTranscript(messages, tokens(newest))).toBe(newest);
  });

  it('should wrap a transcript in one text message', () => {
    expect(transcriptMessageText('[User]: hi')).toBe(
      'Transcript of the conversation to summarize:\n\n<transcript>\n[User]: hi\n</transcript>',
    );
  });
});
