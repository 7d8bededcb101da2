import { describe, expect, it } from 'vitest';
import { compaction } from '../../src';
import { checkpointText } from '../../src/checkpoint/message';
import type { Message } from '../../src/prompt/types';
import { SUMMARY, textResult } from '../support/models';
import { assistant, chat, recordingLogger, scriptedModel, system, textOf, user, wrap } from '../support/harness';

/** A summarizer that copies what the system prompt holds into the summary (as a real one may). */
function copyingModel() {
  return scriptedModel({
    summary: (prompt) => {
      const held = prompt.filter((message) => message.role === 'system').map(textOf).join(' ');
      return textResult(SUMMARY.replace('Fix the failing users route test', `serve the user of "${held}"`));
    },
  });
}

const opening = [...chat(2, 10), user('go')];
const next = [...opening, assistant('a'), user('b')];
const hasCheckpoint = (prompt: Message[]) => prompt.some((message) => textOf(message).startsWith('<conversation-checkpoint>'));
const text = (prompt: Message[]) => prompt.map(textOf).join('\n');

// docs/design.md, "Many conversations": a checkpoint never carries one conversation's words into another.
describe('checkpoints keyed by the system messages, or by the conversation name', () => {
  for (const scope of [undefined, 'tenant-1']) {
    it(`should never send one user's checkpoint to another user's step with other system messages (${scope === undefined ? 'no scope' : 'one scope'})`, async () => {
      const scripted = copyingModel();
      const middleware = compaction({ contextWindow: 200_000 });
      const wrapped = wrap(scripted.model, middleware);
      const compactionOptions = scope === undefined ? {} : { scope };
      await wrapped.doGenerate({ prompt: [system('Account of Ann: IBAN 1111'), ...opening], providerOptions: { compaction: { ...compactionOptions, compact: true } } });
      expect(middleware.last()!.summary).toContain('IBAN 1111');
      await wrapped.doGenerate({ prompt: [system('Account of Bob: IBAN 2222'), ...next], providerOptions: { compaction: compactionOptions } });
      const bob = scripted.stepCalls().at(-1)!.prompt;
      expect(text(bob)).not.toContain('IBAN 1111');
      expect(bob).toEqual([system('Account of Bob: IBAN 2222'), ...next]);
      // Ann's own next step finds hers.
      await wrapped.doGenerate({ prompt: [system('Account of Ann: IBAN 1111'), ...next], providerOptions: { compaction: compactionOptions } });
      expect(hasCheckpoint(scripted.stepCalls().at(-1)!.prompt)).toBe(true);
    });
  }

  it('should let a named conversation keep its checkpoint when its system prompt changes between steps, and keep two names apart', async () => {
    const scripted = copyingModel();
    const middleware = compaction({ contextWindow: 200_000 });
    const wrapped = wrap(scripted.model, middleware);
    await wrapped.doGenerate({ prompt: [system('Today is Monday.'), ...opening], providerOptions: { compaction: { conversation: 'chat-1', compact: true } } });
    const record = middleware.last()!.record;
    await wrapped.doGenerate({ prompt: [system('Today is Tuesday.'), ...next], providerOptions: { compaction: { conversation: 'chat-1' } } });
    const kept = scripted.stepCalls().at(-1)!.prompt;
    expect(kept[0]).toEqual(system('Today is Tuesday.'));
    expect(textOf(kept[1])).toBe(checkpointText(middleware.last()!.summary, record));
    // Another conversation with the same messages and system prompt: not chat-1's checkpoint.
    await wrapped.doGenerate({ prompt: [system('Today is Tuesday.'), ...next], providerOptions: { compaction: { conversation: 'chat-2' } } });
    expect(scripted.stepCalls().at(-1)!.prompt).toEqual([system('Today is Tuesday.'), ...next]);
  });

  it('should forfeit the checkpoint of an unnamed conversation whose system prompt changes every step, and say so once', async () => {
    const scripted = copyingModel();
    const { warn, logger } = recordingLogger();
    const middleware = compaction({ contextWindow: 200_000, logger });
    const wrapped = wrap(scripted.model, middleware);
    await wrapped.doGenerate({ prompt: [system('It is 10:00.'), ...opening], providerOptions: { compaction: { compact: true } } });
    await wrapped.doGenerate({ prompt: [system('It is 10:01.'), ...next] });
    expect(scripted.stepCalls().at(-1)!.prompt).toEqual([system('It is 10:01.'), ...next]);
    await wrapped.doGenerate({ prompt: [system('It is 10:02.'), ...next, assistant('c'), user('d')] });
    expect(hasCheckpoint(scripted.stepCalls().at(-1)!.prompt)).toBe(false);
    expect(warn.filter((line) => line.includes('system messages'))).toEqual([
      'ai-compaction: a conversation came with other system messages than its checkpoint was written with: a checkpoint is found only under the system messages it was written with (a summary may hold what they hold), so it was not sent; name the conversation (providerOptions.compaction.conversation, for example useChat\'s id) to keep its checkpoint when its system prompt changes',
    ]);
  });
});
