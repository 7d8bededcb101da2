import { describe, expect, it } from 'vitest';
import { CompactionError, type CompactionRecord, type CompactionStore, compaction, isSummaryRequest, memoryStore } from '../../src';
import { checkpointText } from '../../src/checkpoint/message';
import { SUMMARY_FIRST_LINE } from '../../src/checkpoint/prompts';
import { USER_WORDS_NOTE, collectUserWords, withUserWords } from '../../src/checkpoint/user-words';
import type { CallOptions, FunctionTool, Message } from '../../src/prompt/types';
import { estimatePrompt } from '../../src/sizing/estimate';
import { MockLanguageModel, SUMMARY, textResult } from '../support/models';
import { assistant, chat, recordingLogger, scriptedModel, system, textOf, user, wrap } from '../support/harness';

// Every option is checked through the middleware itself (not through the helper that reads it), so
// a middleware that drops an option on the floor fails here. Sizes follow docs/design.md ("The
// ceiling", "The size of a prompt", "The summary request") with the 4-characters-a-token estimate:
// `tokens(n)` is exactly n tokens, 'next' is exactly 1.

const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);

/** A conversation estimated at exactly `total` tokens: two long messages and a 1-token new user message. */
function ofSize(total: number): Message[] {
  const first = Math.floor((total - 1) / 2);
  return [user(tokens(first)), assistant(tokens(total - 1 - first, 'a')), user('next')];
}

const checkpointFor = (record: string, summary = SUMMARY): Message => ({
  role: 'user',
  content: [{ type: 'text', text: checkpointText(summary, record) }],
});

/** The record lines (docs/design.md, "The record") for text messages. */
const recordOf = (messages: Message[]) =>
  messages.map((message) => `${message.role === 'user' ? '[User]' : '[Assistant]'}: ${textOf(message)}`).join('\n\n');

/**
 * How many summary requests one step of `prompt` makes on a fresh instance, at the ceiling alone: a
 * step just under it would also prepare the next checkpoint in the background (`prepare`,
 * docs/design.md, "Preparing ahead", tested in compact/prepare.test.ts), so that is off here.
 */
async function summariesFor(options: Parameters<typeof compaction>[0], prompt: Message[], call: Partial<CallOptions> = {}, modelId?: string) {
  const scripted = scriptedModel(modelId === undefined ? {} : { modelId });
  await wrap(scripted.model, compaction({ prepare: false, ...options })).doGenerate({ prompt, ...call });
  expect(scripted.stepCalls()).toHaveLength(1);
  return scripted.summaryCalls().length;
}

const readFile = (description: string): FunctionTool => ({
  type: 'function',
  name: 'read_file',
  description,
  inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'Path from the project root' } }, required: ['path'] },
});

/** docs/design.md, "The size of a prompt": a tool definition counts its name, description and JSON schema, 4 characters a token. */
const toolTokens = (tool: FunctionTool) => Math.round((tool.name.length + (tool.description ?? '').length + JSON.stringify(tool.inputSchema).length) / 4);

