import { describe, expect, it } from 'vitest';
import { compaction } from '../../../src';
import { IDENTIFIERS_HEADING } from '../../../src/checkpoint/identifiers';
import type { Message } from '../../../src/prompt/types';
import { estimateMessages, estimatePrompt } from '../../../src/sizing/estimate';
import { SUMMARY, textResult } from '../../support/models';
import { assistant, scriptedModel, textOf, toolCall, toolResult, user, wrap } from '../../support/harness';

const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);

/** A summarizer that quotes, in its summary, the newest user message it was shown. */
function quotingSummary(prompt: Message[]) {
  const shown = prompt.slice(0, -1).filter((message) => message.role === 'user');
  return textResult(`${SUMMARY}\n- Latest request: ${textOf(shown.at(-1))}`, 100, 100);
}

const everything = (calls: Array<{ prompt: Message[] }>) => calls.map((call) => JSON.stringify(call.prompt)).join('\n');

describe('continuity', () => {
  describe('a checkpoint is made of what it covers only', () => {
    it("should never show one conversation's newest words to another that shares its opening", async () => {
      const scripted = scriptedModel({ summary: quotingSummary });
      const middleware = compaction({ contextWindow: 20_000 });
      const wrapped = wrap(scripted.model, middleware);
      const opening = [user(`Review this log ${tokens(9_000)}`), assistant(`Reviewed ${tokens(9_000, 'a')}`)];
      const secret = 'my password is hunter2, reset it';
      await wrapped.doGenerate({ prompt: [...opening, user(secret)] });
      expect(scripted.summaryCalls()).toHaveLength(1);
      // the summary request held what the checkpoint covers, not the new message
      expect(everything(scripted.summaryCalls())).not.toContain('hunter2');
      // the first conversation still sends its own message, live, after the checkpoint
      expect(textOf(scripted.stepCalls()[0]!.prompt.at(-1))).toBe(secret);

      const before = scripted.calls.length;
      await wrapped.doGenerate({ prompt: [...opening, user('what does the log say about disk space?')] });
      const second = scripted.calls.slice(before);
      // the second conversation reuses the checkpoint of the shared opening ...
      expect(second.filter((call) => call.summary)).toHaveLength(0);
      expect(textOf(second[0]!.prompt[0]).startsWith('<conversation-checkpoint>')).toBe(true);
      // ... and none of its prompts holds the first one's words
      expect(everything(second)).not.toContain('hunter2');
    });

    it('should not carry on a newest message the user edited', async () => {
      const scripted = scriptedModel({ summary: quotingSummary });
      const middleware = compaction({ contextWindow: 20_000 });
      const wrapped = wrap(scripted.model, middleware);
      const opening = [user(tokens(9_000)), assistant(tokens(9_000, 'a'))];
      await wrapped.doGenerate({ prompt: [...opening, user('delete the production database')] });
      const before = scripted.calls.length;
      await wrapped.doGenerate({ prompt: [...opening, user('back up the production database')] });
      const edited = scripted.calls.slice(before);
      expect(everything(edited)).not.toContain('delete the production database');
      expect(textOf(edited.at(-1)!.prompt.at(-1))).toBe('back up the production database');
    });
  });

  describe('what stays live', () => {
    it('should send the newest step of a tool loop after the checkpoint, shortened past a quarter of the ceiling', async () => {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 32_000 });
      const wrapped = wrap(scripted.model, middleware);
      // 32,000 window -> ceiling 16,000: the newest step takes at most 4,000 tokens
      const huge = `BEGIN ${'h'.repeat(60_000)} END`;
      const conversation: Message[] = [
        user('Find why the build fails.'),
        toolCall('c1', 'read_file', { path: 'src/big.ts' }),
        toolResult('c1', 'read_file', tokens(3_000, 'r')),
        toolCall('c2', 'read_file', { path: 'logs/build.log' }),
        toolResult('c2', 'read_file', huge),
      ];
      const copy = structuredClone(conversation);
      await wrapped.doGenerate({ prompt: conversation });
      expect(scripted.summaryCalls()).toHaveLength(1);
      // the summary request ends where the checkpoint ends: before the live step
      expect(JSON.stringify(scripted.summaryCalls()[0]!.prompt)).not.toContain('logs/build.log');
      const sent = scripted.stepCalls()[0]!.prompt;
      expect(sent).toHaveLength(3);
      expect(textOf(sent[0]).startsWith('<conversation-checkpoint>')).toBe(true);
      expect(sent[1]).toEqual(conversation[3]);
      const output = (sent[2]!.content[0] as unknown as { toolCallId: string; output: { type: string; value: string } });
      expect(output.toolCallId).toBe('c2');
      expect(output.output.value.startsWith('BEGIN hhh')).toBe(true);
      expect(output.output.value.endsWith('hhh END')).toBe(true);
      expect(output.output.value).toMatch(/\n\[\d+ characters cut\]\n/);
      expect(estimateMessages(sent.slice(1))).toBeLessThanOrEqual(4_000);
      expect(estimatePrompt(sent)).toBeLessThan(16_000);
      expect(conversation).toEqual(copy);

      // the next step sends the same shortened bytes (a cache hit) and its own new step whole
      conversation.push(toolCall('c3', 'read_file', { path: 'src/small.ts' }), toolResult('c3', 'read_file', 'export {}'));
      await wrapped.doGenerate({ prompt: conversation });
      const next = scripted.stepCalls()[1]!.prompt;
      expect(scripted.summaryCalls()).toHaveLength(1);
      expect(JSON.stringify(next.slice(0, 3))).toBe(JSON.stringify(sent));
      expect(next.slice(3)).toEqual(conversation.slice(5));
    });

    it('should keep the task in the record and every covered path in the checkpoint when the summarizer names none', async () => {
      const scripted = scriptedModel({ summary: () => textResult('## Objective\n- keep going\n\n## Identifiers (kept verbatim)\nmade/up/by/the/model.ts', 100, 100) });
      const middleware = compaction({ contextWindow: 20_000 });
      const wrapped = wrap(scripted.model, middleware);
      const conversation: Message[] = [user('Port every module to ESM.')];
      for (let step = 1; step <= 40; step++) {
        await wrapped.doGenerate({ prompt: conversation });
        conversation.push(toolCall(`c${step}`, 'read_file', { path: `src/module-${step}.ts` }), toolResult(`c${step}`, 'read_file', tokens(1_500, 'm')));
      }
      expect(scripted.summaryCalls().length).toBeGreaterThanOrEqual(3);
      const last = scripted.stepCalls().at(-1)!.prompt;
      const checkpoint = textOf(last[0]);
      expect(checkpoint).toContain('<recent-context>\n[User]: Port every module to ESM.\n\n[');
      expect(checkpoint).not.toContain('made/up/by/the/model.ts');
      expect(checkpoint.split(IDENTIFIERS_HEADING)).toHaveLength(2);
      const live = JSON.stringify(last.slice(1));
      for (let step = 1; step < 40; step++) {
        if (!live.includes(`src/module-${step}.ts`)) expect(checkpoint).toContain(`src/module-${step}.ts\n`);
      }
      // a prompt never ends with the checkpoint
      expect(last.at(-1)!.role).toBe('tool');
    });
  });
});
