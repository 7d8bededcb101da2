import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Plugin, build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `@opentelemetry/api` is an optional peer dependency (docs/observability.md): an app without it must
// bundle and run as before. The built package (dist/) is bundled by esbuild with AI SDK 7 (which does
// not depend on it) and every `@opentelemetry/*` import made unresolvable, for Node and for the
// browser; the Node bundle then runs in a directory with no node_modules at all, and compacts.

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const DIST = join(REPO, 'dist/index.js');

const unavailable: Plugin = {
  name: 'no-opentelemetry',
  setup(plugin) {
    plugin.onResolve({ filter: /^@opentelemetry\// }, (args) => ({ errors: [{ text: `${args.path} is not installed (imported by ${args.importer})` }] }));
  },
};

// A tool loop step that compacts (`compactNext()`), through the real `generateText` of AI SDK 7.
const ENTRY = `
import { compaction } from ${JSON.stringify(DIST)};
import { generateText, wrapLanguageModel } from 'ai';
const model = {
  specificationVersion: 'v4', provider: 'local', modelId: 'local-model', supportedUrls: {},
  async doGenerate() {
    return { content: [{ type: 'text', text: '## Objective\\n- carry on' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 120 }, outputTokens: { total: 30 } }, warnings: [] };
  },
  async doStream() { throw new Error('not streamed'); },
};
const middleware = compaction({ contextWindow: 100000 });
middleware.compactNext();
await generateText({ model: wrapLanguageModel({ model, middleware }), messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'answer' }, { role: 'user', content: 'next' }] });
console.log(JSON.stringify({ last: middleware.last(), registry: globalThis[Symbol.for('opentelemetry.js.api.1')] ?? null }));
`;

let dir: string;

beforeAll(() => {
  if (!existsSync(DIST)) throw new Error('dist/ is missing: run `npm run build` first.');
  const built = statSync(DIST).mtimeMs;
  const sources = (path: string): string[] => (statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => sources(join(path, name))) : [path]);
  const newer = sources(join(REPO, 'src')).find((file) => statSync(file).mtimeMs > built);
  if (newer !== undefined) throw new Error(`dist/ is older than ${newer}: run \`npm run build\` first.`);
  dir = mkdtempSync(join(tmpdir(), 'ai-compaction-no-otel-'));
  writeFileSync(join(dir, 'entry.mjs'), ENTRY);
});

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The entry bundled with AI SDK 7 as `ai`, `@opentelemetry/*` unresolvable. */
function bundle(platform: 'node' | 'browser') {
  return build({
    entryPoints: [join(dir, 'entry.mjs')],
    bundle: true,
    platform,
    format: 'esm',
    target: 'es2022',
    write: false,
    alias: { ai: 'ai7' },
    nodePaths: [join(REPO, 'node_modules')],
    // The AI SDK's gateway client carries CommonJS that requires Node's modules.
    ...(platform === 'node' ? { banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" } } : {}),
    plugins: [unavailable],
    logLevel: 'silent',
  });
}

describe('without @opentelemetry/api', () => {
  it('should bundle for the browser with nothing importing it', async () => {
    const result = await bundle('browser');
    expect(result.errors).toEqual([]);
    expect(result.outputFiles[0]!.text).toContain('opentelemetry.js.api.1');
  });

  it('should bundle for Node and compact, run where no package can be resolved, with no span and no registry made', async () => {
    const result = await bundle('node');
    writeFileSync(join(dir, 'app.mjs'), result.outputFiles[0]!.text);
    const { stdout } = await promisify(execFile)(process.execPath, ['app.mjs'], { cwd: dir, env: { PATH: process.env.PATH ?? '' } });
    const { last, registry } = JSON.parse(stdout) as { last: Record<string, unknown>; registry: unknown };
    expect(last).toMatchObject({ reason: 'manual', kind: 'summary', messagesCovered: 2, summary: '## Objective\n- carry on', usage: { requests: 1, inputTokens: 120, outputTokens: 30 } });
    // Nothing of OpenTelemetry's was made: its global stays unset.
    expect(registry).toBeNull();
  });
});
