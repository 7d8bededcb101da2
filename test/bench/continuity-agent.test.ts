import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUMMARY_PROMPT, REMINDER_PROMPT, UPDATE_PROMPT } from '../../src/checkpoint/prompts';
import {
  amnesiacSummary,
  countText,
  createFixerTools,
  fewestRepeats,
  fewestSteps,
  FIXER_TASK,
  fixerReply,
  fixerTurns,
  getFixerProject,
  honestSummary,
  LEGACY_DIR,
  lossySummary,
  MAX_TEST_FILES,
  promptText,
  readFacts,
  RULE_TEXT,
  SETTINGS_FILE,
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
      for (const { file, line } of [failure, ...(failure.caller ? [failure.caller] : [])]) {
        const lines = project.files.get(file)!;
        expect(lines.length).toBeGreaterThanOrEqual(150);
        expect(lines.length).toBeLessThanOrEqual(300);
        const listing = tools.read_file({ path: file });
        const at = listing.indexOf(`\n${String(line).padStart(4)} ${tools.tokenAt(file, line)} | `);
        expect(at).toBeGreaterThanOrEqual(2_000);
      }
    }
    expect(getFixerProject({ seed: 3, failing: 4, passing: 2 }).failures).toHaveLength(4);
  });

  it('has up to 130 test files, each module a source file and then four more layers', () => {
    expect(MAX_TEST_FILES).toBe(130);
    const large = getFixerProject({ seed: 2, failing: 40, passing: 6 });
    expect(large.tests).toHaveLength(46);
    expect(large.failures).toHaveLength(40);
    expect(large.tests.filter((test) => /-(?:store|rules|format|jobs)\.test\.ts$/.test(test))).toHaveLength(46 - 26);
    expect(() => getFixerProject({ failing: 125, passing: 6 })).toThrow('a fixer project has at most 130 test files');
  });

  it('makes the first failing test, and about one in five of the others, a setting of config/settings.json; one in three from the third on throws in src/legacy/; about one in ten needs the signing key', () => {
    const large = getFixerProject({ seed: 2, failing: 40, passing: 6 });
    const kinds = large.failures.map((f) => (f.caller ? 'L' : f.setting ? 'S' : f.signed ? 'K' : '.')).join('');
    expect(kinds).toBe('S..K.SKSL..K.S...SK.L.SL.S.L.S..SSL.LLLL');
    expect(kinds.slice(0, 2)).not.toContain('L');
    for (const failure of large.failures) {
      if (failure.caller) {
        expect(failure.file.startsWith(LEGACY_DIR)).toBe(true);
        expect(failure.caller.file).toBe(failure.test.replace(/^test\//, 'src/').replace(/\.test\.ts$/, '.ts'));
      } else expect(failure.file).toBe(failure.test.replace(/^test\//, 'src/').replace(/\.test\.ts$/, '.ts'));
      if (failure.setting) expect(failure.error).toMatch(new RegExp(`^SettingError: expected ${failure.setting} from config/settings\\.json, found a hard-coded \\S+$`));
      if (failure.signed) expect(failure.error).toBe('KeyError: expected the test signing key from `npm run issue-key`, found the placeholder key_00000000');
    }
    // every legacy failure has its own line: one edit never fixes two tests
    const legacy = large.failures.filter((f) => f.caller).map((f) => `${f.file}:${f.line}`);
    expect(new Set(legacy).size).toBe(legacy.length);
  });

  it('takes 4 steps a failing test, one read of the settings, one issue of the signing key and 3 more in the shortest run', () => {
    expect(project.failures.some((f) => f.signed)).toBe(true);
    expect(fewestSteps(project)).toBe(1 + 4 * 14 + 1 + 1 + 2);
    expect(fewestRepeats(project)).toBe(15);
    const plain = { ...project, failures: project.failures.filter((f) => f.setting === undefined && f.signed === undefined) };
    expect(fewestSteps(plain)).toBe(1 + 4 * plain.failures.length + 2);
  });

  it('shows the signing key once; a second issue is refused; a rotation issues another and undoes the fixes set to the old one', () => {
    const fresh = createFixerTools({ seed: 3 });
    const signed = fresh.project.failures.filter((f) => f.signed);
    expect(signed.length).toBeGreaterThanOrEqual(2);
    const [a, b] = signed as [(typeof signed)[0], (typeof signed)[0]];
    const token = (f: typeof a) => fresh.tokenAt(f.file, f.line)!;
    expect(fresh.edit_file({ path: a.file, line: a.line, token: token(a) })).toBe(`edit rejected: ${a.file}:${a.line} must take the test signing key from \`npm run issue-key\` (the edit gives no value)`);
    const issued = fresh.run_command({ command: 'npm run issue-key' });
    const key = /Issued the test signing key (key_[0-9a-f]{8}) for this checkout\./.exec(issued)![1]!;
    expect(issued).toContain('It is shown once and cannot be shown again: keep it.');
    expect(fresh.run_command({ command: 'npm run issue-key' })).toContain('A test signing key was already issued for this checkout. It is shown once and cannot be shown again.');
    expect(fresh.run_command({ command: 'npm run issue-key' })).not.toContain(key);
    expect(fresh.edit_file({ path: a.file, line: a.line, token: token(a), value: key })).toBe(`edit applied: ${a.file}:${a.line}`);
    expect(fresh.fixed()).toEqual([a.test]);
    const rotated = fresh.run_command({ command: 'npm run issue-key -- --rotate' });
    const next = /Issued the test signing key (key_[0-9a-f]{8})/.exec(rotated)![1]!;
    expect(next).not.toBe(key);
    expect(rotated).toContain(`The previous key ${key} is revoked. Lines set to it fail again until set to the new one: ${a.file}:${a.line} (${a.test}).`);
    expect(fresh.fixed()).toEqual([]);
    expect(fresh.run_command({ command: 'npm test' })).toContain(`FAIL ${a.test}\n`);
    expect(fresh.edit_file({ path: b.file, line: b.line, token: token(b), value: key })).toMatch(/^edit rejected: .* must take the test signing key from `npm run issue-key`, and key_[0-9a-f]{8} is not it \(a revoked or unknown key\)$/);
    expect(fresh.edit_file({ path: a.file, line: a.line, token: token(a), value: next })).toBe(`edit applied: ${a.file}:${a.line}`);
    expect(fresh.keys).toEqual({ issued: 2, refused: 2, undone: 1 });
  });

  it('has the user give the two rules after the 2nd and 4th fixes, then encouragement every 4th fix, never at the last', () => {
    const turns = fixerTurns(40);
    expect(turns.map((turn) => turn.afterFixed)).toEqual([2, 4, 8, 12, 16, 20, 24, 28, 32, 36]);
    expect(turns[0]).toEqual({
      afterFixed: 2,
      text: 'One rule from now on: do not edit files under `src/legacy/`, it is frozen for the release. When a failure throws inside it, fix its caller instead: the next frame of the stack.',
      rule: { kind: 'frozen', dir: 'src/legacy/' },
    });
    expect(turns[1]).toEqual({ afterFixed: 4, text: 'Another rule from now on: every fix adds a line to CHANGELOG.md naming its test (the `changelog` input of edit_file).', rule: { kind: 'changelog' } });
    expect(turns.slice(2).every((turn) => turn.rule === undefined && turn.text === 'Thanks, that is progress. Carry on, and tell me when `npm test` passes.')).toBe(true);
    expect(fixerTurns(3).map((turn) => turn.afterFixed)).toEqual([2]);
    expect(fixerTurns(8).map((turn) => turn.afterFixed)).toEqual([2, 4]);
    expect(fixerTurns(2)).toEqual([]);
  });

  it('lists the settings in config/settings.json, one a line', () => {
    const listing = tools.read_file({ path: SETTINGS_FILE }).split('\n');
    expect(listing[0]).toBe('config/settings.json (14 lines)');
    expect(listing).toHaveLength(15);
    for (const [key, value] of project.settings) expect(listing.some((line) => line.endsWith(`| ${`  "${key}": ${/^\d+$/.test(value) ? value : `"${value}"`}`}`) || line.endsWith(`| ${`  "${key}": ${/^\d+$/.test(value) ? value : `"${value}"`},`}`))).toBe(true);
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

  const core = (failure: (typeof project.failures)[0]) =>
    `FAIL ${failure.test} > ${failure.name}\n${failure.error}\n  at ${failure.file}:${failure.line}\n${failure.caller ? `  at ${failure.caller.file}:${failure.caller.line}\n` : ''}`;

  it("prints a test's error and location (and its caller's, from src/legacy/) within the first 1,250 characters of thousands", () => {
    for (const failure of project.failures) {
      const output = tools.run_command({ command: `npx vitest run ${failure.test}` });
      expect(output).toContain(core(failure));
      expect(output.indexOf(core(failure)) + core(failure).length).toBeLessThan(1_250);
      expect(output.length).toBeGreaterThan(2_000);
      expect(tools.run_command({ command: `npx vitest run ${failure.test}` })).toBe(output);
    }
    expect(project.failures.some((failure) => failure.caller)).toBe(true);
  });

  it('prints it past the first 1,250 characters with lateFailure, the project otherwise the same', () => {
    const late = createFixerTools({ seed: 3, lateFailure: true });
    expect(late.project.failures).toEqual(project.failures);
    for (const failure of late.project.failures) {
      const output = late.run_command({ command: `npx vitest run ${failure.test}` });
      expect(output.indexOf(core(failure))).toBeGreaterThan(1_250);
    }
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
    expect(fresh.edits).toEqual({ accepted: 0, rejected: 3, violations: 0 });
    expect(fresh.failing()).toContain(failure.test);

    expect(fresh.edit_file({ path: failure.file, line: failure.line, token })).toBe(`edit applied: ${failure.file}:${failure.line}`);
    expect(fresh.failing()).not.toContain(failure.test);
    expect(fresh.fixed()).toEqual([failure.test]);
    expect(fresh.run_command({ command: `npx vitest run ${failure.test}` })).toContain(`PASS ${failure.test}`);
    expect(fresh.run_command({ command: 'npm test' })).toContain(`PASS ${failure.test}\n`);
    // the rewritten line has a new token: the one read before the edit is stale
    expect(fresh.tokenAt(failure.file, failure.line)).not.toBe(token);
    expect(fresh.edit_file({ path: failure.file, line: failure.line, token })).toMatch(/^edit rejected: /);
    expect(fresh.edits).toEqual({ accepted: 1, rejected: 4, violations: 0 });
  });

  it('fixes a setting only with the value config/settings.json gives it', () => {
    const fresh = createFixerTools({ seed: 3 });
    const failure = fresh.project.failures[0]!;
    const key = failure.setting!;
    const value = fresh.project.settings.get(key)!;
    const token = fresh.tokenAt(failure.file, failure.line)!;
    expect(fresh.edit_file({ path: failure.file, line: failure.line, token })).toBe(`edit rejected: ${failure.file}:${failure.line} must take the value of ${key} from config/settings.json (the edit gives no value)`);
    expect(fresh.edit_file({ path: failure.file, line: failure.line, token, value: `${value}0` })).toBe(`edit rejected: ${failure.file}:${failure.line} must take the value of ${key} from config/settings.json, and ${value}0 is not it`);
    expect(fresh.edit_file({ path: failure.file, line: failure.line, token, value })).toBe(`edit applied: ${failure.file}:${failure.line}`);
    expect(fresh.edits).toEqual({ accepted: 1, rejected: 2, violations: 0 });
    expect(fresh.fixed()).toEqual([failure.test]);
  });

  it('refuses an edit under src/legacy/ once that rule is in force, counted as a violation; the caller fixes the test', () => {
    const legacy = project.failures.find((f) => f.caller)!;
    const before = createFixerTools({ seed: 3 });
    expect(before.edit_file({ path: legacy.file, line: legacy.line, token: before.tokenAt(legacy.file, legacy.line)! })).toBe(`edit applied: ${legacy.file}:${legacy.line}`);
    expect(before.fixed()).toEqual([legacy.test]);

    const fresh = createFixerTools({ seed: 3 });
    fresh.impose({ kind: 'frozen', dir: LEGACY_DIR });
    const token = fresh.tokenAt(legacy.file, legacy.line)!;
    expect(fresh.edit_file({ path: legacy.file, line: legacy.line, token })).toBe(
      `edit refused: ${legacy.file}:${legacy.line} breaks a rule the user gave: do not edit files under \`src/legacy/\`. Nothing was changed.`,
    );
    expect(fresh.tokenAt(legacy.file, legacy.line)).toBe(token);
    // a stale token is a rejected edit, not a violation
    expect(fresh.edit_file({ path: legacy.file, line: legacy.line, token: 'tok_000000' })).toMatch(/^edit rejected: /);
    expect(fresh.edits).toEqual({ accepted: 0, rejected: 1, violations: 1 });
    const { file, line } = legacy.caller!;
    expect(fresh.edit_file({ path: file, line, token: fresh.tokenAt(file, line)! })).toBe(`edit applied: ${file}:${line}`);
    expect(fresh.fixed()).toEqual([legacy.test]);
  });

  it('refuses a fix without a changelog line naming its test once that rule is in force, and adds the line to CHANGELOG.md', () => {
    const fresh = createFixerTools({ seed: 3 });
    const failure = fresh.project.failures[1]!;
    const other = fresh.project.failures[2]!;
    const token = fresh.tokenAt(failure.file, failure.line)!;
    fresh.impose({ kind: 'changelog' });
    const refusal = `edit refused: ${failure.file}:${failure.line} breaks a rule the user gave: every fix adds a line to CHANGELOG.md naming its test`;
    expect(fresh.edit_file({ path: failure.file, line: failure.line, token })).toBe(`${refusal} (this edit adds none). Nothing was changed.`);
    expect(fresh.edit_file({ path: failure.file, line: failure.line, token, changelog: `fix ${other.test}` })).toBe(`${refusal} (this edit's changelog line does not name ${failure.test}). Nothing was changed.`);
    expect(fresh.edit_file({ path: failure.file, line: failure.line, token, changelog: `${failure.test}: fixed` })).toBe(`edit applied: ${failure.file}:${failure.line} (and a line added to CHANGELOG.md)`);
    expect(fresh.edits).toEqual({ accepted: 1, rejected: 0, violations: 2 });
    expect(fresh.read_file({ path: 'CHANGELOG.md' }).split('\n').slice(0, 1)).toEqual(['CHANGELOG.md (5 lines)']);
    expect(fresh.read_file({ path: 'CHANGELOG.md' })).toMatch(new RegExp(`\\n   5 tok_[0-9a-f]{6} \\| - ${failure.test.replaceAll('.', '\\.')}: fixed$`));
  });

  it('reports the whole suite passing once every failing line is edited', () => {
    const fresh = createFixerTools({ seed: 3, failing: 2, passing: 1 });
    const key = /signing key (key_[0-9a-f]{8})/.exec(fresh.run_command({ command: 'npm run issue-key' }))![1]!;
    for (const f of fresh.project.failures) fresh.edit_file({ path: f.file, line: f.line, token: fresh.tokenAt(f.file, f.line)!, value: f.setting === undefined ? (f.signed ? key : undefined) : fresh.project.settings.get(f.setting) });
    expect(fresh.run_command({ command: 'npm test' })).toContain('Suite: 0 failing, 3 passing (3 test files)');
  });
});

describe('the fixer policy', () => {
  const tools = createFixerTools({ seed: 5, failing: 3, passing: 1 });
  const [first, second] = tools.project.failures as [(typeof tools.project.failures)[0], (typeof tools.project.failures)[0]];
  const key = first.setting!;
  const value = tools.project.settings.get(key)!;
  const npmTest = step('run_command', { command: 'npm test' }, tools.run_command({ command: 'npm test' }));
  const runFirst = step('run_command', { command: `npx vitest run ${first.test}` }, tools.run_command({ command: `npx vitest run ${first.test}` }));
  const readConfig = step('read_file', { path: SETTINGS_FILE }, tools.read_file({ path: SETTINGS_FILE }));
  const readFirst = step('read_file', { path: first.file }, tools.read_file({ path: first.file }));
  const token = tools.tokenAt(first.file, first.line)!;
  const edit = { name: 'edit_file', input: { path: first.file, line: first.line, token, value } };

  it('has a first failing test that hard-codes a setting, and a second that does not', () => {
    expect(first.error).toMatch(/^SettingError: expected \w+ from config\/settings\.json/);
    expect(second.setting).toBeUndefined();
  });

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

  it("reads config/settings.json when the failure names a setting whose value isn't known, then the file the error names", () => {
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst])).toEqual({ name: 'read_file', input: { path: SETTINGS_FILE } });
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readConfig])).toEqual({ name: 'read_file', input: { path: first.file } });
    // the file first: the setting is still needed before the edit
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readFirst])).toEqual({ name: 'read_file', input: { path: SETTINGS_FILE } });
  });

  it('edits the line with the token it read there and the value of the setting', () => {
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readConfig, ...readFirst])).toEqual(edit);
  });

  it('re-runs the test once the edit is known, then moves to the next failing test', () => {
    const edited = step('edit_file', edit.input, `edit applied: ${first.file}:${first.line}`);
    const base = [SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readConfig, ...readFirst, ...edited];
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
    const wrong = step('edit_file', { ...edit.input, token: 'tok_000000' }, `edit rejected: ${first.file}:${first.line} does not carry tok_000000 (the line changed since it was read, or the token is from another line); read the file again`);
    const prompt = [SYSTEM, user(`${FIXER_TASK} Note: \`${first.file}:${first.line}\` reads \`tok_000000\`.`), ...npmTest, ...runFirst, ...readConfig];
    expect(call(prompt)).toEqual({ ...edit, input: { ...edit.input, token: 'tok_000000' } });
    expect(call([...prompt, ...wrong])).toEqual({ name: 'read_file', input: { path: first.file } });
    expect(call([...prompt, ...wrong, ...readFirst])).toEqual(edit);
  });

  it('reads a listing wherever it starts, and its lines after a gap too, but never a line cut before its token', () => {
    const listing = tools.read_file({ path: first.file });
    const base = [SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readConfig];
    expect(call([...base, said(`Here is the file: ${listing}`)])).toEqual(edit);
    // an excerpt of the first and last parts: the lines after the gap are still of that file
    const lines = listing.split('\n');
    const excerpt = (tail: string[]) => [...lines.slice(0, 20), '[some characters left out]', ...tail].join('\n');
    const at = lines.findIndex((line) => line.includes(` ${token} |`));
    expect(call([...base, ...step('read_file', { path: first.file }, excerpt(lines.slice(at)))])).toEqual(edit);
    // the excerpt starts inside the line: its number is cut, so it could be any line
    const cut = [lines[at]!.trimStart().slice(1), ...lines.slice(at + 1)];
    expect(call([...base, ...step('read_file', { path: first.file }, excerpt(cut))])).toEqual({ name: 'read_file', input: { path: first.file } });
  });

  it("doesn't see a token that a cut tool output left out", () => {
    const cut = step('read_file', { path: first.file }, `${tools.read_file({ path: first.file }).slice(0, 1_250)}\n[truncated]`);
    expect(call([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readConfig, ...cut])).toEqual({ name: 'read_file', input: { path: first.file } });
  });

  it('finds a fact the same wherever it appears: a tool result, the user, the assistant, the system prompt, a summary', () => {
    const failure = `FAIL ${first.test} > ${first.name}\n${first.error}\n  at ${first.file}:${first.line}`;
    const sentence = `FAIL ${first.test} > ${first.name} — ${first.error} at ${first.file}:${first.line}`;
    const reads = `\`${first.file}:${first.line}\` reads \`${token}\`\n\`config/settings.json\` sets \`${key}\` to \`${value}\``;
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
      // a rule, in any case, with or without backticks
      expect(call([SYSTEM, user(FIXER_TASK), ...place(`${sentence}\n${reads}\nEvery fix adds a line to CHANGELOG.md naming its test.`)])).toEqual({ ...edit, input: { ...edit.input, changelog: `${first.test}: fixed ${first.file}:${first.line}` } });
    }
    // a summary the agent wrote, inside whatever wrapper a strategy puts it in
    const summary = honestSummary(readFacts(promptText([SYSTEM, user(FIXER_TASK), ...npmTest, ...runFirst, ...readConfig, ...readFirst])));
    for (const wrapped of [summary, `<memo>\n${summary}\n</memo>`, `Summary of the earlier conversation:\n${summary}`]) {
      expect(call([SYSTEM, user(wrapped)])).toEqual(edit);
      expect(call([SYSTEM, said(wrapped)])).toEqual(edit);
    }
  });
});

