// The scripted agent of the continuity benchmark ("fixer"): it fixes the failing tests of the
// project of fixer-project.ts, and it knows only what its prompt shows.
//
// It reads the prompt as plain text (every message of every role: text, tool calls, tool results,
// summaries wherever they stand) and finds facts in it with the regular expressions below, the
// same ones wherever a fact appears: in a tool output, in the user's words, in an assistant's text
// or in a summary it wrote itself. It knows nothing of how a prompt was compacted: no tag, wrapper
// or record format of any middleware is parsed or special-cased, so every strategy is read the
// same way, and a fact a strategy dropped is simply unknown (and produced again by the call that
// produces it).
//
// Facts:
// - the task: the user's request `Fix every failing test ...`;
// - `FAIL test/<x>.test.ts` (a failing test) and `PASS test/<x>.test.ts` (a passing one; PASS wins);
// - a failure: `FAIL test/<x>.test.ts > <name>`, then `<Error>: <message>`, then `at src/<f>.ts:<n>`,
//   and a second frame `at src/<g>.ts:<m>` when there is one (on lines of their own in vitest's
//   output, or on one line joined by ` — ` and ` ` in a summary); a `SettingError: expected <key>
//   from config/settings.json ...` names the setting its fix must pass;
// - the token on a line: a line `<n> <token> | <code>` of a read_file listing (it belongs to the
//   newest header `<path> (<n> lines)` before it), or the sentence `` `src/<f>.ts:<n>` reads `<token>` ``;
// - a setting: a line `"<key>": <value>` of a listing of `config/settings.json`, or the sentence
//   `` `config/settings.json` sets `<key>` to `<value>` ``;
// - a rule of the user: `do not edit files under src/<dir>/` (with or without backticks), and
//   `every fix adds a line to CHANGELOG.md naming its test`, any case, wherever they stand (the
//   user's turn, a summary, an edit refused for breaking one);
// - `edit applied: src/<f>.ts:<n>`, and `edit rejected: src/<f>.ts:<n> does not carry <token>`
//   (that token is then not the line's);
// - `Suite: 0 failing, <m> passing` (the whole suite passes).
//
// Policy, one tool call per step:
// 1. no task in the prompt -> a text asking what to do (no tool call);
// 2. the suite is known to pass -> a final text (no tool call);
// 3. no known failing test that is not known to pass -> `npm test`;
// 4. else the first such test (by path): its failure unknown -> `npx vitest run <test>`. Else the
//    line to fix is the failure's first frame, or its second when a known rule freezes the folder
//    of the first. An edit of that line known -> `npx vitest run <test>` again (it prints PASS);
//    the failure names a setting whose value is unknown -> `read_file config/settings.json`; the
//    token on the line unknown -> `read_file`; else `edit_file` with that token, the setting's value
//    when the failure names one, and a changelog line naming the test when that rule is known.
// 5. with the recall tool offered and the start of the conversation out of sight (`fromTheStart`),
//    after `npm run issue-key` refused (the key is shown once) with no key in sight ->
//    `recall` `signing key`, and before an edit with no rule of the user known -> `recall` `rule`
//    (each once while its answer is in sight, and its next pages); then as above with what the
//    answer showed (`lookUp`); without the tool, or when the answer shows no key, the key is
//    rotated (`npm run issue-key -- --rotate`), which undoes the fixes set to the old key. Of an
//    answer it reads only what it asked for (the key, a key revoked, a rule: `askedFor`): the
//    answer is earlier messages, and a test it shows failing failed then.
//
// Summary requests (the last message is a user message whose text starts
// `You MUST summarize the conversation above` or `The previous response did not fill in the required
// summary template`) get the template of the summary request filled from the facts of the prompt,
// the instruction itself left out, newest first. `honest`: the task in the user's words, the
// user's rules, at most 15 files (with the token on a known failing line when known), at most 10
// failures with their frames, the settings read, the tests still failing, the tests that pass, the
// edits of the tests still open, the last suite count. `lossy`: the task, three file paths, nothing
// else. `amnesiac`: the Objective alone (the task).

import type { AgentReply, AgentRequest, AgentScript } from './agent';
import { messageText, type Message } from './conversation';

