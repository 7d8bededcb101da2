import { afterEach, describe, expect, it, vi } from 'vitest';
import { compaction, memoryStore } from '../../../src';
import type { FunctionTool, Message } from '../../../src/prompt/types';
import { buildState } from '../../../src/state';
import { estimatePrompt, estimateTools } from '../../../src/sizing/estimate';
import { REFRESH_MS, SAMPLE_LIMIT, charsPerToken, mergeSamples, sampleOf, tokenizerFactor } from '../../../src/sizing/learned';
import type { ModelSizing } from '../../../src/store/format';
import { sha256Hex } from '../../../src/prompt/hash';
import { assistant, recordingLogger, scriptedModel, system, textOf, user, wrap } from '../../support/harness';

// docs/design.md, "The size of a prompt": the estimate learns each model's characters a token from
// the provider's counts. A conversation is told apart by its first user message; `counts` says what
// the provider counts for the prompts of each (no entry: no usage reported, so nothing is learned
// from that step).

const MODEL = 'mock-provider:mock-model-id';
const sample = (measured: number, counted: number, at = 0) => ({ at, measured, counted });
/** What `state()` keys the model's sizing in no scope by. */
const KEY = JSON.stringify([MODEL, '']);

function provider(counts: Map<string, number>, modelId?: string) {
  return scriptedModel({
    inputTokens: (prompt) => counts.get(textOf(prompt.find((message) => message.role === 'user'))),
    ...(modelId === undefined ? {} : { modelId }),
  });
}

/** A new conversation of 9,001 characters: 2,250 tokens at 4 characters a token. */
const probe = (tag: string): Message[] => [user(`${tag}${'b'.repeat(6_000 - tag.length)}`), assistant('c'.repeat(3_000)), user('q')];

/** The size the middleware gives a step of `prompt` (the `tokensBefore` of a manual compaction of it). */
async function sizeOf(middleware: ReturnType<typeof compaction>, model: unknown, prompt: Message[], tools?: FunctionTool[], conversation?: string): Promise<number> {
  middleware.compactNext();
  await wrap(model, middleware).doGenerate({ prompt, ...(tools === undefined ? {} : { tools }), ...(conversation === undefined ? {} : { providerOptions: { compaction: { conversation } } }) });
  return middleware.last()!.tokensBefore;
}

