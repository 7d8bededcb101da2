// The Next.js example (examples/next-chat) in a real browser: the built app (`next build`, then
// `next start`) talks to the local provider server's chat assistant through the real
// `@ai-sdk/openai` client, with a small context window, and headless Chromium types a chat of about
// 30 messages (facts, pasted documents and logs, questions about the facts) on each of the three
// paths: the Node.js route handler (`useChat` + `streamText`), the Edge route and the server
// action (`generateText`). On each path:
// - every reply appears (rendered from markdown), every question about an earlier fact is answered
//   right, and after the conversation was compacted a question about the first fact is answered
//   from the checkpoint (the message that gave it is no longer in the prompt);
// - the compaction notice shows (its figures said to be estimates; a checkpoint prepared ahead
//   says that the divider marks where the summary was written), with what the summary cost (its
//   requests and tokens exactly as the provider server counted them), a divider where the
//   checkpoint ends and the messages it covers dimmed;
// - regenerate makes the last reply again; a reload keeps the conversation; stop ends a long reply
//   mid-way (the provider server writes slowly for it); a new chat starts empty, the old one stays
//   listed and opens again;
// - at 390 px wide the header stays on one line and nothing scrolls sideways; the composer stays
//   pinned at the bottom;
// - nothing goes wrong: no error in the chat, none in the browser's console, no uncaught one.
// Then: concurrent requests each get their own compaction; with REDIS_URL the checkpoints live in
// Redis (a restarted server finds them), and so do the Edge route's with UPSTASH_REDIS_REST_URL and
// UPSTASH_REDIS_REST_TOKEN (over HTTP, through a real redis-server behind an endpoint of the tests
// speaking the Upstash REST protocol); `npm run example` starts and serves.
// Screenshots go to test-results/ (on failure, of the whole page).
//
// Needs: `npm run build` (the app consumes dist/), `npm ci --prefix examples/next-chat`, and
// Debian's chromium at /usr/bin/chromium. Missing pieces fail in beforeAll with the command to run.

import { type ChildProcess, spawn } from 'node:child_process';
import Redis from 'ioredis';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, assertChromium, launchBrowser, screenshot, withPage } from '../support/browser';
import { type NextApp, REPO_DIR, assertNextAppPrerequisites, buildNextApp, freePort, startNextApp } from '../support/next-app';
import { type ChatTurn, type ProviderServer, type RecordedRequest, assistantAgent, chatSession, judgeRecall, startProviderServer } from '../support/provider-server/index';
import { startRedisServer } from '../support/redis-server';
import { startUpstashEndpoint } from '../support/upstash-endpoint';
import { noticesOf } from '../../examples/next-chat/lib/notices';
import type { ChatMessage } from '../../examples/next-chat/lib/types';

const WINDOW = 8_000;
const REPLY_TIMEOUT = 20_000;
/** A slow model, for a reply long enough to stop: about 8 s for the list of every fact. */
const SLOW = { promptTokensPerSecond: 1_000_000, outputTokensPerSecond: 40 };

/**
 * The chat of a path: a seeded chat session (facts first, then documents, logs and questions),
 * with a pasted log after every third turn to fill the small window. The tag keeps the paths'
 * conversations apart (identical conversations would share their checkpoints).
 */
function conversation(tag: string): ChatTurn[] {
  const base = chatSession({ seed: `e2e-${tag}`, turns: 22, pasteChars: [3_000, 6_000] });
  const pastes = chatSession({ seed: `e2e-pastes-${tag}`, turns: 200, pasteChars: [3_000, 6_000] }).filter((turn) => turn.kind === 'paste');
  return base.flatMap((turn, index) => (index % 3 === 2 ? [turn, pastes[index]!] : [turn]));
}

let server: ProviderServer;
let app: NextApp;
let browser: Browser;
const timings: Record<string, number> = {};

