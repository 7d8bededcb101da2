/**
 * Coding-agent shaped conversations for the benchmarks, deterministic from a seed: a system prompt,
 * user turns (some with a screenshot), assistant text with tool calls (`read_file`, `run_command`,
 * `search`) and tool results with large outputs (source files, stack traces, test logs). Sized by
 * the package's own estimate (4 characters a token, an image 1,500 tokens).
 */
import type {
  LanguageModelV3FilePart,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
} from '@ai-sdk/provider';
import type { FunctionTool, Message } from '../src/prompt/types';
import { type Measure, CHARS_PER_TOKEN, addMessage as addPromptMessage, emptyMeasure, estimatePrompt, toTokens } from '../src/sizing/estimate';

export interface ConversationOptions {
  /** Estimated tokens of the whole prompt (system prompt and conversation). */
  targetTokens: number;
  /** @default 1 */
  seed?: number;
  /**
   * How screenshots carry their bytes: a `Uint8Array` (what the AI SDK passes for bytes and downloaded
   * URLs) or a base64 string (what it passes for base64 input).
   * @default 'bytes'
   */
  imageData?: 'bytes' | 'base64';
}

export type ToolName = 'read_file' | 'run_command' | 'search';

/** The tool definitions a coding agent would send with every step. */
export const TOOLS: LanguageModelV3FunctionTool[] = [
  {
    type: 'function',
    name: 'read_file',
    description: 'Read a file of the repository. Returns its content with line numbers.',
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path relative to the repository root' },
        startLine: { type: 'integer', minimum: 1 },
        endLine: { type: 'integer', minimum: 1 },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    type: 'function',
    name: 'run_command',
    description: 'Run a shell command in the repository and return its exit code, stdout and stderr.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string' },
        timeoutSeconds: { type: 'integer', minimum: 1, maximum: 600 },
      },
      required: ['command'],
      additionalProperties: false,
    },
  },
  {
    type: 'function',
    name: 'search',
    description: 'Search the repository for a regular expression; returns matching lines as path:line: text.',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, path: { type: 'string' }, maxResults: { type: 'integer' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
];

/** The package's structural view of an AI SDK prompt (the two types differ only in how strictly they are written). */
export function asMessages(prompt: LanguageModelV3Prompt): Message[] {
  return prompt as unknown as Message[];
}

/** The package's estimate of a prompt; the conversation's target leaves the tool definitions out. */
export function estimatedTokens(prompt: LanguageModelV3Prompt, tools?: LanguageModelV3FunctionTool[]): number {
  return estimatePrompt(asMessages(prompt), tools as FunctionTool[] | undefined);
}

function addMessage(total: Measure, message: LanguageModelV3Message): void {
  addPromptMessage(total, message as unknown as Message);
}

/** A conversation of about `targetTokens` estimated tokens, ending with a tool result. */
export function generateConversation({ targetTokens, seed = 1, imageData = 'bytes' }: ConversationOptions): LanguageModelV3Prompt {
  const random = rng(seed);
  const prompt: LanguageModelV3Prompt = [{ role: 'system', content: systemPrompt(random) }];
  const total: Measure = emptyMeasure();
  addMessage(total, prompt[0]!);
  const remaining = () => targetTokens - toTokens(total);
  const push = (message: LanguageModelV3Message) => {
    prompt.push(message);
    addMessage(total, message);
  };
  let turn = 0;
  while (remaining() > 0) {
    const user = userMessage(random, turn, remaining(), imageData);
    if (tokensOf(user) + MIN_STEP_TOKENS > remaining() && turn > 0) break;
    push(user);
    const steps = int(random, 2, 8);
    for (let step = 0; step < steps && remaining() > 0; step++) {
      const id = `call_${turn}_${step}_${hex(random, 8)}`;
      const assistant = toolCallMessage(random, id);
      const room = remaining() - tokensOf(assistant);
      if (room < MIN_RESULT_TOKENS) break;
      push(assistant);
      const chars = Math.min(int(random, 2_000, 10_000), room * CHARS_PER_TOKEN);
      push(toolResultMessage(random, assistant, chars));
    }
    turn++;
  }
  if (prompt[prompt.length - 1]!.role === 'user' && prompt.length > 2) prompt.pop();
  return prompt;
}

/**
 * The next step's prompt: the conversation plus the model's reply to it (text and a tool call) and
 * the tool's result, the way a tool loop extends its prompt.
 */
export function extendConversation(prompt: LanguageModelV3Prompt, seed = 1): LanguageModelV3Prompt {
  const random = rng(seed * 7_919 + prompt.length);
  const assistant = toolCallMessage(random, `call_next_${hex(random, 8)}`);
  return [...prompt, assistant, toolResultMessage(random, assistant, int(random, 2_000, 10_000))];
}

function toolCallsOf(message: LanguageModelV3Message) {
  if (message.role !== 'assistant') throw new TypeError('not an assistant message');
  return message.content.filter((part) => part.type === 'tool-call');
}

const MIN_RESULT_TOKENS = 50;
const MIN_STEP_TOKENS = 300;
const IMAGE_EVERY_TURNS = 6;

function tokensOf(message: LanguageModelV3Message): number {
  const measure: Measure = emptyMeasure();
  addMessage(measure, message);
  return toTokens(measure);
}

// ---- messages

function systemPrompt(random: () => number): string {
  const rules = [
    'You are a coding agent working in a TypeScript monorepo. Use the tools to read files, search and run commands.',
    'Never guess the content of a file: read it first. Prefer small, reviewable changes.',
    'Run the tests of the package you changed before you report back; quote failing output verbatim.',
    'Keep the public API stable unless the user asks otherwise. Follow the code style of the file you edit.',
    'When a command fails, read the error, form a hypothesis, and check it with a second command.',
  ];
  const lines = [...rules];
  for (let index = 0; index < 12; index++) lines.push(`- ${sentence(random, 14, 30)}`);
  return lines.join('\n');
}

function userMessage(
  random: () => number,
  turn: number,
  room: number,
  imageData: ConversationOptions['imageData'],
): LanguageModelV3Message {
  const text = turn === 0 ? `The users route test fails on CI. ${sentence(random, 20, 60)}` : sentence(random, 10, 80);
  const content: Extract<LanguageModelV3Message, { role: 'user' }>['content'] = [
    { type: 'text', text, providerOptions: undefined },
  ];
  if (turn % IMAGE_EVERY_TURNS === 1 && room > 1_500 + MIN_STEP_TOKENS * 2) content.push(image(random, imageData));
  return { role: 'user', content, providerOptions: undefined };
}

function image(random: () => number, imageData: ConversationOptions['imageData']): LanguageModelV3FilePart {
  const length = int(random, 48_000, 52_000);
  const data = new Uint8Array(length);
  data.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let index = 8; index < length; index++) data[index] = Math.floor(random() * 256);
  return {
    type: 'file',
    mediaType: 'image/png',
    data: imageData === 'base64' ? Buffer.from(data).toString('base64') : data,
    filename: undefined,
    providerOptions: undefined,
  };
}

