// The Next.js example (examples/next-chat) in a real browser: the built app (`next build`, then
// `next start`) talks to the local provider server through the real `@ai-sdk/openai` client, with
// a small context window, and headless Chromium types 30 messages, some of them long pastes, on
// each of the three paths: the Node.js route handler (`useChat` + `streamText`), the Edge route
// and the server action (`generateText`). Every reply must appear (rendered from markdown), the
// compaction notice must show, with a divider where the checkpoint ends and the messages it covers
// dimmed, the page's link in the navigation must be marked, and nothing may go wrong: no error in
// the chat, none in the browser's console (a missing favicon was one), no uncaught one. A
// screenshot of the compaction point is saved to test-results/ (on failure, of the whole page).
//
// Needs: `npm run build` (the app consumes dist/), `npm ci --prefix examples/next-chat`, and
// Debian's chromium at /usr/bin/chromium. Missing pieces fail in beforeAll with the command to run.

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, assertChromium, launchBrowser, screenshot, withPage } from '../support/browser';
import { type NextApp, assertNextAppPrerequisites, buildNextApp, startNextApp } from '../support/next-app';
import { type ProviderServer, startProviderServer } from '../support/provider-server/index';

const WINDOW = 8_000;
const MESSAGES = 30;
const REPLY_TIMEOUT = 20_000;

const LOG_WORDS = ['worker', 'queue', 'retry', 'timeout', 'GET', 'POST', '/api/orders', '/api/users', 'cache', 'miss', 'hit', 'db', 'pool', 'latency', 'ms', 'ok', 'WARN', 'INFO', 'ERROR', 'payload', 'shard', 'lease', 'token', 'refresh'];

/** Deterministic pasted text (a log excerpt) of about `chars` characters. */
function pasted(seed: number, chars: number): string {
  let state = seed * 2654435761;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state;
  };
  const lines: string[] = [];
  let length = 0;
  for (let line = 0; length < chars; line++) {
    const words = Array.from({ length: 6 + (next() % 8) }, () => LOG_WORDS[next() % LOG_WORDS.length]);
    const text = `2025-03-${String(1 + (seed % 28)).padStart(2, '0')}T10:${String(line % 60).padStart(2, '0')}:${String(next() % 60).padStart(2, '0')}Z ${words.join(' ')} id=${next() % 100000}`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join('\n').slice(0, chars);
}

/**
 * Message `i` (1-based) of a conversation: a short question, every third one with 3,000 to 6,000
 * pasted characters. The tag keeps the conversations of the three paths apart (identical
 * conversations would share their checkpoints, and the later ones would not need to compact).
 */
function message(i: number, tag: string): string {
  const head = `Message ${i}: what stands out in this part of the ${tag} incident`;
  if (i % 3 !== 0) return `${head}? Keep it short.`;
  return `${head}? Here is the log:\n${pasted(i, 3_000 + ((i * 1_237) % 3_001))}`;
}

let server: ProviderServer;
let app: NextApp;
let browser: Browser;
const timings: Record<string, number> = {};

beforeAll(async () => {
  // fail fast, before the minute-long build, when something is missing
  assertChromium();
  assertNextAppPrerequisites();
  server = await startProviderServer({ contextWindow: WINDOW });
  let started = Date.now();
  const build = await buildNextApp();
  timings[build.built ? 'next build' : 'next build (reused)'] = Date.now() - started;
  started = Date.now();
  app = await startNextApp({ OPENAI_BASE_URL: server.openaiBaseURL, OPENAI_API_KEY: 'test', CONTEXT_WINDOW: String(WINDOW) });
  timings['next start'] = Date.now() - started;
  browser = await launchBrowser();
}, 360_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await server?.close();
  console.log(`next-chat e2e timings (ms): ${JSON.stringify(timings)}\nprovider requests: ${JSON.stringify(stats)}`);
});

const PAGES: Record<string, string> = { '/': 'Route handler', '/edge': 'Edge route', '/action': 'Server action' };

/**
 * A page of the app: loaded, its navigation and favicon checked, then `body`; it fails on any
 * error in the browser's console or uncaught in the page. A failure also shows what the Next.js
 * server printed.
 */
async function onPage<T>(name: string, path: string, body: (page: Page) => Promise<T>): Promise<T> {
  try {
    return await withPage(browser, name, async (page) => {
      const errors: string[] = [];
      page.on('console', (entry) => {
        if (entry.type() === 'error') errors.push(`console: ${entry.text()} (${entry.location().url})`);
      });
      page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
      await page.goto(`${app.url}${path}`);
      await expect.poll(() => page.getByTestId('composer').getAttribute('data-status')).toBe('ready');
      // the navigation marks this page, and only this one
      await expect.poll(() => page.locator('nav a[aria-current="page"]').allTextContents()).toEqual([PAGES[path]]);
      // a favicon, served (its absence was a 404 in the console on every load)
      const icon = await page.locator('head link[rel="icon"]').first().getAttribute('href');
      expect(icon, 'link rel="icon"').toBeTruthy();
      const served = await page.request.get(new URL(icon!, app.url).href);
      expect(served.status(), `GET ${icon}`).toBe(200);
      expect(served.headers()['content-type']).toContain('image/svg+xml');
      const result = await body(page);
      expect(errors, 'errors in the browser').toEqual([]);
      return result;
    });
  } catch (error) {
    if (error instanceof Error) error.message += `\nnext start output (end):\n${app.output().slice(-2_000)}`;
    throw error;
  }
}

