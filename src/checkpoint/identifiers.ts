import { stringifyJson, toolOutputText } from '../prompt/parts';
import type { Message, Part } from '../prompt/types';
import { CHARS_PER_TOKEN, IDENTIFIERS_CEILING_DIVISOR, IDENTIFIERS_MAX_TOKENS, IDENTIFIER_LINE_LIMIT } from '../tunables';

/** The heading under which a checkpoint lists the exact identifiers of what it covers (docs/design.md, "Identifiers"). */
export const IDENTIFIERS_HEADING = '## Identifiers (kept verbatim)';

/** Tool input names that hold paths: `path`, `file`, `filePath`, `filename`, `paths`, `targetFile`, `source_path`... */
const PATH_KEY = /^(?:[Pp]aths?|[Ff]iles?|[Ff]ile_?[Pp]aths?|[Ff]ile_?[Nn]ames?)$|[a-z0-9](?:Paths?|Files?|FileName|Filename)$|_(?:paths?|files?|filename)$/;
/** Tool input names that hold commands: `command`, `cmd`, `script`, `shellCommand`... */
const COMMAND_KEY = /^(?:command|commands|cmd|cmds|script|scripts)$|[a-z0-9](?:Command|Cmd|Script)$|_(?:command|cmd|script)$/;
const URL = /\bhttps?:\/\/[^\s<>"'`)\]}]+/g;
const EXTENSIONS =
  'ts|tsx|js|jsx|mjs|cjs|mts|cts|json|jsonc|md|mdx|txt|py|pyi|rb|go|rs|java|kt|kts|scala|c|h|cc|cpp|hpp|cs|php|swift|m|sh|bash|zsh|ps1|yml|yaml|toml|ini|cfg|conf|env|lock|html|htm|css|scss|sass|less|svg|png|jpg|jpeg|gif|webp|pdf|csv|tsv|xml|sql|proto|graphql|gql|vue|svelte|astro|log|dockerfile|tf|lua|ex|exs|erl|hs|ml|dart|zig|nim|r|ipynb|wasm|patch|diff';
/** A path with a known file extension, and its `:line` or `:line:column` when it has one. */
const PATH_TOKEN = new RegExp(
  `(?<![\\w./@-])((?:\\.{1,2}/|/|~/)?(?:[\\w@.-]+/)*[\\w.-]*\\w\\.(?:${EXTENSIONS})(?::\\d+(?::\\d+)?)?)(?![\\w/(-])`,
  'gi',
);
const ERROR_LINE = /(?:\b\w*Error\b|\bFAIL(?:ED)?\b|\bTraceback\b|\bpanic(?:ked)?\b|\b\w*Exception\b|\bfatal:|\bERR!)/;

interface Seen {
  count: number;
  /** 0 for the most recent. */
  rank: number;
}

/**
 * The exact identifiers of `covered` (docs/design.md, "Identifiers"): file paths (tool inputs named
 * like `path`, path-like tokens in messages and tool outputs), URLs, commands run (and each path
 * and URL inside a command, on its own), and the first line of each tool error or error line of an
 * output, cut at 200 characters. Each once, most recent
 * first, followed by the previous checkpoint's list; within `budget` tokens for the whole section
 * (its heading too), the most often and then most recently seen stay.
 */
export function collectIdentifiers(covered: readonly Message[], previous: readonly string[], budget: number, charsPerToken = CHARS_PER_TOKEN, resolved: ReadonlySet<string> = new Set()): string[] {
  const found: string[] = [];
  for (let index = covered.length - 1; index >= 0; index--) {
    const message = covered[index]!;
    if (message.role === 'system') continue;
    const own: string[] = [];
    for (const part of message.content) partIdentifiers(part, own);
    found.push(...own.reverse());
  }
  const seen = new Map<string, Seen>();
  for (const identifier of [...found, ...previous]) {
    if (resolved.has(identifier)) continue;
    const entry = seen.get(identifier);
    if (entry === undefined) seen.set(identifier, { count: 1, rank: seen.size });
    else entry.count++;
  }
  const all = [...seen.keys()];
  const cost = (identifier: string) => identifier.length + 1;
  // The section: its heading, then each identifier on a line of its own.
  const limit = Math.floor(Math.max(0, budget) * charsPerToken) - IDENTIFIERS_HEADING.length;
  if (all.reduce((sum, identifier) => sum + cost(identifier), 0) <= limit) return all;
  const kept = new Set<string>();
  let used = 0;
  const byWeight = [...all].sort((a, b) => seen.get(b)!.count - seen.get(a)!.count || seen.get(a)!.rank - seen.get(b)!.rank);
  for (const identifier of byWeight) {
    if (used + cost(identifier) > limit) continue;
    kept.add(identifier);
    used += cost(identifier);
  }
  return all.filter((identifier) => kept.has(identifier));
}

/**
 * The error lines the newest run of their call no longer prints (docs/design.md, "Identifiers"):
 * for each tool call made more than once in `conversation` (the same tool with the same input), the
 * error lines of its earlier results that its newest result does not hold, unless the newest result
 * of another call holds them. A test that failed and then passed, a build that broke and was fixed:
 * the error no longer stands, and a list that kept it verbatim would say it does.
 */
export function resolvedErrors(conversation: readonly Message[]): Set<string> {
  const calls = new Map<string, string>();
  // Each call's newest result's identifiers, and those of the results before it.
  const newest = new Map<string, string[]>();
  const earlier = new Set<string>();
  for (const message of conversation) {
    if (message.role === 'system') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call' && typeof part.toolCallId === 'string') {
        calls.set(part.toolCallId, `${String(part.toolName)}\u0000${typeof part.input === 'string' ? part.input : stringifyJson(part.input)}`);
      } else if (part.type === 'tool-result' && typeof part.toolCallId === 'string') {
        const call = calls.get(part.toolCallId);
        if (call === undefined) continue;
        for (const line of newest.get(call) ?? []) earlier.add(line);
        const lines: string[] = [];
        partIdentifiers(part, lines);
        newest.set(call, lines);
      }
    }
  }
  const standing = new Set([...newest.values()].flat());
  return new Set([...earlier].filter((line) => !standing.has(line) && ERROR_LINE.test(line)));
}

