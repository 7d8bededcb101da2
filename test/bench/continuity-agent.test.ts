import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUMMARY_PROMPT, REMINDER_PROMPT, UPDATE_PROMPT } from '../../src/checkpoint/prompts';
import {
  countText,
  createFixerTools,
  FIXER_TASK,
  fixerReply,
  getFixerProject,
  honestSummary,
  lossySummary,
  promptText,
  readFacts,
  type Message,
} from '../support/provider-server';

const system = (text: string): Message => ({ role: 'system', parts: [{ type: 'text', text }] });
const user = (text: string): Message => ({ role: 'user', parts: [{ type: 'text', text }] });
const said = (text: string): Message => ({ role: 'assistant', parts: [{ type: 'text', text }] });
let id = 0;
/** An assistant tool call and its result. */
const step = (name: string, input: Record<string, unknown>, result: string): Message[] => {
  const callId = `call_${++id}`;
  return [
    { role: 'assistant', parts: [{ type: 'tool-call', id: callId, name, args: JSON.stringify(input) }] },
    { role: 'tool', parts: [{ type: 'tool-result', id: callId, text: result }] },
  ];
};

const SYSTEM = system('You are a coding agent. Be terse.');
const call = (messages: Message[]) => {
  const reply = fixerReply(messages);
  expect(reply.toolCalls ?? []).toHaveLength(reply.toolCalls === undefined ? 0 : 1);
  return reply.toolCalls?.[0];
};

describe('the fixer project', () => {
  const tools = createFixerTools({ seed: 3 });
  const { project } = tools;

  it('has the failing tests asked for, each behind one line of a long source file', () => {
    expect(project.failures).toHaveLength(14);
    expect(project.tests).toHaveLength(20);
    expect(new Set(project.failures.map((f) => f.test)).size).toBe(14);
    for (const failure of project.failures) {
      const lines = project.files.get(failure.file)!;
      expect(lines.length).toBeGreaterThanOrEqual(150);
      expect(lines.length).toBeLessThanOrEqual(300);
      const listing = tools.read_file({ path: failure.file });
      const at = listing.indexOf(`\n${String(failure.line).padStart(4)} ${tools.tokenAt(failure.file, failure.line)} | `);
      expect(at).toBeGreaterThanOrEqual(2_000);
    }
    expect(getFixerProject({ seed: 3, failing: 4, passing: 2 }).failures).toHaveLength(4);
  });

  it('gives every line of the project its own token', () => {
    const all = [...project.files.keys()].flatMap((path) => project.files.get(path)!.map((_, i) => tools.tokenAt(path, i + 1)!));
    expect(all.length).toBeGreaterThan(20 * 150);
    expect(new Set(all).size).toBe(all.length);
    expect(all.every((token) => /^tok_[0-9a-f]{6}$/.test(token))).toBe(true);
  });

  it('lists failing and passing tests under npm test, with no errors or locations', () => {
    const output = tools.run_command({ command: 'npm test' });
    for (const failure of project.failures) {
      expect(output).toContain(`FAIL ${failure.test}\n`);
      expect(output).not.toContain(failure.error);
      expect(output).not.toContain(`${failure.file}:${failure.line}`);
    }
    expect(output.match(/^PASS /gm)).toHaveLength(6);
    expect(output).toContain('Suite: 14 failing, 6 passing (20 test files)');
  });

  it("prints a test's error and location within the first 1,250 characters of thousands", () => {
    const failure = project.failures[0]!;
    const output = tools.run_command({ command: `npx vitest run ${failure.test}` });
    const core = `FAIL ${failure.test} > ${failure.name}\n${failure.error}\n  at ${failure.file}:${failure.line}\n`;
    expect(output).toContain(core);
    expect(output.indexOf(core) + core.length).toBeLessThan(1_250);
    expect(output.length).toBeGreaterThan(2_000);
    expect(tools.run_command({ command: `npx vitest run ${failure.test}` })).toBe(output);
  });

  it('rejects an edit whose token is not the one on the line, and fixes the test on the right one', () => {
    const fresh = createFixerTools({ seed: 3 });
    const failure = fresh.project.failures[1]!;
    const token = fresh.tokenAt(failure.file, failure.line)!;
    const neighbour = fresh.tokenAt(failure.file, failure.line + 1)!;

    expect(fresh.edit_file({ path: failure.file, line: failure.line, token: neighbour })).toBe(
      `edit rejected: ${failure.file}:${failure.line} does not carry ${neighbour} (the line changed since it was read, or the token is from another line); read the file again`,
    );
    expect(fresh.edit_file({ path: failure.file, line: 9_999, token })).toMatch(/^edit rejected: /);
    expect(fresh.edit_file({ path: 'src/nowhere.ts', line: 1, token })).toMatch(/^edit rejected: /);
    expect(fresh.edits).toEqual({ accepted: 0, rejected: 3 });
    expect(fresh.failing()).toContain(failure.test);

    expect(fresh.edit_file({ path: failure.file, line: failure.line, token })).toBe(`edit applied: ${failure.file}:${failure.line}`);
    expect(fresh.failing()).not.toContain(failure.test);
    expect(fresh.fixed()).toEqual([failure.test]);
    expect(fresh.run_command({ command: `npx vitest run ${failure.test}` })).toContain(`PASS ${failure.test}`);
    expect(fresh.run_command({ command: 'npm test' })).toContain(`PASS ${failure.test}\n`);
    // the rewritten line has a new token: the one read before the edit is stale
    expect(fresh.tokenAt(failure.file, failure.line)).not.toBe(token);
    expect(fresh.edit_file({ path: failure.file, line: failure.line, token })).toMatch(/^edit rejected: /);
    expect(fresh.edits).toEqual({ accepted: 1, rejected: 4 });
  });

  it('reports the whole suite passing once every failing line is edited', () => {
    const fresh = createFixerTools({ seed: 3, failing: 2, passing: 1 });
    for (const f of fresh.project.failures) fresh.edit_file({ path: f.file, line: f.line, token: fresh.tokenAt(f.file, f.line)! });
    expect(fresh.run_command({ command: 'npm test' })).toContain('Suite: 0 failing, 3 passing (3 test files)');
  });
});

