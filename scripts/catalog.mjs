// Generates src/catalog/models.ts and src/catalog/data/*.ts, the embedded model catalog (docs/design.md, "The window"), from
// models.dev's public data (https://github.com/anomalyco/models.dev, MIT): its
// `providers/*/models/*.toml`, each resolved against the `models/*.toml` it names as `base_model`.
//
//   npm run catalog -- <models.dev checkout, extracted folder, or bare git repository> [--date YYYY-MM-DD]
//
// The snapshot's date is its commit date, read with git (a checkout or a bare repository); an
// extracted folder with no git gives it as `--date`. Rerunnable: the same snapshot writes the same
// file. Only the figures the middleware reads are kept: the providers the AI SDK has clients for,
// language models with a text input and output and a context window, not deprecated; each as one line
// `id|context|input|output|input price|output price|cache read|cache write` (prices in USD per
// million tokens, a field left empty where models.dev states none).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { parse } from 'smol-toml';

/** models.dev's providers kept: those the AI SDK has a client for (its package, in a comment of the output). */
const PROVIDERS = {
  openai: '@ai-sdk/openai',
  azure: '@ai-sdk/azure',
  anthropic: '@ai-sdk/anthropic',
  google: '@ai-sdk/google',
  // Claude on Vertex (`@ai-sdk/google-vertex/anthropic`) too: models.dev's google-vertex-anthropic repeats its Claude models.
  'google-vertex': '@ai-sdk/google-vertex',
  'amazon-bedrock': '@ai-sdk/amazon-bedrock',
  xai: '@ai-sdk/xai',
  mistral: '@ai-sdk/mistral',
  deepseek: '@ai-sdk/deepseek',
  groq: '@ai-sdk/groq',
  cohere: '@ai-sdk/cohere',
  perplexity: '@ai-sdk/perplexity',
  togetherai: '@ai-sdk/togetherai',
  'fireworks-ai': '@ai-sdk/fireworks',
  cerebras: '@ai-sdk/cerebras',
  deepinfra: '@ai-sdk/deepinfra',
  vercel: '@ai-sdk/gateway',
};

/** Bedrock's cross-region inference profiles: `us.anthropic.claude-...` (kept only where its figures differ from the model's own). */
const BEDROCK_REGION = /^(us|eu|apac|au|jp|ca|global|us-gov)\./;

/** Models that are no language model (their ids say so): embeddings, rerankers, classifiers, speech. */
const NOT_LANGUAGE = /embed|rerank|prompt-guard|tts|whisper|transcri/;

const OUT = new URL('../src/catalog/models.ts', import.meta.url);
const DATA = new URL('../src/catalog/data/', import.meta.url);
/** The most models a provider's file holds (src/ keeps every file under 400 lines). */
const MAX_ROWS = 390;

function main() {
  const args = process.argv.slice(2);
  const dateAt = args.indexOf('--date');
  const given = dateAt === -1 ? undefined : args[dateAt + 1];
  const source = args.find((arg, index) => !arg.startsWith('--') && (dateAt === -1 || index !== dateAt + 1));
  if (source === undefined) fail('give the path of a models.dev checkout, extracted folder or bare git repository');
  const path = resolve(source);
  let root = path;
  let cleanup;
  if (!existsSync(join(path, 'providers')) && isGit(path)) {
    // A bare repository: its tree at HEAD, extracted to a temporary folder.
    root = mkdtempSync(join(tmpdir(), 'models-dev-'));
    cleanup = () => rmSync(root, { recursive: true, force: true });
    execFileSync('sh', ['-c', `git -C "$0" archive HEAD providers models | tar -x -C "$1"`, path, root]);
  }
  try {
    if (!existsSync(join(root, 'providers'))) fail(`${path} holds no providers/ folder: not a models.dev snapshot`);
    const date = given ?? (isGit(path) ? git(path, 'log', '-1', '--format=%cs') : undefined);
    if (date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(date)) fail(`the snapshot's date is unknown: give it as --date YYYY-MM-DD (got ${date ?? 'none'})`);
    const commit = isGit(path) ? git(path, 'rev-parse', 'HEAD') : undefined;
    write(readCatalog(root), date, commit);
    console.log(`wrote ${relative(process.cwd(), OUT.pathname)} and ${relative(process.cwd(), DATA.pathname)} from the models.dev snapshot of ${date}`);
  } finally {
    cleanup?.();
  }
}

function fail(message) {
  console.error(`catalog: ${message}`);
  process.exit(1);
}