export type SummaryMode = 'honest' | 'lossy' | 'amnesiac';

export interface FixerOptions {
  /** How the agent writes summaries. @default 'honest' */
  summaries?: SummaryMode;
}

/** The tool a request may offer with which the agent looks up earlier messages word for word. */
export const RECALL_TOOL = 'recall';

/** The task as the benchmark's user states it; the agent recognises any text starting `Fix every failing test`. */
export const FIXER_TASK = 'Fix every failing test in this repository. `npm test` lists them; each one fails because of a single line under `src/`. Stop when `npm test` passes.';

/** The settings file some fixes take a value from. */
const SETTINGS = 'config/settings.json';

const PATH = String.raw`(?:src|test)\/[\w./-]+?\.ts`;
const LISTED = String.raw`(?:${PATH}|config\/settings\.json)`;
const TEST = String.raw`test\/[\w./-]+?\.test\.ts`;
const SRC = String.raw`src\/[\w./-]+?\.ts`;
const TOKEN = String.raw`tok_[0-9a-f]{6}`;
const KEY = String.raw`key_[0-9a-f]{8}`;
/** The command that issues the test signing key (once; `-- --rotate` issues a new one and revokes the old). */
const KEY_COMMAND = 'npm run issue-key';

const RE = {
  task: /Fix every failing test\b[^\n]*/g,
  fail: new RegExp(String.raw`\bFAIL (${TEST})(?![\w./-])`, 'g'),
  pass: new RegExp(String.raw`\bPASS (${TEST})(?![\w./-])`, 'g'),
  failure: new RegExp(String.raw`\bFAIL (${TEST}) > ([^\n]+?)(?:\n| — )((?:[A-Z]\w*)?Error: [^\n]+?)(?:\n[ \t]*| )at (${SRC}):(\d+)\b(?:(?:\n[ \t]*| )at (${SRC}):(\d+)\b)?`, 'g'),
  setting: /^SettingError: expected (\w+) from config\/settings\.json\b/,
  // a listing's header, or one of its lines (the number right-aligned in 4 columns: a line cut
  // anywhere before its token does not pass for another line)
  listing: new RegExp(String.raw`(?<![\w./-])(${LISTED}) \((\d+) lines\)$|^( {3}\d| {2}\d{2}| \d{3}|\d{4,}) (${TOKEN}) \|(.*)$`, 'gm'),
  reads: new RegExp(String.raw`\`?(${SRC}):(\d+)\`? reads \`?(${TOKEN})\b`, 'g'),
  /** A line of config/settings.json: `"key": value,`. */
  settingLine: /^\s*"(\w+)": "?([^",\s]+)"?,?\s*$/,
  settingSentence: /`?config\/settings\.json`? sets `(\w+)` to `([^`\s]+)`/g,
  frozen: /\bdo not edit files under `?(src\/(?:[\w.-]+\/)*[\w.-]+)\/?`?/gi,
  changelog: /\bevery fix adds a line to `?CHANGELOG\.md`? naming its test\b/gi,
  applied: new RegExp(String.raw`\bedit applied: (${SRC}):(\d+)\b`, 'g'),
  rejected: new RegExp(String.raw`\bedit rejected: (${SRC}):(\d+) does not carry (${TOKEN})\b`, 'g'),
  suite: /\bSuite: (\d+) failing, (\d+) passing\b[^\n]*/g,
  /** A line of a suite's listing (or of a summary's list) naming one failing test alone. */
  listed: new RegExp(String.raw`^(?:- )?FAIL (${TEST})[ \t]*$`, 'gm'),
  signedError: /^KeyError: expected the test signing key\b/,
  signingKey: new RegExp(String.raw`\bsigning key \`?(${KEY})\b`, 'g'),
  /** A key said revoked: by the rotation that revoked it, or by an edit rejected for carrying it. */
  revokedKey: new RegExp(String.raw`\bkey \`?(${KEY})\`? is revoked\b|\bsigning key from \`?npm run issue-key\`?, and (${KEY}) is not it\b`, 'g'),
  keyRefused: /\bA test signing key was already issued\b/g,
  /** The lines a revoked key undid: `<src>:<n> (<test>)`, after the sentence that says so. */
  undone: /\bLines set to it fail again until set to the new one: ([^\n]*)/g,
  undoneLine: new RegExp(String.raw`(${SRC}):(\d+) \((${TEST})\)`, 'g'),
  path: new RegExp(String.raw`(?<![\w./-])(${PATH})(?![\w-])`, 'g'),
};

