// What a compaction keeps, measured on the prompt it sends (docs/design.md, "One budget"): the
// checkpoint and the live part after it take at most the total (a share of the room); what is never
// cut to make room (the live step within its quarter, the checkpoint's fixed text, the summary, the
// user's earlier messages, the turn's user message) may take them past it, never past half the room.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compaction } from '../../../src';
import { keepBudget } from '../../../src/checkpoint/budget';
import { checkpointMessage } from '../../../src/checkpoint/message';
import type { Message } from '../../../src/prompt/types';
import { ceiling } from '../../../src/sizing/ceiling';
import { estimatePrompt } from '../../../src/sizing/estimate';
import type { CompactionRecord } from '../../../src/types';
import { filler, scriptedModel, system, textOf, toolCall, toolResult, user, wrap } from '../../support/harness';
import { textResult } from '../../support/models';

/** A summary of the template that takes `tokens` tokens (4 characters each). */
function summaryOf(tokens: number): string {
  const head = '## Objective\n- read the files one by one\n\n## Work State\n### Active\n- ';
  return `${head}${'w'.repeat(Math.max(0, tokens * 4 - head.length))}`;
}

interface Loop {
  window: number;
  /** Tokens of the system prompt. */
  frameTokens: number;
  /** Tokens of each step's tool output. */
  outputs: number[];
  /** The share of its output limit each summary fills (1: a model that writes up to its limit). */
  fill: number;
  prepare?: false;
}

/**
 * Runs a tool loop (a user's task, then steps each reading a file) through the middleware, whose
 * summarizer writes `fill` of the limit it is given; returns each compaction with the prompt the
 * step sent with it, and the summary requests' limits.
 */
async function runLoop({ window, frameTokens, outputs, fill, prepare }: Loop) {
  const script = scriptedModel({
    summary: (prompt) => {
      const tokens = Math.max(1, Math.floor((script.calls.at(-1)!.maxOutputTokens ?? 0) * fill) - 1);
      return textResult(summaryOf(tokens), estimatePrompt(prompt), tokens);
    },
  });
  const records: CompactionRecord[] = [];
  const middleware = compaction({ contextWindow: window, ...(prepare === false ? { prepare } : {}), onCompaction: (record) => void records.push(record) });
  const wrapped = wrap(script.model, middleware);
  const frame: Message[] = frameTokens === 0 ? [] : [system(filler(frameTokens, 's'))];
  let conversation: Message[] = [user('Read the files one by one.')];
  const compactions: { sent: Message[]; record: CompactionRecord }[] = [];
  for (const [index, tokens] of outputs.entries()) {
    const before = records.length;
    await wrapped.doGenerate({ prompt: [...frame, ...conversation] });
    if (records.length > before) compactions.push({ sent: script.stepCalls().at(-1)!.prompt, record: records.at(-1)! });
    conversation = [
      ...conversation,
      toolCall(`c${index}`, 'read', { path: `src/f${index}.ts` }),
      toolResult(`c${index}`, 'read', filler(tokens, String.fromCharCode(97 + (index % 26)))),
    ];
  }
  return { compactions, frame: estimatePrompt(frame), limits: script.summaryCalls().map((call) => call.maxOutputTokens) };
}

/** The parts of a prompt sent after a checkpoint: the frame, the checkpoint message, what went out live after it. */
function partsOf(sent: Message[]) {
  const at = sent.findIndex((message) => message.role === 'user' && textOf(message).startsWith('<conversation-checkpoint>'));
  expect(at).toBeGreaterThanOrEqual(0);
  const text = textOf(sent[at]);
  return {
    checkpoint: estimatePrompt([sent[at]!]),
    live: estimatePrompt(sent.slice(at + 1)),
    identifiers: text.includes('## Identifiers (kept verbatim)'),
    recent: text.slice(text.indexOf('<recent-context>\n') + '<recent-context>\n'.length, text.indexOf('\n</recent-context>')),
  };
}

