/**
 * `npm run bench`: runs every benchmark in turn, prints its tables, and writes them to
 * docs/benchmarks.md (report.ts) with the commit and the date. A benchmark is a module of this
 * folder exporting `run(): Promise<void>`; add it to the list below.
 *
 *   npm run bench                          # all of them: about half an hour on 2 cores, and cost 20 minutes more
 *   npm run bench -- continuity sizing     # these two; the file keeps the others' sections
 *   npm run bench -- continuity --no-write # print only
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { arch, availableParallelism, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import { REPORT_PATH, type ReportSection, renderReport } from './report';

interface Benchmark {
  name: string;
  load: () => Promise<{ run: () => Promise<void> }>;
}

const BENCHMARKS: Benchmark[] = [
  { name: 'overhead', load: () => import('./overhead') },
  { name: 'session', load: () => import('./session') },
  { name: 'seeds', load: () => import('./seeds') },
  { name: 'prepare', load: () => import('./prepare') },
  { name: 'sizing', load: () => import('./sizing') },
  { name: 'clearing', load: () => import('./session').then((session) => ({ run: session.runClearing })) },
  { name: 'load', load: () => import('./load') },
  { name: 'continuity', load: () => import('./continuity') },
  { name: 'continuity-paced', load: () => import('./continuity-paced') },
  { name: 'continuity-recall', load: () => import('./continuity-recall') },
  { name: 'budget', load: () => import('./budget') },
  { name: 'chat', load: () => import('./chat') },
  { name: 'store', load: () => import('./store') },
  { name: 'cost', load: () => import('./compact-at') },
];

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function git(...args: string[]): string {
  try {
    return execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** Runs `run` with everything `console.log` prints also kept, and returns that. */
async function captured(run: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => {
    lines.push(format(...args));
    log(...args);
  };
  try {
    await run();
  } finally {
    console.log = log;
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const write = !args.includes('--no-write');
  const only = args.filter((arg) => !arg.startsWith('--'));
  const unknown = only.filter((name) => !BENCHMARKS.some((benchmark) => benchmark.name === name));
  if (unknown.length > 0) {
    console.error(`unknown benchmark ${unknown.join(', ')}; the benchmarks: ${BENCHMARKS.map((benchmark) => benchmark.name).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
  // uncommitted changes other than the generated file itself
  const dirty = git('status', '--porcelain', '--', '.', `:!${REPORT_PATH}`) !== '';
  const machine = `Node ${process.version}, ${platform()} ${arch()}, ${availableParallelism()} CPUs`;
  const sections: ReportSection[] = [];
  let failed = false;
  for (const benchmark of BENCHMARKS) {
    if (only.length > 0 && !only.includes(benchmark.name)) continue;
    const date = new Date().toISOString();
    const start = performance.now();
    let error: unknown;
    const output = await captured(async () => {
      try {
        const { run } = await benchmark.load();
        await run();
      } catch (caught) {
        error = caught;
      }
    });
    const seconds = (performance.now() - start) / 1000;
    if (error !== undefined) {
      failed = true;
      console.error(`bench ${benchmark.name} failed:`, error);
    }
    console.log(`(${benchmark.name}: ${seconds.toFixed(1)} s)\n`);
    sections.push({
      name: benchmark.name,
      commit,
      dirty,
      date,
      seconds,
      machine,
      output,
      ...(error === undefined ? {} : { failed: (error instanceof Error ? error.message : String(error)).split('\n')[0]! }),
    });
  }
  if (write && sections.length > 0) {
    const path = join(REPO, REPORT_PATH);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, renderReport(existsSync(path) ? readFileSync(path, 'utf8') : undefined, sections, BENCHMARKS.map((benchmark) => benchmark.name)));
    console.log(`Wrote ${REPORT_PATH} (${sections.map((section) => section.name).join(', ')}).`);
  }
  if (failed || process.exitCode === 1) process.exitCode = 1;
}

await main();
