import { wrapLanguageModel } from 'ai';
import type { CallOptions, Message, Part } from '../../src/prompt/types';
import { estimatePrompt } from '../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, finish, isSummaryPrompt, textResult, usage } from './models';

export interface Recorded {
  prompt: Message[];
  maxOutputTokens?: number;
  providerOptions?: Record<string, unknown>;
  tools?: CallOptions['tools'];
  summary: boolean;
}

export interface ScriptOptions {
  /** The reply to a summary request (default: the filled template). */
  summary?: (prompt: Message[], index: number) => unknown;
  /** The reply to a step (default: 'ok'). */
  reply?: (prompt: Message[], index: number) => unknown;
  /** What the provider reports as input tokens for a prompt (default: the 4-chars estimate). */
  inputTokens?: (prompt: Message[]) => number | undefined;
  /** The model's id (default: the mock's own). */
  modelId?: string;
}

/** A mock model that answers summary requests with the template and records every call. */
export function scriptedModel(options: ScriptOptions = {}) {
  const calls: Recorded[] = [];
  let summaries = 0;
  let steps = 0;
  const respond = (params: CallOptions) => {
    const summary = isSummaryPrompt(params.prompt);
    // A copy: the middleware may pass the caller's own array on, which the test pushes to later.
    calls.push({
      prompt: structuredClone(params.prompt),
      maxOutputTokens: params.maxOutputTokens,
      providerOptions: params.providerOptions,
      tools: params.tools === undefined ? undefined : structuredClone(params.tools),
      summary,
    });
    if (summary) {
      const reply = options.summary?.(params.prompt, summaries++);
      return reply ?? textResult(SUMMARY, estimatePrompt(params.prompt, params.tools), 200);
    }
    const input = options.inputTokens ? options.inputTokens(params.prompt) : estimatePrompt(params.prompt, params.tools);
    const reply = options.reply?.(params.prompt, steps++);
    return reply ?? { content: [{ type: 'text', text: 'ok' }], finishReason: finish('stop'), usage: usage(input, 10), warnings: [] };
  };
  const model = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => respond(params),
    ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
  });
  return {
    model,
    calls,
    summaryCalls: () => calls.filter((call) => call.summary),
    stepCalls: () => calls.filter((call) => !call.summary),
  };
}

/**
 * A scripted model whose every step calls the tool `run` with `{ n }` (0, 1, 2, ...) and reports no
 * usage, so the middleware goes by its estimate alone; `counted`: it reports the estimate of the
 * prompt as its input tokens (and 10 output tokens), as a provider's count.
 */
export function toolCallingModel({ counted = false }: { counted?: boolean } = {}) {
  let step = 0;
  return scriptedModel({
    reply: (prompt) => ({
      content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: 'run', input: JSON.stringify({ n: step++ }) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: counted ? usage(estimatePrompt(prompt), 10) : { inputTokens: { total: undefined }, outputTokens: { total: undefined } },
      warnings: [],
    }),
  });
}

export function wrap(model: unknown, middleware: unknown) {
  return wrapLanguageModel({ model: model as never, middleware: middleware as never }) as unknown as {
    doGenerate(options: Partial<CallOptions> & { prompt: Message[] }): Promise<{ content: Part[]; usage: unknown }>;
    doStream(options: Partial<CallOptions> & { prompt: Message[] }): Promise<{ stream: ReadableStream<{ type: string; [key: string]: unknown }> }>;
  };
}

export const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
export const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
export const system = (text: string): Message => ({ role: 'system', content: text });
export const toolCall = (id: string, name: string, input: unknown): Message => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: id, toolName: name, input }],
});
export const toolResult = (id: string, name: string, text: string): Message => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: id, toolName: name, output: { type: 'text', value: text } }],
});

/** A text of `tokens` estimated tokens (4 characters each). */
export const filler = (tokens: number, seed = 'x') => seed.repeat(Math.ceil((tokens * 4) / seed.length)).slice(0, tokens * 4);

/** A conversation of `exchanges` user/assistant pairs of `tokens` estimated tokens each message. */
export function chat(exchanges: number, tokens: number, tag = 'a'): Message[] {
  const messages: Message[] = [];
  for (let index = 0; index < exchanges; index++) {
    messages.push(user(`${tag}-question-${index} ${filler(tokens, tag)}`));
    messages.push(assistant(`${tag}-answer-${index} ${filler(tokens, tag)}`));
  }
  return messages;
}

export function recordingLogger() {
  const info: string[] = [];
  const warn: string[] = [];
  return { info, warn, logger: { info: (message: string) => info.push(message), warn: (message: string) => warn.push(message) } };
}

export function textOf(message: Message | undefined): string {
  if (message === undefined) return '';
  if (message.role === 'system') return message.content;
  return message.content.map((part) => (part.type === 'text' ? String(part.text) : '')).join('');
}

/**
 * The documented estimate of text-only messages, computed independently of src: their characters / 4,
 * rounded once (docs/design.md, "The size of a prompt").
 */
export function textEstimate(messages: readonly Message[]): number {
  let chars = 0;
  for (const message of messages) {
    if (message.role === 'system') chars += message.content.length;
    else for (const part of message.content) chars += part.type === 'text' ? String(part.text).length : 0;
  }
  return Math.round(chars / 4);
}
