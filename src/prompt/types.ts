/**
 * The shapes this package reads, written structurally so one build serves the AI SDK 6
 * (`LanguageModelV3*`) and AI SDK 7 (`LanguageModelV4*`) prompt and result types. Code branches on
 * the shape of a value at run time, never on a version number.
 */

export type ProviderOptions = Record<string, Record<string, unknown> | undefined>;

/** A content part of a user, assistant or tool message (text, file, tool-call, tool-result, ...). */
export interface Part {
  type: string;
  providerOptions?: ProviderOptions;
  [key: string]: unknown;
}

export interface SystemMessage {
  role: 'system';
  content: string;
  providerOptions?: ProviderOptions;
}

export interface ContentMessage {
  role: 'user' | 'assistant' | 'tool';
  content: Part[];
  providerOptions?: ProviderOptions;
}

export type Message = SystemMessage | ContentMessage;

export interface FunctionTool {
  type: string;
  name: string;
  description?: string;
  inputSchema?: unknown;
  [key: string]: unknown;
}

/** The call options of one step (`LanguageModelV3CallOptions` / `LanguageModelV4CallOptions`). */
export interface CallOptions {
  prompt: Message[];
  maxOutputTokens?: number;
  tools?: FunctionTool[];
  providerOptions?: ProviderOptions;
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
  [key: string]: unknown;
}

export interface Usage {
  inputTokens: { total: number | undefined; [key: string]: unknown };
  outputTokens: { total: number | undefined; [key: string]: unknown };
  [key: string]: unknown;
}

export interface GenerateResult {
  content: Part[];
  finishReason: { unified: string; raw?: string | undefined } | string;
  usage: Usage;
  providerMetadata?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

export interface StreamPart {
  type: string;
  [key: string]: unknown;
}

export interface StreamResult {
  stream: ReadableStream<StreamPart>;
  [key: string]: unknown;
}

/** A language model as a middleware sees it (`LanguageModelV3` / `LanguageModelV4`). */
export interface Model {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: CallOptions): PromiseLike<GenerateResult>;
  doStream(options: CallOptions): PromiseLike<StreamResult>;
}