const SUMMARY_INSTRUCTION = /^\s*(?:You MUST summarize the conversation above|The previous response did not fill in the required summary template)/;

export interface FailureFact {
  test: string;
  name: string;
  error: string;
  file: string;
  line: number;
  /** The second frame of the stack, when the output shows one. */
  caller?: { file: string; line: number };
  /** The setting of config/settings.json a `SettingError` names. */
  setting?: string;
  /** The failure needs the test signing key (a `KeyError`). */
  signed?: true;
  /** Position in the prompt text of its newest mention. */
  at: number;
  /** Position of its newest mention as a run prints it (its lines apart, not joined as a summary joins them). */
  ranAt: number;
}

/** What the prompt text shows. Positions (`at`) are of the newest mention; a larger one is newer. */
export interface FixerFacts {
  /** The newest statement of the task, from `Fix every failing test` to the end of its line. */
  task: string | undefined;
  failing: Map<string, number>;
  passed: Map<string, number>;
  failures: Map<string, FailureFact>;
  /** `file:line` -> the newest token seen on that line that no rejection refuted. */
  tokens: Map<string, { token: string; at: number }>;
  edits: Map<string, number>;
  files: Map<string, number>;
  /** The newest suite count. */
  suite: { text: string; failing: number; at: number } | undefined;
  /** The user's rules seen: folders not to edit (`src/legacy/`), and whether every fix names its test in CHANGELOG.md. */
  rules: { frozen: Map<string, number>; changelog: number | undefined };
  /** Settings of config/settings.json seen: key -> value. */
  settings: Map<string, { value: string; at: number }>;
  /** Tests a suite's listing (or a summary's list) names failing, alone on a line: newest position. */
  listed: Map<string, number>;
  /** The newest test signing key seen that nothing said was revoked. */
  key: { value: string; at: number } | undefined;
  /** The newest refusal of `npm run issue-key` (a key was issued before, and is shown once). */
  keyRefused: number | undefined;
  /** Fixes a revoked key undid: test -> the line and the position of the sentence. */
  undone: Map<string, { loc: string; at: number }>;
}

function newest<K>(map: Map<K, number>, key: K, at: number): void {
  if ((map.get(key) ?? -1) < at) map.set(key, at);
}

