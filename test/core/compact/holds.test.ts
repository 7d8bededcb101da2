import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CompactionError, compaction, memoryStore } from '../../../src';
import type { CallOptions, Message } from '../../../src/prompt/types';
import { estimatePrompt } from '../../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, isSummaryPrompt, textResult, usage } from '../../support/models';
import { assistant, recordingLogger, scriptedModel, textOf, user, wrap } from '../../support/harness';

const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);
const STEPS = 200;

/**
 * An agent that calls `read_log` on each of 200 steps but the last, and a summarizer on the same
 * model: `summarize(index, steps)` answers the summary request `index` made after `steps` steps,
 * with the template (`ok`), without it (`no-template`) or by failing (`down`).
 */
function agentModel(summarize: (index: number, steps: number) => 'ok' | 'no-template' | 'down') {
  const calls: Array<{ summary: boolean; size: number; prompt: Message[] }> = [];
  let steps = 0;
  let summaries = 0;
  const model = new MockLanguageModel({
    doGenerate: async ({ prompt, tools }: CallOptions) => {
      const size = estimatePrompt(prompt, tools);
      if (isSummaryPrompt(prompt)) {
        calls.push({ summary: true, size, prompt });
        const answer = summarize(summaries++, steps);
        if (answer === 'down') throw new Error('503 Service Unavailable');
        return textResult(answer === 'ok' ? SUMMARY : 'I read the log; it is long.', size, 200);
      }
      calls.push({ summary: false, size, prompt });
      steps++;
      if (steps === STEPS) return textResult('The log is read.', size, 10);
      return {
        content: [{ type: 'tool-call', toolCallId: `call-${steps}`, toolName: 'read_log', input: JSON.stringify({ line: steps }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: usage(size, 10),
        warnings: [],
      };
    },
  });
  return {
    model,
    calls,
    pattern: () => calls.map((call) => (call.summary ? 'S' : 's')).join(''),
    summaryCalls: () => calls.filter((call) => call.summary),
    stepCalls: () => calls.filter((call) => !call.summary),
  };
}

const tools = {
  read_log: tool({
    description: 'Read one line of the log',
    inputSchema: z.object({ line: z.number() }),
    execute: async ({ line }) => `line ${line}: GET /api/users/${line} 200 in 3 ms; cache miss, fetched from the primary store, 2 rows, user agent curl/8.4.0, trace id 4bf92f3577b34da6a3ce929d0e0e4736`,
  }),
};

/** One model that sends each step through the next of `models` in turn (two server instances behind a balancer). */
function alternate(models: unknown[]) {
  let next = 0;
  const first = models[0] as { specificationVersion: string; provider: string; modelId: string; supportedUrls: unknown };
  return {
    specificationVersion: first.specificationVersion,
    provider: first.provider,
    modelId: first.modelId,
    supportedUrls: first.supportedUrls,
    doGenerate: (options: unknown) => (models[next++ % models.length] as { doGenerate(options: unknown): unknown }).doGenerate(options),
    doStream: (options: unknown) => (models[next++ % models.length] as { doStream(options: unknown): unknown }).doStream(options),
  };
}

/**
 * A 200-step `generateText` tool loop under a 40,000 window through `instances` middleware
 * instances sharing one store (each step goes to the next instance). The prompt starts at ~23,960
 * tokens, just under the 24,000 ceiling, and grows by ~44 tokens a step (a tool call and its result).
 */
async function toolLoop(agent: ReturnType<typeof agentModel>, instances: number) {
  const log = recordingLogger();
  const store = memoryStore();
  const middlewares = Array.from({ length: instances }, () => compaction({ contextWindow: 40_000, logger: log.logger, store }));
  const models = middlewares.map((middleware) => wrapLanguageModel({ model: agent.model as never, middleware }));
  const result = await generateText({
    model: (instances === 1 ? models[0] : alternate(models)) as never,
    tools,
    stopWhen: stepCountIs(STEPS),
    prompt: `Read the log, line by line. Here is its header:\n${tokens(23_900, 'h')}`,
  });
  return { result, log, middlewares };
}

const startsWithCheckpoint = (prompt: Message[]) => textOf(prompt[0]).startsWith('<conversation-checkpoint>');

describe('a summarizer that fails', () => {
  // 40,000 window -> ceiling 24,000, a tenth of it 2,400. Failure 1 at step 2 (24,009 tokens) holds
  // until the prompt grows by 2,400 (26,409, step ~57); failure 2 there holds for 4,800 (31,209,
  // step ~165); failure 3 there holds for 9,600 (40,827): beyond the window, and the loop ends at
  // ~32,800. Three failed compactions: each a summary request and its reminder, so 6 requests
  // (3 when the summarizer is down), where sending one on every step over the ceiling made 398.
  for (const instances of [1, 2]) {
    const where = instances === 1 ? 'one instance' : 'two instances sharing one store';
    it(`should make 6 summary requests over a 200-step tool loop whose summaries never fill the template (${where})`, async () => {
      const agent = agentModel(() => 'no-template');
      const { result, log } = await toolLoop(agent, instances);
      expect(result.steps).toHaveLength(STEPS);
      expect(agent.stepCalls()).toHaveLength(STEPS);
      expect(agent.summaryCalls()).toHaveLength(6);
      const failures = log.warn.filter((line) => line.includes('compaction failed (template-missing)'));
      expect(failures.map((line) => /grows by (\d+) tokens/.exec(line)?.[1])).toEqual(['2400', '4800', '9600']);
      expect(failures.map((line) => /failure (\d+) in a row/.exec(line)?.[1])).toEqual(['1', '2', '3']);
      for (const call of agent.stepCalls()) expect(call.size).toBeLessThan(40_000);
      expect(agent.stepCalls().some((call) => startsWithCheckpoint(call.prompt))).toBe(false);
    });
  }

  it('should make 3 summary requests over a 200-step tool loop whose summarizer is down', async () => {
    const agent = agentModel(() => 'down');
    const { result, log } = await toolLoop(agent, 1);
    expect(result.steps).toHaveLength(STEPS);
    expect(agent.summaryCalls()).toHaveLength(3);
    expect(log.warn.filter((line) => line.includes('compaction failed (summarizer-failed): the summary request failed: 503 Service Unavailable;'))).toHaveLength(3);
  });

  for (const instances of [1, 2]) {
    const where = instances === 1 ? 'one instance' : 'two instances sharing one store';
    it(`should use a summarizer again that recovers after 20 steps: a checkpoint is made and sent (${where})`, async () => {
      const agent = agentModel((_index, steps) => (steps < 20 ? 'down' : 'ok'));
      const { result, log, middlewares } = await toolLoop(agent, instances);
      expect(result.steps).toHaveLength(STEPS);
      // Down at step 2; tried again once the prompt has grown by 2,400, and then it works.
      expect(agent.pattern()).toMatch(/^sSs+Ss+$/);
      const until = Number(/from \d+ to (\d+)\)/.exec(log.warn.find((line) => line.includes('compaction failed')) ?? '')?.[1]);
      const last = middlewares.map((middleware) => middleware.last()).find((record) => record !== undefined)!;
      expect(last.reason).toBe('auto');
      expect(last.tokensBefore).toBeGreaterThanOrEqual(until);
      expect(last.tokensBefore).toBeLessThan(until + 100);
      const compacted = agent.stepCalls().findIndex((call) => startsWithCheckpoint(call.prompt));
      expect(compacted).toBeGreaterThan(20);
      expect(agent.stepCalls().slice(compacted).every((call) => startsWithCheckpoint(call.prompt))).toBe(true);
      expect(agent.stepCalls().slice(compacted).every((call) => call.size < 24_000)).toBe(true);
    });
  }

  it('should double the growth with each failure in a row, and try once a step that no longer fits the window, throwing its error', async () => {
    const log = recordingLogger();
    const scripted = scriptedModel({ summary: () => textResult('no template'), inputTokens: () => undefined });
    const wrapped = wrap(scripted.model, compaction({ contextWindow: 40_000, logger: log.logger }));
    let conversation: Message[] = [user(tokens(12_000, 'a')), assistant(tokens(12_000, 'b')), user('go')];
    const steps: string[] = [];
    for (const grow of [0, 1_000, 2_400, 1_000, 3_800, 4_800, 4_000, 5_000, 0]) {
      if (grow > 0) conversation = [...conversation, assistant('ok'), user(tokens(grow, 'c'))];
      const before = scripted.calls.length;
      const outcome = await wrapped.doGenerate({ prompt: conversation }).then(
        () => 'sent',
        (error: unknown) => (CompactionError.isInstance(error) ? `threw ${error.reason}` : 'threw'),
      );
      const calls = scripted.calls.slice(before).map((call) => (call.summary ? 'S' : 's')).join('');
      steps.push(`${estimatePrompt(conversation)} ${calls} ${outcome}`);
    }
    // The 40,000 window's ceiling is 24,000: held for 2,400, then 4,800, then 9,600 tokens of growth.
    // 37,003 is held and fits; 41,004 is held but does not fit: it tries once, and throws.
    expect(steps).toEqual([
      '24001 SSs sent',
      '25001 s sent',
      '27402 SSs sent',
      '28402 s sent',
      '32203 SSs sent',
      '37003 s sent',
      '41004 SS threw template-missing',
      '46004 SS threw template-missing',
      '46004 SS threw template-missing',
    ]);
    const failures = log.warn.filter((line) => line.includes('compaction failed'));
    expect(failures).toHaveLength(6);
    expect(failures[0]).toBe(
      'ai-compaction: compaction failed (template-missing): the summary did not fill in the template after one reminder; the step goes out unchanged. ' +
        'Not compacting this conversation on its own again until its prompt grows by 2400 tokens (from 24001 to 26401), ' +
        'except a step that no longer fits the window (failure 1 in a row; each further one doubles the growth).',
    );
    expect(failures[3]).toBe(
      'ai-compaction: compaction failed (template-missing): the summary did not fill in the template after one reminder; ' +
        'the step does not fit the window of 40000 tokens, so the CompactionError is thrown. ' +
        'Not compacting this conversation on its own again until its prompt grows by 19200 tokens (from 41004 to 60204), ' +
        'except a step that no longer fits the window (failure 4 in a row; each further one doubles the growth).',
    );
  });

  it('should not hold a manual compaction, and end the backoff with a success', async () => {
    const log = recordingLogger();
    let failing = true;
    const scripted = scriptedModel({ summary: () => (failing ? textResult('no template') : undefined), inputTokens: () => undefined });
    const middleware = compaction({ contextWindow: 40_000, logger: log.logger });
    const wrapped = wrap(scripted.model, middleware);
    let conversation: Message[] = [user(tokens(12_000, 'a')), assistant(tokens(12_000, 'b')), user('go')];
    const grow = (count: number) => (conversation = [...conversation, assistant('ok'), user(tokens(count, 'c'))]);
    await wrapped.doGenerate({ prompt: conversation });
    expect(scripted.summaryCalls()).toHaveLength(2);
    // Held: the prompt has grown by less than 2,400.
    await wrapped.doGenerate({ prompt: grow(100) });
    expect(scripted.summaryCalls()).toHaveLength(2);
    // Asked for: compacts whatever holds stand, through either way of asking.
    await wrapped.doGenerate({ prompt: grow(100), providerOptions: { compaction: { compact: true } } });
    expect(scripted.summaryCalls()).toHaveLength(4);
    failing = false;
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: grow(100) });
    expect(scripted.summaryCalls()).toHaveLength(5);
    expect(middleware.last()!.reason).toBe('manual');
    expect(startsWithCheckpoint(scripted.stepCalls().at(-1)!.prompt)).toBe(true);
    // The success ended the backoff: the next failure is the first in a row again.
    failing = true;
    grow(24_000);
    await wrapped.doGenerate({ prompt: conversation });
    expect(scripted.summaryCalls()).toHaveLength(7);
    const failures = log.warn.filter((line) => line.includes('compaction failed'));
    expect(failures.map((line) => /failure (\d+) in a row/.exec(line)?.[1])).toEqual(['1', '2', '1']);
  });

  it('should warn once for concurrent steps that shared one failed compaction', async () => {
    const log = recordingLogger();
    let summaries = 0;
    let steps = 0;
    // A summarizer that takes a moment (turns of the event loop, no time), so that the five steps find its compaction under way and join it.
    const model = new MockLanguageModel({
      doGenerate: async ({ prompt }: CallOptions) => {
        if (!isSummaryPrompt(prompt)) return (steps++, textResult('ok', undefined, 10));
        summaries++;
        for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
        return textResult('no template');
      },
    });
    const wrapped = wrap(model, compaction({ contextWindow: 40_000, logger: log.logger }));
    const prompt = [user(tokens(12_000, 'a')), assistant(tokens(12_000, 'b')), user('go')];
    await Promise.all(Array.from({ length: 5 }, () => wrapped.doGenerate({ prompt })));
    expect(summaries).toBe(2);
    expect(steps).toBe(5);
    expect(log.warn.filter((line) => line.includes('compaction failed'))).toHaveLength(1);
  });

  it("should not let one conversation's failure hold another that shares its opening", async () => {
    const log = recordingLogger();
    const scripted = scriptedModel({ summary: () => textResult('no template'), inputTokens: () => undefined });
    const wrapped = wrap(scripted.model, compaction({ contextWindow: 40_000, logger: log.logger }));
    const opening = [user('Start the task.'), assistant('On it.')];
    const a = [...opening, user(tokens(12_000, 'a')), assistant(tokens(12_000, 'b')), user('A')];
    const b = [...opening, user(tokens(12_000, 'c')), assistant(tokens(12_000, 'd')), user('B')];
    await wrapped.doGenerate({ prompt: a });
    await wrapped.doGenerate({ prompt: b });
    expect(scripted.summaryCalls()).toHaveLength(4);
    await wrapped.doGenerate({ prompt: [...a, assistant('a'), user('more')] });
    await wrapped.doGenerate({ prompt: [...b, assistant('b'), user('more')] });
    expect(scripted.summaryCalls()).toHaveLength(4);
  });
});

