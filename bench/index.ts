/**
 * `npm run bench`: runs every benchmark in turn and prints its tables. A benchmark is a module of
 * this folder exporting `run(): Promise<void>`; add it to the list below.
 */
import { performance } from 'node:perf_hooks';

interface Benchmark {
  name: string;
  load: () => Promise<{ run: () => Promise<void> }>;
}

const BENCHMARKS: Benchmark[] = [
  { name: 'overhead', load: () => import('./overhead') },
  { name: 'session', load: () => import('./session') },
  { name: 'prepare', load: () => import('./prepare') },
  { name: 'sizing', load: () => import('./sizing') },
  { name: 'clearing', load: () => import('./session').then((session) => ({ run: session.runClearing })) },
  { name: 'load', load: () => import('./load') },
  { name: 'continuity', load: () => import('./continuity') },
  { name: 'store', load: () => import('./store') },
];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  let failed = false;
  for (const benchmark of BENCHMARKS) {
    if (only.length > 0 && !only.includes(benchmark.name)) continue;
    const start = performance.now();
    try {
      const { run } = await benchmark.load();
      await run();
      console.log(`(${benchmark.name}: ${((performance.now() - start) / 1000).toFixed(1)} s)\n`);
    } catch (error) {
      failed = true;
      console.error(`bench ${benchmark.name} failed:`, error);
    }
  }
  if (failed) process.exitCode = 1;
}

await main();
