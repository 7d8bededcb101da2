// The local provider server's prompt cache with an expiry: a cached prefix that no request read or
// wrote for 5 minutes is gone (what OpenAI and Anthropic do), measured on the clock the server is
// given; off by default. Exact times on a fake clock.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { assistantAgent, CACHE_IDLE_MS, type Message, type ProviderServer, type ProviderServerOptions, startProviderServer } from './provider-server/index';
import { anthropicCache, countPrompt, openaiCache, PrefixCache, prefixHashes } from './provider-server/tokens';

const MINUTE = 60_000;
const at = (minutes: number, seconds = 0) => minutes * MINUTE + seconds * 1_000;

describe('the prompt cache expiry (PrefixCache)', () => {
  it('keeps a prefix read at 4:59 idle, drops one read at 5:00 or later', () => {
    let now = 0;
    const cache = new PrefixCache(undefined, { idleMs: CACHE_IDLE_MS, now: () => now });
    expect(CACHE_IDLE_MS).toBe(300_000);
    cache.add('a');
    cache.add('b');
    now = at(4, 59);
    expect(cache.has('a')).toBe(true);
    now = at(5, 0);
    expect(cache.has('b')).toBe(false);
    now = at(5, 1);
    expect(cache.has('a')).toBe(false);
    // an expired prefix is dropped, not kept for a later clock
    now = 0;
    expect(cache.has('a')).toBe(false);
  });

  it('refreshes a prefix each time a request reads or writes it', () => {
    let now = 0;
    const cache = new PrefixCache(undefined, { idleMs: CACHE_IDLE_MS, now: () => now });
    cache.add('a');
    now = at(4, 59);
    cache.add('a');
    // 9:58 after it was first written, 4:59 after it was last used
    now = at(9, 58);
    expect(cache.has('a')).toBe(true);
    now = at(9, 59) + at(0, 1);
    expect(cache.has('a')).toBe(false);
  });

  it('never expires without an expiry, however long the wait', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(0);
      const cache = new PrefixCache();
      cache.add('a');
      vi.setSystemTime(at(60 * 24));
      expect(cache.has('a')).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the prompt cache expiry in the wire formats\' cache rules', () => {
  const text = (words: number, label: string) => Array.from({ length: words }, (_, i) => `${label}${i}`).join(' ');
  const messages: Message[] = [
    { role: 'system', parts: [{ type: 'text', text: text(1_200, 'sys') }] },
    { role: 'user', parts: [{ type: 'text', text: text(600, 'user') }] },
  ];
  const request = { messages, tools: [] };
  const count = countPrompt(request);
  const hashes = prefixHashes(request);

  it('OpenAI: reads the whole prompt while fresh, nothing once expired', () => {
    let now = 0;
    const cache = new PrefixCache(undefined, { idleMs: CACHE_IDLE_MS, now: () => now });
    expect(openaiCache(cache, hashes, count, true)).toEqual({ cacheRead: 0, cacheWrite: 0 });
    now = at(4, 59);
    expect(openaiCache(cache, hashes, count, true)).toEqual({ cacheRead: Math.floor(count.total / 128) * 128, cacheWrite: 0 });
    // read at 4:59, so fresh until 9:59
    now = at(9, 58);
    expect(openaiCache(cache, hashes, count, true).cacheRead).toBe(Math.floor(count.total / 128) * 128);
    now = at(9, 58) + at(5, 1);
    expect(openaiCache(cache, hashes, count, true)).toEqual({ cacheRead: 0, cacheWrite: 0 });
  });

  it('Anthropic: a prefix read at a breakpoint is refreshed by the read', () => {
    let now = 0;
    const cache = new PrefixCache(undefined, { idleMs: CACHE_IDLE_MS, now: () => now });
    const system = count.tools + count.perMessage[0]!;
    // written at the system prompt's breakpoint
    expect(anthropicCache(cache, hashes, count, [0], true)).toEqual({ cacheRead: 0, cacheWrite: system });
    now = at(4, 59);
    // read there, with the breakpoint moved on to the user message (not written before)
    expect(anthropicCache(cache, hashes, count, [1], true)).toEqual({ cacheRead: system, cacheWrite: count.total - system });
    now = at(9, 58);
    // the system prompt's prefix was refreshed by the read at 4:59; the user message's written then
    expect(anthropicCache(cache, hashes, count, [0], false)).toEqual({ cacheRead: system, cacheWrite: 0 });
    now = at(9, 58) + at(5, 1);
    expect(anthropicCache(cache, hashes, count, [1], false)).toEqual({ cacheRead: 0, cacheWrite: count.total });
  });
});

describe('the provider server with a prompt cache expiry', () => {
  const servers: ProviderServer[] = [];
  const start = async (options: Partial<ProviderServerOptions>) => {
    const server = await startProviderServer({ contextWindow: 100_000, agent: assistantAgent(), ...options });
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  // about 1,500 tokens of system prompt, so that the prompt is cached (1,024 tokens or more)
  const system = `You are a helpful assistant. ${Array.from({ length: 300 }, (_, i) => `Rule ${i}: answer briefly.`).join(' ')}`;
  const ask = (server: ProviderServer) =>
    generateText({ model: createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' }).chat('gpt-4o'), system, prompt: 'My order number is A-4471.', maxRetries: 0 });

  it('reports the prefix cached at 4:59 idle, then not at 5:01 idle, on the clock it is given', async () => {
    let now = at(60);
    const server = await start({ promptCacheExpiry: { now: () => now } });
    await ask(server);
    now += at(4, 59);
    await ask(server);
    now += at(4, 59);
    await ask(server);
    now += at(5, 1);
    const last = await ask(server);
    const cached = Math.floor(server.requests[0]!.promptTokens / 128) * 128;
    expect(server.requests[0]!.promptTokens).toBeGreaterThan(1_024);
    expect(server.requests.map((request) => request.cachedTokens)).toEqual([0, cached, cached, 0]);
    // the client reports what the server did
    expect(last.usage.cachedInputTokens ?? 0).toBe(0);
  });

  it('uses Date.now() by default, looked up on every request, and refuses a bad idle time', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(0);
      const server = await start({ promptCacheExpiry: {} });
      await ask(server);
      vi.setSystemTime(at(5, 1));
      await ask(server);
      vi.setSystemTime(at(5, 2));
      await ask(server);
      expect(server.requests.map((request) => request.cachedTokens)).toEqual([0, 0, Math.floor(server.requests[0]!.promptTokens / 128) * 128]);
    } finally {
      vi.useRealTimers();
    }
    await expect(start({ promptCacheExpiry: { idleMs: 0 } })).rejects.toThrow('startProviderServer: promptCacheExpiry.idleMs must be a positive number of milliseconds, got 0');
  });

  it('is off by default: a prefix stays cached however long the wait', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(0);
      const server = await start({});
      await ask(server);
      vi.setSystemTime(at(60 * 24));
      await ask(server);
      expect(server.requests.map((request) => request.cachedTokens)).toEqual([0, Math.floor(server.requests[0]!.promptTokens / 128) * 128]);
    } finally {
      vi.useRealTimers();
    }
  });
});
