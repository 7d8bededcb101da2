// Fails when the import graph of src/ has a cycle (type-only imports count too: a cycle of types
// is a sign that two modules should share a third). Usage: node scripts/check-cycles.mjs [dir]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

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

// Depth-first search; a back edge to a module on the current path is a cycle.
const state = new Map(); // undefined: unvisited, 1: on the path, 2: done
const path = [];
const cycles = [];
function visit(file) {
  state.set(file, 1);
  path.push(file);
  for (const next of graph.get(file) ?? []) {
    if (state.get(next) === 1) cycles.push([...path.slice(path.indexOf(next)), next]);
    else if (state.get(next) === undefined) visit(next);
  }
  path.pop();
  state.set(file, 2);
}
for (const file of graph.keys()) if (state.get(file) === undefined) visit(file);

if (cycles.length > 0) {
  for (const cycle of cycles) console.error(`import cycle: ${cycle.map((file) => relative(root, file)).join(' -> ')}`);
  process.exit(1);
}
console.log(`no import cycle among ${graph.size} modules of ${relative(process.cwd(), root) || '.'}`);
