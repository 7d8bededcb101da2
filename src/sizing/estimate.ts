import { fileTokens, inlineFileText, toolOutputFileTokens, toolOutputText } from '../prompt/parts';
import type { FunctionTool, Message, Part } from '../prompt/types';
import { CHARS_PER_TOKEN, UNTAUGHT_CHARS_PER_TOKEN } from '../tunables';

// 4 characters a token until a model's counts say otherwise, and text as dense as it looks before
// any (tunables.ts), exported here for the tests and the benchmarks.
export { CHARS_PER_TOKEN, UNTAUGHT_CHARS_PER_TOKEN } from '../tunables';

/** Tokens of a text by a real tokenizer (the `estimate` option). */
export type Tokenize = (text: string) => number;

/**
 * How text becomes tokens (docs/design.md, "The size of a prompt"): characters a token (4, or what
 * the model's counts taught), or a tokenizer whose figures are multiplied by a factor its counts
 * taught (1 until then). Images and PDFs count their fixed figures either way.
 */
export interface Estimator {
  readonly charsPerToken: number;
  /** `true` while the model has no count to learn from (its ratio is the default 4, not measured). */
  readonly untaught?: boolean;
  readonly tokenizer?: { readonly tokenize: Tokenize; readonly factor: number };
}

/**
 * Characters a token by an estimator, for rules that budget serialized text (the record, the
 * identifiers, a shortened transcript): its learned ratio; with a tokenizer, the characters a token
 * it finds in `messages` (the text being budgeted) times its learned factor, or 4 divided by that
 * factor when there is no text to measure.
 */
export function charsPerTokenOf(estimator: Estimator, messages: readonly Message[] = []): number {
  const { tokenizer } = estimator;
  if (tokenizer === undefined) return estimator.charsPerToken;
  const measure = measureMessages(messages, 0, messages.length, tokenizer.tokenize);
  const tokens = measure.tokenized * tokenizer.factor;
  return measure.chars === 0 || tokens === 0 ? CHARS_PER_TOKEN / tokenizer.factor : measure.chars / tokens;
}

const PLAIN = /[A-Za-z\s]/g;

/** Tokens of a text by its look, for a model without counts (`UNTAUGHT_CHARS_PER_TOKEN`). */
export function denseTokens(text: string): number {
  const plain = text.match(PLAIN)?.length ?? 0;
  return plain / UNTAUGHT_CHARS_PER_TOKEN.plain + (text.length - plain) / UNTAUGHT_CHARS_PER_TOKEN.other;
}

const UNTAUGHT_ESTIMATOR: Estimator = { charsPerToken: CHARS_PER_TOKEN, tokenizer: { tokenize: denseTokens, factor: 1 } };

/** The estimator a window is guarded with: the model's own once it has counts (or a tokenizer); before, text as dense as it looks. */
export function windowEstimator(estimator: Estimator): Estimator {
  return estimator.untaught === true && estimator.tokenizer === undefined ? UNTAUGHT_ESTIMATOR : estimator;
}

/** 4 characters a token: the rule until a model has counts. */
export const FIXED_ESTIMATOR: Estimator = { charsPerToken: CHARS_PER_TOKEN };

/**
 * What a prompt holds, kept apart so rounding happens once: characters of text, the tokenizer's
 * tokens of the same text (0 without one), and tokens of attachments (their fixed figures).
 */
export interface Measure {
  chars: number;
  tokenized: number;
  tokens: number;
}

export const emptyMeasure = (): Measure => ({ chars: 0, tokenized: 0, tokens: 0 });

export function toTokens(measure: Measure, estimator: Estimator = FIXED_ESTIMATOR): number {
  const { tokenizer } = estimator;
  const text = tokenizer === undefined ? measure.chars / estimator.charsPerToken : measure.tokenized * tokenizer.factor;
  return Math.round(text) + measure.tokens;
}

/** Measures messages; with `tokenize`, their text is also counted by it. */
export function measureMessages(messages: readonly Message[], from = 0, to = messages.length, tokenize?: Tokenize): Measure {
  const total = emptyMeasure();
  for (let index = from; index < to; index++) addMessage(total, messages[index]!, tokenize);
  return total;
}