describe('a hold placed because there was nothing older to compact', () => {
  // 20,000 window -> ceiling 17,000. Turn 1 is one 18,500-token message: nothing older to compact,
  // so it goes out as it is (it fits the window) and holds. Turn 2 adds a 30-token reply and a
  // 1,600-token question: 18,500 + 30 + 1,600 = 20,130 tokens, grown by less than a tenth of the
  // ceiling (1,700); but now the first turn can be covered, so the hold has ended.
  const reply = tokens(30, 'r');
  const first = [user(tokens(18_500, 'd'))];
  const second = [...first, assistant(reply), user(tokens(1_600, 'q'))];
  async function twoTurns() {
    const log = recordingLogger();
    const scripted = scriptedModel({ reply: (prompt) => textResult(reply, estimatePrompt(prompt), 30) });
    const middleware = compaction({ contextWindow: 20_000, logger: log.logger });
    const wrapped = wrap(scripted.model, middleware);
    await wrapped.doGenerate({ prompt: first });
    expect(scripted.summaryCalls()).toHaveLength(0);
    expect(scripted.stepCalls()[0]!.prompt).toEqual(first);
    expect(log.warn).toEqual([
      'ai-compaction: there is nothing older to compact; the prompt stays at 18500 tokens, at or above the ceiling of 17000. ' +
        'Not compacting again until there is (a new exchange or step).',
    ]);
    const outcome = await wrapped.doGenerate({ prompt: second }).then(
      () => undefined,
      (error: unknown) => error,
    );
    return { log, scripted, middleware, outcome };
  }

  it('should end at the next exchange, so 20,130 tokens do not go to a 20,000 window (18,500-token message, then 1,600)', async () => {
    const { log, scripted, outcome } = await twoTurns();
    // The second turn compacts (a warning says why when that fails) instead of being held.
    expect(log.warn.length + scripted.summaryCalls().length).toBeGreaterThan(1);
    for (const call of scripted.stepCalls()) expect(estimatePrompt(call.prompt)).toBeLessThanOrEqual(20_000);
    if (outcome !== undefined) expect(CompactionError.isInstance(outcome)).toBe(true);
  });

  // docs/design.md, "The summary request": it leaves out the live 1,600-token question, so it is
  // 18,530 counted tokens + the appended request (room 20,000 - (18,530 + 1.15 x 343) = 1,075 >=
  // 1,024).
  it('should compact the second turn and send it under the window (18,500-token message, then 1,600)', async () => {
    const { scripted, middleware, outcome } = await twoTurns();
    expect(outcome).toBeUndefined();
    expect(scripted.summaryCalls()).toHaveLength(1);
    expect(middleware.last()).toMatchObject({ reason: 'auto', messagesCovered: 2, tokensBefore: 20_130 });
    const sent = scripted.stepCalls()[1]!.prompt;
    expect(startsWithCheckpoint(sent)).toBe(true);
    expect(sent.at(-1)).toEqual(user(tokens(1_600, 'q')));
    expect(estimatePrompt(sent)).toBeLessThan(17_000);
  });

  it('should stay while the conversation only adds user messages (still nothing older)', async () => {
    const log = recordingLogger();
    const scripted = scriptedModel({ inputTokens: () => undefined });
    const wrapped = wrap(scripted.model, compaction({ contextWindow: 20_000, logger: log.logger }));
    const conversation: Message[] = [user(tokens(18_500, 'd'))];
    for (let index = 0; index < 3; index++) {
      conversation.push(user(tokens(600, 'e')));
      await wrapped.doGenerate({ prompt: conversation });
    }
    expect(scripted.summaryCalls()).toHaveLength(0);
    expect(log.warn.filter((line) => line.includes('there is nothing older to compact'))).toHaveLength(1);
  });
});
