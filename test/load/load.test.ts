import { describe, expect, it } from 'vitest';
import { type CompactionStore, compaction, memoryStore } from '../../src';
import type { Message } from '../../src/prompt/types';
import { assistant, scriptedModel, textOf, user, wrap } from '../support/harness';
import { SUMMARY, textResult } from '../support/models';

const CONVERSATIONS = 200;
const STEPS = 30;

/**
 * The conversation a summary request is for, from its own newest message before the appended
 * request (a message of the conversation, or the transcript of its messages), never from the
 * checkpoint: after the first compaction the first user message is the checkpoint, whose tag a
 * leaked checkpoint would carry.
 */
function ownerOf(prompt: Message[]): string {
  const owner = /conv\d{3}/.exec(textOf(prompt.at(-2)))?.[0];
  if (owner === undefined) throw new Error(`no owner in the summary request: ${textOf(prompt.at(-2)).slice(0, 80)}`);
  return owner;
}

describe('compaction under load', () => {
  it(`should keep ${CONVERSATIONS} concurrent conversations x ${STEPS} steps apart, within the store's bound`, async () => {
    // Small enough that the checkpoints and threads of 200 conversations do not all fit: the bound
    // is reached and the least recently used records go.
    const maxBytes = 256 * 1024;
    const inner = memoryStore({ maxBytes });
    const written = new Set<string>();
    const overBound: number[] = [];
    let peak = 0;
    // Every write is checked against the bound right after it lands.
    const store: CompactionStore = {
      get: (key) => inner.get(key),
      delete: (key) => inner.delete(key),
      async set(key, value, options) {
        await inner.set(key, value, options);
        written.add(key);
        const bytes = inner.bytes();
        peak = Math.max(peak, bytes);
        if (bytes > maxBytes) overBound.push(bytes);
      },
    };
    const scripted = scriptedModel({
      // Each summary names its conversation, so a leak would show in another conversation's prompt.
      summary: (prompt) => textResult(SUMMARY.replace('Fix the failing users route test', `owner ${ownerOf(prompt)}`)),
    });
    const middleware = compaction({ contextWindow: 4_000, store });
    const wrapped = wrap(scripted.model, middleware);
    const run = async (id: number) => {
      // Tags of one width: a message cut to its ends cannot make one tag out of another (conv10 of conv101).
      const tag = `conv${String(id).padStart(3, '0')}`;
      const conversation: Message[] = [];
      for (let step = 0; step < STEPS; step++) {
        conversation.push(user(`${tag} asks ${step}: ${`${tag} `.repeat(60)}`));
        await wrapped.doGenerate({ prompt: conversation });
        conversation.push(assistant(`${tag} answers ${step}: ${`${tag} `.repeat(60)}`));
      }
    };
    await Promise.all(Array.from({ length: CONVERSATIONS }, (_, id) => run(id)));

    const steps = scripted.stepCalls();
    expect(steps).toHaveLength(CONVERSATIONS * STEPS);
    expect(scripted.summaryCalls().length).toBeGreaterThanOrEqual(CONVERSATIONS);
    for (const call of steps) {
      const text = call.prompt.map(textOf).join('\n');
      const owner = /conv\d{3}/.exec(textOf(call.prompt.at(-1)))![0];
      const others = new Set(text.match(/conv\d{3}/g));
      expect([...others]).toEqual([owner]);
    }
    for (const call of scripted.summaryCalls()) {
      expect([...new Set(call.prompt.map(textOf).join('\n').match(/conv\d{3}/g))]).toEqual([ownerOf(call.prompt)]);
    }
    expect(overBound).toEqual([]);
    // The bound was reached: records written earlier have been evicted.
    expect(peak).toBeGreaterThan(maxBytes * 0.9);
    const left = await Promise.all([...written].map((key) => inner.get(key)));
    expect(left.filter((value) => value === undefined).length).toBeGreaterThan(0);
  });
});