/** The facts a text shows. */
export function readFacts(text: string): FixerFacts {
  const facts: FixerFacts = {
    task: undefined,
    failing: new Map(),
    passed: new Map(),
    failures: new Map(),
    tokens: new Map(),
    edits: new Map(),
    files: new Map(),
    suite: undefined,
    rules: { frozen: new Map(), changelog: undefined },
    settings: new Map(),
    listed: new Map(),
    key: undefined,
    keyRefused: undefined,
    undone: new Map(),
  };
  for (const m of text.matchAll(RE.task)) facts.task = m[0].trim();
  for (const m of text.matchAll(RE.fail)) newest(facts.failing, m[1]!, m.index);
  for (const m of text.matchAll(RE.pass)) newest(facts.passed, m[1]!, m.index);
  for (const m of text.matchAll(RE.failure)) {
    const error = m[3]!.trim();
    const setting = RE.setting.exec(error)?.[1];
    const ran = m[0].includes('\n') ? m.index : -1;
    const fact: FailureFact = {
      test: m[1]!,
      name: m[2]!.trim(),
      error,
      file: m[4]!,
      line: Number(m[5]),
      ...(m[6] === undefined ? {} : { caller: { file: m[6], line: Number(m[7]) } }),
      ...(setting === undefined ? {} : { setting }),
      ...(RE.signedError.test(error) ? { signed: true as const } : {}),
      at: m.index,
      ranAt: Math.max(ran, facts.failures.get(m[1]!)?.ranAt ?? -1),
    };
    facts.failures.set(fact.test, fact);
  }
  const rejected = new Set<string>();
  for (const m of text.matchAll(RE.rejected)) rejected.add(`${m[1]}:${m[2]} ${m[3]}`);
  const seeToken = (loc: string, token: string, at: number) => {
    if (rejected.has(`${loc} ${token}`)) return;
    if ((facts.tokens.get(loc)?.at ?? -1) < at) facts.tokens.set(loc, { token, at });
  };
  const seeSetting = (key: string, value: string, at: number) => {
    if ((facts.settings.get(key)?.at ?? -1) < at) facts.settings.set(key, { value, at });
  };
  // a listing line belongs to the newest header before it, when it is within that file's length
  let listing: { path: string; lines: number } | undefined;
  for (const m of text.matchAll(RE.listing)) {
    if (m[1] !== undefined) listing = { path: m[1], lines: Number(m[2]) };
    else if (listing !== undefined && Number(m[3]) <= listing.lines) {
      if (listing.path !== SETTINGS) seeToken(`${listing.path}:${Number(m[3])}`, m[4]!, m.index);
      else {
        const setting = RE.settingLine.exec(m[5]!);
        if (setting) seeSetting(setting[1]!, setting[2]!, m.index);
      }
    }
  }
  for (const m of text.matchAll(RE.reads)) seeToken(`${m[1]}:${Number(m[2])}`, m[3]!, m.index);
  for (const m of text.matchAll(RE.settingSentence)) seeSetting(m[1]!, m[2]!, m.index);
  for (const m of text.matchAll(RE.frozen)) newest(facts.rules.frozen, `${m[1]}/`, m.index);
  for (const m of text.matchAll(RE.changelog)) facts.rules.changelog = Math.max(facts.rules.changelog ?? -1, m.index);
  for (const m of text.matchAll(RE.applied)) newest(facts.edits, `${m[1]}:${Number(m[2])}`, m.index);
  for (const m of text.matchAll(RE.path)) newest(facts.files, m[1]!, m.index);
  for (const m of text.matchAll(RE.suite)) facts.suite = { text: m[0].trim(), failing: Number(m[1]), at: m.index };
  for (const m of text.matchAll(RE.listed)) newest(facts.listed, m[1]!, m.index);
  const revoked = new Set([...text.matchAll(RE.revokedKey)].map((m) => m[1] ?? m[2]!));
  for (const m of text.matchAll(RE.signingKey)) if (!revoked.has(m[1]!)) facts.key = { value: m[1]!, at: m.index };
  for (const m of text.matchAll(RE.keyRefused)) facts.keyRefused = m.index;
  for (const m of text.matchAll(RE.undone)) {
    for (const line of m[1]!.matchAll(RE.undoneLine)) facts.undone.set(line[3]!, { loc: `${line[1]}:${Number(line[2])}`, at: m.index });
  }
  return facts;
}

/** Whether a text is a summary instruction (its first line). */
export function isSummaryInstruction(text: string): boolean {
  return SUMMARY_INSTRUCTION.test(text);
}

/** Whether the request asks for a summary: its last message is a user message whose text is a summary instruction. */
export function isSummaryRequestFor(messages: Message[]): boolean {
  const last = messages[messages.length - 1];
  return last?.role === 'user' && last.parts.some((part) => part.type === 'text' && isSummaryInstruction(part.text));
}

/** All text of the prompt, every role, in order; summary instructions left out, and of the recall tool's answers only what the agent asked them for (`askedFor`). */
export function promptText(messages: Message[]): string {
  const lookups = new Set(messages.flatMap((message) => message.parts.flatMap((part) => (part.type === 'tool-call' && part.name === RECALL_TOOL ? [part.id] : []))));
  return messages
    .map((message) =>
      messageText({
        ...message,
        parts: message.parts
          .filter((part) => !(part.type === 'text' && isSummaryInstruction(part.text)))
          .map((part) => (part.type === 'tool-result' && lookups.has(part.id) ? { ...part, text: askedFor(part.text) } : part)),
      }),
    )
    .filter((text) => text.length > 0)
    .join('\n\n');
}