function toolCallMessage(random: () => number, toolCallId: string): LanguageModelV3Message {
  const toolName = pick(random, ['read_file', 'read_file', 'run_command', 'search'] as const);
  const input =
    toolName === 'read_file'
      ? { path: filePath(random), ...(random() < 0.3 ? { startLine: int(random, 1, 200), endLine: int(random, 201, 400) } : {}) }
      : toolName === 'run_command'
        ? { command: pick(random, COMMANDS), timeoutSeconds: 120 }
        : { query: `${identifier(random)}\\(`, path: pick(random, ['src', 'test', 'packages/api/src']) };
  return {
    role: 'assistant',
    content: [
      { type: 'text', text: sentence(random, 12, 90), providerOptions: undefined },
      { type: 'tool-call', toolCallId, toolName, input, providerOptions: undefined },
    ],
    providerOptions: undefined,
  };
}

function toolResultMessage(random: () => number, assistant: LanguageModelV3Message, chars: number): LanguageModelV3Message {
  const call = toolCallsOf(assistant)[0]!;
  const value =
    call.toolName === 'read_file'
      ? sourceFile(random, chars)
      : call.toolName === 'search'
        ? searchResults(random, chars)
        : random() < 0.5
          ? testLog(random, chars)
          : stackTrace(random, chars);
  return {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: 'text', value },
        providerOptions: undefined,
      },
    ],
    providerOptions: undefined,
  };
}

// ---- large outputs, exactly `chars` characters long

function fill(chars: number, line: (index: number) => string): string {
  const lines: string[] = [];
  let length = 0;
  for (let index = 0; length < chars; index++) {
    const next = line(index);
    lines.push(next);
    length += next.length + 1;
  }
  return lines.join('\n').slice(0, chars);
}