/** One step of a conversation of `chars` characters, counted at `counted` tokens. */
async function counted(middleware: ReturnType<typeof compaction>, counts: Map<string, number>, model: unknown, chars: number, countedTokens: number, tag = `c${counts.size}`) {
  const text = `${tag}:${'a'.repeat(chars - tag.length - 1)}`;
  counts.set(text, countedTokens);
  await wrap(model, middleware).doGenerate({ prompt: [user(text)] });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('learned characters a token', () => {
  describe('the ratio (pure)', () => {
    it('should be all characters over all counted tokens of the samples', () => {
      expect(charsPerToken([sample(12_000, 4_000), sample(6_000, 1_000)])).toBe(3.6);
    });

    it('should be bounded to 1.5 and 5 characters a token, exactly', () => {
      expect(charsPerToken([sample(3, 2)])).toBe(1.5);
      expect(charsPerToken([sample(149, 100)])).toBe(1.5);
      expect(charsPerToken([sample(151, 100)])).toBe(1.51);
      expect(charsPerToken([sample(500, 100)])).toBe(5);
      expect(charsPerToken([sample(501, 100)])).toBe(5);
      expect(charsPerToken([sample(499, 100)])).toBe(4.99);
    });

    it('should be 4 without samples', () => {
      expect(charsPerToken([])).toBe(4);
    });

    it('should keep the 8 most recent samples, newest first, each once', () => {
      const older = Array.from({ length: 6 }, (_, index) => sample(1_000 + index, 500, index));
      const newer = Array.from({ length: 6 }, (_, index) => sample(2_000 + index, 500, 10 + index));
      const merged = mergeSamples(newer, [...older, newer[0]!]);
      expect(SAMPLE_LIMIT).toBe(8);
      expect(merged.map((kept) => kept.at)).toEqual([15, 14, 13, 12, 11, 10, 5, 4]);
    });

    it('should take the fixed figures of files off the count', () => {
      // 3,000 characters and an image: counted 2,500, of which 1,500 are the image's fixed figure.
      expect(sampleOf('chars', 3_000, 1_500, 2_500, 0)).toEqual(sample(3_000, 1_000));
    });

    it('should not learn from a count no text could have (over 3 times beyond the bounds)', () => {
      expect(sampleOf('chars', 12_000, 0, 10, 0)).toBeUndefined(); // 1,200 characters a token
      expect(sampleOf('chars', 12_000, 0, 50_000, 0)).toBeUndefined(); // 0.24
      expect(sampleOf('chars', 15_000, 0, 1_000, 0)).toEqual(sample(15_000, 1_000)); // 15: learned (and bounded to 5)
      expect(sampleOf('chars', 100, 1_500, 1_000, 0)).toBeUndefined(); // nothing left of the count for the text
      expect(sampleOf('tokenizer', 1_000, 0, 7_000, 0)).toBeUndefined(); // factor 7
    });

    it('should bound the factor of the estimate option to 1 and 2, 1 without samples', () => {
      expect(tokenizerFactor([sample(6_000, 7_200)])).toBe(1.2);
      expect(tokenizerFactor([sample(6_000, 3_000)])).toBe(1);
      expect(tokenizerFactor([sample(1_000, 2_500)])).toBe(2);
      expect(tokenizerFactor([])).toBe(1);
    });
  });

  describe('through the middleware', () => {
    it('should estimate a new conversation at the ratio its model counts taught, with exact numbers', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const middleware = compaction({ contextWindow: 200_000 });
      expect(await sizeOf(middleware, scripted.model, probe('p0'))).toBe(2_250);
      // 12,000 characters counted at 4,000 tokens: 3 characters a token.
      await counted(middleware, counts, scripted.model, 12_000, 4_000);
      expect(await sizeOf(middleware, scripted.model, probe('p1'))).toBe(Math.round(9_001 / 3));
      // And 6,000 counted at 1,000: (12,000 + 6,000) / (4,000 + 1,000) = 3.6.
      await counted(middleware, counts, scripted.model, 6_000, 1_000);
      expect(await sizeOf(middleware, scripted.model, probe('p2'))).toBe(Math.round(9_001 / 3.6));
    });

    it('should bound what it learns to 1.5 and 5 characters a token', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const low = compaction({ contextWindow: 200_000 });
      await counted(low, counts, scripted.model, 3_000, 3_000); // 1 character a token
      expect(await sizeOf(low, scripted.model, probe('p3'))).toBe(Math.round(9_001 / 1.5));
      const high = compaction({ contextWindow: 200_000 });
      await counted(high, counts, scripted.model, 12_000, 2_000); // 6 characters a token
      expect(await sizeOf(high, scripted.model, probe('p4'))).toBe(Math.round(9_001 / 5));
    });

    it('should keep 4 characters a token for a model with no counts', async () => {
      const counts = new Map<string, number>();
      const taught = provider(counts);
      const other = provider(counts, 'other-model');
      const middleware = compaction({ contextWindow: 200_000 });
      await counted(middleware, counts, taught.model, 12_000, 4_000);
      expect(await sizeOf(middleware, other.model, probe('p5'))).toBe(2_250);
      expect(await sizeOf(middleware, taught.model, probe('p6'))).toBe(3_000);
    });

    it('should not learn from a count too far from any text (a cached prompt reported as a few tokens)', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const middleware = compaction({ contextWindow: 200_000 });
      await counted(middleware, counts, scripted.model, 12_000, 10);
      expect(await sizeOf(middleware, scripted.model, probe('p7'))).toBe(2_250);
    });

    it('should learn with the fixed figure of an image taken off the count', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const middleware = compaction({ contextWindow: 200_000 });
      const text = `img:${'a'.repeat(2_996)}`;
      counts.set(text, 1_500 + 1_000);
      const image = { type: 'file', data: new Uint8Array(50_000), mediaType: 'image/png' };
      await wrap(scripted.model, middleware).doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text }, image] }] });
      expect(await sizeOf(middleware, scripted.model, probe('p8'))).toBe(3_000);
    });

    it('should estimate what was added since a count at the learned ratio', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const middleware = compaction({ contextWindow: 200_000 });
      const first = `conv:${'a'.repeat(11_995)}`;
      counts.set(first, 4_000);
      await wrap(scripted.model, middleware).doGenerate({ prompt: [user(first)] });
      // 4,000 counted + 10 output + 3,000 characters at 3 characters a token.
      expect(await sizeOf(middleware, scripted.model, [user(first), assistant('reply'), user('x'.repeat(3_000))])).toBe(4_000 + 10 + 1_000);
    });

    it('should estimate the prompt after a new checkpoint at the learned ratio', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const middleware = compaction({ contextWindow: 200_000 });
      await counted(middleware, counts, scripted.model, 12_000, 4_000);
      middleware.compactNext();
      await wrap(scripted.model, middleware).doGenerate({ prompt: probe('p9') });
      const sent = scripted.stepCalls().at(-1)!.prompt;
      expect(middleware.last()!.tokensAfter).toBe(estimatePrompt(sent, undefined, { charsPerToken: 3 }));
      expect(middleware.last()!.tokensAfter).not.toBe(estimatePrompt(sent));
    });

    it('should learn from the prompt that went out (its checkpoint), not the caller\'s conversation', async () => {
      const counts = new Map<string, number>();
      const scripted = scriptedModel({ inputTokens: (prompt) => (textOf(prompt[0]).startsWith('<conversation-checkpoint>') ? Math.round(textOf(prompt[0]).length / 2) + 1 : undefined) });
      const middleware = compaction({ contextWindow: 200_000 });
      middleware.compactNext();
      // 2 characters a token for the checkpoint message, 1 token for 'q' ('q' is 1 character).
      await wrap(scripted.model, middleware).doGenerate({ prompt: probe('p10') });
      const sentChars = textOf(scripted.stepCalls()[0]!.prompt[0]).length + 1;
      const ratio = Math.max(1.5, sentChars / (Math.round((sentChars - 1) / 2) + 1));
      expect(await sizeOf(middleware, scripted.model, probe('p11'))).toBe(Math.round(9_001 / ratio));
    });
  });

  describe('in the store', () => {
    it('should share what one instance learned with another on the same store', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const store = memoryStore();
      const first = compaction({ contextWindow: 200_000, store });
      await counted(first, counts, scripted.model, 12_000, 4_000);
      const second = compaction({ contextWindow: 200_000, store });
      expect(await sizeOf(second, scripted.model, probe('s1'))).toBe(3_000);
      // Not through the conversation's own records: a third instance on its own store knows nothing.
      expect(await sizeOf(compaction({ contextWindow: 200_000 }), scripted.model, probe('s2'))).toBe(2_250);
    });

    it('should keep it under sizing:<SHA-256 of ["provider:modelId","scope"]>, as the recent samples', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const store = memoryStore();
      const middleware = compaction({ contextWindow: 200_000, store });
      await counted(middleware, counts, scripted.model, 12_000, 4_000);
      const raw = await store.get(`sizing:${await sha256Hex(new TextEncoder().encode(JSON.stringify([MODEL, ''])))}`);
      expect(JSON.parse(raw!)).toEqual({ v: 2, model: MODEL, scope: '', chars: [{ at: expect.any(Number), measured: 12_000, counted: 4_000 }], tokenizer: [] });
    });

    it('should read the store again after 30 seconds, not on every step', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const inner = memoryStore();
      const reads: string[] = [];
      const store = { ...inner, get: (key: string) => (reads.push(key), inner.get(key)) };
      const first = compaction({ contextWindow: 200_000, store: inner });
      const second = compaction({ contextWindow: 200_000, store });
      let now = 1_700_000_000_000;
      vi.spyOn(Date, 'now').mockImplementation(() => now);
      expect(await sizeOf(second, scripted.model, probe('r1'))).toBe(2_250);
      await counted(first, counts, scripted.model, 12_000, 4_000);
      now += REFRESH_MS - 1;
      expect(await sizeOf(second, scripted.model, probe('r2'))).toBe(2_250);
      now += 1;
      expect(await sizeOf(second, scripted.model, probe('r3'))).toBe(3_000);
      expect(reads.filter((key) => key.startsWith('sizing:'))).toHaveLength(2);
    });

    it('should ignore a malformed record in the store, with a warning', async () => {
      const store = memoryStore();
      await store.set(`sizing:${await sha256Hex(new TextEncoder().encode(JSON.stringify([MODEL, ''])))}`, JSON.stringify({ v: 2, model: MODEL, scope: '', chars: [{ at: 0, measured: 10, counted: -1 }], tokenizer: [] }));
      const { warn, logger } = recordingLogger();
      const scripted = scriptedModel();
      expect(await sizeOf(compaction({ contextWindow: 200_000, store, logger }), scripted.model, probe('m1'))).toBe(2_250);
      expect(warn.some((line) => line.includes('ignored a malformed sizing record'))).toBe(true);
    });
  });

  describe('per model and scope', () => {
    // Another tenant's CJK prompts: about a character a token, clamped to 1.5.
    const cjk = (tag: string) => `${tag}:${'漢'.repeat(6_000)}`;
    const tenants = () =>
      scriptedModel({
        inputTokens: (prompt) => {
          const text = prompt.map(textOf).join('');
          return /漢/.test(text) ? text.length : Math.round(text.length / 4);
        },
      });
    /** An English conversation new to the instance: 9,642 tokens by the provider's count and at 4 characters a token. */
    const english = [user(`en:${'word '.repeat(7_712)}`), assistant('fine'), user('go on')];

    it("should never move one tenant's estimate by another tenant's counts", async () => {
      const scripted = tenants();
      // Window 20,000: ceiling 17,000.
      const middleware = compaction({ contextWindow: 20_000 });
      const wrapped = wrap(scripted.model, middleware);
      for (const tag of ['k1', 'k2']) await wrapped.doGenerate({ prompt: [user(cjk(tag))], providerOptions: { compaction: { scope: 'tenant-b' } } });
      await wrapped.doGenerate({ prompt: english, providerOptions: { compaction: { scope: 'tenant-a' } } });
      expect(scripted.summaryCalls()).toHaveLength(0);
      // Tenant B's own next conversation is estimated at what its counts taught: 1.5 characters a token.
      middleware.compactNext();
      // 4,500 characters: 3,000 tokens at 1.5 characters a token.
      await wrapped.doGenerate({ prompt: [user(`zh:${'字'.repeat(2_997)}`), assistant('字'.repeat(1_499)), user('问')], providerOptions: { compaction: { scope: 'tenant-b' } } });
      expect(middleware.last()!.tokensBefore).toBe(3_000);
    });

    it('should share a scope\'s ratio with every instance over one store, and only that scope\'s', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const store = memoryStore();
      const first = compaction({ contextWindow: 200_000, store });
      const text = `c0:${'a'.repeat(11_997)}`;
      counts.set(text, 4_000);
      await wrap(scripted.model, first).doGenerate({ prompt: [user(text)], providerOptions: { compaction: { scope: 'tenant-a' } } });
      const second = compaction({ contextWindow: 200_000, store });
      const sized = async (scope: string, tag: string) => {
        second.compactNext();
        await wrap(scripted.model, second).doGenerate({ prompt: probe(tag), providerOptions: { compaction: { scope } } });
        return second.last()!.tokensBefore;
      };
      expect(await sized('tenant-a', 'p1')).toBe(3_000);
      expect(await sized('tenant-b', 'p2')).toBe(2_250);
    });
  });

  describe('in state()', () => {
    it('should carry what was learned to another instance, and hold it at once', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const first = compaction({ contextWindow: 200_000 });
      await counted(first, counts, scripted.model, 12_000, 4_000);
      const saved = JSON.parse(JSON.stringify(first.state()));
      expect(saved.sizing[KEY].chars).toEqual([{ at: expect.any(Number), measured: 12_000, counted: 4_000 }]);
      const next = compaction({ contextWindow: 200_000, state: saved, store: memoryStore() });
      expect(next.state().sizing).toEqual(saved.sizing);
      expect(await sizeOf(next, scripted.model, probe('t1'))).toBe(3_000);
    });

    it('should leave sizing out of a state with nothing learned', () => {
      expect('sizing' in compaction().state()).toBe(false);
    });

    it('should refuse a state with a malformed sample, naming it', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const first = compaction({ contextWindow: 200_000 });
      await counted(first, counts, scripted.model, 12_000, 4_000);
      const saved = JSON.parse(JSON.stringify(first.state()));
      saved.sizing[KEY].chars[0].counted = -4_000;
      expect(() => compaction({ state: saved })).toThrow(`ai-compaction: option state is refused: sizing.${KEY}.chars[0].counted is -4000, expected more than 0`);
    });

    it('should refuse a state whose record is of another model or scope than its key', () => {
      const record: ModelSizing = { v: 2, model: 'b:other', scope: '', chars: [sample(12_000, 4_000)], tokenizer: [] };
      const state = buildState(new Map(), new Map(), { '["a:model",""]': record });
      expect(() => compaction({ state })).toThrow('ai-compaction: option state is refused: sizing.["a:model",""] holds what was learned of another model or scope (["b:other",""])');
      const scoped = buildState(new Map(), new Map(), { '["a:model","tenant-a"]': { ...record, model: 'a:model', scope: 'tenant-b' } });
      expect(() => compaction({ state: scoped })).toThrow('ai-compaction: option state is refused: sizing.["a:model","tenant-a"] holds what was learned of another model or scope (["a:model","tenant-b"])');
    });
  });

  describe('when only the system messages or tool definitions changed', () => {
    const tool = (name: string, description: string): FunctionTool => ({ type: 'function', name, description, inputSchema: { type: 'object', properties: { path: { type: 'string' } } } });
    const read = tool('read_file', 'Read a file.');
    const write = tool('write_file', `Write a file. ${'w'.repeat(4_000)}`);
    // Counted at 400 tokens: too few for the prompt's characters to teach a ratio, so 4 stands,
    // and enough to be right (over a fifth of its characters at 5 a token).
    const start = [system('You are a coding agent.'), user(`frame:${'u'.repeat(8_000)}`)];

    it('should rest on the count plus the added tool\'s estimate', async () => {
      const scripted = scriptedModel({ inputTokens: () => 400 });
      const middleware = compaction({ contextWindow: 200_000 });
      await wrap(scripted.model, middleware).doGenerate({ prompt: start, tools: [read] });
      const next = [...start, assistant('reply'), user('next')];
      expect(await sizeOf(middleware, scripted.model, next, [read, write])).toBe(400 + 10 + estimateTools([write]) + 1);
      expect(estimateTools([write])).toBe(1_020);
      expect(estimatePrompt(next, [read, write])).toBe(3_049); // the whole prompt's estimate, not used
    });

    it('should rest on the count plus a longer system prompt\'s growth, in a named conversation', async () => {
      const scripted = scriptedModel({ inputTokens: () => 400 });
      const middleware = compaction({ contextWindow: 200_000 });
      await wrap(scripted.model, middleware).doGenerate({ prompt: start, tools: [read], providerOptions: { compaction: { conversation: 'chat-1' } } });
      const next = [system(`You are a coding agent.${'s'.repeat(2_000)}`), ...start.slice(1), assistant('reply'), user('next')];
      expect(await sizeOf(middleware, scripted.model, next, [read], 'chat-1')).toBe(400 + 10 + 500 + 1);
      // Unnamed, a count is found only under the system messages it measured: the whole prompt is estimated.
      expect(await sizeOf(middleware, scripted.model, next, [read])).toBe(estimatePrompt(next, [read]));
    });

    it('should never rest on less than the count when a tool was removed', async () => {
      // Counted at 900: more than its system messages and tools alone take at 5 characters a token.
      const scripted = scriptedModel({ inputTokens: () => 900 });
      const middleware = compaction({ contextWindow: 200_000 });
      await wrap(scripted.model, middleware).doGenerate({ prompt: start, tools: [read, write] });
      expect(await sizeOf(middleware, scripted.model, [...start, assistant('reply'), user('next')], [read])).toBe(900 + 10 + 1);
    });

    it('should take the growth at the learned ratio', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      const middleware = compaction({ contextWindow: 200_000 });
      const first = [user(`ratio:${'u'.repeat(11_994)}`)];
      counts.set(textOf(first[0]), 4_000); // 3 characters a token
      await wrap(scripted.model, middleware).doGenerate({ prompt: first, providerOptions: { compaction: { conversation: 'chat-1' } } });
      const added = system('s'.repeat(3_000));
      expect(await sizeOf(middleware, scripted.model, [added, ...first, assistant('reply'), user('abc')], undefined, 'chat-1')).toBe(4_000 + 10 + 1_000 + 1);
    });
  });

  describe('the estimate option', () => {
    it('should be refused unless it is a function, naming the option', () => {
      expect(() => compaction({ estimate: 42 as never })).toThrow('ai-compaction: option estimate must be a function (text) => tokens, got 42');
    });

    it('should count text with it, and images at 1,500 tokens', async () => {
      const seen: string[] = [];
      const middleware = compaction({ contextWindow: 200_000, estimate: (text) => (seen.push(text), 7) });
      const image = { type: 'file', data: new Uint8Array(50_000), mediaType: 'image/png' };
      const prompt: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hello world' }, image] }, assistant('fine'), user('q')];
      expect(await sizeOf(middleware, scriptedModel({ inputTokens: () => undefined }).model, prompt)).toBe(7 + 1_500 + 7 + 7);
      expect(seen.slice(0, 3)).toEqual(['hello world', 'fine', 'q']);
    });

    it('should learn a factor on top of it from the counts, bounded to 1 and 2', async () => {
      const counts = new Map<string, number>();
      const scripted = provider(counts);
      // Two characters a token by this tokenizer.
      const middleware = compaction({ contextWindow: 200_000, estimate: (text) => text.length / 2 });
      expect(await sizeOf(middleware, scripted.model, probe('e1'))).toBe(Math.round(9_001 / 2));
      // 12,000 characters: 6,000 by the tokenizer, counted at 7,200: factor 1.2.
      await counted(middleware, counts, scripted.model, 12_000, 7_200);
      expect(await sizeOf(middleware, scripted.model, probe('e2'))).toBe(Math.round((9_001 / 2) * 1.2));
      const floor = compaction({ contextWindow: 200_000, estimate: (text) => text.length / 2 });
      await counted(floor, counts, scripted.model, 12_000, 3_000);
      expect(await sizeOf(floor, scripted.model, probe('e3'))).toBe(Math.round(9_001 / 2));
    });

    it("should budget the checkpoint's record at the characters a token the tokenizer finds, not at 4", async () => {
      // Two characters a token by this tokenizer, and no provider counts: window 20,000, ceiling
      // 17,000, a record of at most `keep`, 4,250 tokens (8,500 characters; at 4 characters a token
      // it would take 17,000 characters, twice its budget by the tokenizer).
      const tokenize = (text: string) => Math.ceil(text.length / 2);
      const { model, stepCalls } = scriptedModel({ inputTokens: () => undefined });
      const middleware = compaction({ contextWindow: 20_000, estimate: tokenize, keep: 4_250 });
      const prompt: Message[] = [];
      for (let index = 0; index < 12; index++) prompt.push(user(`u${index} ${'x'.repeat(1_500)}`), assistant(`a${index} ${'y'.repeat(1_500)}`));
      prompt.push(user('next'));
      await wrap(model, middleware).doGenerate({ prompt });
      expect(middleware.last()?.reason).toBe('auto');
      const sent = textOf(stepCalls()[0]!.prompt[0]!);
      const record = sent.slice(sent.indexOf('<recent-context>\n') + '<recent-context>\n'.length, sent.indexOf('\n</recent-context>'));
      expect(tokenize(record)).toBeLessThanOrEqual(4_250);
      // the newest messages within it: more than one exchange, so the budget was measured, not missed
      expect(tokenize(record)).toBeGreaterThan(4_250 - 1_600);
    });

    it('should count a text the tokenizer throws on at 4 characters a token, warning once', async () => {
      const { warn, logger } = recordingLogger();
      const middleware = compaction({ contextWindow: 200_000, logger, estimate: () => { throw new Error('no vocabulary'); } });
      expect(await sizeOf(middleware, scriptedModel({ inputTokens: () => undefined }).model, probe('e4'))).toBe(2_250);
      expect(warn.filter((line) => line.startsWith('ai-compaction: option estimate threw (no vocabulary)'))).toHaveLength(1);
    });
  });
});
