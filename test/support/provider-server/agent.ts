// The scripted model: a deterministic coding agent working on the seeded project (project.ts).
//
// It stands in for a real model, so it knows only what its prompt shows: it reads the prompt as
// text (every message, every role, wherever a fact stands) with the same rules for every way a
// conversation was compacted. It knows no tag, wrapper or record format of any middleware; the
// only conventions it relies on are its own: the tool names it calls (`read_file`, `run_command`,
// `search`) and the line `Tool calls in the current turn: N` that every summary it writes carries.
//
// Policy, given the request's conversation:
// - A summary request (the last message is a user message whose last text starts with `You MUST
//   summarize the conversation above`, asks to `update the existing checkpoint`, or starts with
//   `The previous response did not fill in the required summary template`) gets the filled
//   summary template, never a tool call.
// - Otherwise, with the project tools available: let n be the turn counter (see
//   `toolCallsThisTurn`): the tool results since the last real user message, on top of the newest
//   `Tool calls in the current turn: N` of one of its own summaries when that came later. A user
//   text that carries such a counter is one of its own summaries (context, not a new user turn); a
//   summary instruction is not a user turn either. While n < toolCallsPerTurn it makes plan step n
//   (a pure function of seed and n: run the tests, read the files in the stack traces, search for
//   the symbols, run single test files, then a seeded mix), sometimes two reads at once, often with
//   one short sentence before the call. At the limit it answers with a final text.
// - Without those tools (or with tool choice `none`) it answers with text.

import type { ApiName, Message, Part, ToolChoice } from './conversation';
import { messageText } from './conversation';
import { getProject, type Project } from './project';
import { pick, rng } from './random';

export type SummaryKind = 'first' | 'update' | 'reminder';

export interface AgentRequest {
  api: ApiName;
  model: string;
  messages: Message[];
  /** Names of the function tools the request offers. */
  tools: string[];
  toolChoice: ToolChoice;
  maxOutputTokens: number | undefined;
  /** Set when the request is a summary request. */
  summary: SummaryKind | undefined;
}

export interface AgentReply {
  text?: string;
  toolCalls?: { name: string; input: Record<string, unknown> }[];
  /** Default: `stop` (or tool calls when there are any). `length` and `content-filter` map to each provider's own. */
  finishReason?: 'stop' | 'length' | 'content-filter';
}

export interface AgentScript {
  /** Tool calls per user turn before the final text answer (default 1000). */
  toolCallsPerTurn?: number;
  /** Replaces the summary reply. `requestText` is all text of the request. */
  summaryReply?: (requestText: string, info: { kind: SummaryKind; defaultReply: string }) => string;
  /** Replaces any reply; return `undefined` to fall back to the default policy. */
  respond?: (request: AgentRequest) => AgentReply | undefined;
}

export const PROJECT_TOOLS = ['read_file', 'run_command', 'search'] as const;
type ProjectTool = (typeof PROJECT_TOOLS)[number];

/** The agent's own convention: every summary it writes carries this line. */
export const TURN_COUNTER = /Tool calls in the current turn: (\d+)/g;

// ---------------------------------------------------------------------------------------------
// reading the conversation

const SUMMARIZE = /^\s*You MUST summarize the conversation above/;
const UPDATE = /update the existing checkpoint/i;
const REMINDER = /^\s*The previous response did not fill in the required summary template/;

/** The kind of summary instruction a text is, if it is one. */
function instructionKind(text: string): SummaryKind | undefined {
  if (REMINDER.test(text)) return 'reminder';
  if (SUMMARIZE.test(text)) return UPDATE.test(text) ? 'update' : 'first';
  if (UPDATE.test(text)) return 'update';
  return undefined;
}

function isInstruction(message: Message, part: Part): boolean {
  return message.role === 'user' && part.type === 'text' && instructionKind(part.text) !== undefined;
}