beforeAll(async () => {
  // fail fast, before the minute-long build, when something is missing
  assertChromium();
  assertNextAppPrerequisites();
  server = await startProviderServer({ contextWindow: WINDOW, agent: assistantAgent() });
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

const PAGES: Record<string, { label: string; short: string }> = {
  '/': { label: 'Route handler', short: 'Node' },
  '/edge': { label: 'Edge route', short: 'Edge' },
  '/action': { label: 'Server action', short: 'Action' },
};

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
      await ready(page);
      // the navigation marks this page, and only this one
      await expect.poll(() => page.locator('nav a[aria-current="page"]').allInnerTexts()).toEqual([PAGES[path]!.label]);
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

const ready = (page: Page) => expect.poll(() => page.getByTestId('composer').getAttribute('data-status'), { timeout: REPLY_TIMEOUT }).toBe('ready');
const replies = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"]');
const assistantTexts = (page: Page) => page.locator('[data-testid="message"][data-role="assistant"] .text').allInnerTexts();
const messageTexts = (page: Page) => page.locator('[data-testid="message"] .text').allInnerTexts();

/** Sends a message and waits for its reply (the `count`-th); returns the reply's text. */
async function send(page: Page, text: string, count: number): Promise<string> {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('send').click();
  await expect.poll(() => replies(page).count(), { timeout: REPLY_TIMEOUT, message: `reply ${count}` }).toBe(count);
  await ready(page);
  expect(await page.getByTestId('chat-error').allTextContents(), `error shown after message ${count}`).toEqual([]);
  return (await assistantTexts(page)).at(-1)!;
}

/** Types the turns one by one, waits for each reply, and judges the answer to every question. */
async function converse(page: Page, turns: ChatTurn[]): Promise<void> {
  for (const [index, turn] of turns.entries()) {
    const text = await send(page, turn.text, index + 1);
    if (turn.kind === 'question') expect(judgeRecall(text, turn.question), `reply ${index + 1} to “${turn.text}”: ${text}`).toBe('right');
  }
}

/** What a notice's cost line says (lib/cost.ts), its numbers read back from the page's text. */
interface ShownCost {
  requests: number;
  written: number;
  read: number;
  fromCache: number;
  background: boolean;
}

/**
 * The cost line of a compaction written by the local chat assistant, which reports input, cached and
 * output tokens for every request: "Summary: 1 request, 412 tokens written (2,310 read, 2,048 from
 * cache), 3.1 s", with " in the background" for a checkpoint prepared ahead.
 */
const COST_LINE = /^Summary: (\d+) requests?, ([\d,]+) tokens? written \(([\d,]+) read, ([\d,]+) from cache\), (?:\d+ ms|\d+\.\d s)( in the background)?$/;

function shownCost(text: string): ShownCost {
  const match = COST_LINE.exec(text);
  expect(match, `the cost line “${text}”`).not.toBeNull();
  const count = (digits: string) => Number(digits.replaceAll(',', ''));
  return { requests: count(match![1]!), written: count(match![2]!), read: count(match![3]!), fromCache: count(match![4]!), background: match![5] !== undefined };
}

/** A notice of the finished conversation, as the page shows it. */
interface ShownNotice {
  text: string;
  /** It says it was prepared ahead (the metadata's `prepared`). */
  ahead: boolean;
  cost: ShownCost;
}

/** Checks the finished conversation; returns its notices. */
async function checkConversation(page: Page, name: string, count: number): Promise<ShownNotice[]> {
  const texts = await assistantTexts(page);
  expect(texts).toHaveLength(count);
  // rendered from markdown: no `**` or backticks are left, lists are lists
  for (const [index, text] of texts.entries()) {
    expect(text, `reply ${index + 1}`).not.toMatch(/\*\*|`/);
  }
  expect(await page.locator('[data-testid="message"][data-role="assistant"] .text ul > li').count(), 'list items').toBeGreaterThan(3);
  expect(await page.locator('[data-testid="message"][data-role="assistant"] .text code').count(), 'code spans').toBeGreaterThan(0);
  expect(await page.locator('[data-testid="message"][data-role="assistant"] .text [data-streamdown="strong"]').count(), 'bold values').toBeGreaterThan(0);

  const notices = await page.getByTestId('compaction-notice').evaluateAll((all) =>
    all.map((notice) => ({
      text: notice.querySelector('span')!.textContent ?? '',
      since: Number(notice.getAttribute('data-since')),
      prepared: notice.getAttribute('data-prepared') === 'true',
      note: notice.querySelector('[data-testid="prepared-note"]')?.textContent ?? null,
      cost: notice.querySelector('[data-testid="compaction-cost"]')?.textContent ?? null,
    })),
  );
  expect(notices.length, 'compaction notices').toBeGreaterThan(1);
  for (const notice of notices) {
    // the figures are the middleware's estimates, and the notice says so
    expect(notice.text).toMatch(/^Conversation compacted: \d+ messages summarized \(estimated [\d,]+ → [\d,]+ tokens\)$/);
    // prepared ahead (the middleware says so in the metadata): written where the divider is, some
    // messages before this turn (a text chat: a checkpoint written for its turn ends right before it)
    expect(notice.since > 0, `since ${notice.since}, prepared ${notice.prepared}`).toBe(notice.prepared);
    if (notice.prepared) {
      expect(notice.note).toBe(
        `Prepared ahead: the summary was written ${notice.since} message${notice.since === 1 ? '' : 's'} earlier, where the divider is, while the chat went on; the messages after the divider are still sent in full.`,
      );
    } else {
      expect(notice.note).toBeNull();
    }
  }
  const costs = notices.map((notice) => shownCost(notice.cost ?? ''));
  // the time of a checkpoint prepared ahead passed in the background, and the line says so
  expect(costs.map((cost) => cost.background)).toEqual(notices.map((notice) => notice.prepared));
  expect(await page.getByTestId('chat-error').count()).toBe(0);
  // the summary is rendered from markdown too: headings, not `##`; it lists the facts it saw
  const summary = page.getByTestId('compaction-notice').last().locator('details');
  await summary.locator('summary').click();
  expect(await summary.locator('.summary h2').count(), 'headings in the summary').toBeGreaterThan(1);
  expect(await summary.locator('.summary').textContent()).not.toContain('## ');
  expect(await summary.locator('.summary').textContent()).toContain('Important Context');
  await summary.locator('summary').click();

  // one divider per compaction, where its checkpoint ends; the newest is what the model sees now,
  // and the messages above it are dimmed (those below are not)
  const items = await page.getByTestId('messages').evaluate((list) =>
    Array.from(list.children, (item) => ({
      divider: item.getAttribute('data-testid') === 'compaction-divider',
      current: item.getAttribute('data-current') === 'true',
      ahead: item.getAttribute('data-ahead') === 'true',
      at: Number(item.getAttribute('data-covered')),
      text: item.textContent ?? '',
      message: item.querySelector('[data-testid="message"]') !== null,
      covered: item.getAttribute('data-covered'),
      opacity: Number(getComputedStyle(item).opacity),
    })),
  );
  const dividers = items.filter((item) => item.divider);
  expect(dividers.length, 'a divider per place a compaction cut').toBeGreaterThan(0);
  expect(dividers.length).toBeLessThanOrEqual(notices.length);
  expect(dividers.filter((item) => item.current), 'the current divider').toHaveLength(1);
  const current = items.findIndex((item) => item.current);
  const { at, ahead } = items[current]!;
  const messages = items.filter((item) => item.message);
  expect(messages).toHaveLength(count * 2);
  expect(items.slice(0, current).filter((item) => item.message), 'messages above the current divider').toHaveLength(at);
  expect(items[current]!.text).toBe(`↑ The model now sees the ${at} messages above as the summary${ahead ? ', written here ahead of time' : ''}`);
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
  // The cut falls before a user message; or, for a checkpoint prepared for the next turn (which
  // covers the whole conversation of the turn it was prepared at), right after the user's message
  // and before its reply.
  if (at % 2 === 1) expect(ahead, 'a cut after a user message is one prepared ahead').toBe(true);

  // for a person to look at: the current divider, with the messages around it
  await page.locator('[data-testid="compaction-divider"][data-current="true"]').evaluate((divider) => divider.scrollIntoView({ block: 'center' }));
  await screenshot(page, `${name}-passed`);
  return notices.map((notice, index) => ({ text: notice.text, ahead: notice.prepared, cost: costs[index]! }));
}

/** The composer is pinned to the bottom of the window, wherever the page is scrolled. */
async function expectPinnedComposer(page: Page): Promise<void> {
  for (const top of [0, 1e9]) {
    await page.evaluate((y) => window.scrollTo(0, y), top);
    const { bottom, height } = await page.evaluate(() => ({ bottom: document.querySelector('.composer-bar')!.getBoundingClientRect().bottom, height: window.innerHeight }));
    expect(Math.abs(bottom - height), `the composer's bottom (${bottom}) at the window's (${height}), scrolled to ${top}`).toBeLessThanOrEqual(1);
  }
}

/** The last request the provider answered that was not a summary request. */
const lastStep = () => server.requests.filter((request) => !request.isSummaryRequest && !request.rejected).at(-1)!;
const userTexts = (body: unknown) => (body as { messages: Array<{ role: string; content: unknown }> }).messages.filter((m) => m.role === 'user').map((m) => String(m.content));

/** Everything a path goes through after its conversation (see the top of this file). */
async function afterConversation(page: Page, name: string, path: string, turns: ChatTurn[]): Promise<void> {
  const streaming = path !== '/action';
  let count = turns.length;

  // a question about one of the first facts (one never corrected), given before the first
  // compaction: answered from the checkpoint, the message that gave it no longer in the prompt
  const corrected = new Set(turns.flatMap((turn) => (turn.kind === 'fact' && turn.correction ? turn.facts.map((f) => f.name) : [])));
  const first = turns.slice(0, 2).find((turn) => turn.kind === 'fact' && !corrected.has(turn.facts[0]!.name));
  if (first?.kind !== 'fact') throw new Error('the session starts with two facts, one of them never corrected');
  const fact = { ...first.facts[0]!, stale: [] as string[] };
  const answer = await send(page, `What was the ${fact.name} I gave you?`, ++count);
  expect(judgeRecall(answer, { expected: fact.value, stale: [] }), answer).toBe('right');
  const prompt = userTexts(lastStep().body);
  expect(prompt, 'the message that gave the fact is no longer in the prompt').not.toContain(first.text);
  expect(prompt.some((text) => text.includes(fact.value)), 'a checkpoint still shows the fact').toBe(true);

  // regenerate: the last reply is made again (the assistant is deterministic: the same words)
  const before = server.requests.length;
  const messagesBefore = await messageTexts(page);
  await page.getByTestId('regenerate').click();
  await expect.poll(() => server.requests.length > before, { timeout: REPLY_TIMEOUT }).toBe(true);
  await ready(page);
  expect(await messageTexts(page)).toEqual(messagesBefore);
  expect(userTexts(lastStep().body).at(-1)).toBe(`What was the ${fact.name} I gave you?`);
  expect(await page.getByTestId('regenerate').count(), 'regenerate, under the last reply only').toBe(1);

  // a reload keeps the conversation, its notices and its divider
  const notices = await page.getByTestId('compaction-notice').allInnerTexts();
  await page.reload();
  await ready(page);
  expect(await messageTexts(page)).toEqual(messagesBefore);
  await expect.poll(() => page.getByTestId('compaction-notice').allInnerTexts()).toEqual(notices);
  expect(await page.locator('[data-testid="compaction-divider"][data-current="true"]').count()).toBe(1);
  await expectPinnedComposer(page);

  // stop mid-reply: a slow model and a long reply (every fact it has)
  server.setSpeed(SLOW);
  try {
    const mark = server.requests.length;
    await page.getByTestId('chat-input').fill('What do you remember?');
    // the server action's answer: a POST to the page with a Next-Action header, waited for from
    // before the send (its response can come before a listener set up later)
    // (finished or failed: a stopped page may abort its fetch before the response comes)
    const answered = streaming
      ? undefined
      : new Promise<void>((resolve) => {
          const done = (request: { headers(): Record<string, string> }) => void (request.headers()['next-action'] !== undefined && resolve());
          page.on('requestfinished', done);
          page.on('requestfailed', done);
        });
    await page.getByTestId('send').click();
    if (streaming) {
      // the reply has begun to arrive
      await expect.poll(async () => ((await assistantTexts(page)).length > count ? (await assistantTexts(page)).at(-1)!.length : 0), { timeout: REPLY_TIMEOUT }).toBeGreaterThan(0);
    } else {
      await expect.poll(() => page.getByTestId('pending').count(), { timeout: REPLY_TIMEOUT }).toBe(1);
      await expect.poll(() => server.requests.length > mark, { timeout: REPLY_TIMEOUT }).toBe(true);
    }
    await page.getByTestId('stop').click();
    await ready(page);
    const whole = server.requests.slice(mark).find((request) => !request.isSummaryRequest)!.reply!.text;
    const newest = whole.split('\n').at(-1)!.replace(/^- \*\*(.+?)\*\*:.*$/, '$1');
    expect(whole.split('\n').length, 'a long reply').toBeGreaterThan(10);
    if (streaming) {
      count++;
      // the stopped reply stays as far as it came, short of its end
      const partial = (await assistantTexts(page)).at(-1)!;
      expect(partial.length).toBeGreaterThan(0);
      expect(partial, 'the stopped reply').not.toContain(newest);
      // drawn as markdown even where it was cut (no stray `**`), and marked as stopped, under it only
      expect(partial, 'the stopped reply, rendered').not.toMatch(/\*\*|`/);
      expect(await page.locator('[data-testid="message"][data-role="assistant"]').last().getByTestId('stopped').innerText()).toBe('■ Stopped');
      expect(await page.getByTestId('stopped').count(), 'the stopped sign, on the stopped reply only').toBe(1);
      await page.reload();
      await ready(page);
      expect((await assistantTexts(page)).at(-1), 'the stopped reply, kept').toBe(partial);
      expect(await page.getByTestId('stopped').count(), 'the stopped sign, kept').toBe(1);
    } else {
      // a server action cannot be aborted: its reply arrives and is dropped
      await answered;
      expect(await replies(page).count()).toBe(count);
    }
  } finally {
    server.setSpeed(undefined);
  }
  const conversationLength = await page.locator('[data-testid="message"]').count();

  // a new chat starts empty, for the model too; the old one stays listed and opens again
  await page.getByTestId('new-chat').click();
  await expect.poll(() => page.locator('[data-testid="message"]').count()).toBe(0);
  expect(await page.getByTestId('empty').count()).toBe(1);
  expect(await page.locator('[data-testid="conversations"] option').count()).toBe(2);
  const fresh = await send(page, `What was the ${fact.name} I gave you?`, 1);
  expect(judgeRecall(fresh, { expected: fact.value, stale: fact.stale }), fresh).toBe('forgotten');
  expect(userTexts(lastStep().body)).toEqual([`What was the ${fact.name} I gave you?`]);
  await page.reload();
  await ready(page);
  expect(await page.locator('[data-testid="message"]').count(), 'the new chat, kept').toBe(2);
  const old = await page.locator('[data-testid="conversations"] option').evaluateAll((options, start) => options.find((o) => o.textContent?.startsWith(start))?.getAttribute('value'), turns[0]!.text.slice(0, 40));
  expect(old, `the first conversation listed as “${turns[0]!.text}”`).toBeTruthy();
  await page.getByTestId('conversations').selectOption(old!);
  await expect.poll(() => page.locator('[data-testid="message"]').count()).toBe(conversationLength);

  // 390 px wide: the header on one line, nothing wider than the window, the composer pinned
  await page.setViewportSize({ width: 390, height: 844 });
  await expect.poll(() => page.locator('nav a[aria-current="page"]').allInnerTexts()).toEqual([PAGES[path]!.short]);
  const layout = await page.evaluate(() => {
    const header = document.querySelector('header')!;
    // the middle of each item: one line when they are all level
    const tops = Array.from(header.querySelectorAll('strong, nav a'), (element) => {
      const { top, bottom } = element.getBoundingClientRect();
      return Math.round((top + bottom) / 2);
    });
    const wider = Array.from(document.querySelectorAll('body *'))
      .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5 && element.closest('pre, .text') === null)
      .map((element) => `${element.tagName.toLowerCase()}.${element.className}`);
    return { scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth, header: header.getBoundingClientRect().height, tops, wider };
  });
  expect(layout.scrollWidth, 'no horizontal scroll').toBe(layout.clientWidth);
  expect(layout.clientWidth).toBe(390);
  expect(layout.wider, 'elements wider than the window').toEqual([]);
  expect(new Set(layout.tops).size, `the header's items on one line: ${layout.tops}`).toBe(1);
  expect(layout.header).toBeLessThan(56);
  await expectPinnedComposer(page);
  await page.locator('[data-testid="compaction-divider"][data-current="true"]').evaluate((divider) => divider.scrollIntoView({ block: 'center' }));
  await screenshot(page, `${name}-390`);
  await page.setViewportSize({ width: 1100, height: 900 });
}

/**
 * The cost lines against what the provider counted: a summary of one request shows exactly the
 * input, cached and output tokens the local provider server recorded for one summary request of
 * this conversation, each request matched once; a notice of several requests (a reminder, a
 * shortened retry, a prepared checkpoint compacted again) shows at least that many. Requests of a
 * checkpoint prepared in the background but not sent yet are in no notice.
 */
function expectCostsRecorded(notices: ShownNotice[], requests: RecordedRequest[]): void {
  const summaries = requests.filter((request) => request.isSummaryRequest);
  const unmatched = summaries.filter((request) => !request.rejected);
  let matched = 0;
  for (const { cost } of notices) {
    expect(cost.requests, 'a summary is a model call').toBeGreaterThanOrEqual(1);
    if (cost.requests !== 1) continue;
    const index = unmatched.findIndex((request) => request.promptTokens === cost.read && (request.cachedTokens ?? 0) === cost.fromCache && request.outputTokens === cost.written);
    expect(index, `a summary request of ${cost.read} prompt tokens (${cost.fromCache} cached) and ${cost.written} output tokens among ${JSON.stringify(unmatched.map((r) => [r.promptTokens, r.cachedTokens, r.outputTokens]))}`).toBeGreaterThanOrEqual(0);
    unmatched.splice(index, 1);
    matched++;
  }
  expect(matched, 'notices of one summary request, matched to the provider').toBeGreaterThan(1);
  expect(notices.reduce((total, { cost }) => total + cost.requests, 0), 'requests in the notices').toBeLessThanOrEqual(summaries.length);
  // the prompt cache: most of a summary request is the step's own prompt, read before
  expect(notices.some(({ cost }) => cost.fromCache > 0), 'tokens read from the cache').toBe(true);
}

const stats: Record<string, { notices: number; requests: number; summaryRequests: number; rejected: number }> = {};

/** Summary requests the provider answered since `mark`; notes what the provider saw for the log. */
function summaryRequestsSince(mark: number, name: string, notices: number): number {
  const requests = server.requests.slice(mark);
  const summaryRequests = requests.filter((request) => request.isSummaryRequest && !request.rejected).length;
  stats[name] = { notices, requests: requests.length, summaryRequests, rejected: requests.filter((request) => request.rejected).length };
  return summaryRequests;
}

/** The server's log lines of compactions since `mark` (lib/model.ts logs through console). */
const compactionLines = (mark: number) => app.output().slice(mark).match(/ai-compaction: compacted \d+ messages \(auto, rule [a-z-]+(, prepared ahead)?\)/g) ?? [];

describe('examples/next-chat in Chromium', () => {
  for (const [path, name] of [
    ['/', 'route'],
    ['/edge', 'edge'],
    ['/action', 'action'],
  ] as const) {
    const title = { '/': 'route handler (useChat + streamText)', '/edge': 'Edge route', '/action': 'server action (generateText, the conversation kept by the page)' }[path];
    it(`${title}: a chat of facts, documents and questions in a ${WINDOW}-token window, then regenerate, reload, stop, new chat and 390 px`, async () => {
      const mark = server.requests.length;
      const logMark = app.output().length;
      const started = Date.now();
      const turns = conversation(name);
      const notices = await onPage(`next-chat-${name}`, path, async (page) => {
        await expectPinnedComposer(page);
        await converse(page, turns);
        const notices = await checkConversation(page, `next-chat-${name}`, turns.length);
        // each notice is a compaction the middleware logged, and says "prepared ahead" where it was
        const lines = compactionLines(logMark);
        expect(notices.length).toBe(lines.length);
        expect(notices.filter((notice) => notice.ahead).length, 'notices that say they were prepared ahead').toBe(lines.filter((line) => line.includes('prepared ahead')).length);
        expectCostsRecorded(notices, server.requests.slice(mark));
        await afterConversation(page, `next-chat-${name}`, path, turns);
        return notices;
      });
      timings[name] = Date.now() - started;
      expect(summaryRequestsSince(mark, name, notices.length)).toBeGreaterThanOrEqual(notices.length);
    }, 240_000);
  }

  it('draws a saved conversation from its parts: the notice, divider and dimming from the compaction part, a reply stopped inside `**` as markdown, marked Stopped', async () => {
    const compactionPart = {
      type: 'dynamic-tool',
      toolName: 'compaction',
      toolCallId: 'ai-compaction-00112233aabbccdd',
      state: 'output-available',
      input: {},
      output: { trigger: 'auto', summary: '## Objective\n- Remember the facts', tokensBefore: 6_969, tokensAfter: 3_443 },
      providerExecuted: true,
      callProviderMetadata: { compaction: { reason: 'auto', kind: 'summary', messagesCovered: 2, tokensBefore: 6_969, tokensAfter: 3_443, summary: '## Objective\n- Remember the facts', usage: { requests: 1, inputTokens: 2_310, cachedInputTokens: 2_048, outputTokens: 412, durationMs: 3_100 } } },
    };
    const text = (value: string, state?: string) => ({ type: 'text', text: value, ...(state === undefined ? {} : { state }) });
    const messages = [
      { id: 'u1', role: 'user', parts: [text('My order number is A-4471.')] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, text('Noted — your order number is **A-4471**.', 'done')] },
      { id: 'u2', role: 'user', parts: [text('My city is Lyon.')] },
      { id: 'a2', role: 'assistant', parts: [{ type: 'step-start' }, compactionPart, text('Noted — your city is **Lyon**.', 'done')] },
      { id: 'u3', role: 'user', parts: [text('What do you remember?')] },
      // stopped inside an emphasis: its text part never ended
      { id: 'a3', role: 'assistant', parts: [{ type: 'step-start' }, text('Here is what I have:\n\n- **Order number**: A-4471\n- **Ci', 'streaming')] },
    ];
    const saved = { version: 1, current: 'saved', conversations: [{ id: 'saved', title: 'saved', updatedAt: Date.now(), messages }] };
    await onPage('saved-parts', '/', async (page) => {
      await page.evaluate((value) => localStorage.setItem('next-chat:/api/chat', value), JSON.stringify(saved));
      await page.reload();
      await ready(page);
      await expect.poll(() => page.getByTestId('compaction-notice').count()).toBe(1);
      expect(await page.getByTestId('compaction-notice').locator('span').first().innerText()).toBe('Conversation compacted: 2 messages summarized (estimated 6,969 → 3,443 tokens)');
      expect(await page.getByTestId('compaction-cost').innerText()).toBe('Summary: 1 request, 412 tokens written (2,310 read, 2,048 from cache), 3.1 s');
      // the notice above the reply that compacted; the divider after the two messages it covers, which are dimmed
      expect(await page.locator('li:has([data-testid="compaction-notice"]) [data-testid="message"] .text').innerText()).toBe('Noted — your city is Lyon.');
      expect(await page.locator('[data-testid="compaction-divider"]').evaluateAll((all) => all.map((divider) => [divider.getAttribute('data-covered'), divider.getAttribute('data-current')]))).toEqual([['2', 'true']]);
      expect(await page.locator('li[data-covered="covered"] [data-testid="message"] .text').allInnerTexts()).toEqual(['My order number is A-4471.', 'Noted — your order number is A-4471.']);
      // the stopped reply: drawn as markdown cut short, no stray `**`, and marked
      const stopped = replies(page).last();
      expect(await stopped.locator('[data-streamdown="strong"]').allInnerTexts()).toEqual(['Order number', 'Ci']);
      expect(await stopped.locator('.text').innerText()).not.toContain('*');
      expect(await stopped.getByTestId('stopped').innerText()).toBe('■ Stopped');
      expect(await page.getByTestId('stopped').count()).toBe(1);
    });
  });

  it('keeps the notice and the divider when the reply that compacted is regenerated: the model still reads the checkpoint', async () => {
    // A saved conversation past the ceiling: regenerating its last reply compacts (the notice
    // appears on it); regenerating that reply again sends the same checkpoint, so the page shows it
    // again rather than losing it while the model still reads it.
    const pastes = chatSession({ seed: 'regenerate', turns: 200, pasteChars: [3_000, 6_000] }).filter((turn) => turn.kind === 'paste');
    const text = (value: string) => ({ type: 'text', text: value });
    const messages = [];
    for (let i = 1; i <= 7; i++) {
      messages.push({ id: `u${i}`, role: 'user', parts: [text(`My code for Delta is Delta-${i}.\n\n${pastes[i]!.text}`)] });
      messages.push({ id: `a${i}`, role: 'assistant', parts: [{ type: 'step-start' }, { ...text(`Noted (Delta ${i}).`), state: 'done' }] });
    }
    messages.push({ id: 'u-last', role: 'user', parts: [text('What is my code for Delta?')] });
    messages.push({ id: 'a-last', role: 'assistant', parts: [{ type: 'step-start' }, { ...text('(to be made again)'), state: 'done' }] });
    const saved = { version: 1, current: 'regenerate', conversations: [{ id: 'regenerate', title: 'regenerate', updatedAt: Date.now(), messages }] };
    const summaries = () => server.requests.filter((request) => request.isSummaryRequest).length;
    const shown = async (page: Page) => ({
      notices: await page.getByTestId('compaction-notice').count(),
      dividers: await page.locator('[data-testid="compaction-divider"]').evaluateAll((all) => all.map((divider) => [divider.getAttribute('data-covered'), divider.getAttribute('data-current')])),
      // the notice is on the last reply, above its text
      onLast: await replies(page).last().locator('xpath=ancestor::li[1]').getByTestId('compaction-notice').count(),
      reply: (await assistantTexts(page)).at(-1),
    });
    const regenerate = async (page: Page) => {
      const before = server.requests.length;
      await page.getByTestId('regenerate').click();
      await expect.poll(() => server.requests.length > before, { timeout: REPLY_TIMEOUT }).toBe(true);
      await ready(page);
    };
    await onPage('regenerate-notice', '/', async (page) => {
      await page.evaluate((value) => localStorage.setItem('next-chat:/api/chat', value), JSON.stringify(saved));
      await page.reload();
      await ready(page);
      expect(await page.getByTestId('compaction-notice').count()).toBe(0);
      const before = summaries();
      await regenerate(page);
      await expect.poll(() => page.getByTestId('compaction-notice').count()).toBe(1);
      expect(summaries(), 'the first regenerate compacted').toBeGreaterThan(before);
      const first = await shown(page);
      expect(first).toEqual({ notices: 1, dividers: [['14', 'true']], onLast: 1, reply: 'The code for Delta you gave me is Delta-7.' });
      const noticeText = await page.getByTestId('compaction-notice').locator('span').first().innerText();
      const made = summaries();
      await regenerate(page);
      // the same checkpoint sent again, no summary written: the notice and the divider stay
      await expect.poll(() => page.getByTestId('compaction-notice').count()).toBe(1);
      await expect.poll(() => shown(page)).toEqual(first);
      expect(await page.getByTestId('compaction-notice').locator('span').first().innerText()).toBe(noticeText);
      expect(summaries(), 'no summary written for the regenerated reply').toBe(made);
      const prompt = userTexts(lastStep().body);
      expect(prompt.some((value) => value.startsWith('My code for Delta is Delta-1.')), 'the covered messages are not in the prompt').toBe(false);
      // and a reload keeps it
      await page.reload();
      await ready(page);
      // the page reads the notices from the saved parts asynchronously after it renders the messages
      await expect.poll(() => shown(page)).toEqual(first);
    });
  }, 120_000);

  it('concurrent conversations each get their own compaction notice', async () => {
    // Two conversations of different lengths, both past the ceiling, and a short one, posted at the
    // same time to the one module-level middleware: each long one must carry its own compaction
    // (covering its own history), never the other's, and the short one none.
    const pastes = chatSession({ seed: 'concurrent', turns: 200, pasteChars: [3_000, 6_000] }).filter((turn) => turn.kind === 'paste');
    const conversation = (tag: string, turns: number) => {
      const messages = [];
      for (let i = 1; i <= turns; i++) {
        messages.push({ id: `${tag}-u${i}`, role: 'user', parts: [{ type: 'text', text: `My code for ${tag} is ${tag}-${i}.\n\n${pastes[i]!.text}` }] });
        messages.push({ id: `${tag}-a${i}`, role: 'assistant', parts: [{ type: 'text', text: `Noted (${tag} ${i}).` }] });
      }
      messages.push({ id: `${tag}-last`, role: 'user', parts: [{ type: 'text', text: `What is my code for ${tag}?` }] });
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
        .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string; toolCallId?: string; toolName?: string; providerMetadata?: unknown; output?: { trigger: string; summary: string } });
      expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
      const text = chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.delta).join('');
      // the compaction's tool part, first in the reply, as the page reads it (lib/notices.ts)
      const call = chunks.find((chunk) => chunk.type === 'tool-input-available' && chunk.toolName === 'compaction');
      if (call === undefined) return { text, compaction: undefined };
      expect(chunks.slice(1, 4).map((chunk) => chunk.type)).toEqual(['start-step', 'tool-input-available', 'tool-output-available']);
      const output = chunks.find((chunk) => chunk.type === 'tool-output-available' && chunk.toolCallId === call.toolCallId)!.output!;
      const part = { type: 'dynamic-tool', toolName: 'compaction', toolCallId: call.toolCallId, state: 'output-available', input: {}, output, callProviderMetadata: call.providerMetadata };
      const notices = await noticesOf([...(messages as ChatMessage[]), { id: 'reply', role: 'assistant', parts: [part] } as unknown as ChatMessage]);
      const compaction = notices.get('reply')!;
      // the tool's output says what the page's notice says, the summary once (not again in the call's metadata)
      expect(output).toEqual({ trigger: compaction.reason, reason: compaction.reason, rule: compaction.rule, summary: compaction.summary, tokensBefore: compaction.tokensBefore, tokensAfter: compaction.tokensAfter });
      expect((call.providerMetadata as { compaction: object }).compaction).not.toHaveProperty('summary');
      return { text, compaction };
    };
    const [a, b, c] = await Promise.all([post(conversation('Alpha', 7)), post(conversation('Bravo', 9)), post(conversation('Charlie', 1))]);
    expect(c.compaction, 'a short conversation does not compact, whatever the others do').toBeUndefined();
    expect(a.compaction?.messagesCovered).toBe(14);
    expect(b.compaction?.messagesCovered).toBe(18);
    // text only: one model message per UI message, so as many of the page's messages
    expect(a.compaction?.covered).toEqual({ count: 14, partly: false, since: 0 });
    expect(b.compaction?.covered).toEqual({ count: 18, partly: false, since: 0 });
    // the summary is of the messages before the record (which keeps the newest verbatim)
    expect(a.compaction?.summary).toMatch(/^- Code for Alpha: Alpha-\d$/m);
    expect(a.compaction?.summary).not.toContain('Bravo');
    expect(b.compaction?.summary).toMatch(/^- Code for Bravo: Bravo-\d$/m);
    expect(b.compaction?.summary).not.toContain('Alpha');
    // and each answers its own question from its own checkpoint
    expect([a.text, b.text, c.text]).toEqual(['The code for Alpha you gave me is **Alpha-7**.', 'The code for Bravo you gave me is **Bravo-9**.', 'The code for Charlie you gave me is **Charlie-1**.']);
  }, 60_000);

  it("hands the checkpoints prepared in the background to after() (or the Edge runtime's waitUntil) without a warning", () => {
    // lib/model.ts logs through console: one line per compaction, a warning per failure.
    const output = app.output();
    expect(output).toMatch(/ai-compaction: compacted \d+ messages \(auto, rule [a-z-]+, prepared ahead\)/);
    expect(output).not.toContain('waitUntil refused');
    expect(output).not.toContain('in the background failed');
  });

  it('keeps the checkpoints in Redis with REDIS_URL: a restarted server finds them instead of summarizing again', async () => {
    const redis = await startRedisServer();
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await chatAcrossRestart({ route: '/api/chat', env: { REDIS_URL: redis.url }, tag: 'redis', fact: 'locker code', value: '7319', redis: client });
    } finally {
      client.disconnect();
      await redis.stop();
    }
  }, 120_000);

  it('keeps the Edge route\'s checkpoints in Redis over HTTP with UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN: a restarted server finds them', async () => {
    // a real redis-server behind the tests' endpoint speaking the Upstash REST protocol, which the
    // app's @upstash/redis client (lib/upstash.ts) talks to from the Edge runtime
    const redis = await startRedisServer();
    const endpoint = await startUpstashEndpoint(redis.port);
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      const env = { UPSTASH_REDIS_REST_URL: endpoint.url, UPSTASH_REDIS_REST_TOKEN: endpoint.token };
      const outputs = await chatAcrossRestart({ route: '/api/chat-edge', env, tag: 'upstash', fact: 'bike lock code', value: '4826', redis: client });
      // through the endpoint: checkpoints written and read back as the REST protocol's commands
      expect(endpoint.commands).toContain('SET');
      expect(endpoint.commands).toContain('GET');
      // and without a word from the client or the store (a value it could not read, the store unavailable)
      for (const output of outputs) {
        expect(output).not.toContain('[Upstash Redis]');
        expect(output.split('\n').filter((line) => line.includes('ai-compaction:') && !/ai-compaction: compacted \d+ messages/.test(line))).toEqual([]);
      }
    } finally {
      client.disconnect();
      await endpoint.close();
      await redis.stop();
    }
  }, 120_000);
});

/**
 * A chat as the page has it, turn by turn, posted to `route` of an app started with `env` (a Redis
 * store), until it compacts; a question about the first fact answered from the checkpoint, which
 * is in Redis (`redis`, a client of the same server). Then the app is stopped and the page asks
 * again (the same conversation) of a new process started with `env`: it finds the checkpoint and
 * sends it, without a summary request, the same prompt, the same answer. And one started without
 * `env`, in memory, summarizes again. Returns what the two apps with `env` printed.
 */
async function chatAcrossRestart(options: { route: string; env: Record<string, string>; tag: string; fact: string; value: string; redis: Redis }): Promise<string[]> {
  const { route, env, tag, fact, value } = options;
  const started: NextApp[] = [];
  const outputs: string[] = [];
  const start = async (extra: Record<string, string>) => {
    const next = await startNextApp({ OPENAI_BASE_URL: server.openaiBaseURL, OPENAI_API_KEY: 'test', CONTEXT_WINDOW: String(WINDOW), ...extra });
    started.push(next);
    return next;
  };
  const stop = async (next: NextApp) => {
    await next.close();
    started.splice(started.indexOf(next), 1);
    return next.output();
  };
  try {
    type Message = { id: string; role: 'user' | 'assistant'; parts: Array<{ type: 'text'; text: string }> };
    const post = async (next: NextApp, messages: Message[]) => {
      const mark = server.requests.length;
      const response = await fetch(`${next.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: tag, messages, trigger: 'submit-message' }) });
      expect(response.status).toBe(200);
      const chunks = (await response.text())
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string });
      expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
      const text = chunks
        .filter((chunk) => chunk.type === 'text-delta')
        .map((chunk) => chunk.delta)
        .join('');
      const requests = server.requests.slice(mark);
      return { text, summaryRequests: requests.filter((request) => request.isSummaryRequest).length, prompt: userTexts(requests.filter((request) => !request.isSummaryRequest).at(-1)!.body) };
    };
    // a chat as the page has it, turn by turn, on the first server (with the store)
    const pastes = chatSession({ seed: tag, turns: 200, pasteChars: [3_000, 6_000] }).filter((turn) => turn.kind === 'paste');
    const messages: Message[] = [];
    const say = async (next: NextApp, text: string) => {
      messages.push({ id: `u${messages.length}`, role: 'user', parts: [{ type: 'text', text }] });
      const reply = await post(next, messages);
      messages.push({ id: `a${messages.length}`, role: 'assistant', parts: [{ type: 'text', text: reply.text }] });
      return reply;
    };
    const first = await start(env);
    const told = `My ${fact} is ${value}.`;
    let summaryRequests = 0;
    for (const text of [told, ...pastes.slice(0, 10).map((paste) => paste.text)]) summaryRequests += (await say(first, text)).summaryRequests;
    expect(summaryRequests, 'the first server compacts').toBeGreaterThan(0);
    const asked = await say(first, `What's my ${fact}?`);
    expect(asked.text).toBe(`The ${fact} you gave me is **${value}**.`);
    expect(asked.prompt, 'from the checkpoint').not.toContain(told);
    expect((await options.redis.keys('ai-compaction:*')).length, 'keys in Redis').toBeGreaterThan(0);
    outputs.push(await stop(first));

    // the page asks again (the same conversation) of a new server process: with the store it finds the checkpoint
    const history = messages.slice(0, -1);
    const restarted = await start(env);
    const again = await post(restarted, history);
    expect(again.summaryRequests, 'the restarted server sends the stored checkpoint').toBe(0);
    // the checkpoint the first server sent, or the one it prepared next in the background and
    // stored before it stopped (a catch-up): either way from the store, with the same question
    expect(again.prompt.at(-1)).toEqual(asked.prompt.at(-1));
    expect(again.prompt.length).toBeLessThanOrEqual(asked.prompt.length);
    expect(again.prompt, 'from the checkpoint').not.toContain(told);
    expect(again.text).toBe(asked.text);
    outputs.push(await stop(restarted));
    // in memory, a new server has no checkpoint: it summarizes the whole conversation at once
    const control = await post(await start({}), history);
    expect(control.summaryRequests, 'without the store a new server summarizes again').toBeGreaterThan(0);
    return outputs;
  } finally {
    await Promise.all(started.map((next) => next.close()));
  }
}

describe('npm run example', () => {
  it('builds what is missing, starts the chat assistant and the app, prints the URL, serves, and stops on Ctrl+C', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    delete env.REDIS_URL;
    // its own process group, so that the test ends it and everything it started, like Ctrl+C
    const child: ChildProcess = spawn('npm', ['run', 'example', '--', '--port', String(port), '--speed', '0'], { cwd: REPO_DIR, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? `exit ${code}`)));
    try {
      await expect.poll(() => output, { timeout: 180_000, interval: 500, message: 'the ready line' }).toContain(`next-chat is ready: http://127.0.0.1:${port}`);
      // the build of the tests above is reused: nothing changed since
      expect(output).toContain('Reusing the last build.');
      const model = /OPENAI_BASE_URL=(http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(output)?.[1];
      expect(model, 'the local model printed').toBeDefined();
      const url = `http://127.0.0.1:${port}`;
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('next-chat');
      const say = async (messages: Array<{ role: string; text: string }>) => {
        const response = await fetch(`${url}/api/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: 'smoke', trigger: 'submit-message', messages: messages.map((m, i) => ({ id: `m${i}`, role: m.role, parts: [{ type: 'text', text: m.text }] })) }),
        });
        return (await response.text())
          .split('\n')
          .filter((line) => line.startsWith('data: {'))
          .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string })
          .filter((chunk) => chunk.type === 'text-delta')
          .map((chunk) => chunk.delta)
          .join('');
      };
      const noted = await say([{ role: 'user', text: 'My order number is A-4471.' }]);
      expect(noted).toBe('Noted — your order number is **A-4471**.');
      const answer = await say([
        { role: 'user', text: 'My order number is A-4471.' },
        { role: 'assistant', text: noted },
        { role: 'user', text: 'What was the order number I gave you?' },
      ]);
      expect(answer).toBe('The order number you gave me is **A-4471**.');
      await expect.poll(() => output).toMatch(/\[model\] POST \/v1\/chat\/completions gpt-4o-mini \(stream\): [\d,]+ → \d+ tokens/);

      // Ctrl+C: the terminal sends SIGINT to the whole group (npm exits on it, the script closes both servers)
      process.kill(-child.pid!, 'SIGINT');
      expect(['SIGINT', 'exit 0', 'exit 130'], `how npm ended; output:\n${output.slice(-2_000)}`).toContain(await exited);
      const up = (address: string) => fetch(address, { method: 'POST', body: '{}' }).then(() => 'up', () => 'down');
      await expect.poll(() => up(url), { timeout: 15_000, message: 'the app is stopped' }).toBe('down');
      await expect.poll(() => up(`${model}/chat/completions`), { timeout: 15_000, message: 'the local model is stopped' }).toBe('down');
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }, 240_000);
});