/**
 * What the agent takes from an answer of the recall tool: the lines that hold what it looks up
 * (a signing key, a key said revoked, a rule of the user), nothing else. An answer is earlier
 * messages, word for word: a test it shows failing failed then, and a model that asked for the key
 * reads the key, not the state of the suite, from it.
 */
export function askedFor(answer: string): string {
  const wanted = [RE.signingKey, RE.revokedKey, RE.frozen, RE.changelog];
  return answer
    .split('\n')
    .filter((line) => wanted.some((re) => new RegExp(re.source, re.flags.replace('g', '')).test(line)))
    .join('\n');
}

export type FixerAction =
  | { kind: 'call'; name: 'run_command'; input: { command: string }; text: string }
  | { kind: 'call'; name: 'recall'; input: { query: string; page?: number }; text: string }
  | { kind: 'call'; name: 'read_file'; input: { path: string }; text: string }
  | { kind: 'call'; name: 'edit_file'; input: { path: string; line: number; token: string; value?: string; changelog?: string }; text: string }
  | { kind: 'ask'; text: string }
  | { kind: 'final'; text: string };

/**
 * Failing tests not known to pass, sorted by path: a test seen failing and never passing, or one
 * that a suite's listing, or a revoked key, says fails again after it last passed.
 */
export function openTests(facts: FixerFacts): string[] {
  const tests = new Set([...facts.failing.keys(), ...facts.undone.keys()]);
  const againAt = (test: string) => Math.max(facts.listed.get(test) ?? -1, facts.undone.get(test)?.at ?? -1);
  const open = [...tests].filter((test) => !facts.passed.has(test) || facts.passed.get(test)! < againAt(test)).sort();
  // the fixes a revoked key undid come after the others: the agent finishes the test it is on first
  const undone = (test: string) => facts.passed.has(test) && facts.undone.has(test);
  return [...open.filter((test) => !undone(test)), ...open.filter(undone)];
}

/** A fix a revoked key undid, as the rotation names it: its line, which takes the new key. */
function undoneFailure(facts: FixerFacts, test: string): FailureFact | undefined {
  const undone = facts.undone.get(test);
  if (undone === undefined) return undefined;
  const [file, line] = undone.loc.split(':') as [string, string];
  return { test, name: '', error: 'KeyError: expected the test signing key', file, line: Number(line), signed: true, at: undone.at, ranAt: -1 };
}

/** Whether an edit of `loc` stands: applied, and no run of the test failed nor a revoked key undid it since. */
export function edited(facts: FixerFacts, loc: string, failure: FailureFact): boolean {
  const at = facts.edits.get(loc);
  const undone = facts.undone.get(failure.test);
  return at !== undefined && at > failure.ranAt && !(undone !== undefined && undone.loc === loc && undone.at > at);
}

/** The line a failure is fixed at: its first frame, or its second when a known rule freezes the folder of the first. */
export function fixLocation(failure: FailureFact, facts: FixerFacts): { file: string; line: number } {
  const frozen = [...facts.rules.frozen.keys()].some((dir) => failure.file.startsWith(dir));
  return frozen && failure.caller !== undefined ? failure.caller : { file: failure.file, line: failure.line };
}