/**
 * The kind of summary request a message is: a user message whose last text is a summary
 * instruction (Anthropic merges consecutive user messages, so the instruction can share a message
 * with the text before it; the last text decides).
 */
export function summaryKindOf(message: Message): SummaryKind | undefined {
  if (message.role !== 'user') return undefined;
  const last = message.parts.filter((part): part is Extract<Part, { type: 'text' }> => part.type === 'text' && part.text.trim().length > 0).at(-1);
  return last ? instructionKind(last.text) : undefined;
}

/** The kind of summary request, when the request's last message is one. */
export function detectSummary(messages: Message[]): SummaryKind | undefined {
  const last = messages[messages.length - 1];
  return last ? summaryKindOf(last) : undefined;
}

/** The newest turn counter in a text (one of the agent's own summaries), if any. */
function counterIn(text: string): number | undefined {
  const last = [...text.matchAll(TURN_COUNTER)].at(-1);
  return last ? Number(last[1]) : undefined;
}

/** A text the user typed: a user text that is neither a summary instruction nor one of the agent's own summaries. */
function isUserWords(message: Message, part: Part): part is Extract<Part, { type: 'text' }> {
  return message.role === 'user' && part.type === 'text' && part.text.trim().length > 0 && !isInstruction(message, part) && counterIn(part.text) === undefined;
}

/**
 * Tool calls made in the current turn: the tool results after the newest of (the last text the
 * user typed, the newest turn counter in any text), plus that counter when it is the newer one.
 */
export function toolCallsThisTurn(messages: Message[]): number {
  let base = 0;
  let since = 0;
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type === 'tool-result') {
        since++;
        continue;
      }
      if (part.type !== 'text' || isInstruction(message, part)) continue;
      const counter = counterIn(part.text);
      if (counter !== undefined) {
        base = counter;
        since = 0;
      } else if (isUserWords(message, part)) {
        base = 0;
        since = 0;
      }
    }
  }
  return base + since;
}

function lastUserText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    for (let j = message.parts.length - 1; j >= 0; j--) {
      const part = message.parts[j]!;
      if (isUserWords(message, part)) return part.text.trim();
    }
  }
  return '';
}

// ---------------------------------------------------------------------------------------------
// the plan

interface Step {
  tool: ProjectTool;
  input: Record<string, unknown>;
  text: string;
}

function focusPlan(project: Project): Step[] {
  const steps: Step[] = [{ tool: 'run_command', input: { command: 'npm test' }, text: "Running the test suite to see what's failing." }];
  for (const f of project.failures) {
    steps.push(
      { tool: 'read_file', input: { path: f.sourceFile }, text: `Reading \`${f.sourceFile}\` to find ${f.hint}.` },
      { tool: 'search', input: { query: f.symbol }, text: `Searching for \`${f.symbol}\` to see every place that depends on it.` },
      { tool: 'read_file', input: { path: f.testFile }, text: `Checking what \`${f.test}\` in \`${f.testFile}\` sets up.` },
      { tool: 'run_command', input: { command: `npx vitest run ${f.testFile}` }, text: `Running \`${f.testFile}\` on its own to get a clean stack trace.` },
    );
  }
  steps.push(
    { tool: 'run_command', input: { command: 'npx tsc --noEmit' }, text: 'Type-checking to see whether the compiler already flags these.' },
    { tool: 'run_command', input: { command: 'git status' }, text: 'Checking what is already modified in the working tree.' },
  );
  return steps;
}

const COMMANDS = ['npm test', 'npm test', 'npm test', 'npx tsc --noEmit', 'git status', 'git diff', 'git log --oneline -n 12', 'npm run lint', 'ls src/server/routes'];

