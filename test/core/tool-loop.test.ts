import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { type CompactionRecord, compaction } from '../../src';
import { keepBudget } from '../../src/checkpoint/budget';
import type { Message } from '../../src/prompt/types';
import { estimatePrompt } from '../../src/sizing/estimate';
import { textOf } from '../support/harness';
import { SUMMARY } from '../support/models';
import { gate, waitWatchingClock } from '../support/prepare-fixtures';
import { STEPS, readFileAgent, readFileTools } from '../support/read-file-agent';

const WINDOW = 20_000;

describe('compaction end to end', () => {
  afterEach(() => vi.useRealTimers());
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`should keep a ${STEPS}-step ${mode} tool loop under a 20,000-token window`, async () => {
      const agent = readFileAgent();
      // The schedule below is that of compacting at the ceiling; prepare.test.ts runs this loop with
      // the next checkpoint prepared in the background (docs/design.md, "Preparing ahead").
      const middleware = compaction({ contextWindow: WINDOW, prepare: false });
      const model = wrapLanguageModel({ model: agent.model as never, middleware });
      const options = { model, tools: readFileTools, stopWhen: stepCountIs(STEPS + 5), system: 'You are a coding agent.', prompt: 'Read every file of the project.' };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      const text = await result.text;
      const steps = await result.steps;
      // ai@6: response.messages holds every step's messages; ai@7 moved them to responseMessages.
      const all = result as unknown as { responseMessages?: PromiseLike<Message[]>; response: PromiseLike<{ messages?: Message[] }> };
      const messages = (all.responseMessages !== undefined ? await all.responseMessages : (await all.response).messages) ?? [];

      expect(text).toBe('All 64 files read.');
      expect(steps).toHaveLength(STEPS);
      expect(agent.prompts).toHaveLength(STEPS);
      agent.prompts.forEach((prompt, index) => {
        expect(agent.stepTools[index]).toHaveLength(1);
        expect(estimatePrompt(prompt, agent.stepTools[index] as never)).toBeLessThan(17_000);
      });
      // 20,000 window -> ceiling 17,000. Each step adds a call and an 8,000-character (2,000-token)
      // result: steps go 62, 2,070, ..., 16,128 (step 9); step 10 (~18,136) compacts. A step after a
      // compaction is the system, the tool definition, the checkpoint and the newest step, live,
      // within a quarter of the room (about 4,230 tokens, docs/design.md "One budget"): the summary,
      // the identifiers, a record of what the budget leaves (opening with the task) and the 2,000-token
      // step. So every 7th step compacts: 10, 17, 24, 31, 38, 45, 52, 59.
      expect(agent.summaries()).toBe(8);
      // After every compaction the model continues from its own newest step, knows its task in the
      // user's words, and finds every file it read, though the summary names none of them.
      const checkpointed = agent.prompts.map((prompt) => prompt.findIndex((message) => message.role === 'user' && textOf(message).startsWith('<conversation-checkpoint>')));
      expect(checkpointed.filter((at) => at >= 0)).toHaveLength(STEPS - 9);
      agent.prompts.forEach((prompt, index) => {
        const at = checkpointed[index]!;
        if (at < 0) return;
        const checkpoint = textOf(prompt[at]!);
        const record = checkpoint.slice(checkpoint.indexOf('<recent-context>'));
        expect(record.startsWith('<recent-context>\n[User]: Read every file of the project.\n\n[')).toBe(true);
        const [call, results] = prompt.slice(-2);
        expect(call!.role).toBe('assistant');
        expect(results!.role).toBe('tool');
        const callIds = (call!.content as Array<{ type: string; toolCallId?: string }>).filter((part) => part.type === 'tool-call').map((part) => part.toolCallId);
        const resultIds = (results!.content as unknown as Array<{ toolCallId: string }>).map((part) => part.toolCallId);
        expect(resultIds).toEqual(callIds);
        expect(callIds).toEqual([`call-${index}`]);
        // step index + 1 sees the calls of files 1..index: those not sent verbatim after the
        // checkpoint are covered by it, and it names each of them exactly
        const after = JSON.stringify(prompt.slice(at + 1));
        for (let file = 1; file <= index; file++) {
          if (!after.includes(`src/file-${file}.ts`)) expect(checkpoint).toContain(`src/file-${file}.ts`);
        }
      });
      expect(SUMMARY).not.toContain('src/file-');
      // The caller gets every message back: 63 tool calls, 63 results, one answer.
      const results = messages.filter((message) => message.role === 'tool').flatMap((message) => message.content as unknown[]);
      expect(results).toHaveLength(STEPS - 1);
      expect(messages.filter((message) => message.role === 'assistant')).toHaveLength(STEPS);
      expect(middleware.last()!.reason).toBe('auto');
    });
  }

  for (const [mode, stepMs] of [['generateText', 0], ['streamText', 0], ['generateText', 1_000], ['streamText', 1_000]] as const) {
    it(`should keep every prompt after a compaction within the budget in a ${mode} loop with a 6,000-token system prompt, prepared ahead, ${stepMs / 1_000} s a step`, async () => {
      // Only `Date` is faked: these summaries take no time, and preparing is not timed to them
      // (docs/design.md, "Preparing ahead"); the clock stands still, or moves a second a step.
      vi.useFakeTimers({ toFake: ['Date'] });
      const agent = readFileAgent();
      const background: Promise<unknown>[] = [];
      const records: CompactionRecord[] = [];
      const middleware = compaction({ contextWindow: WINDOW, waitUntil: (work) => void background.push(work), onCompaction: (record) => void records.push(record) });
      const model = wrapLanguageModel({ model: agent.model as never, middleware });
      const system = `You are a coding agent. ${'s'.repeat(24_000)}`;
      const options = { model, tools: readFileTools, stopWhen: stepCountIs(STEPS + 5), prepareStep: () => void vi.setSystemTime(Date.now() + stepMs), system, prompt: 'Read every file of the project.' };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      expect(await result.text).toBe('All 64 files read.');
      await Promise.all(background);
      // The ceiling 17,000; the frame (the system prompt and the tool) about 6,060, a room of about
      // 10,940, a budget of a quarter of it: each compaction leaves the prompt at most frame + budget.
      const frame = estimatePrompt([{ role: 'system', content: system }], agent.stepTools[0] as never);
      const { total } = keepBudget({ ceiling: 17_000, frame, keep: 15_000, summaryOutputTokens: 4_096 });
      expect(records.length).toBeGreaterThanOrEqual(4);
      for (const record of records) expect(record.tokensAfter - frame).toBeLessThanOrEqual(total);
      agent.prompts.forEach((prompt, index) => expect(estimatePrompt(prompt, agent.stepTools[index] as never)).toBeLessThan(17_000));
      // No step waits: every compaction was prepared ahead, and none is made twice.
      for (const record of records) expect(record.prepared).toBe(true);
      // A compaction every 5th step: it leaves the prompt at about 8,650 (frame + 2,600), four
      // 2,000-token steps under the ceiling. Where time passes, summaries this scripted model writes
      // at once are never measured as slow, so each cycle prepares at the band (13,600) and again for
      // the next step (16,6xx), which is the one sent: two requests a compaction. Where none passes,
      // the band hides nothing: only the step ahead prepares, one request a compaction
      // (docs/design.md, "Preparing ahead").
      expect(records.map((record) => record.messagesCovered)).toEqual([11, 21, 31, 41, 51, 61, 71, 81, 91, 101, 111, 121]);
      expect(agent.summaries()).toBe((stepMs === 0 ? 1 : 2) * records.length);
    });
  }
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`should send a catch-up in a ${mode} loop once its summary is written, no step waiting for it`, async () => {
      // Each step a second after the one before (a model takes time to answer; where no time passes
      // the band is skipped, the test above); these summaries take no time to measure, and
      // preparing is not timed to them (docs/design.md, "Preparing ahead").
      vi.useFakeTimers({ toFake: ['Date'] });
      // The second summary request (step 9's, of its whole conversation for the next step) is held
      // until the agent answers step 14; a step that waited for it would hold the loop: the moment
      // one begins to, it is opened and the test fails.
      const slow = gate();
      let waited = false;
      const { options: watched, advance } = waitWatchingClock(() => {
        waited = true;
        slow.open();
      });
      const background: Promise<unknown>[] = [];
      let step = 0;
      const requested: number[] = [];
      const agent = readFileAgent({
        summary: async (index) => {
          requested.push(step + 1);
          if (index === 1) await slow.opened;
        },
        answered: async (at) => {
          step = at;
          if (at !== 14) return;
          slow.open();
          await Promise.all(background);
        },
      });
      const records: { step: number; record: CompactionRecord }[] = [];
      const middleware = compaction({ contextWindow: WINDOW, waitUntil: (work) => void background.push(work), onCompaction: (record) => void records.push({ step: step + 1, record }), ...watched });
      const model = wrapLanguageModel({ model: agent.model as never, middleware });
      const options = { model, tools: readFileTools, stopWhen: stepCountIs(STEPS + 5), prepareStep: () => void advance(1_000), system: 'You are a coding agent.', prompt: 'Read every file of the project.' };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      expect(await result.text).toBe('All 64 files read.');
      await Promise.all(background);
      expect(waited).toBe(false);
      // Ceiling 17,000, 2,000 tokens a step: step 8 (14,120) prepares at the band, step 9 (16,128)
      // for the next step; step 10 reaches the ceiling with only the band's checkpoint ready and
      // sends it with steps 8 and 9 live after it, over the budget (a quarter of the room).
      const frame = estimatePrompt([{ role: 'system', content: 'You are a coding agent.' }], agent.stepTools[0] as never);
      const { total } = keepBudget({ ceiling: 17_000, frame, keep: 15_000, summaryOutputTokens: 4_096 });
      expect(requested.slice(0, 2)).toEqual([9, 10]);
      expect(records[0]).toMatchObject({ step: 10, record: { messagesCovered: 13, prepared: true } });
      expect(records[0]!.record.tokensAfter - frame).toBeGreaterThan(total);
      // Steps 10 to 14 go out without waiting, and start no other summary: step 9's, still being
      // written and longer than the checkpoint sent, is the catch-up (one at a time).
      expect(requested.filter((at) => at >= 10 && at <= 14)).toEqual([10]);
      // Written while step 14 was answered: step 15, the first step after it is ready, sends it,
      // under the ceiling (it covers step 9's whole conversation).
      expect(records[1]).toMatchObject({ step: 15, record: { messagesCovered: 17, prepared: true } });
      expect(records[1]!.record.tokensAfter).toBeLessThan(records[1]!.record.tokensBefore);
      expect(records[1]!.record.tokensBefore).toBeLessThan(17_000);
      expect(estimatePrompt(agent.prompts[14]!, agent.stepTools[14] as never)).toBe(records[1]!.record.tokensAfter);
      // Every step stayed under the ceiling.
      agent.prompts.forEach((prompt, index) => expect(estimatePrompt(prompt, agent.stepTools[index] as never)).toBeLessThan(17_000));
    });
  }

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`should write one summary at a time, one request a compaction, in a ${mode} loop whose summarizer is slower than its steps`, async () => {
      // Each summary is written while the agent answers 3 steps, or at once when a step waits for it
      // (the rest of it). The middleware's clock stands still, so what it decides depends on no
      // machine's load.
      vi.useFakeTimers({ toFake: ['Date'] });
      let writing = 0;
      let most = 0;
      let answered = 0;
      const pending: { until: number; done: () => void }[] = [];
      const finish = (all: boolean) => {
        for (const entry of [...pending]) {
          if (!all && entry.until > answered) continue;
          pending.splice(pending.indexOf(entry), 1);
          entry.done();
        }
      };
      const watched = waitWatchingClock(() => finish(true));
      // Background compactions whose summary request has not come yet: a request that comes with
      // none is a step's own, in the foreground, which the step waits for.
      const unclaimed = new Set<Promise<unknown>>();
      const agent = readFileAgent({
        summary: async () => {
          most = Math.max(most, ++writing);
          const background = unclaimed.values().next();
          if (!background.done) unclaimed.delete(background.value);
          // A step waiting already (for this summary, not begun here yet), or its own: written at once.
          if (!background.done && watched.waiting() === 0) await new Promise<void>((done) => pending.push({ until: answered + 3, done }));
          writing--;
        },
        answered: (at) => {
          answered = at;
          finish(false);
        },
      });
      const background: Promise<unknown>[] = [];
      const records: CompactionRecord[] = [];
      const waitUntil = (work: Promise<unknown>) => {
        background.push(work);
        unclaimed.add(work);
        void work.finally(() => unclaimed.delete(work));
      };
      const middleware = compaction({ contextWindow: WINDOW, waitUntil, onCompaction: (record) => void records.push(record), ...watched.options });
      const model = wrapLanguageModel({ model: agent.model as never, middleware });
      const options = { model, tools: readFileTools, stopWhen: stepCountIs(STEPS + 5), system: 'You are a coding agent.', prompt: 'Read every file of the project.' };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      expect(await result.text).toBe('All 64 files read.');
      // The one being written when the loop ended is written now.
      finish(true);
      await Promise.all(background);
      // Never two summaries of the conversation in flight at once, and every request went out as a
      // compaction: none prepared for nothing, none superseded.
      expect(most).toBe(1);
      expect(records.length).toBeGreaterThanOrEqual(6);
      for (const record of records) expect(record.usage.requests).toBe(1);
      const unsent = agent.summaries() - records.length;
      // At most the one being prepared when the loop ended was never sent; usage() counts it too.
      expect(unsent).toBeLessThanOrEqual(1);
      expect(middleware.usage().requests).toBe(agent.summaries());
      agent.prompts.forEach((prompt, index) => expect(estimatePrompt(prompt, agent.stepTools[index] as never)).toBeLessThan(17_000));
    });
  }
});