describe('options wired through the middleware', () => {
  it('should build exact prompts of the size asked for', () => {
    for (const total of [150_000, 159_999, 169_990, 20_001]) {
      expect(ofSize(total).map(textOf).join('').length).toBe(total * 4);
    }
  });

  describe('the ceiling', () => {
    it('should compact at 80 % of the window with buffer "20%": 160,000 of 200,000, not 159,999', async () => {
      expect(await summariesFor({ contextWindow: 200_000, buffer: '20%' }, ofSize(160_000))).toBe(1);
      expect(await summariesFor({ contextWindow: 200_000, buffer: '20%' }, ofSize(159_999))).toBe(0);
    });

    it('should keep a buffer of 10,000 tokens free: 190,000 of 200,000, not 189,999', async () => {
      expect(await summariesFor({ contextWindow: 200_000, buffer: 10_000 }, ofSize(190_000))).toBe(1);
      expect(await summariesFor({ contextWindow: 200_000, buffer: 10_000 }, ofSize(189_999))).toBe(0);
    });

    it("should keep the step's maxOutputTokens free when it is more than the buffer: 150,000 of 200,000", async () => {
      // 200,000 - max(30,000 default buffer, 50,000) = 150,000.
      expect(await summariesFor({ contextWindow: 200_000 }, ofSize(150_000), { maxOutputTokens: 50_000 })).toBe(1);
      expect(await summariesFor({ contextWindow: 200_000 }, ofSize(149_999), { maxOutputTokens: 50_000 })).toBe(0);
      // A smaller maxOutputTokens leaves the buffer in force: 200,000 - max(30,000, 500) = 170,000.
      expect(await summariesFor({ contextWindow: 200_000 }, ofSize(169_999), { maxOutputTokens: 500 })).toBe(0);
      expect(await summariesFor({ contextWindow: 200_000 }, ofSize(170_000), { maxOutputTokens: 500 })).toBe(1);
    });

    it('should ask a contextWindow function for the window of each model, and compact only where it gives one', async () => {
      const asked: string[] = [];
      const contextWindow = (model: { provider: string; modelId: string }) => {
        asked.push(model.modelId);
        return model.modelId === 'big' ? 20_000 : undefined;
      };
      // 20,000 -> ceiling 17,000; the prompt is 18,000.
      expect(await summariesFor({ contextWindow }, ofSize(18_000), {}, 'big')).toBe(1);
      expect(await summariesFor({ contextWindow }, ofSize(18_000), {}, 'small')).toBe(0);
      expect(asked).toContain('big');
      expect(asked).toContain('small');
    });

    it('should count tool definitions: 169,990 of messages plus a tool compacts at the 170,000 ceiling, without it not', async () => {
      const tool = readFile('Read a file of the project and return its text.');
      expect(toolTokens(tool)).toBeGreaterThanOrEqual(10);
      expect(await summariesFor({ contextWindow: 200_000 }, ofSize(169_990), { tools: [tool] })).toBe(1);
      expect(await summariesFor({ contextWindow: 200_000 }, ofSize(169_990))).toBe(0);
    });
  });

  describe('the record', () => {
    /**
     * A record of chat(6, 900, 'k') opened with the user's earlier messages: the first question and
     * the newest ones before the newest messages, each its ends, within `words` tokens, then those.
     */
    function expectEarlierWords(record: string, newest: string, words: number) {
      expect(record.endsWith(`\n\n${newest}`)).toBe(true);
      // The newest question (k-question-5) opens what follows them, whole or its ends.
      const opening = record.slice(0, record.indexOf('\n\n[User]: k-question-5'));
      expect(opening.startsWith(`${USER_WORDS_NOTE}\n\n[User]: k-question-0 `)).toBe(true);
      expect(opening).toContain('[User]: k-question-4 ');
      expect(opening).not.toContain('[User]: k-question-5');
      expect(opening).toMatch(/characters cut\]/);
      expect(Math.round(opening.length / 4)).toBeLessThanOrEqual(words);
    }

    // Exchange 0 is large (14,000 tokens), exchanges 1 and 2 small (~1,400 tokens each once
    // serialized). The whole conversation (~16,800) is over the default keep of 15,000, so the
    // default takes the newest exchanges within 15,000: exchanges 1 and 2 (~2,800). keep 2,000
    // takes only exchange 2 (~1,400; with exchange 1 it would be ~2,800 > 2,000).
    const exchange = (index: number, size: number) => [user(`q${index} ${tokens(size, 'q')}`), assistant(`a${index} ${tokens(size, 'r')}`)];
    const conversation = [...exchange(0, 7_000), ...exchange(1, 700), ...exchange(2, 700), user('go')];

    async function recordWith(options: Parameters<typeof compaction>[0]) {
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 200_000, ...options });
      middleware.compactNext();
      await wrap(scripted.model, middleware).doGenerate({ prompt: conversation });
      expect(scripted.stepCalls()[0]!.prompt).toEqual([checkpointFor(middleware.last()!.record), user('go')]);
      return middleware.last()!.record;
    }

    // The user's messages before the record open it, within 2,000 tokens (an eighth of the budget is
    // more): docs/design.md, "The user's words".
    const earlier = (end: number) => collectUserWords(conversation, 0, end, 2_000).map((words) => words.line);

    it('should keep the newest exchanges within keep: two by default, one with keep 2,000', async () => {
      expect(await recordWith({})).toBe(withUserWords(earlier(2), recordOf(conversation.slice(2, 6))));
      expect(await recordWith({ keep: 2_000 })).toBe(withUserWords(earlier(4), recordOf(conversation.slice(4, 6))));
    });

    it('should give the record what the budget leaves: a quarter of the room less the live part, the summary and the wrapper', async () => {
      // 32,000 -> ceiling 16,000, a room of 16,000 and a budget of 4,000: less the live turn ('go', 1
      // token), the summary (113) and the checkpoint's wrapper (61), 3,825 for the record and the
      // user's earlier messages, which take up to an eighth of the budget (500). Six exchanges of
      // ~1,810 tokens each once serialized: without those messages the newest two (~3,620) would
      // fit; with them (the first question and the newest before the record, their ends) only the
      // newest does. An 8,000-token system prompt leaves a room of 8,000, a budget of 2,000 (250 for
      // the user's messages): less than the newest exchange, so the record starts inside it (its
      // question's ends, then the answer).
      for (const [frame, exchanges, words] of [[0, 2, 500], [8_000, 1, 250]] as const) {
        const six = chat(6, 900, 'k');
        const scripted = scriptedModel();
        const middleware = compaction({ contextWindow: 32_000 });
        middleware.compactNext();
        const frameMessages = frame === 0 ? [] : [system(tokens(frame, 's'))];
        await wrap(scripted.model, middleware).doGenerate({ prompt: [...frameMessages, ...six, user('go')] });
        const { record } = middleware.last()!;
        // Without the frame the newest exchange; with it, the newest answer, after its question's ends.
        expectEarlierWords(record, recordOf(six.slice(12 - exchanges)), words);
        expect(scripted.stepCalls()[0]!.prompt).toEqual([...frameMessages, checkpointFor(record), user('go')]);
      }
    });

    it('should keep the record within keep when the budget leaves more (32k window, keep 2,000)', async () => {
      // The room is 16,000 and the budget 4,000, but keep caps the record at 2,000 tokens: the newest
      // exchange (~1,810), not two.
      const six = chat(6, 900, 'k');
      const scripted = scriptedModel();
      const middleware = compaction({ contextWindow: 32_000, keep: 2_000 });
      middleware.compactNext();
      await wrap(scripted.model, middleware).doGenerate({ prompt: [...six, user('go')] });
      expectEarlierWords(middleware.last()!.record, recordOf(six.slice(10)), 500);
    });
  });

  it('should report as tokensAfter the estimate of the prompt actually sent, with its tools', async () => {
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000 });
    const tool = readFile(`Read a file. ${tokens(500, 'd')}`);
    middleware.compactNext();
    await wrap(scripted.model, middleware).doGenerate({ prompt: [system(tokens(300, 's')), ...chat(3, 200), user('go')], tools: [tool] });
    const step = scripted.stepCalls()[0]!;
    expect(step.tools).toEqual([tool]);
    expect(step.prompt[0]).toEqual(system(tokens(300, 's')));
    expect(middleware.last()!.tokensAfter).toBe(estimatePrompt(step.prompt, step.tools));
    // The tool's 500-odd tokens and the system prompt's 300 are in it.
    const messagesOnly = Math.round(step.prompt.slice(1).map(textOf).join('').length / 4);
    // (each part rounded on its own: within a token)
    expect(Math.abs(middleware.last()!.tokensAfter - (300 + messagesOnly + toolTokens(tool)))).toBeLessThanOrEqual(1);
  });
});

