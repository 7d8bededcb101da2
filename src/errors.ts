import { AISDKError } from 'ai';

const name = 'AI_CompactionError';
const marker = `vercel.ai.error.${name}`;
const symbol = Symbol.for(marker);
const PREFIX = 'ai-compaction: ';

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

/**
 * A compaction that failed. Nothing was stored and no checkpoint changed. Check with
 * `CompactionError.isInstance(error)`, which holds across copies of the package.
 */
export class CompactionError extends AISDKError {
  private readonly [symbol] = true;

  /** What went wrong. */
  readonly reason: CompactionFailure;

  constructor({ reason, message, cause }: { reason: CompactionFailure; message: string; cause?: unknown }) {
    super({ name, message: `${PREFIX}${message}`, cause });
    this.reason = reason;
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
