import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { CompactionError } from '../../../src';
import { checkpointMessage } from '../../../src/checkpoint/message';
import { SUMMARY_PROMPT, UPDATE_PROMPT } from '../../../src/checkpoint/prompts';
import { shortenTranscript, transcriptMessageText } from '../../../src/checkpoint/shorten';
import { type SummarizeInput, summarize } from '../../../src/checkpoint/summarize';
import type { CallOptions, FunctionTool, Message, Model, SystemMessage } from '../../../src/prompt/types';
import { type Estimator, FIXED_ESTIMATOR, estimateMessages, estimatePrompt } from '../../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, textResult } from '../../support/models';
import { assistant, system, textEstimate as estimate, user } from '../../support/harness';

// The summary request when the conversation is too big for it (docs/design.md, "The summary
// request" for its room, "When the summary request is too big"), with `summarize()` called
// directly. Every expected number is worked out here from those rules' formulas: 4 characters a
// token, `room = window - (counted + 1.15 x estimated)`.

const text = (count: number, letter: string) => letter.repeat(count * 4);


/** A tool definition of exactly 40 estimated tokens (name + description + JSON schema = 160 characters). */
const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const toolName = 'read_file';
const tools: FunctionTool[] = [
  {
    type: 'function',
    name: toolName,
    description: 'd'.repeat(160 - toolName.length - JSON.stringify(schema).length),
    inputSchema: schema,
  },
];
const TOOL_TOKENS = 40;

/** The appended request message's estimate (its text is the fixed prompt of docs/design.md, "The summary request" / "The next compaction"). */
const appendedTokens = (previous: readonly Message[]) => Math.round((previous.length === 0 ? SUMMARY_PROMPT : UPDATE_PROMPT).length / 4);

/** Tokens of the request around a transcript: system, previous checkpoint and appended message, then the transcript's wrapper. */
const frameTokens = (frame: readonly Message[]) => estimate(frame) + estimate([user(transcriptMessageText(''))]);

function overflowError() {
  return new APICallError({
    message: 'Input is too long for requested model.',
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse',
    requestBodyValues: {},
    statusCode: 400,
    responseHeaders: {},
    responseBody: JSON.stringify({ message: 'Input is too long for requested model.' }),
    isRetryable: false,
  });
}

/** A summarizer that rejects its first `rejections` requests as too long, then answers with the template. */
function summarizer(rejections = 0) {
  const requests: CallOptions[] = [];
  const errors: unknown[] = [];
  const model = new MockLanguageModel({
    doGenerate: async (params: CallOptions) => {
      requests.push(params);
      if (requests.length <= rejections) {
        const error = overflowError();
        errors.push(error);
        throw error;
      }
      return textResult(SUMMARY, 100, 100);
    },
  });
  return { model: model as unknown as Model, requests, errors };
}

/** Exchanges of a short user message and a long assistant message (every text a multiple of 4 characters). */
function exchangesOf(count: number, userTokens: number, assistantTokens: number, tag: string): Message[] {
  const messages: Message[] = [];
  for (let index = 0; index < count; index++) {
    const letter = String.fromCharCode(97 + (index % 26));
    messages.push(user(`${tag}${index}`.padEnd(userTokens * 4, letter)));
    messages.push(assistant(`${tag}${index}`.padEnd(assistantTokens * 4, letter.toUpperCase())));
  }
  return messages;
}

const systemMessages: SystemMessage[] = [system(text(10, 's')) as SystemMessage];

function inputOf(options: {
  model: Model;
  previous?: Message[];
  beforeRecord: Message[];
  recordPart: Message[];
  trailing?: Message[];
  size?: { counted: number; estimated: number };
  window: number | undefined;
  summaryOutputTokens?: number;
  estimator?: Estimator;
  warnings?: string[];
}): SummarizeInput {
  const previous = options.previous ?? [];
  const sent = [...previous, ...options.beforeRecord, ...options.recordPart, ...(options.trailing ?? [user('the new ask.')])];
  return {
    model: options.model,
    params: { prompt: [...systemMessages, ...sent], tools, toolChoice: { type: 'auto' }, maxOutputTokens: 500 },
    system: systemMessages,
    previous,
    sent,
    beforeRecord: options.beforeRecord,
    size: options.size ?? { counted: 0, estimated: estimate([...systemMessages, ...sent]) + TOOL_TOKENS },
    window: options.window,
    summaryOutputTokens: options.summaryOutputTokens ?? 32_000,
    estimator: options.estimator ?? FIXED_ESTIMATOR,
    warn: (message) => options.warnings?.push(message),
  };
}