function planAt(seed: number, n: number): Step {
  const project = getProject(seed);
  const focus = focusPlan(project);
  if (n < focus.length) return focus[n]!;
  const random = rng('plan', seed, n);
  if (n % 17 === 0) return { tool: 'run_command', input: { command: 'npm test' }, text: 'Re-running the whole suite to make sure nothing else regressed.' };
  const r = random();
  if (r < 0.45) {
    // mostly the substantial files (routes, services, tests), like an agent chasing a bug
    const big = project.paths.filter((p) => project.files.get(p)!.length >= 2_000);
    const path = pick(random, random() < 0.85 ? big : project.paths);
    const text = pick(random, [`Let me look at \`${path}\`.`, `Opening \`${path}\` next.`, `Checking how \`${path}\` is wired.`, `Reading \`${path}\` for context.`]);
    return { tool: 'read_file', input: { path }, text };
  }
  if (r < 0.7) {
    const query = pick(random, project.searchTerms);
    const text = pick(random, [`Searching for \`${query}\` to find the callers.`, `Looking for other uses of \`${query}\`.`, `Where else is \`${query}\` used?`]);
    return { tool: 'search', input: { query }, text };
  }
  const useTestFile = random() < 0.4;
  const command = useTestFile ? `npx vitest run ${pick(random, project.testFiles)}` : pick(random, COMMANDS);
  const text = pick(random, [`Running \`${command}\`.`, `Checking the output of \`${command}\`.`, `Let me run \`${command}\` again.`]);
  return { tool: 'run_command', input: { command }, text };
}

function stepCalls(seed: number, n: number, limit: number, available: Set<string>, forced: string | undefined): { calls: Step[]; text: string } {
  const toolFor = (step: Step): Step => {
    if (forced !== undefined) {
      if (step.tool === forced) return step;
      for (let k = 1; k < 64; k++) {
        const other = planAt(seed, n + 1000 * k);
        if (other.tool === forced) return other;
      }
      return step;
    }
    if (available.has(step.tool)) return step;
    for (let k = 1; k < 64; k++) {
      const other = planAt(seed, n + 1000 * k);
      if (available.has(other.tool)) return other;
    }
    return step;
  };
  const first = toolFor(planAt(seed, n));
  const calls = [first];
  const random = rng('step', seed, n);
  if (forced === undefined && n + 1 < limit && first.tool === 'read_file') {
    const next = planAt(seed, n + 1);
    if (next.tool === 'read_file' && available.has('read_file') && next.input.path !== first.input.path && random() < 0.5) calls.push(next);
  }
  let text = '';
  if (n === 0 || random() < 0.65) {
    text = calls.length === 2 ? `Reading \`${String(calls[0]!.input.path)}\` and \`${String(calls[1]!.input.path)}\` together.` : first.text;
  }
  return { calls, text };
}

// ---------------------------------------------------------------------------------------------
// texts

function finalText(project: Project, n: number): string {
  const lines = [
    `I've gone through the failing tests (${n} tool calls). What I found:`,
    '',
    ...project.failures.map((f, i) => `${i + 1}. \`${f.testFile}\` — ${f.error}. Fix: ${f.fix}.`),
    '',
    "I haven't changed any files yet; `git status` still shows the uncommitted edits that were there before. Want me to apply these fixes and re-run `npm test`?",
  ];
  return lines.join('\n');
}

