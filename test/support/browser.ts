// Headless Chromium for the end-to-end tests: Debian's `chromium` package driven by playwright-core.
// Nothing is ever downloaded: a missing browser fails at once with the command that installs it.

import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, type Page, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots go here (gitignored). */
export const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function assertChromium(): void {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: run \`apt-get update && apt-get install -y chromium\` (or set CHROMIUM_PATH).`);
  }
}

export interface Browser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Chromium with a fresh profile in a temporary folder, removed on close. */
export async function launchBrowser(): Promise<Browser> {
  assertChromium();
  const profile = await mkdtemp(join(tmpdir(), 'next-chat-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ARGS,
      viewport: { width: 1100, height: 900 },
      timeout: 30_000,
    });
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot (the viewport, or the whole page with `fullPage`) to test-results/NAME.png and returns its path. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: options.fullPage ?? false, timeout: 10_000 });
  return path;
}

/**
 * Runs `body` with a new page; an uncaught error in the page fails it too. On failure saves a
 * full-page screenshot (named in the error) before rethrowing.
 */
export async function withPage<T>(browser: Browser, name: string, body: (page: Page) => Promise<T>): Promise<T> {
  const page = await browser.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  try {
    const result = await body(page);
    if (pageErrors.length > 0) throw new Error(`uncaught errors in the page: ${pageErrors.join(' | ')}`);
    return result;
  } catch (error) {
    const shot = await screenshot(page, `${name}-failed`, { fullPage: true }).catch((failure: unknown) => `(no screenshot: ${String(failure)})`);
    const detail = pageErrors.length > 0 ? `\npage errors: ${pageErrors.join(' | ')}` : '';
    if (error instanceof Error) {
      error.message += `\nscreenshot: ${shot}${detail}`;
      throw error;
    }
    throw new Error(`${String(error)}\nscreenshot: ${shot}${detail}`);
  } finally {
    await page.close().catch(() => undefined);
  }
}
