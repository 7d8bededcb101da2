import { describe, expect, it } from 'vitest';
import { keepBudget, userWordsRoom } from '../../../src/checkpoint/budget';
import { checkpointText } from '../../../src/checkpoint/message';
import { USER_WORDS_END, USER_WORDS_NOTE, collectUserWords, splitUserWords, withUserWords, withoutUserWordsSection } from '../../../src/checkpoint/user-words';
import type { Message } from '../../../src/prompt/types';
import { assistant, toolCall, toolResult, user } from '../../support/harness';

describe("the user's words", () => {
  const conversation: Message[] = [
    user('Fix every failing test.'),
    assistant('On it.'),
    toolCall('call-1', 'run_command', { command: 'npm test' }),
    toolResult('call-1', 'run_command', 'FAIL test/a.test.ts'),
    user('do not edit files under src/legacy/'),
    assistant('Noted.'),
    user('Thanks, carry on.'),
    assistant('Fixed.'),
  ];

  it('should list the user messages of the range as record lines, in order, and nothing else', () => {
    expect(collectUserWords(conversation, 0, 8, 1_000).map((words) => [words.index, words.line])).toEqual([
      [0, '[User]: Fix every failing test.'],
      [4, '[User]: do not edit files under src/legacy/'],
      [6, '[User]: Thanks, carry on.'],
    ]);
    // only those before `to`, from `from`
    expect(collectUserWords(conversation, 1, 6, 1_000).map((words) => words.index)).toEqual([4]);
  });

  it('should keep the first and then the newest when they do not all fit', () => {
    const many = Array.from({ length: 10 }, (_, index) => [user(`message 0${index}`), assistant('ok')]).flat();
    // 4 characters a token: 60 tokens are 240 characters, less the opening and closing lines (93 and
    // 36) and their separators, 107. Each line is 18 characters and its separator 2: five fit, the
    // first and the newest four.
    expect(USER_WORDS_NOTE.length).toBe(93);
    expect(USER_WORDS_END.length).toBe(36);
    expect(collectUserWords(many, 0, 20, 60).map((words) => words.line)).toEqual(['[User]: message 00', '[User]: message 06', '[User]: message 07', '[User]: message 08', '[User]: message 09']);
    // no room beside the note: none
    expect(collectUserWords(many, 0, 20, 23)).toEqual([]);
  });

  it('should keep the first and last parts of a long message, with a note of what was cut', () => {
    const long = [user(`start ${'x'.repeat(10_000)} end`)];
    // 200 tokens: 800 characters less 133, 667; each end an eighth, 83 characters.
    const [words] = collectUserWords(long, 0, 1, 200);
    expect(words!.line.startsWith(`[User]: start ${'x'.repeat(83 - 14)}\n[`)).toBe(true);
    expect(words!.line.endsWith(`${'x'.repeat(79)} end`)).toBe(true);
    expect(words!.line).toContain('characters cut]');
    expect(words!.line.length).toBeLessThan(667);
  });

  it('should open the record with the lines between the two notes, or leave it as it is when there are none', () => {
    expect(withUserWords(['[User]: a', '[User]: b'], '[User]: c')).toBe(`${USER_WORDS_NOTE}\n\n[User]: a\n\n[User]: b\n\n${USER_WORDS_END}\n\n[User]: c`);
    expect(withUserWords(['[User]: a'], '')).toBe(`${USER_WORDS_NOTE}\n\n[User]: a\n\n${USER_WORDS_END}`);
    expect(withUserWords([], '[User]: c')).toBe('[User]: c');
  });

  it('should place them before the summary in the checkpoint message, in the order things were said', () => {
    const record = withUserWords(['[User]: do not edit files under src/legacy/'], '[User]: c');
    expect(splitUserWords(record)).toEqual({ words: `${USER_WORDS_NOTE}\n\n[User]: do not edit files under src/legacy/\n\n${USER_WORDS_END}`, rest: '[User]: c' });
    expect(splitUserWords('[User]: c')).toEqual({ words: '', rest: '[User]: c' });
    const text = checkpointText('## Objective\nFix it.', record, ['src/a.ts']);
    const [summary, recent] = [text.slice(text.indexOf('<summary>'), text.indexOf('</summary>')), text.slice(text.indexOf('<recent-context>'))];
    expect(summary).toBe(`<summary>\n${USER_WORDS_NOTE}\n\n[User]: do not edit files under src/legacy/\n\n${USER_WORDS_END}\n\n## Objective\nFix it.\n\n## Identifiers (kept verbatim)\nsrc/a.ts\n`);
    expect(recent.startsWith('<recent-context>\n[User]: c\n</recent-context>')).toBe(true);
  });

  it('should drop a copy of them that the model made in its summary, up to its first heading', () => {
    const copied = `${USER_WORDS_NOTE}\n\n[User]: do not edit files under src/legacy/\n\n${USER_WORDS_END}\n\n## Objective\nFix it.`;
    expect(withoutUserWordsSection(copied)).toBe('## Objective\nFix it.');
    expect(withoutUserWordsSection('## Objective\nFix it.')).toBe('## Objective\nFix it.');
  });

  it('should give them an eighth of the total, kept within half the room whatever the live part takes', () => {
    // 32k window: ceiling 16,000, frame 500, room 15,500, total 3,875, their share 484; the turn's
    // user message in the record at most a quarter of the total, 968
    const budget = keepBudget({ ceiling: 16_000, frame: 500, keep: 15_000, summaryOutputTokens: 4_096 });
    expect(budget.userWords).toBe(484);
    expect(budget.userMessage).toBe(968);
    expect(userWordsRoom(budget, { live: 100, summary: 500, identifiers: 800, wrapper: 50, record: 968 })).toBe(484);
    // a live step of 3,000 leaves the total nothing for them, half the room (7,750) still 484
    expect(userWordsRoom(budget, { live: 3_000, summary: 500, identifiers: 800, wrapper: 50, record: 968 })).toBe(484);
    // past half the room: what is left of it beside the fixed text and the turn's user message (at
    // its longest, 968): 7,750 - 5,700 - 500 - 400 - 50 - 968 = 132; beside a 100-token one, 1,000
    // is left and they take their 484
    expect(userWordsRoom(budget, { live: 5_700, summary: 500, identifiers: 400, wrapper: 50, record: 968 })).toBe(132);
    expect(userWordsRoom(budget, { live: 5_700, summary: 500, identifiers: 400, wrapper: 50, record: 100 })).toBe(484);
    expect(userWordsRoom(budget, { live: 6_000, summary: 500, identifiers: 400, wrapper: 50, record: 968 })).toBe(0);
  });
});