describe('provider counts', () => {
  it('should keep a count when only the tool definitions changed, plus their growth', async () => {
    // Step 1 is counted at 200 tokens (too few for its characters to learn from, enough to be
    // right). Step 2 has the same system prompt and conversation (plus a reply and a new message),
    // but a tool whose description alone is 16,900 tokens: 200 + 10 + its growth (67,601
    // characters, 16,900) + 1 is 17,111, over the 17,000 ceiling of a 20,000 window, while
    // 200 + 10 + 1 would not be.
    const scripted = scriptedModel({ inputTokens: () => 200 });
    const middleware = compaction({ contextWindow: 20_000 });
    const wrapped = wrap(scripted.model, middleware);
    const conversation = [system('You are a coding agent.'), user('hi'), assistant(tokens(1_000, 'a')), user('q')];
    await wrapped.doGenerate({ prompt: conversation, tools: [readFile('Read a file.')] });
    expect(scripted.summaryCalls()).toHaveLength(0);
    const big = [readFile(`Read a file. ${tokens(16_900, 'd')}`)];
    const second = [...conversation, assistant('done'), user('next')];
    await wrapped.doGenerate({ prompt: second, tools: big });
    expect(scripted.summaryCalls()).toHaveLength(1);
    expect(middleware.last()).toMatchObject({ reason: 'auto', tokensBefore: 200 + 10 + 16_900 + 1 });
    // Not the whole prompt's estimate:
    expect(estimatePrompt(second, big)).toBe(17_944);
  });

  it('should take a count of 0 input tokens for no count: the estimate stays in force', async () => {
    // Some OpenAI-compatible servers report prompt_tokens 0 for a cached prompt. Window 32,000 ->
    // ceiling 16,000; the second step's prompt is estimated at 18,001 tokens.
    const scripted = scriptedModel({ inputTokens: () => 0 });
    const middleware = compaction({ contextWindow: 32_000 });
    const wrapped = wrap(scripted.model, middleware);
    const conversation: Message[] = [user(tokens(9_000, 'a'))];
    await wrapped.doGenerate({ prompt: conversation });
    conversation.push(assistant(tokens(9_000, 'b')), user('next'));
    expect(estimatePrompt(conversation)).toBe(18_001);
    await wrapped.doGenerate({ prompt: conversation });
    expect(scripted.summaryCalls()).toHaveLength(1);
    expect(middleware.last()).toMatchObject({ reason: 'auto', tokensBefore: 18_001 });
  });

  it('should measure the whole prompt by estimate after a new checkpoint, not the old count plus what came since', async () => {
    // window 160,000 -> ceiling 136,000. Step 1 is counted at 150,000; later steps report no usage.
    let counted = 0;
    const scripted = scriptedModel({ inputTokens: () => (counted++ === 0 ? 150_000 : undefined) });
    const middleware = compaction({ contextWindow: 160_000 });
    const wrapped = wrap(scripted.model, middleware);
    const conversation: Message[] = [user(tokens(1_000))];
    await wrapped.doGenerate({ prompt: conversation });

    conversation.push(assistant('reply'), user('next'));
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    // The count of step 1 (150,000 + 10 output) plus the 1-token new message.
    expect(middleware.last()).toMatchObject({ reason: 'manual', messagesCovered: 2, tokensBefore: 150_011 });

    conversation.push(assistant('r2'), user('third'));
    await wrapped.doGenerate({ prompt: conversation });
    // 150,011 + the new messages would be over the ceiling; the checkpointed prompt is ~1,000 smaller.
    expect(scripted.summaryCalls()).toHaveLength(1);
    const third = scripted.stepCalls()[2]!.prompt;
    // The record is the covered turn: its task, and its reply noted as summarized.
    expect(third).toEqual([checkpointFor(`[User]: ${tokens(1_000)}\n\n[1 earlier steps of this turn are summarized above]`), user('next'), assistant('r2'), user('third')]);

    conversation.push(assistant('r3'), user('four'));
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    expect(scripted.summaryCalls()).toHaveLength(2);
    expect(middleware.last()!.tokensBefore).toBe(estimatePrompt([...third, assistant('r3'), user('four')]));
    // the checkpointed prompt: the summary, the record with the 1,000-token task, and after it
    expect(middleware.last()!.tokensBefore).toBeLessThan(1_500);
  });
});