function sourceFile(random: () => number, chars: number): string {
  let depth = 0;
  return fill(chars, (index) => {
    const kind = random();
    let code: string;
    if (kind < 0.1) {
      code = `${'  '.repeat(depth)}export async function ${identifier(random)}(${identifier(random)}: ${type(random)}): Promise<${type(random)}> {`;
      depth = Math.min(depth + 1, 4);
    } else if (kind < 0.2 && depth > 0) {
      depth--;
      code = `${'  '.repeat(depth)}}`;
    } else if (kind < 0.3) {
      code = `${'  '.repeat(depth)}// ${sentence(random, 4, 14)}`;
    } else if (kind < 0.45) {
      code = `${'  '.repeat(depth)}if (${identifier(random)} === undefined) throw new TypeError(\`${identifier(random)} is missing\`);`;
    } else {
      code = `${'  '.repeat(depth)}const ${identifier(random)} = await ${identifier(random)}.${identifier(random)}(${identifier(random)}, { ${identifier(random)}: ${int(random, 0, 999)} });`;
    }
    return `${String(index + 1).padStart(5)}\t${code}`;
  });
}

function stackTrace(random: () => number, chars: number): string {
  const header = `exit code 1\nstderr:\nTypeError: Cannot read properties of undefined (reading '${identifier(random)}')\n`;
  return (header + fill(chars, () => `    at ${identifier(random)} (${filePath(random)}:${int(random, 1, 900)}:${int(random, 1, 80)})`)).slice(0, chars);
}

function testLog(random: () => number, chars: number): string {
  return fill(chars, () => {
    const ok = random() < 0.85;
    const name = `${filePath(random).replace(/^src/, 'test').replace(/\.ts$/, '.test.ts')} > ${sentence(random, 3, 8)}`;
    return ok
      ? ` ✓ ${name} ${int(random, 1, 400)}ms`
      : ` × ${name}\n   → expected ${int(random, 0, 99)} to be ${int(random, 100, 199)} // Object.is equality`;
  });
}

function searchResults(random: () => number, chars: number): string {
  return fill(chars, () => `${filePath(random)}:${int(random, 1, 900)}:    ${identifier(random)}(${identifier(random)}, ${identifier(random)});`);
}

// ---- words

const WORDS = (
  'the a request response handler user session token cache route test fails because value is undefined when ' +
  'middleware calls next with error and the guard should check id before reading it then return status code ' +
  'after parsing body schema validation returns result of query against database pool connection timeout retry ' +
  'config loader reads environment variables from file so we need to update import path build output bundle'
).split(' ');
const PARTS = ['user', 'session', 'route', 'handler', 'cache', 'token', 'query', 'parse', 'load', 'config', 'id', 'request', 'result', 'guard', 'pool'];
const TYPES = ['string', 'number', 'User', 'Session', 'Request', 'Response', 'Config', 'Record<string, unknown>', 'QueryResult'];
const DIRS = ['src/server/routes', 'src/server/middleware', 'src/db', 'src/lib', 'packages/api/src', 'packages/web/src/components'];
const COMMANDS = ['npm test', 'npm run build', 'npx vitest run test/routes', 'git diff --stat', 'npx tsc --noEmit', 'git log --oneline -20'];

function sentence(random: () => number, min: number, max: number): string {
  const words: string[] = [];
  const count = int(random, min, max);
  for (let index = 0; index < count; index++) words.push(random() < 0.15 ? `\`${identifier(random)}\`` : pick(random, WORDS));
  const text = words.join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

function identifier(random: () => number): string {
  const first = pick(random, PARTS);
  const second = pick(random, PARTS);
  return `${first}${second[0]!.toUpperCase()}${second.slice(1)}`;
}

function type(random: () => number): string {
  return pick(random, TYPES);
}

function filePath(random: () => number): string {
  return `${pick(random, DIRS)}/${pick(random, PARTS)}-${pick(random, PARTS)}.ts`;
}

// ---- deterministic randomness (mulberry32)

function rng(seed: number): () => number {
  let state = (seed * 0x9e3779b1) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function int(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function hex(random: () => number, length: number): string {
  let out = '';
  for (let index = 0; index < length; index++) out += Math.floor(random() * 16).toString(16);
  return out;
}
