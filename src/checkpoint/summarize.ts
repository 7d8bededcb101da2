import { CompactionError, isAbort, messageOf } from '../errors';
import { isContextOverflowError } from '../overflow/recognize';
import { textMessage } from '../prompt/conversation';
import { randomHex } from '../prompt/hash';
import type { CallOptions, ContentMessage, GenerateResult, Message, Model, SystemMessage } from '../prompt/types';
import { type Estimator, charsPerTokenOf, estimateMessages, estimatePrompt } from '../sizing/estimate';
import { ESTIMATE_MARGIN, MIN_SUMMARY_ROOM, RETRY_SHARES, TRANSCRIPT_RECUTS } from '../tunables';
import { REMINDER_PROMPT, SUMMARY_PROMPT, UPDATE_PROMPT } from './prompts';
import { hasTemplateHeading, replyText, unifiedFinishReason } from './reply';
import { shortenTranscript, transcriptMessageText } from './shorten';

/** The `providerOptions` key of this package; on a message it marks a summary request. */
export const PROVIDER_OPTIONS_KEY = 'compaction';

/**
 * The marker's value (docs/design.md, "Recognisable"): a random token of this process, made with
 * Web Crypto on first use (a Worker allows no random values at load), never seen by a client, so
 * a caller's message that claims to be a summary request (a system message from a browser) is none.
 * Kept under a global symbol so that every copy of the package in one process (its ESM and CJS
 * builds) tells the same requests apart.
 */
const TOKEN = Symbol.for('ai-compaction.summaryRequest');

function summaryToken(): string {
  const holder = globalThis as { [TOKEN]?: unknown };
  if (typeof holder[TOKEN] !== 'string') Object.defineProperty(holder, TOKEN, { value: randomHex(16), enumerable: false });
  return holder[TOKEN] as string;
}

/**
 * Whether a call is a summary request of this package (a middleware after it should pass it on
 * unchanged): its last message carries the marker only the middleware can set.
 */
export function isSummaryRequest(params: { prompt?: readonly unknown[] } | undefined): boolean {
  const last = params?.prompt?.[params.prompt.length - 1] as ContentMessage | undefined;
  const marker = last?.providerOptions?.[PROVIDER_OPTIONS_KEY]?.summaryRequest;
  return typeof marker === 'string' && marker === summaryToken();
}

function marked(text: string): ContentMessage {
  return textMessage('user', text, { [PROVIDER_OPTIONS_KEY]: { summaryRequest: summaryToken() } });
}

export interface SummarizeInput {
  /** The summarizer: the step's own model through the rest of the chain, or the `summarizer` option. */
  model: Model;
  /** The step's own request (with its current checkpoint in place). */
  params: CallOptions;
  system: SystemMessage[];
  /** The checkpoint message the step was sent with, if any. */
  previous: Message[];
  /** The conversation the step was sent with, after the system messages. */
  sent: Message[];
  /** The part of it that goes before the new record. */
  beforeRecord: Message[];
  /** The step's size: what the provider counted, and what was estimated on top. */
  size: { counted: number; estimated: number };
  window: number | undefined;
  summaryOutputTokens: number;
  /**
   * How the request's own messages are estimated: the step model's learned ratio or tokenizer
   * (docs/design.md, "The size of a prompt"), as its size was; with a `summarizer`, too (the same
   * text, and the step's counts are all the middleware has of it).
   */
  estimator: Estimator;
  warn: (message: string) => void;
}

interface Attempt {
  prompt: Message[];
  tools: CallOptions['tools'];
  maxOutputTokens: number;
  /** Estimated size of the request, for aiming retries. */
  estimate: number;
}

/**
 * Asks the model for the structured summary (docs/design.md, "The summary request", "When the
 * summary request is too big") and returns it. Throws a
 * `CompactionError`, or the abort error when the call was aborted.
 */
export async function summarize(input: SummarizeInput): Promise<string> {
  const appended = marked(input.previous.length === 0 ? SUMMARY_PROMPT : UPDATE_PROMPT);
  let attempt = firstAttempt(input, appended);
  let rejectedSize: number | undefined;
  for (let retry = 0; ; retry++) {
    try {
      return await requestSummary(input, attempt);
    } catch (error) {
      if (!isContextOverflowError(error) || isAbort(error, input.params.abortSignal)) throw error;
      const share = RETRY_SHARES[retry];
      if (share === undefined) {
        throw new CompactionError({ reason: 'too-large', message: `the summary request was rejected as too long after ${RETRY_SHARES.length} shorter tries`, cause: error });
      }
      input.warn(`ai-compaction: the summary request was rejected as too long; retrying as a transcript at ${Math.round(share * 100)} % of its size`);
      // Every share is of the size first rejected, not of the previous try.
      rejectedSize ??= attempt.estimate;
      attempt = transcriptAttempt(input, appended, Math.floor(rejectedSize * share), error);
    }
  }
}