function chatText(project: Project, userText: string, seed: number): string {
  if (userText.length === 0) return `How can I help with \`${project.name}\`?`;
  const random = rng('chat', seed, userText);
  const quoted = userText.replace(/\s+/g, ' ').slice(0, 80);
  const f = project.failures;
  const opener = pick(random, ['Here is how I would approach it', "Sure — here's a plan", 'Good question. In short']);
  return [
    `${opener} (“${quoted}${userText.length > 80 ? '…' : ''}”):`,
    '',
    `1. Reproduce with \`npm test\`: ${f.length} tests fail, starting with \`${f[0]!.error}\` at \`${f[0]!.location.file}:${f[0]!.location.line}:${f[0]!.location.col}\`.`,
    `2. ${cap(f[0]!.fix)}.`,
    ...f.slice(1).map((x, i) => `${i + 3}. ${cap(x.fix)}.`),
    `${f.length + 2}. Re-run \`npx tsc --noEmit\` and the suite before committing.`,
  ].join('\n');
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

// ---------------------------------------------------------------------------------------------
// the summary

// The template's headings (the summary instruction shows them); a summary's sections are found
// by them wherever they stand, even after other text on the line.
const HEADING = /(?:^|\s)#{2,3} (Objective|Requirements|Decisions|Work State|Completed|Active|Blocked|Next Move|Relevant Files|Important Context)\s*$/;
const ITEM = /^(?:[-*]|\d+\.)\s/;

/** The items of each heading of the template in a text: the list lines after it; the newest occurrence of a heading wins. */
function sections(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const heading = HEADING.exec(line);
    if (heading) {
      current = [];
      out.set(heading[1]!, current);
      continue;
    }
    if (current === undefined || line.length === 0) continue;
    if (ITEM.test(line)) current.push(line);
    else current = undefined;
  }
  return out;
}

