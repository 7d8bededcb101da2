// `npm run test:types` inside the test run: the consumer module and the README's ```ts blocks
// type-checked against ai@6 and against ai@7, each a `tsc` of its own. In the run they overlap the
// rest of the suite (the Next.js example's build above all) instead of coming before it; the
// script stays for running them alone.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const run = promisify(execFile);

/** `tsc -p PROJECT`: what it printed when it failed (its errors), else nothing. */
async function tsc(project: string): Promise<string> {
  try {
    await run(process.execPath, [TSC, '-p', project], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    return '';
  } catch (error) {
    const { stdout, stderr, message } = error as { stdout?: string; stderr?: string; message: string };
    return `${stdout ?? ''}${stderr ?? ''}`.trim() || message;
  }
}

beforeAll(async () => {
  // writes test/types/readme/ from README.md
  await run(process.execPath, ['scripts/readme-snippets.mjs'], { cwd: ROOT });
}, 60_000);

describe('the types a consumer sees', () => {
  for (const project of ['tsconfig.ai6.json', 'tsconfig.ai7.json', 'tsconfig.readme.ai6.json', 'tsconfig.readme.ai7.json']) {
    it(`type-checks with test/types/${project}`, async () => {
      expect(await tsc(`test/types/${project}`)).toBe('');
    }, 300_000);
  }
});