describe('summary requests are recognised by structure', () => {
  const claimed = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }], providerOptions: { compaction: { summaryRequest: true } } });

  it('should recognise the marker the middleware set, never the text nor a marker a caller wrote', async () => {
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000 });
    middleware.compactNext();
    await wrap(scripted.model, middleware).doGenerate({ prompt: [user('one'), assistant('r1'), user('two'), assistant('r2'), user('three')] });
    const own = scripted.summaryCalls()[0]!.prompt.at(-1)!;
    const marked = (text: string): Message => ({ ...own, content: [{ type: 'text', text }] }) as Message;
    expect(isSummaryRequest({ prompt: [user(`${SUMMARY_FIRST_LINE} ...`)] })).toBe(false);
    expect(isSummaryRequest({ prompt: [user('hi'), user(`${SUMMARY_FIRST_LINE}\nand the template`)] })).toBe(false);
    expect(isSummaryRequest({ prompt: [marked('anything at all')] })).toBe(true);
    expect(isSummaryRequest({ prompt: [user('hi'), marked('')] })).toBe(true);
    // Only the last message counts.
    expect(isSummaryRequest({ prompt: [marked('anything'), user('hi')] })).toBe(false);
    // A caller's message that claims to be one (the marker's key, any value but the middleware's) is none.
    expect(isSummaryRequest({ prompt: [user('hi'), claimed('anything')] })).toBe(false);
    expect(isSummaryRequest({ prompt: [user('hi'), { role: 'system', content: 'x', providerOptions: { compaction: { summaryRequest: 'guess' } } }] })).toBe(false);
  });

  /** A model that tells summary requests by the marker, as a provider-side middleware would. */
  function markerModel() {
    const calls: Array<{ prompt: Message[]; summary: boolean }> = [];
    const model = new MockLanguageModel({
      doGenerate: async (params: CallOptions) => {
        const summary = isSummaryRequest(params);
        calls.push({ prompt: structuredClone(params.prompt), summary });
        return summary ? textResult(SUMMARY, 10, 10) : textResult('ok', undefined, 10);
      },
    });
    return { model, calls };
  }

  it("should compact a caller's step whose last message starts with the summary request's first line", async () => {
    const own = user(`${SUMMARY_FIRST_LINE} Then tell me what to do next.`);
    const manual = markerModel();
    const middleware = compaction({ contextWindow: 200_000 });
    middleware.compactNext();
    const prompt = [...chat(2, 50), own];
    await wrap(manual.model, middleware).doGenerate({ prompt });
    expect(manual.calls.map((call) => call.summary)).toEqual([true, false]);
    // The caller's own message stays live: the summary request covers what comes before it.
    expect(manual.calls[0]!.prompt.slice(0, -1)).toEqual(prompt.slice(0, -1));
    expect(middleware.last()).toMatchObject({ reason: 'manual', messagesCovered: 4 });
    expect(manual.calls[1]!.prompt).toEqual([checkpointFor(middleware.last()!.record), own]);

    const auto = markerModel();
    const over = compaction({ contextWindow: 20_000 });
    await wrap(auto.model, over).doGenerate({ prompt: [...ofSize(18_000).slice(0, 2), own] });
    expect(auto.calls.map((call) => call.summary)).toEqual([true, false]);
    expect(over.last()!.reason).toBe('auto');
  });
});