// An error's first line, up to a quote, backtick, backslash or the end of its sentence.
const ERROR = /\b((?:TypeError|RangeError|ReferenceError|SyntaxError|AssertionError|Error): (?:[^\n"\\`.]|\.(?=\S)){3,160})/g;
const LOCATION = /\b((?:src|test)\/[\w./-]+\.(?:ts|tsx|js|mjs)):(\d+):(\d+)/g;
/** A call of one of its own tools written out as text (a transcript, a record, a quoted call). */
const CALL_TEXT = /\b(read_file|run_command|search)\((\{[^\n]*?\})\)/g;

function oneLine(text: string, max = 200): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

function uniq<T>(items: T[]): T[] {
  return [...new Set(items)];
}

/**
 * The filled summary template, from the facts of the whole prompt (the summary instructions left
 * out): previous summaries' sections wherever they stand, calls of its tools as tool calls or as
 * text, errors, locations, test counts and git state from any text, the user's words.
 */
export function summaryReply(seed: number, messages: Message[]): string {
  const project = getProject(seed);
  let cut = messages.findIndex((m) => {
    const k = summaryKindOf(m);
    return k === 'first' || k === 'update';
  });
  if (cut === -1) cut = messages.length - 1;
  // everything before the (first) instruction, and what shares its message with it
  const conversation = messages
    .slice(0, cut + 1)
    .map((m) => ({ ...m, parts: m.parts.filter((p) => !isInstruction(m, p)) }))
    .filter((m) => m.parts.length > 0);

  const users: string[] = [];
  const calls: { name: string; input: Record<string, unknown> }[] = [];
  for (const m of conversation) {
    for (const p of m.parts) {
      if (isUserWords(m, p)) users.push(p.text.trim());
      if (p.type === 'tool-call') calls.push({ name: p.name, input: parseInput(p.args) });
      if (p.type === 'text') for (const c of p.text.matchAll(CALL_TEXT)) calls.push({ name: c[1]!, input: parseInput(c[2]!) });
    }
  }
  const allText = conversation.map(messageText).join('\n\n');
  const previous = sections(allText);

  const errors = uniq([...allText.matchAll(ERROR)].map((m) => m[1]!.trim().replace(/[.,;:]$/, ''))).filter((e) => !e.startsWith('Error: ENOENT'));
  const locations = uniq([...allText.matchAll(LOCATION)].map((m) => `${m[1]}:${m[2]}:${m[3]}`));
  const reads = uniq(calls.filter((c) => c.name === 'read_file').map((c) => String(c.input.path ?? '')).filter(Boolean));
  const commands = uniq(calls.filter((c) => c.name === 'run_command').map((c) => String(c.input.command ?? '')).filter(Boolean));
  const searches = uniq(calls.filter((c) => c.name === 'search').map((c) => String(c.input.query ?? '')).filter(Boolean));
  const seenFailures = project.failures.filter((f) => allText.includes(f.error) || allText.includes(`${f.location.file}:${f.location.line}`) || reads.includes(f.sourceFile));
  // the latest full run: the run with the most tests
  let testLine: string | undefined;
  let testTotal = 0;
  for (const m of allText.matchAll(/Tests\s+(\d+ failed \| \d+ passed \((\d+)\))/g)) {
    if (Number(m[2]) >= testTotal) {
      testTotal = Number(m[2]);
      testLine = m[1];
    }
  }
  const branch = /On branch (\S+)/.exec(allText)?.[1];
  const modified = uniq([...allText.matchAll(/modified:\s+(\S+)/g)].map((m) => m[1]!));
  const turn = toolCallsThisTurn(conversation);

  const prev = (name: string) => previous.get(name) ?? [];
  const objective = prev('Objective')[0]?.replace(/^- /, '') ?? oneLine(users[0] ?? 'Get the failing test suite green.');
  const requirements = uniq([...prev('Requirements').map((l) => l.replace(/^- /, '')), ...users.map((u) => oneLine(u))]).slice(-5);

  const GENERATED = /^(?:Reproduce every failure|Fix failures one at a time|No files edited yet)/;
  const carriedDecisions = prev('Decisions').map((l) => l.replace(/^- /, ''));
  const firstFix = carriedDecisions.find((l) => l.startsWith('Fix failures one at a time')) ?? (errors[0] ? `Fix failures one at a time, starting with \`${errors[0]}\`` : undefined);
  const decisions = uniq([
    ...carriedDecisions.filter((l) => !GENERATED.test(l)),
    ...(commands.some((c) => /test|vitest/.test(c)) || carriedDecisions.some((l) => l.startsWith('Reproduce every failure')) ? ['Reproduce every failure with the test runner before editing code'] : []),
    ...(firstFix ? [firstFix] : []),
    'No files edited yet: only reads, searches and commands so far',
  ]).slice(-4);

  const isFullRun = (c: string) => /^(?:npm (?:run )?test|npx vitest(?: run)?)$/.test(c.trim());
  const completed = uniq([
    ...prev('Completed')
      .map((l) => l.replace(/^- /, ''))
      .filter((l) => !/^(?:Read \d+ files?|Searched for)/.test(l) && !commands.includes(/^Ran `([^`]+)`/.exec(l)?.[1] ?? ''))
      .slice(-3),
    ...commands.slice(-4).map((c) => `Ran \`${c}\`${isFullRun(c) && testLine ? ` (${testLine})` : ''}`),
    ...(reads.length > 0 ? [`Read ${reads.length} file${reads.length === 1 ? '' : 's'}: ${reads.slice(-6).map((r) => `\`${r}\``).join(', ')}${reads.length > 6 ? ` (+${reads.length - 6} more)` : ''}`] : []),
    ...(searches.length > 0 ? [`Searched for ${searches.slice(-4).map((q) => `\`${q}\``).join(', ')}`] : []),
  ]);

  const active = [
    ...(errors[0] ? [`Diagnosing \`${errors[0]}\`${locations[0] ? ` at \`${locations[0]}\`` : ''}`] : ['Exploring the codebase to find the cause of the failures']),
    `Tool calls in the current turn: ${turn}`,
  ];

  const next = seenFailures.length > 0 ? seenFailures.map((f) => cap(f.fix)) : ['Run `npm test` and read the files in the first stack trace'];
  next.push('Re-run `npx vitest run` on the touched test files, then `npm test` and `npx tsc --noEmit`');

  const why = (path: string): string => {
    const loc = locations.find((l) => l.startsWith(`${path}:`));
    const failure = project.failures.find((f) => f.sourceFile === path || f.testFile === path);
    if (failure && failure.testFile === path) return `failing test \`${failure.test}\``;
    if (failure) return `bug behind \`${failure.test}\`${loc ? ` (line ${loc.split(':')[1]})` : ''}`;
    if (loc) return `in a stack trace (line ${loc.split(':')[1]})`;
    if (path.startsWith('test/')) return 'tests, read for context';
    if (path.includes('/routes/')) return 'router, read for context';
    if (path.includes('/services/')) return 'data access, read for context';
    if (path.includes('/middleware/')) return 'middleware, read for context';
    return 'read for context';
  };
  const prevFiles = prev('Relevant Files').map((l) => l.replace(/^- /, ''));
  const filePaths = uniq([...project.failures.flatMap((f) => [f.sourceFile, f.testFile]).filter((p) => allText.includes(p)), ...locations.map((l) => l.split(':')[0]!), ...reads.slice().reverse()]).slice(0, 12);
  const files = filePaths.map((p) => `\`${p}\`: ${why(p)}`);
  for (const line of prevFiles) {
    if (files.length >= 12) break;
    const path = /^`([^`]+)`/.exec(line)?.[1];
    if (path && !filePaths.includes(path)) files.push(line);
  }

  const carriedContext = prev('Important Context').map((l) => l.replace(/^- /, ''));
  const context = uniq([
    ...uniq([...carriedContext.filter((l) => l.startsWith('Error seen: ')), ...errors.map((e) => `Error seen: \`${e}\``)]).slice(0, 4),
    ...carriedContext.filter((l) => !/^(?:Error seen|Last test run|Branch)\b/.test(l)).slice(-2),
    ...(branch ? [`Branch \`${branch}\`; uncommitted changes in ${modified.map((m) => `\`${m}\``).join(', ') || 'the working tree'}`] : []),
    ...(testLine ? [`Last test run: ${testLine}`] : []),
  ]);

  const bullets = (items: string[]) => (items.length > 0 ? items.map((i) => `- ${i}`) : ['- None']);
  return [
    '## Objective',
    `- ${objective}`,
    '',
    '## Requirements',
    ...bullets(requirements),
    '',
    '## Decisions',
    ...bullets(decisions),
    '',
    '## Work State',
    '',
    '### Completed',
    ...bullets(completed),
    '',
    '### Active',
    ...bullets(active),
    '',
    '### Blocked',
    '- None',
    '',
    '## Next Move',
    ...next.map((s, i) => `${i + 1}. ${s}`),
    '',
    '## Relevant Files',
    ...bullets(files),
    '',
    '## Important Context',
    ...bullets(context),
  ].join('\n');
}

function parseInput(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

// ---------------------------------------------------------------------------------------------
// the reply

export function runAgent(seed: number, script: AgentScript, request: AgentRequest): AgentReply {
  const custom = script.respond?.(request);
  if (custom) return custom;
  const project = getProject(seed);

  if (request.summary) {
    const defaultReply = summaryReply(seed, request.messages);
    if (!script.summaryReply) return { text: defaultReply };
    const requestText = request.messages.map(messageText).join('\n\n');
    return { text: script.summaryReply(requestText, { kind: request.summary, defaultReply }) };
  }

  const available = new Set(PROJECT_TOOLS.filter((t) => request.tools.includes(t)));
  const forced = typeof request.toolChoice === 'object' ? request.toolChoice.name : undefined;
  if (request.toolChoice === 'none' || available.size === 0 || (forced !== undefined && !available.has(forced as ProjectTool))) {
    const n = toolCallsThisTurn(request.messages);
    return { text: n > 0 ? finalText(project, n) : chatText(project, lastUserText(request.messages), seed) };
  }

  const limit = script.toolCallsPerTurn ?? 1000;
  const n = toolCallsThisTurn(request.messages);
  if (n >= limit && request.toolChoice !== 'required' && forced === undefined) return { text: finalText(project, n) };

  const { calls, text } = stepCalls(seed, n, Math.max(limit, n + 1), available, forced);
  return { text, toolCalls: calls.map((c) => ({ name: c.tool, input: c.input })) };
}