describe('the fixer policy', () => {
  const tools = createFixerTools({ seed: 5, failing: 3, passing: 1 });
  const [first, second] = tools.project.failures as [(typeof tools.project.failures)[0], (typeof tools.project.failures)[0]];
  const npmTest = step('run_command', { command: 'npm test' }, tools.run_command({ command: 'npm test' }));
  const runFirst = step('run_command', { command: `npx vitest run ${first.test}` }, tools.run_command({ command: `npx vitest run ${first.test}` }));
  const readFirst = step('read_file', { path: first.file }, tools.read_file({ path: first.file }));
  const token = tools.tokenAt(first.file, first.line)!;

  it('asks what to do when no task is in the prompt, whatever else it shows', () => {
    const reply = fixerReply([SYSTEM, user('Hello.'), ...npmTest, ...runFirst]);
    expect(reply).toEqual({ text: "I don't see a task in this conversation. What would you like me to do?" });
  });

  it('runs the whole suite when no failing test is known', () => {
    expect(call([SYSTEM, user(FIXER_TASK)])).toEqual({ name: 'run_command', input: { command: 'npm test' } });
  });

  it("runs the first failing test on its own when its error isn't known", () => {
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest])).toEqual({ name: 'run_command', input: { command: `npx vitest run ${first.test}` } });
  });

  it("reads the file the error names when the token on that line isn't known", () => {
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst])).toEqual({ name: 'read_file', input: { path: first.file } });
  });

  it('edits the line with the token it read there', () => {
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readFirst])).toEqual({ name: 'edit_file', input: { path: first.file, line: first.line, token } });
  });

  it('re-runs the test once the edit is known, then moves to the next failing test', () => {
    const edited = step('edit_file', { path: first.file, line: first.line, token }, `edit applied: ${first.file}:${first.line}`);
    const base = [SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readFirst, ...edited];
    expect(call(base)).toEqual({ name: 'run_command', input: { command: `npx vitest run ${first.test}` } });
    const passed = step('run_command', { command: `npx vitest run ${first.test}` }, `PASS ${first.test} (3 tests) 40ms`);
    expect(call([...base, ...passed])).toEqual({ name: 'run_command', input: { command: `npx vitest run ${second.test}` } });
  });

  it('runs the whole suite again when every known failing test is known to pass, and stops when it passes', () => {
    const known = [SYSTEM, user(FIXER_TASK), said(`PASS ${first.test}`), ...runFirst];
    expect(runFirst[1]!.parts[0]).toMatchObject({ text: expect.stringContaining(`FAIL ${first.test}`) });
    expect(call(known)).toEqual({ name: 'run_command', input: { command: 'npm test' } });
    const green = step('run_command', { command: 'npm test' }, 'PASS test/a.test.ts\n\nSuite: 0 failing, 4 passing (4 test files)');
    const reply = fixerReply([...known, ...green]);
    expect(reply.toolCalls).toBeUndefined();
    expect(reply.text).toBe('Done: every test passes (`npm test`: Suite: 0 failing, 4 passing (4 test files)). The fixes are uncommitted one-line edits.');
  });

  it('reads the file again after an edit with its token was rejected, instead of repeating the edit', () => {
    const wrong = step('edit_file', { path: first.file, line: first.line, token: 'tok_000000' }, `edit rejected: ${first.file}:${first.line} does not carry tok_000000 (the line changed since it was read, or the token is from another line); read the file again`);
    const prompt = [SYSTEM, user(`${FIXER_TASK} Note: \`${first.file}:${first.line}\` reads \`tok_000000\`.`), ...npmTest, ...runFirst];
    expect(call(prompt)).toEqual({ name: 'edit_file', input: { path: first.file, line: first.line, token: 'tok_000000' } });
    expect(call([...prompt, ...wrong])).toEqual({ name: 'read_file', input: { path: first.file } });
    expect(call([...prompt, ...wrong, ...readFirst])).toEqual({ name: 'edit_file', input: { path: first.file, line: first.line, token } });
  });

  it('reads a listing wherever it starts, and its lines after a gap too, but never a line cut before its token', () => {
    const listing = tools.read_file({ path: first.file });
    const edit = { name: 'edit_file', input: { path: first.file, line: first.line, token } };
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, said(`Here is the file: ${listing}`)])).toEqual(edit);
    // an excerpt of the first and last parts: the lines after the gap are still of that file
    const lines = listing.split('\n');
    const excerpt = (tail: string[]) => [...lines.slice(0, 20), '[some characters left out]', ...tail].join('\n');
    const at = lines.findIndex((line) => line.includes(` ${token} |`));
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...step('read_file', { path: first.file }, excerpt(lines.slice(at)))])).toEqual(edit);
    // the excerpt starts inside the line: its number is cut, so it could be any line
    const cut = [lines[at]!.trimStart().slice(1), ...lines.slice(at + 1)];
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...step('read_file', { path: first.file }, excerpt(cut))])).toEqual({ name: 'read_file', input: { path: first.file } });
  });

  it("doesn't see a token that a cut tool output left out", () => {
    const cut = step('read_file', { path: first.file }, `${tools.read_file({ path: first.file }).slice(0, 1_250)}\n[truncated]`);
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...cut])).toEqual({ name: 'read_file', input: { path: first.file } });
  });

  it('finds a fact the same wherever it appears: a tool result, the user, the assistant, the system prompt, a summary', () => {
    const failure = `FAIL ${first.test} > ${first.name}\n${first.error}\n  at ${first.file}:${first.line}`;
    const sentence = `FAIL ${first.test} > ${first.name} — ${first.error} at ${first.file}:${first.line}`;
    const reads = `\`${first.file}:${first.line}\` reads \`${token}\``;
    const edit = { name: 'edit_file', input: { path: first.file, line: first.line, token } };
    const places: [string, (text: string) => Message[]][] = [
      ['tool result', (text) => step('run_command', { command: 'cat notes.txt' }, text)],
      ['user', (text) => [user(text)]],
      ['assistant', (text) => [said(text)]],
      ['system', (text) => [system(text)]],
    ];
    for (const [, place] of places) {
      expect(call([SYSTEM, user(FIXER_TASK), ...place(`${failure}\n${reads}`)])).toEqual(edit);
      expect(call([SYSTEM, user(FIXER_TASK), ...place(`${sentence}\n${reads}`)])).toEqual(edit);
      expect(call([SYSTEM, ...place(FIXER_TASK), ...npmTest])).toEqual({ name: 'run_command', input: { command: `npx vitest run ${first.test}` } });
      expect(call([SYSTEM, user(FIXER_TASK), ...place(`${sentence}\nedit applied: ${first.file}:${first.line}`)])).toEqual({ name: 'run_command', input: { command: `npx vitest run ${first.test}` } });
    }
    // a summary the agent wrote, inside whatever wrapper a strategy puts it in
    const summary = honestSummary(readFacts(promptText([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readFirst])));
    for (const wrapped of [summary, `<memo>\n${summary}\n</memo>`, `Summary of the earlier conversation:\n${summary}`]) {
      expect(call([SYSTEM, user(wrapped)])).toEqual(edit);
      expect(call([SYSTEM, said(wrapped)])).toEqual(edit);
    }
  });
});