describe('what a compaction keeps: within the total, past it only by what is never cut, never past half the room', () => {
  // 12k window: ceiling 10,200 (15 % buffer); a 6,000-token system prompt leaves a room of 4,200.
  const budget = keepBudget({ ceiling: 10_200, frame: 6_000, keep: 15_000, summaryOutputTokens: 32_000 });

  it('should state the budget of a 12k window with a 6,000-token system prompt', () => {
    expect(budget).toMatchObject({ room: 4_200, total: 1_050, most: 2_100, step: 1_050, summary: 1_050, identifiers: 510, userWords: 131, userMessage: 262 });
    // The checkpoint's fixed text (its tags and its opening line), at 4 characters a token.
    expect(estimatePrompt([checkpointMessage('', '')])).toBe(61);
  });

  for (const prepare of [false, undefined] as const) {
    it(`should keep each compaction of 3,000-token tool outputs within half the room, the summary written to its limit (prepare ${prepare ?? 'default'})`, async () => {
      const { compactions, frame, limits } = await runLoop({ window: 12_000, frameTokens: 6_000, outputs: Array(12).fill(3_000), fill: 1, ...(prepare === false ? { prepare } : {}) });
      expect(frame).toBe(6_000);
      // Each step adds 3,000 tokens to a prompt of 7,000 or more: every step from the third compacts.
      expect(compactions).toHaveLength(10);
      // The summary's limit: its quarter of the room (1,050) within what half of it (2,100) leaves
      // beside the live step as the counts taught to estimate it (its quarter, 1,050, or 1,051),
      // the fixed text (59) and what the record opens with, the turn's user message and the note
      // on the steps between (21): 969 or 968. With its limit at the quarter, a summary written to
      // it took the prompt after the compaction to 8,180, past half the room (8,100); with the turn's
      // user message reserved at its longest (262), the limit was 729.
      expect(new Set(limits)).toEqual(new Set([968, 969]));
      for (const { sent, record } of compactions) {
        const parts = partsOf(sent);
        // The newest step stays live at its quarter of the room (1,050), its 3,000-token output
        // shortened to its ends and a note.
        expect(parts.live).toBe(1_048);
        // What is cut to make room gets nothing beside it: no identifiers, and the record is the
        // turn's user message alone.
        expect(parts.identifiers).toBe(false);
        expect(parts.recent).toMatch(/^\[User\]: Read the files one by one\.\n\n\[\d+ earlier steps of this turn are summarized above\]$/);
        // Past the total (1,050) by the checkpoint, within half the room.
        expect(parts.checkpoint + parts.live).toBeGreaterThan(budget.total);
        expect(estimatePrompt(sent)).toBeLessThanOrEqual(6_000 + budget.most);
        expect(record.tokensAfter).toBeLessThanOrEqual(6_000 + budget.most);
      }
    });
  }

  it('should keep a compaction beside a small live step within the total', async () => {
    // 64k window: ceiling 48,000 (16,000 buffer); a 2,000-token system prompt leaves a room of
    // 46,000, a total of 11,500. Outputs of 2,000 tokens stay live whole; summaries of 300 tokens.
    const { compactions } = await runLoop({ window: 64_000, frameTokens: 2_000, outputs: Array(70).fill(2_000), fill: 0.03, prepare: false });
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    for (const { sent } of compactions) {
      const parts = partsOf(sent);
      expect(parts.live).toBe(estimatePrompt(sent.slice(-2)));
      expect(parts.live).toBeLessThan(2_100);
      expect(parts.checkpoint + parts.live).toBeLessThanOrEqual(11_500);
      // the record holds steps: the total left it room
      expect(parts.recent).toContain('[Tool result]');
    }
  });

  it('should leave the record it first chose its room within half the room, when the summary comes out longer than expected', async () => {
    // 8k window, no system prompt: ceiling 6,800, room 6,800, most 3,400. The summary request cannot
    // carry the whole conversation, so the record is first chosen for a summary of half its limit
    // (408 tokens of the task and its newest steps) and is never made smaller; the summary is then
    // written to 99 % of its limit. The limit leaves that record its room: 3,400 - the 1,422-token
    // live step - the fixed text (61) - 408 = 1,509, and the identifiers get what the summary of
    // 1,492 leaves, 17 tokens. (Without the record in the limit, a summary of 1,492 beside 18 tokens
    // of identifiers came to 3,401.)
    const { compactions, limits } = await runLoop({ window: 8_000, frameTokens: 0, outputs: [2_109, 4_418, 10, 10, 1_416, 10], fill: 0.99, prepare: false });
    expect(compactions).toHaveLength(1);
    expect(limits).toEqual([1_509]);
    const { sent } = compactions[0]!;
    const parts = partsOf(sent);
    expect(parts.recent).toContain('[Tool result]');
    expect(estimatePrompt(sent)).toBeLessThanOrEqual(3_400);
  });

  it('should never send a tool loop past half the room after a compaction, whatever the window, frame, outputs and summaries', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          window: fc.integer({ min: 8_000, max: 64_000 }),
          frameShare: fc.double({ min: 0, max: 0.45, noNaN: true }),
          outputs: fc.array(fc.integer({ min: 10, max: 12_000 }), { minLength: 4, maxLength: 14 }),
          fill: fc.double({ min: 0.05, max: 1, noNaN: true }),
          prepare: fc.constantFrom(false as const, undefined),
        }),
        async ({ window, frameShare, outputs, fill, prepare }) => {
          const frameTokens = Math.floor(window * frameShare);
          const { compactions, frame } = await runLoop({ window, frameTokens, outputs, fill, ...(prepare === false ? { prepare } : {}) });
          const room = ceiling(window, undefined) - frame;
          for (const { sent, record } of compactions) {
            const parts = partsOf(sent);
            if (record.prepared === true) {
              // A checkpoint prepared ahead goes out with all that came after it live (a catch-up
              // brings that back under the budget): it is sent only when that fits the ceiling.
              expect(estimatePrompt(sent)).toBeLessThan(ceiling(window, undefined));
              continue;
            }
            // The live part is the newest tool step (the loop ends with tool results): within its quarter.
            expect(parts.live).toBeLessThanOrEqual(Math.floor(room / 4));
            // By the provider's count (the scripted model counts text at 4 characters a token and
            // writes its summaries at that ratio). The middleware's own estimate of the same prompt
            // may be a few percent larger: it learns its ratio from counts that round a prompt up
            // (a 26-character task counted 7 tokens teaches 3.7 characters a token), and counts the
            // summary's text by it, while the summary's limit is in the model's output tokens.
            expect(estimatePrompt(sent) - frame).toBeLessThanOrEqual(Math.floor(room / 2));
            checked++;
          }
        },
      ),
      { numRuns: 120, seed: 20_261_207 },
    );
    // the runs compacted: the property was checked on many prompts
    expect(checked).toBeGreaterThan(200);
  }, 120_000);
});