/** Most the identifier list may take: a twentieth of the ceiling, and at most 2,000 tokens. */
export function identifierBudget(ceiling: number | undefined): number {
  return ceiling === undefined ? IDENTIFIERS_MAX_TOKENS : Math.max(0, Math.min(IDENTIFIERS_MAX_TOKENS, Math.floor(ceiling / IDENTIFIERS_CEILING_DIVISOR)));
}

/** The identifiers of one part, in the order they appear. */
function partIdentifiers(part: Part, out: string[]): void {
  switch (part.type) {
    case 'text':
      if (typeof part.text === 'string') textIdentifiers(part.text, out);
      return;
    case 'tool-call':
      inputIdentifiers(typeof part.input === 'string' ? parseJson(part.input) : part.input, out);
      return;
    case 'tool-result': {
      const output = toolOutputText(part.output);
      if (output.error) {
        const first = output.text.split('\n').find((line) => line.trim() !== '');
        if (first !== undefined) out.push(cutLine(first));
      }
      textIdentifiers(output.text, out, !output.error);
      return;
    }
    default:
      return;
  }
}

function inputIdentifiers(input: unknown, out: string[], key?: string): void {
  if (typeof input === 'string') {
    if (key !== undefined && PATH_KEY.test(key) && input.trim() !== '' && !input.includes('\n')) out.push(input.trim());
    else if (key !== undefined && COMMAND_KEY.test(key) && input.trim() !== '') {
      // The command cut at 200 characters, and each path and URL in all of it, one identifier each:
      // a path past the cut is not lost with the rest of the line.
      out.push(cutLine(input.trim()));
      textIdentifiers(input, out, false);
    }
    else textIdentifiers(input, out, false);
    return;
  }
  if (Array.isArray(input)) {
    for (const item of input) inputIdentifiers(item, out, key);
    return;
  }
  if (typeof input === 'object' && input !== null) {
    for (const [name, value] of Object.entries(input)) inputIdentifiers(value, out, name);
  }
}

/** URLs and path-like tokens of a text, and (in outputs) the lines that report an error. */
function textIdentifiers(text: string, out: string[], errorLines = false): void {
  const urls = text.match(URL) ?? [];
  for (const url of urls) out.push(url.replace(/[.,;:!?]+$/, ''));
  const withoutUrls = urls.length === 0 ? text : text.replace(URL, ' ');
  for (const match of withoutUrls.matchAll(PATH_TOKEN)) out.push(match[1]!);
  if (!errorLines) return;
  for (const line of text.split('\n')) {
    if (ERROR_LINE.test(line)) out.push(cutLine(line.trim()));
  }
}

function cutLine(line: string): string {
  const first = line.split('\n')[0]!.trim();
  if (first.length <= IDENTIFIER_LINE_LIMIT) return first;
  const code = first.charCodeAt(IDENTIFIER_LINE_LIMIT - 1);
  return first.slice(0, code >= 0xd800 && code <= 0xdbff ? IDENTIFIER_LINE_LIMIT - 1 : IDENTIFIER_LINE_LIMIT);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A summary without a `## Identifiers (kept verbatim)` section the model copied: the middleware adds its own. */
export function withoutIdentifiersSection(summary: string): string {
  return withoutSection(summary, IDENTIFIERS_HEADING);
}

/** A summary without the section a model copied from a checkpoint: from the line `opening` up to the next heading. */
export function withoutSection(summary: string, opening: string): string {
  const lines = summary.split('\n');
  const start = lines.findIndex((line) => line.trim() === opening);
  if (start < 0) return summary;
  let end = start + 1;
  while (end < lines.length && !/^#{1,2} /.test(lines[end]!.trim())) end++;
  return [...lines.slice(0, start), ...lines.slice(end)].join('\n').trim();
}

/** The identifiers section as it ends the checkpoint's summary. */
export function identifiersSection(identifiers: readonly string[]): string {
  return identifiers.length === 0 ? '' : `${IDENTIFIERS_HEADING}\n${identifiers.join('\n')}`;
}
