/**
 * A second build of the package for the benchmarks to compare with this checkout, loaded from
 *
 * - a tarball, when `BENCH_BASELINE_TARBALL` is set (an `npm pack` of the package): unpacked under
 *   the system's temp folder, its `package/dist/index.js` is the build;
 * - otherwise a git ref of this repository, `BENCH_BASELINE_REF` (default `main`: on a branch, the
 *   build the branch is judged against; on main itself, this very build, a control that must
 *   score as this checkout does): its `src/` is extracted with `git archive` under the system's
 *   temp folder, and `src/index.ts` is the entry.
 *
 * Either entry is bundled with esbuild into one ESM file under `.bench-out/baseline/` (ignored by
 * git) with `ai`, `zod`, `lru-cache`, `minisearch` and `@noble/hashes` left external, so they resolve from this
 * checkout's node_modules and the build shares the benchmark's instance of `ai`. Nothing of the
 * package itself is shared with this checkout.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { CompactionFactory } from './strategies';

export const DEFAULT_BASELINE_REF = 'main';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(REPO, '.bench-out', 'baseline');
const EXTERNAL = ['ai', 'zod', 'zod/*', 'lru-cache', 'minisearch', '@noble/hashes', '@noble/hashes/*'];

export interface Baseline {
  /** `ai-compaction @ main (2564617)` (the commit the ref names, when this clone has it), or `ai-compaction @ ai-compaction-0.1.0.tgz`. */
  label: string;
  load: () => Promise<CompactionFactory>;
  /** For a git ref: the commit it named when the baseline was made (a branch that moves during a run does not move the baseline). */
  commit?: string;
  /** For a git ref: its `src/` is this checkout's, unchanged (on main, `main` is this very build). */
  sameAsCheckout?: boolean;
}

/** The baseline the environment asks for (see above). Loading happens once, on the first `load()`. */
export function baselineFromEnv(env: NodeJS.ProcessEnv = process.env): Baseline {
  const tarball = env.BENCH_BASELINE_TARBALL;
  if (tarball) return { label: `ai-compaction @ ${basename(tarball)}`, load: once(() => fromTarball(resolve(tarball))) };
  const ref = env.BENCH_BASELINE_REF || DEFAULT_BASELINE_REF;
  const commit = git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  if (commit === undefined) return baselineAt(ref, `ai-compaction @ ${ref}`);
  const short = git('rev-parse', '--short', commit)!;
  return baselineAt(commit, `ai-compaction @ ${ref}${short.startsWith(ref) ? '' : ` (${short})`}`);
}

/** The baseline built from `ref` of this repository, named `label` (a child process of the benchmark gets the commit its parent resolved). */
export function baselineAt(ref: string, label: string): Baseline {
  const commit = git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  const tree = commit === undefined ? undefined : git('rev-parse', `${commit}:src`);
  const sameAsCheckout = tree !== undefined && tree === git('rev-parse', 'HEAD:src') && git('status', '--porcelain', '--', 'src') === '';
  return { label, load: once(() => fromGitRef(commit ?? ref)), ...(commit === undefined ? {} : { commit }), sameAsCheckout };
}

/** A git command's output in this repository, or undefined when it fails. */
function git(...args: string[]): string | undefined {
  try {
    return execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => (promise ??= make());
}

/** `compaction` of the package as it is at `ref` of this repository. */
export async function fromGitRef(ref: string): Promise<CompactionFactory> {
  const commit = execFileSync('git', ['-C', REPO, 'rev-parse', '--verify', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
  const outfile = join(OUT, `git-${commit}.mjs`);
  if (!existsSync(outfile)) {
    const dir = mkdtempSync(join(tmpdir(), 'ai-compaction-baseline-'));
    try {
      const tar = join(dir, 'src.tar');
      execFileSync('git', ['-C', REPO, 'archive', '--format=tar', '-o', tar, commit, 'src']);
      execFileSync('tar', ['-xf', tar, '-C', dir]);
      await bundle(join(dir, 'src', 'index.ts'), outfile);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return importBuild(outfile);
}

/** `compaction` of a packed build of the package (`npm pack`). */
export async function fromTarball(path: string): Promise<CompactionFactory> {
  const dir = mkdtempSync(join(tmpdir(), 'ai-compaction-tarball-'));
  try {
    execFileSync('tar', ['-xzf', path, '-C', dir]);
    const entry = join(dir, 'package', 'dist', 'index.js');
    if (!existsSync(entry)) throw new Error(`${path} has no package/dist/index.js`);
    const digest = createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16);
    const outfile = join(OUT, `tarball-${basename(path).replace(/[^\w.-]/g, '_')}-${digest}.mjs`);
    await bundle(entry, outfile);
    return importBuild(outfile);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function bundle(entry: string, outfile: string): Promise<void> {
  mkdirSync(dirname(outfile), { recursive: true });
  await build({ entryPoints: [entry], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', external: EXTERNAL, logLevel: 'silent' });
}

async function importBuild(file: string): Promise<CompactionFactory> {
  const module = (await import(pathToFileURL(file).href)) as { compaction?: unknown };
  if (typeof module.compaction !== 'function') throw new Error(`${file} does not export compaction()`);
  return module.compaction as CompactionFactory;
}
