/**
 * Runs independent pieces of a benchmark in child processes, two at a time on a 2-core machine
 * (at most the cores there are), for benchmarks whose figures are counts, not times: a piece is a
 * function exported by a module of this folder, given one task (JSON) and returning JSON.
 *
 *   const results = await inChildren<Configuration, Result>(import.meta.url, 'runPiece', configurations);
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

/** The message a child gets, and the one it answers with (worker.ts). */
export interface PieceRequest {
  id: number;
  module: string;
  name: string;
  task: unknown;
}
export type PieceReply = { id: number; result: unknown; cpuMs?: number; wallMs?: number } | { id: number; error: string };

/** `BENCH_POOL_TIMES=1`: each piece's CPU and real time on stderr, and the totals (for sizing a run; no figure depends on them). */
const TIMES = process.env.BENCH_POOL_TIMES === '1';

/** `module`'s export `name` on each task, `concurrency` children at a time; results in the tasks' order. */
export async function inChildren<T, R>(module: string, name: string, tasks: readonly T[], concurrency = Math.min(2, availableParallelism())): Promise<R[]> {
  const results = new Array<R>(tasks.length);
  let next = 0;
  const began = performance.now();
  let cpuMs = 0;
  const child = async () => {
    const worker = fork(WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const exited = new Promise<never>((_, reject) => worker.once('exit', (code) => reject(new Error(`a benchmark child process exited (code ${code}) before it answered`))));
    exited.catch(() => undefined);
    try {
      while (next < tasks.length) {
        const id = next++;
        const reply = await Promise.race([
          new Promise<PieceReply>((resolve) => {
            const listener = (message: PieceReply) => {
              if (message.id !== id) return;
              worker.off('message', listener);
              resolve(message);
            };
            worker.on('message', listener);
            worker.send({ id, module, name, task: tasks[id] } satisfies PieceRequest);
          }),
          exited,
        ]);
        if ('error' in reply) throw new Error(reply.error);
        results[id] = reply.result as R;
        cpuMs += reply.cpuMs ?? 0;
        if (TIMES) process.stderr.write(`pool: ${name} ${JSON.stringify(tasks[id])}: ${((reply.cpuMs ?? 0) / 1_000).toFixed(1)} s CPU, ${((reply.wallMs ?? 0) / 1_000).toFixed(1)} s real\n`);
      }
    } finally {
      worker.kill();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, tasks.length)) }, child));
  if (TIMES) process.stderr.write(`pool: ${name}: ${tasks.length} pieces, ${(cpuMs / 1_000).toFixed(0)} s CPU in the children, ${((performance.now() - began) / 1_000).toFixed(0)} s real\n`);
  return results;
}