/** The next action, from the facts alone. */
export function decide(facts: FixerFacts): FixerAction {
  if (facts.task === undefined) return { kind: 'ask', text: "I don't see a task in this conversation. What would you like me to do?" };
  if (facts.suite !== undefined && facts.suite.failing === 0) {
    return { kind: 'final', text: `Done: every test passes (\`npm test\`: ${facts.suite.text}). The fixes are uncommitted one-line edits.` };
  }
  const open = openTests(facts);
  const run = (command: string, text: string): FixerAction => ({ kind: 'call', name: 'run_command', input: { command }, text });
  if (open.length === 0) return run('npm test', 'Running the whole suite.');
  const test = open[0]!;
  const failure = facts.failures.get(test) ?? undoneFailure(facts, test);
  if (failure === undefined) return run(`npx vitest run ${test}`, `Running \`${test}\` on its own for its error.`);
  const target = fixLocation(failure, facts);
  const loc = `${target.file}:${target.line}`;
  if (edited(facts, loc, failure)) return run(`npx vitest run ${test}`, `Re-running \`${test}\` after the edit.`);
  const setting = failure.setting === undefined ? undefined : facts.settings.get(failure.setting);
  if (failure.setting !== undefined && setting === undefined) {
    return { kind: 'call', name: 'read_file', input: { path: SETTINGS }, text: `Reading \`${SETTINGS}\` for \`${failure.setting}\`.` };
  }
  // the signing key is shown once: asked again, the command refuses, and only a new key (revoking the old) goes on
  if (failure.signed === true && facts.key === undefined) {
    return facts.keyRefused === undefined
      ? run(KEY_COMMAND, 'Issuing the test signing key.')
      : run(`${KEY_COMMAND} -- --rotate`, 'The signing key is shown once and I no longer have it: issuing a new one.');
  }
  // an applied edit gives the line a new token: a token read before it is gone
  const seen = facts.tokens.get(loc);
  const token = seen !== undefined && seen.at > (facts.edits.get(loc) ?? -1) ? seen : undefined;
  if (token === undefined) return { kind: 'call', name: 'read_file', input: { path: target.file }, text: `Reading \`${target.file}\` for line ${target.line}.` };
  return {
    kind: 'call',
    name: 'edit_file',
    input: {
      path: target.file,
      line: target.line,
      token: token.token,
      ...(setting === undefined ? {} : { value: setting.value }),
      ...(failure.signed === true && facts.key !== undefined ? { value: facts.key.value } : {}),
      ...(facts.rules.changelog === undefined ? {} : { changelog: `${test}: fixed ${loc}` }),
    },
    text: `Fixing line ${target.line} of \`${target.file}\`.`,
  };
}

// ---------------------------------------------------------------------------------------------
// looking up what the prompt lacks

/**
 * Whether the prompt shows the conversation from its start: the task as the first user message,
 * answered by the agent's own first `npm test`. When it does not (something stands in for the
 * start: a summary, a trimmed window), a fact the agent needs and does not see may have been seen
 * before, and the recall tool may find it.
 */
export function fromTheStart(messages: Message[]): boolean {
  const first = messages.findIndex((message) => message.role === 'user');
  if (first < 0 || !/^Fix every failing test\b/.test(messageText(messages[first]!).trim())) return false;
  const next = messages[first + 1];
  return next === undefined || next.role === 'assistant' && next.parts.some((part) => part.type === 'tool-call' && part.name === 'run_command' && /"npm test"/.test(part.args));
}

/** The pages of one query the agent reads at most: the first, and the next one when the first names it. */
export const LOOKUP_PAGES = 2;

/** The pages of earlier answers to `query` the prompt shows: the call's pages asked, and the next page the newest answer names. */
function asked(messages: Message[], query: string): { pages: Set<number>; next: number | undefined } {
  const pages = new Set<number>();
  let next: number | undefined;
  const ids = new Map<string, number>();
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type === 'tool-call' && part.name === RECALL_TOOL) {
        try {
          const input = JSON.parse(part.args) as { query?: unknown; page?: unknown };
          if (input.query === query) {
            const page = typeof input.page === 'number' ? input.page : 1;
            pages.add(page);
            ids.set(part.id, page);
          }
        } catch {
          // not a call the agent made
        }
      } else if (part.type === 'tool-result' && ids.has(part.id)) {
        const named = /\(next: page (\d+)\)/.exec(part.text);
        next = named === null ? undefined : Number(named[1]);
      }
    }
  }
  return { pages, next };
}

/**
 * With the recall tool offered and the start of the conversation out of sight, the agent asks it
 * for a fact it needs and does not see before producing that fact again, with the words it has: for
 * the test signing key, after the command that shows it once refused, `signing key`; for the
 * user's rules, before an edit when it knows none, `rule`. (The failing tests, a setting, a line's
 * token or a test's failure it produces again: one call gives it exactly, as a lookup would.) Each query once (and its next pages) while its answer is in sight; what the answer
 * does not give, it produces as before.
 */