describe('onCompaction', () => {
  it('should be called once per compaction with what last() returns', async () => {
    const seen: CompactionRecord[] = [];
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000, onCompaction: (record) => void seen.push(structuredClone(record)) });
    const wrapped = wrap(scripted.model, middleware);
    const conversation = [...chat(2, 50), user('one')];
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual(middleware.last());
    expect(seen[0]).toMatchObject({ reason: 'manual', messagesCovered: 4, summary: SUMMARY });

    conversation.push(assistant('done'), user('two'));
    await wrapped.doGenerate({ prompt: conversation });
    expect(seen).toHaveLength(1);

    conversation.push(assistant('done again'), user('three'));
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    expect(seen).toHaveLength(2);
    expect(seen[1]).toEqual(middleware.last());
    expect(seen[1]!.messagesCovered).toBe(8);
  });

  it.each([
    ['throws', () => {
      throw new Error('boom');
    }],
    ['rejects', async () => {
      throw new Error('boom');
    }],
  ])('should warn and carry on when the callback %s', async (_name, onCompaction) => {
    const log = recordingLogger();
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000, logger: log.logger, onCompaction });
    middleware.compactNext();
    const result = await wrap(scripted.model, middleware).doGenerate({ prompt: [...chat(2, 50), user('go')] });
    expect(textOf({ role: 'assistant', content: result.content })).toBe('ok');
    expect(scripted.stepCalls()[0]!.prompt).toEqual([checkpointFor(middleware.last()!.record), user('go')]);
    // A rejection is reported when it settles: give it a turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(log.warn).toEqual(['ai-compaction: onCompaction failed: boom']);
    expect(log.info).toHaveLength(1);
  });
});