describe('the fixer and the rules of the user', () => {
  // seed 7, 3 failing tests: a setting, a plain one, and one that throws in src/legacy/
  const tools = createFixerTools({ seed: 7, failing: 3, passing: 1 });
  const [, , legacy] = tools.project.failures as [(typeof tools.project.failures)[0], (typeof tools.project.failures)[0], (typeof tools.project.failures)[0]];
  const run = step('run_command', { command: `npx vitest run ${legacy.test}` }, tools.run_command({ command: `npx vitest run ${legacy.test}` }));
  const readLegacy = step('read_file', { path: legacy.file }, tools.read_file({ path: legacy.file }));
  const readCaller = step('read_file', { path: legacy.caller!.file }, tools.read_file({ path: legacy.caller!.file }));
  const frozen = `One rule from now on: ${RULE_TEXT.frozen(LEGACY_DIR)}, it is frozen for the release.`;
  const changelog = `Another rule from now on: ${RULE_TEXT.changelog} (the \`changelog\` input of edit_file).`;
  const legacyEdit = { name: 'edit_file', input: { path: legacy.file, line: legacy.line, token: tools.tokenAt(legacy.file, legacy.line) } };
  const callerEdit = { name: 'edit_file', input: { path: legacy.caller!.file, line: legacy.caller!.line, token: tools.tokenAt(legacy.caller!.file, legacy.caller!.line) } };

  it('has a failure that throws in src/legacy/ and names its caller', () => {
    expect(legacy.file.startsWith('src/legacy/')).toBe(true);
    expect(readFacts(promptText(run)).failures.get(legacy.test)).toMatchObject({ file: legacy.file, line: legacy.line, caller: legacy.caller });
  });

  it('fixes the line the error names while it knows no rule, and the caller once it knows src/legacy/ is frozen', () => {
    const open = [SYSTEM, user(FIXER_TASK), said(`FAIL ${legacy.test}`), ...run];
    expect(call(open)).toEqual({ name: 'read_file', input: { path: legacy.file } });
    expect(call([...open, ...readLegacy])).toEqual(legacyEdit);
    expect(call([...open, user(frozen)])).toEqual({ name: 'read_file', input: { path: legacy.caller!.file } });
    expect(call([...open, user(frozen), ...readLegacy, ...readCaller])).toEqual(callerEdit);
  });

  it('learns a rule from the refusal of an edit that broke it, and keeps to it', () => {
    const open = [SYSTEM, user(FIXER_TASK), said(`FAIL ${legacy.test}`), ...run, ...readLegacy];
    const refused = step('edit_file', legacyEdit.input, `edit refused: ${legacy.file}:${legacy.line} breaks a rule the user gave: ${RULE_TEXT.frozen(LEGACY_DIR)}. Nothing was changed.`);
    expect(readFacts(promptText(refused)).rules.frozen).toEqual(new Map([['src/legacy/', expect.any(Number)]]));
    expect(call([...open, ...refused])).toEqual({ name: 'read_file', input: { path: legacy.caller!.file } });
    // a refused edit is not an applied one
    expect(readFacts(promptText(refused)).edits.size).toBe(0);
  });

  it('adds a changelog line naming the test to every fix once it knows that rule', () => {
    const open = [SYSTEM, user(FIXER_TASK), user(frozen), said(`FAIL ${legacy.test}`), ...run, ...readCaller];
    expect(call(open)).toEqual(callerEdit);
    expect(call([...open, user(changelog)])).toEqual({ ...callerEdit, input: { ...callerEdit.input, changelog: `${legacy.test}: fixed ${legacy.caller!.file}:${legacy.caller!.line}` } });
    expect(readFacts(changelog).rules.changelog).toBeDefined();
    expect(readFacts('every fix adds a line to the CHANGELOG naming its test').rules.changelog).toBeUndefined();
  });
});

