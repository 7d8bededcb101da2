import { AISDKError } from 'ai';

const name = 'AI_CompactionError';
const marker = `vercel.ai.error.${name}`;
const symbol = Symbol.for(marker);
const PREFIX = 'ai-compaction: ';
/** The AI SDK's marker of `NoOutputGeneratedError`: `streamText` rejects its results with an error part that bears it. */
const NO_OUTPUT = Symbol.for('vercel.ai.error.AI_NoOutputGeneratedError');

/** Why a compaction failed. */
export type CompactionFailure =
  | 'template-missing'
  | 'output-limit'
  | 'refused'
  | 'empty'
  | 'too-large'
  | 'nothing-to-compact'
  | 'summarizer-failed'
  | 'timeout';

/** The sizes of a step that cannot go out (tokens, by this package's estimate). */
export interface StepSizes {
  /** The prompt as it would go out. */
  promptTokens: number;
  /** Its system messages and tool definitions alone: what no compaction makes smaller. */
  systemTokens: number;
  /** Where compaction starts. */
  ceiling: number;
  /** The model's context window the middleware holds the step against. */
  contextWindow: number;
}

/**
 * A compaction that failed. Nothing was stored and no checkpoint changed. Check with
 * `CompactionError.isInstance(error)`, which holds across copies of the package.
 *
 * One thrown to the caller stopped its step (it did not fit the window): it carries the step's
 * sizes, and is also an AI SDK `NoOutputGeneratedError` (no output was generated), so `streamText`'s
 * `text`, `steps` and `finishReason` reject with it, not with a bare "No output generated".
 */
export class CompactionError extends AISDKError {
  private readonly [symbol] = true;

  /** What went wrong. */
  readonly reason: CompactionFailure;
  /** The prompt's size, by estimate, when the error stopped a step. */
  readonly promptTokens?: number;
  /** Its system messages and tool definitions alone, when the error stopped a step. */
  readonly systemTokens?: number;
  /** The ceiling, when the error stopped a step. */
  readonly ceiling?: number;
  /** The window, when the error stopped a step. */
  readonly contextWindow?: number;

  constructor({ reason, message, cause, sizes }: { reason: CompactionFailure; message: string; cause?: unknown; sizes?: StepSizes }) {
    super({ name, message: `${PREFIX}${message}`, cause });
    this.reason = reason;
    if (sizes !== undefined) {
      Object.assign(this, sizes);
      (this as unknown as Record<symbol, boolean>)[NO_OUTPUT] = true;
    }
  }

  static override isInstance(error: unknown): error is CompactionError {
    return AISDKError.hasMarker(error, marker);
  }
}

/** What a compaction error says, without the package's prefix: for a line that has its own. */
export function failureDetail(error: CompactionError): string {
  return error.message.startsWith(PREFIX) ? error.message.slice(PREFIX.length) : error.message;
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether an error is the step being aborted (its signal, or an abort or timeout error), never to be taken for a failure of ours. */
export function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/** A value as an error that refuses it shows it: text quoted, numbers as they are, anything else by its kind. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : String(value);
}
