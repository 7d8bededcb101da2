// Checks the import graph of src/ (type-only imports count too: a cycle of types is a sign that two
// modules should share a third). Usage: node scripts/check-cycles.mjs [dir]
//
// - No file imports itself back through others (an import cycle).
// - The folders and top files of src/ (its modules) stand in layers, listed below from the bottom
//   up (docs/architecture.md): a module imports modules of its own layer or of layers below it,
//   never of a layer above (an import that runs back up), and the modules of one layer do not
//   import each other in a loop (a folder loop). A module in no layer fails too: a new folder or
//   top file is given its place here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** The layers of src/, from the bottom up. */
const LAYERS = [
  // The AI SDK's prompt and result shapes (messages, parts, a provider's compaction item, their
  // canonical form and digests), and the package's error.
  ['errors.ts', 'clock.ts', 'tunables.ts', 'prompt'],
  // What a provider's "too long" says; what is kept in a store, and how; how large a prompt is;
  // the model catalog (what models.dev states of each model) and how a model is found in it.
  ['overflow', 'store', 'sizing', 'catalog'],
  // What a checkpoint holds: the summary request, the record, the identifiers, clearing, the
  // budget, what stays live. Pure rules, no state.
  ['checkpoint'],
  // The recall tool: the exact words of the messages a tool's `execute` is handed, searched and
  // paged, and the marker by which a step's tools show it.
  ['recall'],
  // The public shapes, the options and their validation, `state()`, what a host reads of a step,
  // the spans.
  ['state.ts', 'types.ts', 'options.ts', 'metadata.ts', 'telemetry'],
  // One step as the middleware sees it; one instance's state; what it knows of a model.
  ['view.ts', 'engine.ts', 'model.ts'],
  // When and how a step compacts: the decision, the plan, the summary, clearing, the provider's
  // own compaction, preparing ahead, holds, leases, overflow recovery.
  ['compact'],
  // What the middleware's hooks do before and around the provider call.
  ['hooks'],
  // The middleware: an instance's state and its hooks, wired.
  ['compaction.ts'],
  // The package's entry points.
  ['index.ts', 'redis.ts'],
];

const root = resolve(process.argv[2] ?? 'src');

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function resolveImport(from, specifier) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  throw new Error(`${relative(root, from)}: cannot resolve import '${specifier}'`);
}

const graph = new Map();
for (const file of files(root)) {
  const source = readFileSync(file, 'utf8');
  const targets = new Set();
  for (const match of source.matchAll(IMPORT)) targets.add(resolveImport(file, match[1] ?? match[2]));
  graph.set(file, [...targets]);
}

const name = (file) => relative(root, file).split(sep).join('/');
const problems = [];

// Depth-first search; a back edge to a module on the current path is a cycle.
function cycles(nodes, edges) {
  const state = new Map(); // undefined: unvisited, 1: on the path, 2: done
  const path = [];
  const found = [];
  const visit = (node) => {
    state.set(node, 1);
    path.push(node);
    for (const next of edges(node)) {
      if (state.get(next) === 1) found.push([...path.slice(path.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(node, 2);
  };
  for (const node of nodes) if (state.get(node) === undefined) visit(node);
  return found;
}

for (const cycle of cycles(graph.keys(), (file) => graph.get(file) ?? [])) {
  problems.push(`import cycle: ${cycle.map(name).join(' -> ')}`);
}

// A module: the folder a file is in (its first segment under the root), or the top file itself.
const moduleOf = (file) => name(file).split('/')[0];
const layerOf = new Map(LAYERS.flatMap((modules, index) => modules.map((module) => [module, index])));
const modules = new Set([...graph.keys()].map(moduleOf));
for (const module of modules) {
  if (!layerOf.has(module)) problems.push(`${module} is in no layer: give it its place in LAYERS (scripts/check-cycles.mjs)`);
}

/** The imports from one module to another, by module, each as `from.ts -> to.ts`. */
const between = new Map();
for (const [file, targets] of graph) {
  for (const target of targets) {
    const [from, to] = [moduleOf(file), moduleOf(target)];
    if (from === to || !layerOf.has(from) || !layerOf.has(to)) continue;
    if (layerOf.get(to) > layerOf.get(from)) {
      problems.push(`import runs back up: ${name(file)} -> ${name(target)} (${from} is in layer ${layerOf.get(from) + 1}, ${to} in layer ${layerOf.get(to) + 1})`);
    }
    const key = `${from}\n${to}`;
    between.set(key, [...(between.get(key) ?? []), `${name(file)} -> ${name(target)}`]);
  }
}

// A loop through an import that runs back up is said above; the others run within one layer.
const moduleEdges = (module) =>
  [...between.keys()]
    .map((key) => key.split('\n'))
    .filter(([from, to]) => from === module && layerOf.get(to) <= layerOf.get(from))
    .map(([, to]) => to);
for (const loop of cycles([...modules].sort(), moduleEdges)) {
  const imports = loop.slice(1).map((to, index) => between.get(`${loop[index]}\n${to}`)[0]);
  problems.push(`folder loop: ${loop.join(' -> ')} (${imports.join(', ')})`);
}

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
const where = relative(process.cwd(), root) || '.';
console.log(`no import cycle among ${graph.size} files of ${where}; its ${modules.size} folders and top files keep their ${LAYERS.length} layers`);