describe('a store that fails or returns garbage', () => {
  const failing = (error: string) => async () => {
    throw new Error(error);
  };
  const stores: Array<[string, () => CompactionStore, string]> = [
    ['get rejects', () => ({ ...memoryStore(), get: failing('store down') }), 'from the store failed (store down)'],
    ['get returns a number', () => ({ ...memoryStore(), get: async () => 42 as never }), 'the store returned a number'],
    ['get returns "{"', () => ({ ...memoryStore(), get: async () => '{' }), 'ignored a malformed thread record'],
    ['set rejects', () => ({ ...memoryStore(), set: failing('store full') }), 'the checkpoint could not be stored'],
  ];

  it.each(stores)('should keep every step going when %s, with no checkpoint but its own, and warn', async (_name, store, warning) => {
    const log = recordingLogger();
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 200_000, store: store(), logger: log.logger });
    const wrapped = wrap(scripted.model, middleware);
    const conversation: Message[] = [...chat(2, 50), user('one')];
    const expected: Message[][] = [];

    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    expected.push([checkpointFor(middleware.last()!.record), user('one')]);

    conversation.push(assistant('done one'), user('two'));
    await wrapped.doGenerate({ prompt: conversation });
    // The checkpoint cannot be found again: the conversation goes out whole.
    expected.push([...conversation]);

    conversation.push(assistant('done two'), user('three'));
    middleware.compactNext();
    await wrapped.doGenerate({ prompt: conversation });
    expect(middleware.last()!.messagesCovered).toBe(conversation.length - 1);
    expected.push([checkpointFor(middleware.last()!.record), user('three')]);

    conversation.push(assistant('done three'), user('four'));
    await wrapped.doGenerate({ prompt: conversation });
    expected.push([...conversation]);

    expect(scripted.stepCalls().map((call) => call.prompt)).toEqual(expected);
    expect(scripted.summaryCalls()).toHaveLength(2);
    expect(log.warn.some((line) => line.includes(warning))).toBe(true);
  });
});

describe('a failed compaction and the window', () => {
  const noTemplate = () => textResult('no template here');

  it('should send the step unchanged when its estimate is exactly the window, and throw one token over', async () => {
    const log = recordingLogger();
    const fits = scriptedModel({ summary: noTemplate });
    const atWindow = ofSize(20_000);
    await wrap(fits.model, compaction({ contextWindow: 20_000, logger: log.logger })).doGenerate({ prompt: atWindow });
    expect(fits.summaryCalls()).toHaveLength(2);
    expect(fits.stepCalls().map((call) => call.prompt)).toEqual([atWindow]);
    expect(log.warn.some((line) => line.includes('(template-missing)'))).toBe(true);

    const over = scriptedModel({ summary: noTemplate });
    const error = await wrap(over.model, compaction({ contextWindow: 20_000 })).doGenerate({ prompt: ofSize(20_001) }).catch((caught: unknown) => caught);
    expect(CompactionError.isInstance(error)).toBe(true);
    expect((error as CompactionError).reason).toBe('template-missing');
    expect(over.stepCalls()).toHaveLength(0);
  });

  it('should count the tool definitions in what fits the window', async () => {
    const tool = readFile('Read a file of the project and return its text.');
    expect(toolTokens(tool)).toBeGreaterThanOrEqual(11);
    const prompt = ofSize(19_990);
    const alone = scriptedModel({ summary: noTemplate });
    await wrap(alone.model, compaction({ contextWindow: 20_000 })).doGenerate({ prompt });
    expect(alone.stepCalls()).toHaveLength(1);

    const withTools = scriptedModel({ summary: noTemplate });
    const error = await wrap(withTools.model, compaction({ contextWindow: 20_000 })).doGenerate({ prompt, tools: [tool] }).catch((caught: unknown) => caught);
    expect(CompactionError.isInstance(error)).toBe(true);
    expect(withTools.stepCalls()).toHaveLength(0);
  });
});