describe('the fixer summaries', () => {
  const tools = createFixerTools({ seed: 7, failing: 14, passing: 6 });
  const { failures } = tools.project;
  /**
   * A long run: the settings read, the signing key issued, every failing test run and its file
   * read; the first three edited and passing; the user's two rules stated after the second.
   */
  const messages: Message[] = [SYSTEM, user(FIXER_TASK), ...step('run_command', { command: 'npm test' }, tools.run_command({ command: 'npm test' }))];
  messages.push(...step('read_file', { path: SETTINGS_FILE }, tools.read_file({ path: SETTINGS_FILE })));
  const issued = tools.run_command({ command: 'npm run issue-key' });
  const signingKey = /signing key (key_[0-9a-f]{8})/.exec(issued)![1]!;
  messages.push(...step('run_command', { command: 'npm run issue-key' }, issued));
  const valueOf = (f: (typeof failures)[0]) => (f.setting !== undefined ? { value: tools.project.settings.get(f.setting)! } : f.signed ? { value: signingKey } : {});
  for (const [index, f] of failures.entries()) {
    if (index === 2) messages.push(user(fixerTurns(14)[0]!.text), user(fixerTurns(14)[1]!.text));
    messages.push(...step('run_command', { command: `npx vitest run ${f.test}` }, tools.run_command({ command: `npx vitest run ${f.test}` })));
    messages.push(...step('read_file', { path: f.file }, tools.read_file({ path: f.file })));
    if (index < 3) {
      const input = { path: f.file, line: f.line, token: tools.tokenAt(f.file, f.line)!, ...valueOf(f) };
      messages.push(...step('edit_file', input, tools.edit_file(input)));
      messages.push(...step('run_command', { command: `npx vitest run ${f.test}` }, tools.run_command({ command: `npx vitest run ${f.test}` })));
    }
  }
  const summarize = (instruction: string, summaries?: 'honest' | 'lossy' | 'amnesiac') => fixerReply([...messages, user(instruction)], { summaries });
  const section = (text: string, heading: string) => text.split(`${heading}\n`)[1]!.split('\n\n')[0]!.split('\n');
  const relevantFiles = (text: string) => section(text, '## Relevant Files');
  const importantContext = (text: string) => text.split('## Important Context\n')[1]!.split('\n');
  const frames = (f: (typeof failures)[0]) => [`${f.file}:${f.line}`, ...(f.caller ? [`${f.caller.file}:${f.caller.line}`] : [])].join(' at ');

  it('answers a summary request with the template (the amnesiac one with its Objective alone), never a tool call', () => {
    for (const instruction of [SUMMARY_PROMPT, UPDATE_PROMPT, REMINDER_PROMPT]) {
      for (const mode of ['honest', 'lossy', 'amnesiac'] as const) {
        const reply = summarize(instruction, mode);
        expect(reply.toolCalls).toBeUndefined();
        const headings = reply.text!.split('\n').filter((line) => line.startsWith('#'));
        expect(headings).toEqual(
          mode === 'amnesiac' ? ['## Objective'] : ['## Objective', '## Requirements', '## Decisions', '## Work State', '### Completed', '### Active', '### Blocked', '## Next Move', '## Relevant Files', '## Important Context'],
        );
      }
    }
    // an instruction that is not the last message is only text
    expect(fixerReply([...messages, user(SUMMARY_PROMPT), said('ok'), user('go on')]).toolCalls).toBeDefined();
  });

  it("honest: the task and the user's rules in the user's words, the newest 15 files with the tokens of failing lines, the settings, the newest 10 failures, the passes", () => {
    const text = summarize(SUMMARY_PROMPT).text!;
    expect(text).toContain(`## Objective\n- ${FIXER_TASK}\n`);
    expect(section(text, '## Requirements')).toEqual([
      "- The request above is still open, in the user's words",
      "- Do not edit files under `src/legacy/` (the user's rule): fix a failure that throws there in its caller, the next frame",
      "- Every fix adds a line to CHANGELOG.md naming its test (the user's rule; edit_file's `changelog`)",
    ]);
    const files = relevantFiles(text);
    expect(files).toHaveLength(15);
    // newest first: the last file read leads
    const last = failures[failures.length - 1]!;
    expect(files[0]).toBe(`- \`${last.file}\`: \`${last.file}:${last.line}\` reads \`${tools.tokenAt(last.file, last.line)}\``);
    expect(files.filter((line) => / reads `tok_[0-9a-f]{6}`/.test(line)).length).toBeGreaterThanOrEqual(7);
    const context = importantContext(text);
    expect(context.filter((line) => line.startsWith('- `config/settings.json` sets '))).toHaveLength(12);
    for (const [key, value] of tools.project.settings) expect(context).toContain(`- \`config/settings.json\` sets \`${key}\` to \`${value}\``);
    const errors = context.filter((line) => line.startsWith('- FAIL '));
    expect(errors).toHaveLength(10);
    expect(errors[0]).toBe(`- FAIL ${last.test} > ${last.name} — ${last.error} at ${frames(last)}`);
    for (const f of failures.slice(0, 3)) expect(text).toContain(`- PASS ${f.test}\n`);
    // the edits of tests that pass no longer matter
    expect(text).not.toContain('edit applied');
    expect(section(text, '### Active')).toEqual(failures.slice(3).map((f) => `- FAIL ${f.test}`));
    expect(context).toContain(`- \`npm run issue-key\` issued the test signing key \`${signingKey}\` (it is shown once)`);
    const tokens = countText(text);
    expect(tokens).toBeGreaterThan(600);
    expect(tokens).toBeLessThan(2_000);
  });

  it('honest: the agent resumes from the summary alone where it stood, when its facts fit the budget, the rules kept', () => {
    const small = createFixerTools({ seed: 7, failing: 3, passing: 1 });
    const [f0, f1] = small.project.failures as [(typeof failures)[0], (typeof failures)[0]];
    const value = small.project.settings.get(f0.setting!)!;
    const run: Message[] = [SYSTEM, user(FIXER_TASK), ...step('run_command', { command: 'npm test' }, small.run_command({ command: 'npm test' }))];
    run.push(...step('run_command', { command: `npx vitest run ${f0.test}` }, small.run_command({ command: `npx vitest run ${f0.test}` })));
    run.push(...step('read_file', { path: SETTINGS_FILE }, small.read_file({ path: SETTINGS_FILE })));
    run.push(...step('read_file', { path: f0.file }, small.read_file({ path: f0.file })));
    const token = small.tokenAt(f0.file, f0.line)!;
    run.push(...step('edit_file', { path: f0.file, line: f0.line, token, value }, small.edit_file({ path: f0.file, line: f0.line, token, value })));
    const afterEdit = fixerReply([SYSTEM, user(fixerReply([...run, user(SUMMARY_PROMPT)]).text!)]).toolCalls;
    expect(afterEdit).toEqual([{ name: 'run_command', input: { command: `npx vitest run ${f0.test}` } }]);
    expect(afterEdit).toEqual(fixerReply(run).toolCalls);
    run.push(...step('run_command', { command: `npx vitest run ${f0.test}` }, small.run_command({ command: `npx vitest run ${f0.test}` })));
    run.push(user(fixerTurns(14)[1]!.text));
    run.push(...step('run_command', { command: `npx vitest run ${f1.test}` }, small.run_command({ command: `npx vitest run ${f1.test}` })));
    run.push(...step('read_file', { path: f1.file }, small.read_file({ path: f1.file })));
    expect(f1.signed).toBe(true);
    const issued = small.run_command({ command: 'npm run issue-key' });
    run.push(...step('run_command', { command: 'npm run issue-key' }, issued));
    const beforeEdit = fixerReply([SYSTEM, user(fixerReply([...run, user(SUMMARY_PROMPT)]).text!)]).toolCalls;
    expect(beforeEdit).toEqual([
      { name: 'edit_file', input: { path: f1.file, line: f1.line, token: small.tokenAt(f1.file, f1.line), value: /signing key (key_[0-9a-f]{8})/.exec(issued)![1], changelog: `${f1.test}: fixed ${f1.file}:${f1.line}` } },
    ]);
    expect(beforeEdit).toEqual(fixerReply(run).toolCalls);
  });

  it('honest: what fell out of the budget is produced again', () => {
    // the fourth failing test is next, but its error and its file are older than the newest 10 and 15
    const open = failures[3]!;
    expect(open.caller).toBeUndefined();
    expect(fixerReply(messages).toolCalls).toEqual([{ name: 'edit_file', input: { path: open.file, line: open.line, token: tools.tokenAt(open.file, open.line), ...valueOf(open), changelog: `${open.test}: fixed ${open.file}:${open.line}` } }]);
    expect(fixerReply([SYSTEM, user(summarize(SUMMARY_PROMPT).text!)]).toolCalls).toEqual([{ name: 'run_command', input: { command: `npx vitest run ${open.test}` } }]);
  });

  it('lossy: the task and three paths, no errors, tokens, rules, settings or test statuses', () => {
    const text = summarize(SUMMARY_PROMPT, 'lossy').text!;
    expect(text).toContain(`## Objective\n- ${FIXER_TASK}\n`);
    expect(relevantFiles(text)).toHaveLength(3);
    expect(text).not.toMatch(/tok_[0-9a-f]{6}|\bFAIL\b|\bPASS\b|Error|edit applied|Suite:|:\d+\b|do not edit|CHANGELOG|settings\.json/i);
    const tokens = countText(text);
    expect(tokens).toBeGreaterThan(150);
    expect(tokens).toBeLessThan(400);
    // what it leaves the agent: the task, so it starts over with the suite
    expect(fixerReply([SYSTEM, user(text)]).toolCalls).toEqual([{ name: 'run_command', input: { command: 'npm test' } }]);
  });

  it('amnesiac: the Objective alone, the task in the words of the user', () => {
    const text = summarize(SUMMARY_PROMPT, 'amnesiac').text!;
    expect(text).toBe(`## Objective\n- ${FIXER_TASK}`);
    expect(amnesiacSummary(readFacts('Hello.'))).toBe('## Objective\n- No task was stated in the conversation');
    const facts = readFacts(text);
    expect(facts.rules).toEqual({ frozen: new Map(), changelog: undefined });
    expect(facts.settings.size).toBe(0);
    expect(fixerReply([SYSTEM, user(text)]).toolCalls).toEqual([{ name: 'run_command', input: { command: 'npm test' } }]);
  });

  it('leaves the summary instruction out of the facts', () => {
    const instruction = `${SUMMARY_PROMPT}\n\nFor example: FAIL test/zz.test.ts and \`src/zz.ts:3\` reads \`tok_ffffff\`; Fix every failing test in zz; do not edit files under src/zz/.`;
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

describe('the fixer with the recall tool', () => {
  const offered = ['run_command', 'read_file', 'edit_file', 'recall'];
  const reply = (messages: Message[], tools = offered) => fixerReply(messages, {}, tools).toolCalls?.[0];

  it('never asks it while its prompt shows the conversation from the start', () => {
    expect(reply([SYSTEM, user(FIXER_TASK)])).toEqual({ name: 'run_command', input: { command: 'npm test' } });
    const ran = [SYSTEM, user(FIXER_TASK), ...step('run_command', { command: 'npm test' }, 'Suite: 0 failing, 6 passing')];
    expect(reply(ran)?.name).not.toBe('recall');
  });

  // a failing test that needs the signing key, its line read; the key not in sight
  const tools = createFixerTools({ seed: 3 });
  const f = tools.project.failures.find((each) => each.signed)!;
  const issued = tools.run_command({ command: 'npm run issue-key' });
  const key = /signing key (key_[0-9a-f]{8})/.exec(issued)![1]!;
  const lost = [
    SYSTEM,
    user(`Earlier: ${FIXER_TASK}`),
    said('Working on it.'),
    // the user's rules in sight: no lookup of a rule before the edit
    user(fixerTurns(14)[0]!.text),
    user(fixerTurns(14)[1]!.text),
    ...step('run_command', { command: `npx vitest run ${f.test}` }, tools.run_command({ command: `npx vitest run ${f.test}` })),
    ...step('read_file', { path: f.file }, tools.read_file({ path: f.file })),
  ];
  const edit = (value: string) => ({ name: 'edit_file', input: { path: f.file, line: f.line, token: tools.tokenAt(f.file, f.line), value, changelog: `${f.test}: fixed ${f.file}:${f.line}` } });

  it('does not ask it for what one call gives again: the failing tests, a file, a setting, the key never refused', () => {
    expect(reply([SYSTEM, user(`Earlier: ${FIXER_TASK}`), said('Working on it.')])).toEqual({ name: 'run_command', input: { command: 'npm test' } });
    expect(reply(lost)).toEqual({ name: 'run_command', input: { command: 'npm run issue-key' } });
  });

  it('asks it for the signing key once the command refuses to show it again; without the tool, it rotates the key', () => {
    const refused = [...lost, ...step('run_command', { command: 'npm run issue-key' }, tools.run_command({ command: 'npm run issue-key' }))];
    expect(reply(refused)).toEqual({ name: 'recall', input: { query: 'signing key' } });
    expect(reply(refused, offered.slice(0, 3))).toEqual({ name: 'run_command', input: { command: 'npm run issue-key -- --rotate' } });
    // the answer gave nothing: it rotates
    expect(reply([...refused, ...step('recall', { query: 'signing key' }, 'No match (positions 0 to 9).')])).toEqual({ name: 'run_command', input: { command: 'npm run issue-key -- --rotate' } });
    // with the start in sight it never asks
    expect(reply([SYSTEM, user(FIXER_TASK), ...step('run_command', { command: 'npm test' }, tools.run_command({ command: 'npm test' })), ...refused.slice(3)])?.name).toBe('run_command');
  });

  it('acts on what the answer shows', () => {
    const refused = [...lost, ...step('run_command', { command: 'npm run issue-key' }, 'A test signing key was already issued for this checkout. It is shown once and cannot be shown again.')];
    const answer = `Page 1 of 1 (the last page); 1 matches, the best first, from the conversation's positions 0 to 9:\n\n--- #4 tool ---\n${issued}`;
    expect(reply([...refused, ...step('recall', { query: 'signing key' }, answer)])).toEqual(edit(key));
  });

  it('takes from the answer only what it asked for: a test the answer shows failing failed then, and is not opened again', () => {
    const refused = [...lost, ...step('run_command', { command: 'npm run issue-key' }, 'A test signing key was already issued for this checkout. It is shown once and cannot be shown again.')];
    // an earlier failure of a test sorted before this one (fixed since: its PASS out of sight), in the same answer as the key
    const earlier = tools.project.failures.find((each) => each.test < f.test)!;
    const failed = createFixerTools({ seed: 3 }).run_command({ command: `npx vitest run ${earlier.test}` });
    expect(failed).toContain(`FAIL ${earlier.test}`);
    const answer = `Page 1 of 1 (the last page); 2 matches, the best first, from the conversation's positions 0 to 9:\n\n--- #4 tool ---\n${issued}\n\n--- #2 tool ---\n${failed}`;
    expect(reply([...refused, ...step('recall', { query: 'signing key' }, answer)])).toEqual(edit(key));
    // the same text as a tool's own output is what the agent acts on: that test first
    expect(reply([...refused, ...step('run_command', { command: `npx vitest run ${earlier.test}` }, failed)])?.input).not.toEqual(edit(key).input);
  });

  it('makes again the fixes a rotation undid, its own test first, reading each line anew', () => {
    const fresh = createFixerTools({ seed: 3 });
    const [a, b] = fresh.project.failures.filter((each) => each.signed) as [typeof f, typeof f];
    const first = fresh.run_command({ command: 'npm run issue-key' });
    const old = /signing key (key_[0-9a-f]{8})/.exec(first)![1]!;
    const run: Message[] = [SYSTEM, user(`Earlier: ${FIXER_TASK}`), said('Working on it.')];
    run.push(...step('run_command', { command: `npx vitest run ${a.test}` }, fresh.run_command({ command: `npx vitest run ${a.test}` })));
    run.push(...step('read_file', { path: a.file }, fresh.read_file({ path: a.file })));
    const editA = { path: a.file, line: a.line, token: fresh.tokenAt(a.file, a.line)!, value: old };
    run.push(...step('edit_file', editA, fresh.edit_file(editA)));
    run.push(...step('run_command', { command: `npx vitest run ${a.test}` }, fresh.run_command({ command: `npx vitest run ${a.test}` })));
    run.push(...step('run_command', { command: `npx vitest run ${b.test}` }, fresh.run_command({ command: `npx vitest run ${b.test}` })));
    run.push(...step('read_file', { path: b.file }, fresh.read_file({ path: b.file })));
    run.push(...step('run_command', { command: 'npm run issue-key -- --rotate' }, fresh.run_command({ command: 'npm run issue-key -- --rotate' })));
    // the rotation prints the new key
    const next = /signing key (key_[0-9a-f]{8})/.exec(run.at(-1)!.parts[0]!.type === 'tool-result' ? (run.at(-1)!.parts[0] as { text: string }).text : '')![1]!;
    // its own test first
    const editB = { path: b.file, line: b.line, token: fresh.tokenAt(b.file, b.line)!, value: next };
    expect(fixerReply(run).toolCalls).toEqual([{ name: 'edit_file', input: editB }]);
    run.push(...step('edit_file', editB, fresh.edit_file(editB)));
    run.push(...step('run_command', { command: `npx vitest run ${b.test}` }, fresh.run_command({ command: `npx vitest run ${b.test}` })));
    // then the undone fix: its line has a new token since the edit, so it reads the file again
    expect(fixerReply(run).toolCalls).toEqual([{ name: 'read_file', input: { path: a.file } }]);
    run.push(...step('read_file', { path: a.file }, fresh.read_file({ path: a.file })));
    expect(fixerReply(run).toolCalls).toEqual([{ name: 'edit_file', input: { path: a.file, line: a.line, token: fresh.tokenAt(a.file, a.line), value: next } }]);
  });
});