function firstAttempt(input: SummarizeInput, appended: ContentMessage): Attempt {
  const { estimator } = input;
  const appendedTokens = estimateMessages([appended], 0, 1, estimator);
  const whole = [...input.system, ...input.sent, appended];
  const room = roomFor(input.window, input.size.counted, input.size.estimated + appendedTokens);
  if (room >= MIN_SUMMARY_ROOM) {
    return attemptOf(input, whole, input.params.tools, input.size.counted + input.size.estimated + appendedTokens, room);
  }
  const before = [...input.system, ...input.previous, ...input.beforeRecord, appended];
  const beforeTokens = estimatePrompt(before, input.params.tools, estimator);
  const beforeRoom = roomFor(input.window, 0, beforeTokens);
  if (input.beforeRecord.length > 0 && beforeRoom >= MIN_SUMMARY_ROOM) {
    return attemptOf(input, before, input.params.tools, beforeTokens, beforeRoom);
  }
  // The window is known here (room is finite): aim the transcript at what leaves the minimum room.
  return transcriptAttempt(input, appended, Math.floor((input.window! - MIN_SUMMARY_ROOM) / ESTIMATE_MARGIN));
}

/** A request of the system messages, the previous checkpoint and a transcript, within `target` tokens. */
function transcriptAttempt(input: SummarizeInput, appended: ContentMessage, target: number, cause?: unknown): Attempt {
  const { estimator } = input;
  const estimate = (messages: Message[]) => estimateMessages(messages, 0, messages.length, estimator);
  const frame = [...input.system, ...input.previous, appended];
  const frameTokens = estimate(frame) + estimate([textMessage('user', transcriptMessageText(''))]);
  const ratio = charsPerTokenOf(estimator, input.beforeRecord);
  let budget = target - frameTokens;
  for (let tries = 0; ; tries++) {
    const transcript = shortenTranscript(input.beforeRecord, budget, ratio);
    if (transcript === undefined || input.beforeRecord.length === 0) {
      throw new CompactionError({
        reason: 'too-large',
        message: `the summary request cannot fit: even the newest exchange leaves no room within ${target} tokens`,
        cause,
      });
    }
    const prompt = [...input.system, ...input.previous, textMessage('user', transcriptMessageText(transcript)), appended];
    const size = estimate(prompt);
    // A tokenizer counts the serialized transcript a little otherwise than the messages it was
    // sized from: over the target, the budget shrinks by as much and the transcript is cut again.
    if (size <= target || tries === TRANSCRIPT_RECUTS) return attemptOf(input, prompt, undefined, size, roomFor(input.window, 0, size));
    budget = Math.floor((budget * (target - frameTokens)) / Math.max(1, size - frameTokens));
  }
}

function attemptOf(input: SummarizeInput, prompt: Message[], tools: CallOptions['tools'], estimate: number, room: number): Attempt {
  return { prompt, tools, estimate, maxOutputTokens: Math.max(1, Math.min(input.summaryOutputTokens, Math.floor(room))) };
}

/** `room = window - (counted + 1.15 x estimated)`; unbounded without a window. */
export function roomFor(window: number | undefined, counted: number, estimated: number): number {
  return window === undefined ? Number.POSITIVE_INFINITY : window - (counted + ESTIMATE_MARGIN * estimated);
}

async function requestSummary(input: SummarizeInput, attempt: Attempt): Promise<string> {
  const first = await call(input, attempt, attempt.prompt);
  const summary = checkReply(first);
  if (hasTemplateHeading(summary)) return summary;
  input.warn('ai-compaction: the summary missed the template; asking once more');
  const reminder = [
    ...attempt.prompt,
    ...(summary === '' ? [] : [{ role: 'assistant' as const, content: [{ type: 'text', text: summary }] }]),
    marked(REMINDER_PROMPT),
  ];
  const second = checkReply(await call(input, attempt, reminder));
  if (hasTemplateHeading(second)) return second;
  throw new CompactionError({ reason: 'template-missing', message: 'the summary did not fill in the template after one reminder' });
}

async function call(input: SummarizeInput, attempt: Attempt, prompt: Message[]): Promise<GenerateResult> {
  // The step's own request, but with nothing that would keep the reply from being the summary:
  // no forced tool call, no response format, no stop sequences.
  const { tools: _tools, toolChoice, responseFormat: _format, stopSequences: _stops, ...rest } = input.params;
  const forced = (toolChoice as { type?: string } | undefined)?.type === 'required' || (toolChoice as { type?: string } | undefined)?.type === 'tool';
  const request: CallOptions = {
    ...rest,
    prompt,
    maxOutputTokens: attempt.maxOutputTokens,
    ...(attempt.tools === undefined ? {} : { tools: attempt.tools, toolChoice: forced ? { type: 'none' } : toolChoice }),
  };
  try {
    return await input.model.doGenerate(request);
  } catch (error) {
    if (isContextOverflowError(error) || isAbort(error, input.params.abortSignal)) throw error;
    throw new CompactionError({ reason: 'summarizer-failed', message: `the summary request failed: ${messageOf(error)}`, cause: error });
  }
}

/** The summary text of a reply, or the failure it is. */
function checkReply(result: GenerateResult): string {
  const finish = unifiedFinishReason(result.finishReason as never);
  if (finish === 'length') {
    throw new CompactionError({ reason: 'output-limit', message: 'the summary was cut at the output limit' });
  }
  if (finish === 'content-filter') {
    throw new CompactionError({ reason: 'refused', message: 'the summary request was refused by the content filter' });
  }
  const summary = replyText(result.content);
  if (summary === '' && !result.content.some((part) => part.type === 'tool-call')) {
    throw new CompactionError({ reason: 'empty', message: 'the summary reply was empty' });
  }
  return summary;
}
