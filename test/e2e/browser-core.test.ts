import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser } from '../support/browser';

// The core's promise: it runs in browsers (Web Crypto, Web streams, no Node.js API). The
// package is bundled for the browser (esbuild, platform browser) with `ai` and run inside Chromium.
let browser: Browser;
let server: Server;
let url: string;

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('./browser-entry.ts', import.meta.url))],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const code = bundle.outputFiles[0]!.text;
  expect(code).not.toMatch(/from\s*["']node:/);
  server = createServer((request, response) => {
    if (request.url === '/bundle.js') {
      response.writeHead(200, { 'content-type': 'text/javascript' });
      response.end(code);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><html><body><script type="module" src="/bundle.js"></script></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe('the core in a browser', () => {
  it('should compact a 40-step tool loop inside Chromium', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(url);
    await page.waitForFunction(() => typeof (globalThis as { runCompaction?: unknown }).runCompaction === 'function');
    const result = await page.evaluate(() => (globalThis as unknown as { runCompaction: () => Promise<Record<string, unknown>> }).runCompaction());
    expect(errors).toEqual([]);
    expect(result.secure).toBe(true);
    expect(result.text).toBe('done');
    expect(result.steps).toBe(40);
    expect(result.summaries).toBeGreaterThanOrEqual(2);
    expect(result.compactions).toBe(result.summaries);
    expect(result.last).toBe('auto');
    for (const size of result.prompts as number[]) expect(size).toBeLessThan(12_000);
  });
});