describe('summarize', () => {
  describe('a summary request rejected as too long', () => {
    const beforeRecord = exchangesOf(150, 4, 4, 'o');
    const recordPart = exchangesOf(1, 10, 10, 'rec');
    const SHARES = [0.85, 0.7, 0.5, 0.35];

    it('should retry as a transcript aimed at 85, 70, 50 and 35 % of the first request size', async () => {
      const warnings: string[] = [];
      const { model, requests } = summarizer(4);
      const summary = await summarize(inputOf({ model, beforeRecord, recordPart, window: undefined, warnings }));
      expect(summary).toBe(SUMMARY);
      expect(requests).toHaveLength(5);

      // The first request is the whole conversation (no window: unbounded room), tools and all.
      const first = requests[0]!;
      const appended = first.prompt.at(-1)!;
      expect(first.tools).toBe(tools);
      const firstSize = estimate(first.prompt) + TOOL_TOKENS;
      // Every text is a multiple of 4 characters: rounding once or per part gives the same size.
      expect(firstSize).toBe(estimate([...systemMessages, ...beforeRecord, ...recordPart, user('the new ask.')]) + TOOL_TOKENS + appendedTokens([]));

      const frame = frameTokens([...systemMessages, appended]);
      const transcripts: string[] = [];
      SHARES.forEach((share, index) => {
        const request = requests[index + 1]!;
        const target = Math.floor(firstSize * share);
        const transcript = shortenTranscript(beforeRecord, target - frame);
        expect(transcript).toBeDefined();
        transcripts.push(transcript!);
        // One user message with the transcript behind the system messages, and no tools.
        expect(request.prompt).toEqual([...systemMessages, user(transcriptMessageText(transcript!)), appended]);
        expect(request.tools).toBeUndefined();
        expect('toolChoice' in request).toBe(false);
        // Aimed at this share of the first size, and more than the next share aims at.
        const size = estimate(request.prompt);
        expect(size).toBeLessThanOrEqual(target);
        const next = SHARES[index + 1];
        if (next !== undefined) expect(size).toBeGreaterThan(Math.floor(firstSize * next));
      });
      // Each share gives another transcript, so a changed share cannot go unseen.
      expect(new Set(transcripts).size).toBe(4);
      expect(warnings.filter((line) => line.includes('rejected as too long'))).toHaveLength(4);
    });

    it('should fail as too-large after the first request and 4 retries are rejected', async () => {
      const { model, requests, errors } = summarizer(Number.POSITIVE_INFINITY);
      const failure = await summarize(inputOf({ model, beforeRecord, recordPart, window: undefined })).catch((error: unknown) => error);
      expect(requests).toHaveLength(5);
      expect(CompactionError.isInstance(failure)).toBe(true);
      expect((failure as CompactionError).reason).toBe('too-large');
      expect((failure as CompactionError).cause).toBe(errors[4]);
    });
  });

  describe('the room left for the reply', () => {
    const previous = [checkpointMessage(SUMMARY, '[User]: an old ask')];
    const beforeRecord = exchangesOf(3, 21, 300, 'old');
    const recordPart = exchangesOf(2, 20, 100, 'rec');
    const counted = 3_000;
    // The estimated part of the request: the step's estimated part plus the appended message, 2,000
    // tokens (1.15 x 2,000 = 2,300 exactly, in floating point too).
    const estimated = 2_000 - appendedTokens(previous);
    // room = window - (3,000 + 1.15 x 2,000) = window - 5,300
    const windowForRoom = (room: number) => room + counted + 2_300;

    it('should send the whole conversation with its tools when the room is exactly 1,024', async () => {
      const { model, requests } = summarizer();
      const input = inputOf({ model, previous, beforeRecord, recordPart, size: { counted, estimated }, window: windowForRoom(1_024) });
      await summarize(input);
      const [request] = requests;
      expect(request!.prompt).toEqual([...systemMessages, ...input.sent, request!.prompt.at(-1)]);
      expect(request!.prompt).toHaveLength(systemMessages.length + input.sent.length + 1);
      expect(request!.prompt.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'text', text: UPDATE_PROMPT }] });
      expect(request!.tools).toBe(tools);
      expect(request!.toolChoice).toEqual({ type: 'auto' });
      // min(summaryOutputTokens, floor(room)); the step's own maxOutputTokens (500) does not bound it.
      expect(request!.maxOutputTokens).toBe(1_024);
    });

    it('should send the messages before the record unchanged, with the tools, when the room is 1,023 and they fit', async () => {
      const { model, requests } = summarizer();
      const window = windowForRoom(1_023);
      const input = inputOf({ model, previous, beforeRecord, recordPart, size: { counted, estimated }, window });
      await summarize(input);
      const [request] = requests;
      const appended = request!.prompt.at(-1)!;
      expect(request!.prompt).toEqual([...systemMessages, ...previous, ...beforeRecord, appended]);
      expect(request!.tools).toBe(tools);
      expect(request!.toolChoice).toEqual({ type: 'auto' });
      const beforeTokens = estimate([...systemMessages, ...previous, ...beforeRecord, appended]) + TOOL_TOKENS;
      const room = window - 1.15 * beforeTokens;
      expect(room).toBeGreaterThanOrEqual(1_024);
      expect(room).not.toBe(Math.floor(room));
      expect(request!.maxOutputTokens).toBe(Math.min(32_000, Math.floor(room)));
    });

    it('should bound the summary by summaryOutputTokens when the room is larger', async () => {
      const { model, requests } = summarizer();
      await summarize(inputOf({ model, previous, beforeRecord, recordPart, size: { counted, estimated }, window: windowForRoom(1_024), summaryOutputTokens: 1_000 }));
      expect(requests[0]!.maxOutputTokens).toBe(1_000);
    });

    it('should send a transcript without tools when the messages before the record do not fit either', async () => {
      const { model, requests } = summarizer();
      const big = exchangesOf(8, 20, 500, 'big');
      // The messages before the record alone leave less than 1,024 tokens of room.
      const window = 4_000;
      await summarize(inputOf({ model, previous, beforeRecord: big, recordPart, window }));
      const [request] = requests;
      const appended = request!.prompt.at(-1)!;
      const beforeTokens = estimate([...systemMessages, ...previous, ...big, appended]) + TOOL_TOKENS;
      expect(window - 1.15 * beforeTokens).toBeLessThan(1_024);
      // Aimed at what leaves the minimum room: (window - 1,024) / 1.15.
      const transcript = shortenTranscript(big, Math.floor((window - 1_024) / 1.15) - frameTokens([...systemMessages, ...previous, appended]));
      expect(transcript).toBeDefined();
      expect(request!.prompt).toEqual([...systemMessages, ...previous, user(transcriptMessageText(transcript!)), appended]);
      expect(request!.tools).toBeUndefined();
      expect('toolChoice' in request!).toBe(false);
      expect(request!.maxOutputTokens).toBe(Math.min(32_000, Math.floor(window - 1.15 * estimate(request!.prompt))));
      expect(request!.maxOutputTokens).toBeGreaterThanOrEqual(1_024);
    });

    it("should size the request at the model's learned characters a token, not at 4", async () => {
      // Code at 2 characters a token: the messages before the record that fit at 4 characters a
      // token (the previous test's window leaves them 4,000 - 1.15 x ~1,800 tokens of room) take
      // twice the tokens, so only a transcript fits, aimed with the same ratio.
      const learned: Estimator = { charsPerToken: 2 };
      const at = (messages: Message[]) => estimateMessages(messages, 0, messages.length, learned);
      const { model, requests } = summarizer();
      const window = 4_000;
      const input = inputOf({ model, previous, beforeRecord, recordPart, size: { counted: 3_000, estimated: 0 }, window, estimator: learned });
      await summarize(input);
      const [request] = requests;
      const appended = request!.prompt.at(-1)!;
      const before = [...systemMessages, ...previous, ...beforeRecord, appended];
      // At 4 characters a token they would go out unchanged; at 2 they leave under 1,024 tokens of room.
      expect(window - 1.15 * (estimate(before) + TOOL_TOKENS)).toBeGreaterThanOrEqual(1_024);
      expect(window - 1.15 * estimatePrompt(before, tools, learned)).toBeLessThan(1_024);
      const frame = at([...systemMessages, ...previous, appended]) + at([user(transcriptMessageText(''))]);
      const transcript = shortenTranscript(beforeRecord, Math.floor((window - 1_024) / 1.15) - frame, 2);
      expect(transcript).toBeDefined();
      expect(request!.prompt).toEqual([...systemMessages, ...previous, user(transcriptMessageText(transcript!)), appended]);
      expect(at(request!.prompt)).toBeLessThanOrEqual(Math.floor((window - 1_024) / 1.15));
      expect(request!.maxOutputTokens).toBe(Math.min(32_000, Math.floor(window - 1.15 * at(request!.prompt))));
    });

    it('should size a transcript as the tokenizer of the estimate option counts it', async () => {
      // A tokenizer that finds 2 characters a token (code), its counts not yet learned (factor 1):
      // the transcript is cut to what it counts, not to 4 characters a token (twice the target).
      const tokenizer: Estimator = { charsPerToken: 4, tokenizer: { tokenize: (text) => Math.ceil(text.length / 2), factor: 1 } };
      const { model, requests } = summarizer();
      const big = exchangesOf(8, 20, 500, 'big');
      const window = 4_000;
      await summarize(inputOf({ model, previous, beforeRecord: big, recordPart, window, estimator: tokenizer }));
      const [request] = requests;
      const counted = estimateMessages(request!.prompt, 0, request!.prompt.length, tokenizer);
      const target = Math.floor((window - 1_024) / 1.15);
      expect(request!.prompt[request!.prompt.length - 2]).toMatchObject({ role: 'user', content: [{ type: 'text', text: expect.stringContaining('<transcript>') }] });
      expect(counted).toBeLessThanOrEqual(target);
      // and not far under it: the budget was not spent at 4 characters a token
      expect(counted).toBeGreaterThan(target / 2);
      expect(request!.maxOutputTokens).toBe(Math.min(32_000, Math.floor(window - 1.15 * counted)));
      expect(request!.maxOutputTokens).toBeGreaterThanOrEqual(1_024);
    });
  });
});