function isGit(path) {
  try {
    execFileSync('git', ['-C', path, 'rev-parse', '--git-dir'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function git(path, ...args) {
  return execFileSync('git', ['-C', path, ...args], { encoding: 'utf8' }).trim();
}

function tomlFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tomlFiles(path);
    return name.endsWith('.toml') ? [path] : [];
  });
}

/** A model's id: its file's path under `models/`, without `.toml` (`anthropic/claude-sonnet-4.5` for a gateway's). */
function idOf(dir, file) {
  return relative(dir, file).split(sep).join('/').replace(/\.toml$/, '');
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** What models.dev's generator does with `base_model`: the base's fields, the model's over them (tables merged, the rest replaced), then `base_model_omit` removed. */
function mergeDeep(base, over) {
  const merged = { ...base };
  for (const [key, value] of Object.entries(over)) merged[key] = isObject(value) && isObject(merged[key]) ? mergeDeep(merged[key], value) : value;
  return merged;
}

function omit(model, paths) {
  for (const path of paths ?? []) {
    const parts = path.split('.');
    let at = model;
    for (const part of parts.slice(0, -1)) at = isObject(at?.[part]) ? at[part] : undefined;
    if (at !== undefined) delete at[parts.at(-1)];
  }
  return model;
}

function readCatalog(root) {
  const bases = new Map(tomlFiles(join(root, 'models')).map((file) => [idOf(join(root, 'models'), file), parse(readFileSync(file, 'utf8'))]));
  const catalog = {};
  for (const provider of Object.keys(PROVIDERS)) {
    const dir = join(root, 'providers', provider, 'models');
    const rows = new Map();
    for (const file of tomlFiles(dir).sort()) {
      const id = idOf(dir, file);
      let model = parse(readFileSync(file, 'utf8'));
      if (model.base_model !== undefined) {
        const base = bases.get(model.base_model);
        if (base === undefined) fail(`${provider}/${id}: base_model ${model.base_model} is not in models/`);
        const { base_model: _base, base_model_omit: omitted, ...own } = model;
        model = omit(mergeDeep(structuredClone(base), own), omitted);
      }
      const row = NOT_LANGUAGE.test(id) ? undefined : rowOf(model);
      if (row !== undefined) rows.set(id, row);
    }
    // A cross-region profile of Bedrock with the figures of the model it routes to is found by that model's id.
    for (const [id, row] of rows) {
      const own = id.replace(BEDROCK_REGION, '');
      if (provider === 'amazon-bedrock' && own !== id && rows.get(own) === row) rows.delete(id);
    }
    catalog[provider] = [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, row]) => `${id}|${row}`);
  }
  return catalog;
}

/** The figures kept of a model, or `undefined` for one the middleware has no use for (no text in or out, no window, deprecated). */
function rowOf(model) {
  const context = model.limit?.context;
  if (!(typeof context === 'number' && context > 0) || model.status === 'deprecated') return undefined;
  const modalities = model.modalities;
  if (modalities !== undefined && !(modalities.input?.includes('text') && modalities.output?.includes('text'))) return undefined;
  const cost = model.cost ?? {};
  const figure = (value) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? String(value) : '');
  return [context, model.limit.input, model.limit.output, cost.input, cost.output, cost.cache_read, cost.cache_write].map(figure).join('|');
}

/** The header of every file written: where it comes from, and that it is not edited by hand. */
function header(commit) {
  return [
    '// Generated by scripts/catalog.mjs (`npm run catalog`) from the models.dev data (https://github.com/anomalyco/models.dev,',
    `// MIT)${commit === undefined ? '' : `, commit ${commit}`}. Do not edit: run the script on a newer snapshot.`,
  ];
}

/** A constant's name for a provider (`google-vertex` -> `GOOGLE_VERTEX`). */
const constant = (provider) => provider.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/** One file a provider, `src/catalog/data/<provider>.ts` (each under 400 lines), and `src/catalog/models.ts` gathering them. */
function write(catalog, date, commit) {
  rmSync(DATA, { recursive: true, force: true });
  mkdirSync(DATA, { recursive: true });
  for (const [provider, rows] of Object.entries(catalog)) {
    if (rows.length > MAX_ROWS) fail(`${provider} has ${rows.length} models, more than the ${MAX_ROWS} a file holds: split it`);
    const lines = [
      ...header(commit),
      '',
      `/** ${PROVIDERS[provider]}: one line a model, \`id|context|input|output|input price|output price|cache read|cache write\` (models.ts). */`,
      `export const ${constant(provider)}: readonly string[] = [`,
      ...rows.map((row) => `  '${row}',`),
      '];',
      '',
    ];
    writeFileSync(new URL(`${provider}.ts`, DATA), lines.join('\n'));
  }
  const providers = Object.keys(catalog);
  const index = [
    ...header(commit),
    '// Read through match.ts (docs/design.md, "The window").',
    '',
    ...providers.map((provider) => `import { ${constant(provider)} } from './data/${provider}';`),
    '',
    "/** The models.dev snapshot's date (its commit date). */",
    `export const CATALOG_DATE = '${date}';`,
    '',
    '/**',
    ' * By models.dev provider, one line a model: `id|context|input|output|input price|output price|cache',
    ' * read|cache write` (tokens; prices in USD per million tokens; empty where models.dev states none).',
    ' */',
    'export const CATALOG: Readonly<Record<string, readonly string[]>> = {',
    ...providers.map((provider) => `  '${provider}': ${constant(provider)},`),
    '};',
    '',
  ];
  writeFileSync(OUT, index.join('\n'));
}

main();