const assistantTexts = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"] .text').allTextContents();

/** Types the messages one by one and waits for each reply. */
async function converse(page: Page, count: number, tag: string): Promise<void> {
  const input = page.getByTestId('chat-input');
  const composer = page.getByTestId('composer');
  const replies = page.locator('[data-testid="message"][data-role="assistant"]');
  for (let i = 1; i <= count; i++) {
    await input.fill(message(i, tag));
    await page.getByTestId('send').click();
    await expect.poll(() => replies.count(), { timeout: REPLY_TIMEOUT, message: `reply to message ${i}` }).toBe(i);
    await expect.poll(() => composer.getAttribute('data-status'), { timeout: REPLY_TIMEOUT, message: `ready after message ${i}` }).toBe('ready');
    const errors = await page.getByTestId('chat-error').allTextContents();
    expect(errors, `error shown after message ${i}`).toEqual([]);
  }
}

/** Checks the finished conversation; returns how many compaction notices it shows. */
async function checkConversation(page: Page, name: string, count: number): Promise<number> {
  const texts = await assistantTexts(page);
  expect(texts).toHaveLength(count);
  texts.forEach((text, index) => {
    // the scripted model quotes the start of the message it answers
    expect(text, `reply ${index + 1}`).toContain(`Message ${index + 1}:`);
    // rendered from markdown: a numbered list with code spans, not backticks
    expect(text, `reply ${index + 1}`).not.toContain('`');
  });
  const lastReply = page.locator('[data-testid="message"][data-role="assistant"] .text').last();
  expect(await lastReply.locator('ol > li').count(), 'list items in the last reply').toBeGreaterThan(1);
  expect(await lastReply.locator('code').count(), 'code spans in the last reply').toBeGreaterThan(0);

  const notices = await page.getByTestId('compaction-notice').allTextContents();
  expect(notices.length, 'compaction notices').toBeGreaterThan(0);
  for (const notice of notices) expect(notice).toMatch(/^Conversation compacted: \d+ messages summarized \([\d,]+ → [\d,]+ tokens/);
  expect(await page.getByTestId('chat-error').count()).toBe(0);
  // the summary is rendered from markdown too: headings, not `##`
  const summary = page.getByTestId('compaction-notice').last().locator('details');
  await summary.locator('summary').click();
  expect(await summary.locator('.summary h2').count(), 'headings in the summary').toBeGreaterThan(1);
  expect(await summary.locator('.summary').textContent()).not.toContain('## ');
  await summary.locator('summary').click();

  // one divider per compaction, where its checkpoint ends; the newest is what the model sees now,
  // and the messages above it are dimmed (those below are not)
  const items = await page.getByTestId('messages').evaluate((list) =>
    Array.from(list.children, (item) => ({
      divider: item.getAttribute('data-testid') === 'compaction-divider',
      current: item.getAttribute('data-current') === 'true',
      at: Number(item.getAttribute('data-covered')),
      text: item.textContent ?? '',
      message: item.querySelector('[data-testid="message"]') !== null,
      covered: item.getAttribute('data-covered'),
      opacity: Number(getComputedStyle(item).opacity),
    })),
  );
  const dividers = items.filter((item) => item.divider);
  expect(dividers, 'one divider per compaction').toHaveLength(notices.length);
  expect(dividers.filter((item) => item.current), 'the current divider').toHaveLength(1);
  const current = items.findIndex((item) => item.current);
  const at = items[current]!.at;
  const messages = items.filter((item) => item.message);
  expect(messages).toHaveLength(count * 2);
  expect(items.slice(0, current).filter((item) => item.message), 'messages above the current divider').toHaveLength(at);
  expect(items[current]!.text).toBe(`↑ The model now sees the ${at} messages above as the summary`);
  expect(items[current + 1]!.message, 'a message right below the divider').toBe(true);
  messages.forEach((message, index) => {
    if (index < at) {
      expect(message.covered, `message ${index + 1} (covered)`).toBe('covered');
      expect(message.opacity, `message ${index + 1} (covered) is dimmed`).toBeLessThan(1);
    } else {
      expect(message.covered, `message ${index + 1} (after the cut)`).toBeNull();
      expect(message.opacity, `message ${index + 1} (after the cut)`).toBe(1);
    }
  });
  // the newest notice names the same messages; the checkpoint covers all but the message it answered
  expect(notices.at(-1)).toMatch(new RegExp(`^Conversation compacted: ${at} messages summarized`));
  expect(at % 2, 'the cut falls before a user message').toBe(0);

  // for a person to look at: the current divider, with the messages around it
  await page.locator('[data-testid="compaction-divider"][data-current="true"]').evaluate((divider) => divider.scrollIntoView({ block: 'center' }));
  await screenshot(page, `${name}-passed`);
  return notices.length;
}

const stats: Record<string, { notices: number; requests: number; summaryRequests: number; rejected: number }> = {};

/** Summary requests the provider answered since `mark`; notes what the provider saw for the log. */
function summaryRequestsSince(mark: number, name: string, notices: number): number {
  const requests = server.requests.slice(mark);
  const summaryRequests = requests.filter((request) => request.isSummaryRequest && !request.rejected).length;
  stats[name] = { notices, requests: requests.length, summaryRequests, rejected: requests.filter((request) => request.rejected).length };
  return summaryRequests;
}

describe('examples/next-chat in Chromium', () => {
  it(`route handler (useChat + streamText): ${MESSAGES} messages in a ${WINDOW}-token window`, async () => {
    const mark = server.requests.length;
    const started = Date.now();
    const notices = await onPage('next-chat-route', '/', async (page) => {
      await converse(page, MESSAGES, 'route');
      return checkConversation(page, 'next-chat-route', MESSAGES);
    });
    timings.route = Date.now() - started;
    expect(summaryRequestsSince(mark, 'route', notices)).toBeGreaterThanOrEqual(notices);
  }, 180_000);

  it(`Edge route: ${MESSAGES} messages`, async () => {
    const mark = server.requests.length;
    const started = Date.now();
    const notices = await onPage('next-chat-edge', '/edge', async (page) => {
      await converse(page, MESSAGES, 'edge');
      return checkConversation(page, 'next-chat-edge', MESSAGES);
    });
    timings.edge = Date.now() - started;
    expect(summaryRequestsSince(mark, 'edge', notices)).toBeGreaterThanOrEqual(notices);
  }, 180_000);

  it(`server action (generateText, conversation in client state): ${MESSAGES} messages`, async () => {
    const mark = server.requests.length;
    const started = Date.now();
    const notices = await onPage('next-chat-action', '/action', async (page) => {
      await converse(page, MESSAGES, 'action');
      return checkConversation(page, 'next-chat-action', MESSAGES);
    });
    timings.action = Date.now() - started;
    expect(summaryRequestsSince(mark, 'action', notices)).toBeGreaterThanOrEqual(notices);
  }, 180_000);

  it('concurrent conversations each get their own compaction notice', async () => {
    // Two conversations of different lengths, both past the ceiling, and a short one, posted at the
    // same time to the one module-level middleware: each long one must carry its own compaction
    // (covering its own history), never the other's, and the short one none.
    const conversation = (tag: string, turns: number) => {
      const messages = [];
      for (let i = 1; i <= turns; i++) {
        messages.push({ id: `${tag}-u${i}`, role: 'user', parts: [{ type: 'text', text: message(i * 3, tag) }] });
        messages.push({ id: `${tag}-a${i}`, role: 'assistant', parts: [{ type: 'text', text: `Noted (${tag} ${i}).` }] });
      }
      messages.push({ id: `${tag}-last`, role: 'user', parts: [{ type: 'text', text: `${tag}: and now?` }] });
      return messages;
    };
    const post = async (messages: unknown[]) => {
      const response = await fetch(`${app.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'concurrent', messages, trigger: 'submit-message' }),
      });
      expect(response.status).toBe(200);
      const chunks = (await response.text())
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)) as { type: string; messageMetadata?: { compaction?: { messagesCovered: number; summary: string; covered: { count: number; partly: boolean } } } });
      expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
      return chunks.find((chunk) => chunk.messageMetadata?.compaction)?.messageMetadata?.compaction;
    };
    const [a, b, c] = await Promise.all([post(conversation('Alpha', 7)), post(conversation('Bravo', 9)), post(conversation('Charlie', 1))]);
    expect(c, 'a short conversation does not compact, whatever the others do').toBeUndefined();
    expect(a?.messagesCovered).toBe(14);
    expect(b?.messagesCovered).toBe(18);
    // text only: one model message per UI message, so as many of the page's messages
    expect(a?.covered).toEqual({ count: 14, partly: false });
    expect(b?.covered).toEqual({ count: 18, partly: false });
    expect(a?.summary).toContain('Alpha');
    expect(a?.summary).not.toContain('Bravo');
    expect(b?.summary).toContain('Bravo');
    expect(b?.summary).not.toContain('Alpha');
  }, 60_000);
});
