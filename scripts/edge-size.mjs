// The size of the package in an Edge bundle: `src/index.ts` bundled by esbuild as a Next.js Edge
// route or a Worker would take it (platform browser, conditions edge-light and worker, minified),
// its runtime dependencies (zod, lru-cache) included, its peers (`ai`, `@opentelemetry/api`)
// left to the host. Prints bytes and gzipped bytes, of this tree and, given a git ref, of that
// ref's src/ (extracted with `git archive`), and the difference.
//
//   node scripts/edge-size.mjs [ref]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = resolve(new URL('..', import.meta.url).pathname);

async function size(dir) {
  const result = await build({
    entryPoints: [join(dir, 'src/index.ts')],
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['edge-light', 'worker', 'browser'],
    external: ['ai', '@opentelemetry/api'],
    nodePaths: [join(root, 'node_modules')],
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  return { bytes: code.length, gzipped: gzipSync(code, { level: 9 }).length };
}

const show = ({ bytes, gzipped }) => `${bytes} bytes, ${gzipped} gzipped`;
const after = await size(root);
const ref = process.argv[2];
if (ref === undefined) {
  console.log(`edge bundle: ${show(after)}`);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'edge-size-'));
  try {
    execFileSync('sh', ['-c', 'git -C "$0" archive "$1" src | tar -x -C "$2"', root, ref, dir]);
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const before = await size(dir);
    console.log(`edge bundle at ${ref}: ${show(before)}`);
    console.log(`edge bundle now: ${show(after)}`);
    console.log(`difference: ${after.bytes - before.bytes} bytes, ${after.gzipped - before.gzipped} gzipped`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