describe('the fixer summaries', () => {
  const tools = createFixerTools({ seed: 7, failing: 14, passing: 6 });
  const { failures } = tools.project;
  /** A long run: every failing test run, its file read; the first three edited and passing; four more files read. */
  const messages: Message[] = [SYSTEM, user(FIXER_TASK), ...step('run_command', { command: 'npm test' }, tools.run_command({ command: 'npm test' }))];
  for (const [index, f] of failures.entries()) {
    messages.push(...step('run_command', { command: `npx vitest run ${f.test}` }, tools.run_command({ command: `npx vitest run ${f.test}` })));
    messages.push(...step('read_file', { path: f.file }, tools.read_file({ path: f.file })));
    if (index < 3) {
      messages.push(...step('edit_file', { path: f.file, line: f.line, token: tools.tokenAt(f.file, f.line)! }, tools.edit_file({ path: f.file, line: f.line, token: tools.tokenAt(f.file, f.line)! })));
      messages.push(...step('run_command', { command: `npx vitest run ${f.test}` }, tools.run_command({ command: `npx vitest run ${f.test}` })));
    }
  }
  const summarize = (instruction: string, summaries?: 'honest' | 'lossy') => fixerReply([...messages, user(instruction)], { summaries });
  const relevantFiles = (text: string) => text.split('## Relevant Files\n')[1]!.split('\n\n')[0]!.split('\n');
  const importantContext = (text: string) => text.split('## Important Context\n')[1]!.split('\n');

  it('answers a summary request with the template, never a tool call', () => {
    for (const instruction of [SUMMARY_PROMPT, UPDATE_PROMPT, REMINDER_PROMPT]) {
      for (const mode of ['honest', 'lossy'] as const) {
        const reply = summarize(instruction, mode);
        expect(reply.toolCalls).toBeUndefined();
        const headings = reply.text!.split('\n').filter((line) => line.startsWith('#'));
        expect(headings).toEqual(['## Objective', '## Requirements', '## Decisions', '## Work State', '### Completed', '### Active', '### Blocked', '## Next Move', '## Relevant Files', '## Important Context']);
      }
    }
    // an instruction that is not the last message is only text
    expect(fixerReply([...messages, user(SUMMARY_PROMPT), said('ok'), user('go on')]).toolCalls).toBeDefined();
  });

  it('honest: the task in the user words, the newest 15 files with the tokens of failing lines, the newest 10 failures, passes and edits', () => {
    const text = summarize(SUMMARY_PROMPT).text!;
    expect(text).toContain(`## Objective\n- ${FIXER_TASK}\n`);
    const files = relevantFiles(text);
    expect(files).toHaveLength(15);
    // newest first: the last file read leads
    const last = failures[failures.length - 1]!;
    expect(files[0]).toBe(`- \`${last.file}\`: \`${last.file}:${last.line}\` reads \`${tools.tokenAt(last.file, last.line)}\``);
    expect(files.filter((line) => / reads `tok_[0-9a-f]{6}`/.test(line)).length).toBeGreaterThanOrEqual(7);
    const errors = importantContext(text).filter((line) => line.startsWith('- FAIL '));
    expect(errors).toHaveLength(10);
    expect(errors[0]).toBe(`- FAIL ${last.test} > ${last.name} — ${last.error} at ${last.file}:${last.line}`);
    for (const f of failures.slice(0, 3)) {
      expect(text).toContain(`- PASS ${f.test}\n`);
      expect(text).toContain(`- edit applied: ${f.file}:${f.line} (uncommitted)\n`);
    }
    expect(text).toContain(`- Still failing: ${failures.slice(3).map((f) => `FAIL ${f.test}`).join(', ')}\n`);
    const tokens = countText(text);
    expect(tokens).toBeGreaterThan(600);
    expect(tokens).toBeLessThan(2_000);
  });

  it('honest: the agent resumes from the summary alone where it stood, when its facts fit the budget', () => {
    const small = createFixerTools({ seed: 7, failing: 3, passing: 1 });
    const [f0, f1] = small.project.failures as [(typeof failures)[0], (typeof failures)[0]];
    const run: Message[] = [SYSTEM, user(FIXER_TASK), ...step('run_command', { command: 'npm test' }, small.run_command({ command: 'npm test' }))];
    run.push(...step('run_command', { command: `npx vitest run ${f0.test}` }, small.run_command({ command: `npx vitest run ${f0.test}` })));
    run.push(...step('read_file', { path: f0.file }, small.read_file({ path: f0.file })));
    const token = small.tokenAt(f0.file, f0.line)!;
    run.push(...step('edit_file', { path: f0.file, line: f0.line, token }, small.edit_file({ path: f0.file, line: f0.line, token })));
    const afterEdit = fixerReply([SYSTEM, user(fixerReply([...run, user(SUMMARY_PROMPT)]).text!)]).toolCalls;
    expect(afterEdit).toEqual([{ name: 'run_command', input: { command: `npx vitest run ${f0.test}` } }]);
    expect(afterEdit).toEqual(fixerReply(run).toolCalls);
    run.push(...step('run_command', { command: `npx vitest run ${f0.test}` }, small.run_command({ command: `npx vitest run ${f0.test}` })));
    run.push(...step('run_command', { command: `npx vitest run ${f1.test}` }, small.run_command({ command: `npx vitest run ${f1.test}` })));
    run.push(...step('read_file', { path: f1.file }, small.read_file({ path: f1.file })));
    const beforeEdit = fixerReply([SYSTEM, user(fixerReply([...run, user(SUMMARY_PROMPT)]).text!)]).toolCalls;
    expect(beforeEdit).toEqual([{ name: 'edit_file', input: { path: f1.file, line: f1.line, token: small.tokenAt(f1.file, f1.line) } }]);
    expect(beforeEdit).toEqual(fixerReply(run).toolCalls);
  });

  it('honest: what fell out of the budget is produced again', () => {
    // the fourth failing test is next, but its error and its file are older than the newest 10 and 15
    const open = failures[3]!;
    expect(fixerReply(messages).toolCalls).toEqual([{ name: 'edit_file', input: { path: open.file, line: open.line, token: tools.tokenAt(open.file, open.line) } }]);
    expect(fixerReply([SYSTEM, user(summarize(SUMMARY_PROMPT).text!)]).toolCalls).toEqual([{ name: 'run_command', input: { command: `npx vitest run ${open.test}` } }]);
  });

  it('lossy: the task and three paths, no errors, tokens or test statuses', () => {
    const text = summarize(SUMMARY_PROMPT, 'lossy').text!;
    expect(text).toContain(`## Objective\n- ${FIXER_TASK}\n`);
    expect(relevantFiles(text)).toHaveLength(3);
    expect(text).not.toMatch(/tok_[0-9a-f]{6}|\bFAIL\b|\bPASS\b|Error|edit applied|Suite:|:\d+\b/);
    const tokens = countText(text);
    expect(tokens).toBeGreaterThan(150);
    expect(tokens).toBeLessThan(400);
    // what it leaves the agent: the task, so it starts over with the suite
    expect(fixerReply([SYSTEM, user(text)]).toolCalls).toEqual([{ name: 'run_command', input: { command: 'npm test' } }]);
  });

  it('leaves the summary instruction out of the facts', () => {
    const instruction = `${SUMMARY_PROMPT}\n\nFor example: FAIL test/zz.test.ts and \`src/zz.ts:3\` reads \`tok_ffffff\`; Fix every failing test in zz.`;
    const text = fixerReply([SYSTEM, user('Hello.'), user(instruction)]).text!;
    expect(text).not.toContain('zz');
    expect(text).toContain('## Objective\n- No task was stated in the conversation\n');
  });
});

describe('the fixer knows nothing of this middleware', () => {
  it('has no checkpoint tags, record labels or turn counters in its source', () => {
    const source = readFileSync(new URL('../support/provider-server/fixer.ts', import.meta.url), 'utf8');
    for (const marker of ['conversation-checkpoint', 'recent-context', '<summary>', 'Tool calls in the current turn', '[Tool result]', '[Assistant', '[User]', 'earlier steps of this turn', 'Identifiers (kept verbatim)']) {
      expect(source).not.toContain(marker);
    }
  });
});
