import { describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { type CompactionRecord, compaction, compactionOf } from '../../../src';
import type { Message, Part } from '../../../src/prompt/types';
import { estimatePrompt } from '../../../src/sizing/estimate';
import { STEPS, readFileAgent, readFileTools } from '../../support/read-file-agent';

const WINDOW = 20_000;

const partsOf = (message: Message): Part[] => (message.role === 'system' ? [] : message.content);

describe('clearing old tool results in a tool loop', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`should keep a ${STEPS}-step ${mode} tool loop under a 20,000-token window by clearing, with no summary request`, async () => {
      const agent = readFileAgent({ clone: true });
      const records: CompactionRecord[] = [];
      const middleware = compaction({ contextWindow: WINDOW, clearToolResults: true, onCompaction: (record) => void records.push(record) });
      const model = wrapLanguageModel({ model: agent.model as never, middleware });
      const options = { model, tools: readFileTools, stopWhen: stepCountIs(STEPS + 5), system: 'You are a coding agent.', prompt: 'Read every file of the project.' };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      const text = await result.text;
      const steps = await result.steps;
      expect(text).toBe('All 64 files read.');
      expect(steps).toHaveLength(STEPS);
      expect(agent.prompts).toHaveLength(STEPS);
      // 20,000 window -> ceiling 17,000: clearing must free 4,250 tokens and come to 8,500 at most,
      // and keeps the newest 4,250 tokens (the record's budget, a quarter of the ceiling). Each step
      // adds a call and a 2,000-token result: step 10 (~18,150) clears 7 results and goes out at
      // ~4,200; then every 7th step clears again (every 6th at the end, the calls and notes adding
      // up), never summarizing.
      expect(agent.summaries()).toBe(0);
      expect(records.map((record) => record.kind)).toEqual(Array(9).fill('clear'));
      expect(records.map((record) => record.cleared!.toolResults)).toEqual([7, 14, 21, 28, 35, 42, 49, 55, 61]);
      const compacted = steps.map((step, index) => (compactionOf(step.providerMetadata) === undefined ? -1 : index)).filter((index) => index >= 0);
      expect(compacted).toEqual([9, 16, 23, 30, 37, 44, 51, 57, 63]);
      expect(compacted.map((index) => compactionOf(steps[index]!.providerMetadata)!.kind)).toEqual(Array(9).fill('clear'));
      let covered = 0;
      agent.prompts.forEach((prompt, index) => {
        expect(estimatePrompt(prompt)).toBeLessThan(17_000);
        // Every call keeps its result, with the same id, and every call of the loop is there.
        const calls = prompt.flatMap((message) => partsOf(message).filter((part) => part.type === 'tool-call').map((part) => part.toolCallId));
        const results = prompt.flatMap((message) => (message.role === 'tool' ? partsOf(message).map((part) => part.toolCallId) : []));
        expect(results).toEqual(calls);
        expect(calls).toEqual(Array.from({ length: index }, (_, call) => `call-${call + 1}`));
        if (index === 0) return;
        const previous = agent.prompts[index - 1]!;
        // Between clearings each step extends the one before byte for byte (the provider's cache
        // holds); a clearing keeps what the one before cleared, byte for byte, and clears further.
        const same = compacted.includes(index) ? covered + 1 : previous.length;
        expect(JSON.stringify(prompt.slice(0, same))).toBe(JSON.stringify(previous.slice(0, same)));
        if (compacted.includes(index)) covered = compactionOf(steps[index]!.providerMetadata)!.messagesCovered;
      });
      expect(middleware.last()).toEqual(records.at(-1));
      expect(middleware.last()).toMatchObject({ reason: 'auto', kind: 'clear' });
    });
  }
});
