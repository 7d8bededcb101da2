import { describe, expect, it } from 'vitest';
import { compaction, memoryStore } from '../../src';
import type { Message } from '../../src/prompt/types';
import { assistant, scriptedModel, textOf, user, wrap } from '../support/harness';
import { SUMMARY, textResult } from '../support/models';

const CONVERSATIONS = 200;
const STEPS = 30;

describe('compaction under load', () => {
  it(`should keep ${CONVERSATIONS} concurrent conversations x ${STEPS} steps apart, within the store's bound`, async () => {
    const maxBytes = 4 * 1024 * 1024;
    const store = memoryStore({ maxBytes });
    let peak = 0;
    const scripted = scriptedModel({
      // Each summary names its conversation, so a leak would show in another conversation's prompt.
      summary: (prompt) => textResult(SUMMARY.replace('Fix the failing users route test', `owner ${textOf(prompt.find((m) => m.role === 'user')).split(' ')[0]}`)),
    });
    const middleware = compaction({ contextWindow: 4_000, store });
    const wrapped = wrap(scripted.model, middleware);
    const run = async (id: number) => {
      const tag = `conv${id}`;
      const conversation: Message[] = [];
      for (let step = 0; step < STEPS; step++) {
        conversation.push(user(`${tag} asks ${step}: ${`${tag} `.repeat(60)}`));
        await wrapped.doGenerate({ prompt: conversation });
        peak = Math.max(peak, store.bytes());
        conversation.push(assistant(`${tag} answers ${step}: ${`${tag} `.repeat(60)}`));
      }
    };
    await Promise.all(Array.from({ length: CONVERSATIONS }, (_, id) => run(id)));

    const steps = scripted.stepCalls();
    expect(steps).toHaveLength(CONVERSATIONS * STEPS);
    expect(scripted.summaryCalls().length).toBeGreaterThanOrEqual(CONVERSATIONS);
    for (const call of steps) {
      const text = call.prompt.map(textOf).join('\n');
      const owner = /conv\d+/.exec(textOf(call.prompt.at(-1)))![0];
      const others = new Set(text.match(/conv\d+/g));
      expect([...others]).toEqual([owner]);
    }
    expect(peak).toBeLessThanOrEqual(maxBytes);
  });
});