/** Measures tool definitions: name, description and JSON schema. */
export function measureTools(tools: readonly FunctionTool[] | undefined, tokenize?: Tokenize, total = emptyMeasure()): Measure {
  if (tools === undefined) return total;
  for (const tool of tools) {
    addText(total, tool.name ?? '', tokenize);
    if (typeof tool.description === 'string') addText(total, tool.description, tokenize);
    if (tool.inputSchema !== undefined) addText(total, jsonText(tool.inputSchema), tokenize);
  }
  return total;
}

/** Measures a whole prompt: system messages, conversation and tool definitions. */
export function measurePrompt(prompt: readonly Message[], tools?: readonly FunctionTool[], tokenize?: Tokenize): Measure {
  return measureTools(tools, tokenize, measureMessages(prompt, 0, prompt.length, tokenize));
}

/** Estimated tokens of messages: text at the estimator's rule, an image 1,500, a PDF (or other file) 2,000. */
export function estimateMessages(messages: readonly Message[], from = 0, to = messages.length, estimator: Estimator = FIXED_ESTIMATOR): number {
  return toTokens(measureMessages(messages, from, to, estimator.tokenizer?.tokenize), estimator);
}

/** Estimated tokens of tool definitions: name, description and JSON schema. */
export function estimateTools(tools: readonly FunctionTool[] | undefined, estimator: Estimator = FIXED_ESTIMATOR): number {
  return toTokens(measureTools(tools, estimator.tokenizer?.tokenize), estimator);
}

/** The whole prompt: system messages, conversation and tool definitions. */
export function estimatePrompt(prompt: readonly Message[], tools?: readonly FunctionTool[], estimator: Estimator = FIXED_ESTIMATOR): number {
  return toTokens(measurePrompt(prompt, tools, estimator.tokenizer?.tokenize), estimator);
}

export function addMessage(total: Measure, message: Message, tokenize?: Tokenize): void {
  if (message.role === 'system') {
    addText(total, message.content, tokenize);
    return;
  }
  for (const part of message.content) addPart(total, part, tokenize);
}

export function addPart(total: Measure, part: Part, tokenize?: Tokenize): void {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      if (typeof part.text === 'string') addText(total, part.text, tokenize);
      return;
    case 'file':
    case 'reasoning-file': {
      const inline = inlineFileText(part.data);
      if (inline !== undefined) addText(total, inline, tokenize);
      else total.tokens += fileTokens(part.mediaType);
      return;
    }
    case 'tool-call':
      addText(total, String(part.toolName ?? ''), tokenize);
      addText(total, typeof part.input === 'string' ? part.input : jsonText(part.input), tokenize);
      return;
    case 'tool-result': {
      addText(total, toolOutputText(part.output).text, tokenize);
      total.tokens += toolOutputFileTokens(part.output);
      return;
    }
    default:
      return;
  }
}

function addText(total: Measure, text: string, tokenize: Tokenize | undefined): void {
  total.chars += text.length;
  if (tokenize !== undefined && text.length > 0) total.tokenized += tokenize(text);
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/**
 * The `estimate` option, guarded: a text it throws on, or counts as anything but a finite number
 * of 0 or more, counts at 4 characters a token, with one warning.
 */
export function guardTokenize(tokenize: Tokenize, warn: (message: string) => void): Tokenize {
  let warned = false;
  return (text) => {
    let tokens: unknown;
    let failure = '';
    try {
      tokens = tokenize(text);
    } catch (error) {
      failure = `threw (${error instanceof Error ? error.message : String(error)})`;
    }
    if (typeof tokens === 'number' && Number.isFinite(tokens) && tokens >= 0) return tokens;
    if (!warned) {
      warned = true;
      warn(`ai-compaction: option estimate ${failure || `returned ${typeof tokens === 'number' ? tokens : typeof tokens}`}; such text is counted at ${CHARS_PER_TOKEN} characters a token`);
    }
    return text.length / CHARS_PER_TOKEN;
  };
}