export function lookUp(messages: Message[], facts: FixerFacts, action: FixerAction, offered: readonly string[]): FixerAction {
  if (action.kind !== 'call' || !offered.includes(RECALL_TOOL) || fromTheStart(messages)) return action;
  const query = (() => {
    // the key is shown once: refused (it was issued, and the prompt no longer shows it), look it up before revoking it
    if (action.name === 'run_command' && action.input.command === `${KEY_COMMAND} -- --rotate`) return 'signing key';
    if (action.name === 'edit_file' && facts.rules.frozen.size === 0 && facts.rules.changelog === undefined) return 'rule';
    return undefined;
  })();
  if (query === undefined) return action;
  const { pages, next } = asked(messages, query);
  const page = pages.size === 0 ? 1 : next !== undefined && next <= LOOKUP_PAGES && !pages.has(next) ? next : undefined;
  if (page === undefined) return action;
  return { kind: 'call', name: RECALL_TOOL, input: page === 1 ? { query } : { query, page }, text: `Looking up \`${query}\` in the earlier messages.` };
}

// ---------------------------------------------------------------------------------------------
// summaries

export const SUMMARY_LIMITS = { files: 15, failures: 10, lossyFiles: 3 } as const;

const byNewest = <K>(map: Map<K, number>): K[] => [...map].sort((a, b) => b[1] - a[1]).map(([key]) => key);
const bullets = (items: string[], none = '- None') => (items.length > 0 ? items.map((item) => `- ${item}`) : [none]);
const frames = (f: FailureFact) => [`${f.file}:${f.line}`, ...(f.caller ? [`${f.caller.file}:${f.caller.line}`] : [])];

function nextMove(facts: FixerFacts): string {
  const action = decide(facts);
  if (action.kind !== 'call') return action.kind === 'final' ? 'Report that every test passes' : 'Ask the user what to do';
  if (action.name === 'run_command') return `Run \`${action.input.command}\``;
  if (action.name === 'recall') return `Look up \`${action.input.query}\``;
  if (action.name === 'read_file') return `Read \`${action.input.path}\``;
  return `Edit line ${action.input.line} of \`${action.input.path}\``;
}

/** The user's rules as a summary states them, in the user's words. */
function ruleLines(facts: FixerFacts): string[] {
  return [
    ...byNewest(facts.rules.frozen).map((dir) => `Do not edit files under \`${dir}\` (the user's rule): fix a failure that throws there in its caller, the next frame`),
    ...(facts.rules.changelog === undefined ? [] : ["Every fix adds a line to CHANGELOG.md naming its test (the user's rule; edit_file's `changelog`)"]),
  ];
}

