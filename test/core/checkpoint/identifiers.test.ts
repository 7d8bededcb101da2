import { describe, expect, it } from 'vitest';
import {
  IDENTIFIERS_HEADING,
  collectIdentifiers,
  identifierBudget,
  identifiersSection,
  resolvedErrors,
  withoutIdentifiersSection,
} from '../../../src/checkpoint/identifiers';
import type { Message } from '../../../src/prompt/types';
import { assistant, toolCall, toolResult, user } from '../../support/harness';

const error = (id: string, text: string): Message => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: id, toolName: 'run', output: { type: 'error-text', value: text } }],
});

describe('identifiers', () => {
  it('should take paths from tool inputs named like path, file, filePath, filename, paths', () => {
    const covered = [
      toolCall('a', 'read', { path: 'src/a.ts' }),
      toolCall('b', 'write', { filePath: 'src/b.ts', content: 'x' }),
      toolCall('c', 'open', { filename: 'notes.txt', file: 'Makefile' }),
      toolCall('d', 'read_many', { paths: ['src/c.ts', 'src/d.ts'] }),
      toolCall('e', 'edit', { target_file: 'lib/e.py', profile: 'not-a-path' }),
    ];
    // most recent first: the newest message first, and within a message the last named first
    expect(collectIdentifiers(covered, [], 2_000)).toEqual(['lib/e.py', 'src/d.ts', 'src/c.ts', 'Makefile', 'notes.txt', 'src/b.ts', 'src/a.ts']);
  });

  it('should take commands run, URLs, path-like tokens with a file extension and error lines', () => {
    const covered = [
      user('See https://example.com/docs/setup. and fix `src/server/app.ts`'),
      toolCall('r', 'run_command', { command: 'npm test -- --run' }),
      toolResult('r', 'run_command', 'PASS test/ok.test.ts\nFAIL test/users.test.ts > rejects anonymous\nTypeError: Cannot read properties of undefined (reading \'id\')\n    at src/routes/users.ts:42:17\nres.json(x) console.log(y)'),
    ];
    expect(collectIdentifiers(covered, [], 2_000)).toEqual([
      "TypeError: Cannot read properties of undefined (reading 'id')",
      'FAIL test/users.test.ts > rejects anonymous',
      'src/routes/users.ts:42:17',
      'test/users.test.ts',
      'test/ok.test.ts',
      'npm test -- --run',
      'src/server/app.ts',
      'https://example.com/docs/setup',
    ]);
  });

  it('should keep each path and URL of a command as an identifier of its own, those past the 200-character cut among them', () => {
    const command = `cd /work/app && npx prettier --write ${'src/components/'.repeat(12)}button.tsx && node scripts/build.mjs && git add docs/guide.md && curl -fsS https://example.com/hook`;
    expect(command.indexOf('scripts/build.mjs')).toBeGreaterThan(200);
    const identifiers = collectIdentifiers([toolCall('a', 'bash', { command })], [], 2_000);
    // Within the message the last found first: the URL, the paths from the end back, then the command as cut.
    expect(identifiers).toEqual(['docs/guide.md', 'scripts/build.mjs', `${'src/components/'.repeat(12)}button.tsx`, 'https://example.com/hook', command.slice(0, 200)]);
  });

  it('should take the first line of a tool error, cut at 200 characters', () => {
    const line = `EACCES: permission denied, open '/etc/${'x'.repeat(300)}'`;
    const [first] = collectIdentifiers([error('e', `${line}\nsecond line`)], [], 2_000);
    expect(first).toBe(line.slice(0, 200));
  });

  it('should list each once, most recent first, the previous checkpoint\'s list carried after', () => {
    const covered = [toolCall('a', 'read', { path: 'a.ts' }), toolCall('b', 'read', { path: 'b.ts' }), toolCall('c', 'read', { path: 'a.ts' })];
    expect(collectIdentifiers(covered, ['old.ts', 'b.ts'], 2_000)).toEqual(['a.ts', 'b.ts', 'old.ts']);
  });

  describe('errors the newest run of their call no longer prints', () => {
    // A test run that failed, then passed; a build still failing; the suite's listing, run twice.
    const ran = (id: string, command: string, output: string): Message[] => [toolCall(id, 'run_command', { command }), toolResult(id, 'run_command', output)];
    const missing = "Error: Cannot find module './missing' from src/app.ts";
    const conversation: Message[] = [
      ...ran('t1', 'npx vitest run test/users.test.ts', 'FAIL test/users.test.ts > rejects anonymous\nTypeError: Cannot read properties of undefined (reading \'id\')\n    at src/routes/users.ts:42:17'),
      ...ran('b1', 'npm run build', missing),
      ...ran('s1', 'npm test', 'FAIL test/users.test.ts\nFAIL test/orders.test.ts'),
      ...ran('t2', 'npx vitest run test/users.test.ts', 'PASS test/users.test.ts (3 tests)'),
      ...ran('b2', 'npm run build', missing),
      ...ran('s2', 'npm test', 'PASS test/users.test.ts\nFAIL test/orders.test.ts'),
    ];

    it('should name the error lines of a call\'s earlier results that its newest result does not print', () => {
      expect([...resolvedErrors(conversation)].sort()).toEqual([
        'FAIL test/users.test.ts',
        'FAIL test/users.test.ts > rejects anonymous',
        "TypeError: Cannot read properties of undefined (reading 'id')",
      ]);
    });

    it('should keep an error the newest run still prints, and one another call\'s newest result prints', () => {
      // `npm test`'s newest run lists `FAIL test/users.test.ts` again: that error stands, whatever the single test's run says.
      const again: Message[] = [...conversation, ...ran('s3', 'npm test', 'FAIL test/users.test.ts\nFAIL test/orders.test.ts')];
      expect([...resolvedErrors(again)].sort()).toEqual(['FAIL test/users.test.ts > rejects anonymous', "TypeError: Cannot read properties of undefined (reading 'id')"]);
    });

    it('should leave resolved errors out of the list, the previous checkpoint\'s too, and keep the rest', () => {
      const previous = ['FAIL test/users.test.ts > rejects anonymous', 'src/legacy/old.ts'];
      const identifiers = collectIdentifiers(conversation.slice(6), previous, 2_000, undefined, resolvedErrors(conversation));
      expect(identifiers).toEqual([
        'FAIL test/orders.test.ts',
        'test/orders.test.ts',
        'test/users.test.ts',
        'npm test',
        "Error: Cannot find module './missing' from src/app.ts",
        'src/app.ts',
        'npm run build',
        'npx vitest run test/users.test.ts',
        'src/legacy/old.ts',
      ]);
      // Without it the list says the test still fails.
      expect(collectIdentifiers(conversation.slice(6), previous, 2_000)).toContain('FAIL test/users.test.ts > rejects anonymous');
    });

    it('should resolve nothing for a call made once', () => {
      expect(resolvedErrors(conversation.slice(0, 6)).size).toBe(0);
    });
  });

  it('should never lose an identifier to a later summary that forgot it: carried forward with no new ones', () => {
    expect(collectIdentifiers([assistant('nothing named here')], ['src/kept.ts', 'npm test'], 2_000)).toEqual(['src/kept.ts', 'npm test']);
  });

  it('should keep the most often and then most recently seen within the budget', () => {
    const covered = [
      toolCall('1', 'read', { path: 'often.ts' }),
      toolCall('2', 'read', { path: 'often.ts' }),
      toolCall('3', 'read', { path: 'once-old.ts' }),
      toolCall('4', 'read', { path: 'once-new.ts' }),
    ];
    // 14 tokens: 56 characters, the section's heading 30 of them; each identifier costs its length
    // and a newline (12, 9 and 12): two fit in the 26 left
    expect(collectIdentifiers(covered, [], 14)).toEqual(['once-new.ts', 'often.ts']);
    // 10 tokens: 10 characters beside the heading, the most often seen alone
    expect(collectIdentifiers(covered, [], 10)).toEqual(['often.ts']);
    // 7 tokens do not hold the heading: none
    expect(collectIdentifiers(covered, [], 7)).toEqual([]);
  });

  it('should take at most a twentieth of the ceiling and 2,000 tokens', () => {
    expect(identifierBudget(16_000)).toBe(800);
    expect(identifierBudget(170_000)).toBe(2_000);
    expect(identifierBudget(undefined)).toBe(2_000);
  });

  it('should drop a copy of the section from the model\'s reply, and write the middleware\'s own', () => {
    const reply = `## Objective\n- x\n\n${IDENTIFIERS_HEADING}\nmade/up.ts\n\n## Important Context\n- y`;
    expect(withoutIdentifiersSection(reply)).toBe('## Objective\n- x\n\n## Important Context\n- y');
    expect(withoutIdentifiersSection('## Objective\n- x')).toBe('## Objective\n- x');
    expect(identifiersSection(['a.ts', 'npm test'])).toBe('## Identifiers (kept verbatim)\na.ts\nnpm test');
    expect(identifiersSection([])).toBe('');
  });
});
