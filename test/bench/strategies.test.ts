import type { LanguageModelMiddleware } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { hostKeepsTimers, virtualClock } from '../../bench/clock';
import { keepTaskAndLast, summarizeOlder, timed } from '../../bench/strategies';

describe('timed', () => {
  beforeAll(() => hostKeepsTimers());

  it('times the compacting steps, the others, and how long the agent ran before each compaction, on the run\'s clock', async () => {
    const clock = virtualClock();
    let compactions = 0;
    // steps 2 and 4 compact and take 300 ms in transformParams, the others 10 ms
    let call = 0;
    const middleware: LanguageModelMiddleware = {
      specificationVersion: 'v3',
      transformParams: async ({ params }) => {
        call++;
        const compacts = call === 2 || call === 4;
        await clock.sleep(compacts ? 300 : 10);
        if (compacts) compactions++;
        return params;
      },
    };
    const run = timed({ middleware: [middleware], compactions: () => compactions }, clock.now);
    const transform = run.middleware[0]!.transformParams!;
    for (let step = 0; step < 4; step++) {
      await transform({ params: { prompt: [] }, type: 'generate', model: undefined as never });
      // the model answers in 1 s
      await clock.sleep(1_000);
    }
    expect(run.compactingMs()).toEqual([300, 300]);
    expect(run.otherMs()).toEqual([10, 10]);
    // step 2 starts 1,010 ms after step 1 did; step 4 starts 1,000 + 10 + 1,000 ms after step 2 ended
    expect(run.beforeMs()).toEqual([1_010, 2_010]);
    expect(clock.elapsed()).toBe(4 * 1_000 + 2 * 300 + 2 * 10);
  });
});

describe('the hand-written strategies', () => {
  type Prompt = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params']['prompt'];
  const text = (role: 'user' | 'assistant', value: string) => ({ role, content: [{ type: 'text' as const, text: value }] });
  const call = (id: string) => ({ role: 'assistant' as const, content: [{ type: 'tool-call' as const, toolCallId: id, toolName: 'read_file', input: { path: id } }] });
  const result = (id: string) => ({ role: 'tool' as const, content: [{ type: 'tool-result' as const, toolCallId: id, toolName: 'read_file', output: { type: 'text' as const, value: id } }] });
  /** One token a message: a limit of n tokens is reached by a prompt of n messages. */
  const byMessages = (prompt: Prompt) => prompt.length;
  const send = async (middleware: LanguageModelMiddleware, prompt: Prompt, model: unknown = undefined) =>
    (await middleware.transformParams!({ params: { prompt }, type: 'generate', model: model as never })).prompt;
  const conversation = (steps: number): Prompt => [{ role: 'system', content: 'be terse' }, text('user', 'the task'), ...Array.from({ length: steps }, (_, i) => [call(`c${i}`), result(`c${i}`)]).flat()];

  it('keeps the system prompt, the task and the last messages at the limit, from an assistant message, and holds the cut until the limit comes again', async () => {
    let trims = 0;
    const window = keepTaskAndLast(2, 9, () => void trims++, byMessages);
    // 8 messages: under the limit, sent as they are
    expect(await send(window, conversation(3))).toEqual(conversation(3));
    expect(trims).toBe(0);
    // 9: the last 2 start at a tool result, so the cut moves on to the next assistant message
    expect(await send(window, conversation(3).concat(call('c3')))).toEqual([...conversation(0), call('c3')]);
    expect(trims).toBe(1);
    // later steps extend what was sent: the task, then everything from the cut
    expect(await send(window, conversation(6))).toEqual([...conversation(0), call('c3'), result('c3'), call('c4'), result('c4'), call('c5'), result('c5')]);
    expect(trims).toBe(1);
    // the limit again: a new cut
    expect(await send(window, conversation(7))).toEqual([...conversation(0), call('c6'), result('c6')]);
    expect(trims).toBe(2);
  });

  it('summarizes all but the newest messages within a share of the limit, in one request', async () => {
    let summaries = 0;
    const requests: Prompt[] = [];
    const model = {
      doGenerate: async ({ prompt }: { prompt: Prompt }) => {
        requests.push(prompt);
        return { content: [{ type: 'text', text: 'SUMMARY' }] };
      },
    };
    // a quarter of a limit of 12: the newest 3 messages
    const older = summarizeOlder({ share: 0.25 }, 12, () => void summaries++, byMessages);
    const prompt = conversation(6);
    expect(prompt).toHaveLength(14);
    const sent = await send(older, prompt, model);
    expect(summaries).toBe(1);
    // the cut goes on from the 3rd newest (a tool result) to the next assistant message
    expect(sent).toEqual([{ role: 'system', content: 'be terse' }, text('user', 'Summary of the earlier conversation:\nSUMMARY'), call('c5'), result('c5')]);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'text', text: expect.stringMatching(/^You MUST summarize the conversation above/) }] });
  });
});