/** The summary an honest summarizer writes of these facts. */
export function honestSummary(facts: FixerFacts): string {
  const failures = [...facts.failures.values()].sort((a, b) => b.at - a.at);
  const open = openTests(facts);
  const files = byNewest(facts.files)
    .slice(0, SUMMARY_LIMITS.files)
    .map((path) => {
      // a token an applied edit replaced since is not the line's any more
      const current = (loc: string) => facts.tokens.has(loc) && facts.tokens.get(loc)!.at > (facts.edits.get(loc) ?? -1);
      const lines = failures
        .flatMap(frames)
        .filter((loc) => loc.startsWith(`${path}:`) && current(loc))
        .map((loc) => `\`${loc}\` reads \`${facts.tokens.get(loc)!.token}\``);
      if (lines.length > 0) return `\`${path}\`: ${[...new Set(lines)].join('; ')}`;
      const failing = failures.find((f) => frames(f).some((loc) => loc.startsWith(`${path}:`)));
      if (failing) return `\`${path}\`: the line behind \`${failing.test}\` (line ${frames(failing).find((loc) => loc.startsWith(`${path}:`))!.split(':')[1]})`;
      return `\`${path}\`: ${path.startsWith('test/') ? 'test file' : 'source file'}`;
    });
  // the edits that still matter: those of tests not known to pass
  const openLocs = new Set(open.flatMap((test) => (facts.failures.has(test) ? frames(facts.failures.get(test)!) : [])));
  const rules = ruleLines(facts);
  return [
    '## Objective',
    `- ${facts.task ?? 'No task was stated in the conversation'}`,
    '',
    '## Requirements',
    ...(facts.task ? ["- The request above is still open, in the user's words"] : ['- None stated']),
    ...rules.map((rule) => `- ${rule}`),
    '',
    '## Decisions',
    '- One failing test at a time: run it alone for its error, read the line it names, edit that line, run it again',
    '',
    '## Work State',
    '',
    '### Completed',
    ...bullets([
      ...byNewest(facts.passed).filter((test) => !open.includes(test)).map((test) => `PASS ${test}`),
      ...byNewest(facts.edits).filter((loc) => openLocs.has(loc) && open.some((test) => facts.failures.has(test) && edited(facts, loc, facts.failures.get(test)!))).map((loc) => `edit applied: ${loc} (uncommitted)`),
    ]),
    '',
    '### Active',
    ...bullets(open.map((test) => `FAIL ${test}`)),
    '',
    '### Blocked',
    '- None',
    '',
    '## Next Move',
    `1. ${nextMove(facts)}`,
    '2. Then the next failing test, until `npm test` passes',
    '',
    '## Relevant Files',
    ...bullets(files),
    '',
    '## Important Context',
    ...bullets([
      ...[...facts.settings].sort((a, b) => b[1].at - a[1].at).map(([key, { value }]) => `\`${SETTINGS}\` sets \`${key}\` to \`${value}\``),
      ...(facts.key === undefined ? [] : [`\`${KEY_COMMAND}\` issued the test signing key \`${facts.key.value}\` (it is shown once)`]),
      ...failures.slice(0, SUMMARY_LIMITS.failures).map((f) => `FAIL ${f.test} > ${f.name} — ${f.error} at ${frames(f).join(' at ')}`),
      ...(facts.suite ? [`Last \`npm test\`: ${facts.suite.text}`] : []),
    ]),
  ].join('\n');
}

/** The summary a careless summarizer writes: the task and three paths. */
export function lossySummary(facts: FixerFacts): string {
  return [
    '## Objective',
    `- ${facts.task ?? 'No task was stated in the conversation'}`,
    '',
    '## Requirements',
    '- Keep the changes small',
    '',
    '## Decisions',
    '- Work through the test failures one by one, checking the code each one points to',
    '',
    '## Work State',
    '',
    '### Completed',
    '- Ran the test suite and looked at several of the failures; some of them have been addressed',
    '',
    '### Active',
    '- Continuing with the remaining failures',
    '',
    '### Blocked',
    '- None',
    '',
    '## Next Move',
    '1. Pick up the remaining failures and fix them',
    '2. Run the whole suite again at the end',
    '',
    '## Relevant Files',
    ...bullets(byNewest(facts.files).slice(0, SUMMARY_LIMITS.lossyFiles).map((path) => `\`${path}\`: looked at`)),
    '',
    '## Important Context',
    '- The project uses Vitest; the test command is `npm test`',
  ].join('\n');
}

/** The summary of a summarizer that keeps nothing but the task: the Objective alone. */
export function amnesiacSummary(facts: FixerFacts): string {
  return ['## Objective', `- ${facts.task ?? 'No task was stated in the conversation'}`].join('\n');
}

const SUMMARIES: Record<SummaryMode, (facts: FixerFacts) => string> = { honest: honestSummary, lossy: lossySummary, amnesiac: amnesiacSummary };

/** The reply to a request, from its messages alone (and the tools it offers: the recall tool, when it does). */
export function fixerReply(messages: Message[], options: FixerOptions = {}, tools: readonly string[] = []): AgentReply {
  const facts = readFacts(promptText(messages));
  if (isSummaryRequestFor(messages)) return { text: SUMMARIES[options.summaries ?? 'honest'](facts) };
  const action = lookUp(messages, facts, decide(facts), tools);
  if (action.kind !== 'call') return { text: action.text };
  return { text: action.text, toolCalls: [{ name: action.name, input: action.input }] };
}

/** The fixer as the provider server's scripted model: `startProviderServer({ agent: fixerAgent() })`. */
export function fixerAgent(options: FixerOptions = {}): AgentScript {
  return { respond: (request: AgentRequest) => fixerReply(request.messages, options, request.tools) };
}
