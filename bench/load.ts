/**
 * 200 conversations x 30 steps, concurrently, through one instance (the scenario of
 * test/load/load.test.ts): throughput and peak memory, side by side with the same run through
 * a middleware that does nothing, so the ratio is what compaction adds.
 */
import { performance } from 'node:perf_hooks';
import { type LanguageModelMiddleware, wrapLanguageModel } from 'ai';
import { compaction, memoryStore } from '../src';
import { plainModel } from '../test/support/plain-model';

const CONVERSATIONS = 200;
const STEPS = 30;
const WINDOW = 4_000;
const STORE_BYTES = 4 * 1024 * 1024;

const mockModel = () => plainModel('bench', () => ({ content: [{ type: 'text', text: 'ok' }] }));

interface Result {
  seconds: number;
  peakHeap: number;
  peakRss: number;
  /** Heap still used after the run and a full GC (needs --expose-gc), against before it. */
  retained: number;
  storeBytes?: number;
}

async function runOnce(middleware: LanguageModelMiddleware, store?: { bytes(): number }): Promise<Result> {
  const model = wrapLanguageModel({ model: mockModel(), middleware });
  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage();
  let peakHeap = baseline.heapUsed;
  let peakRss = baseline.rss;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    peakHeap = Math.max(peakHeap, usage.heapUsed);
    peakRss = Math.max(peakRss, usage.rss);
  }, 20);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONVERSATIONS }, async (_, id) => {
      const prompt: Array<{ role: 'user' | 'assistant'; content: Array<{ type: 'text'; text: string }> }> = [];
      for (let step = 0; step < STEPS; step++) {
        prompt.push({ role: 'user', content: [{ type: 'text', text: `conv${id} asks ${step}: ${`conv${id} `.repeat(60)}` }] });
        await model.doGenerate({ prompt: structuredClone(prompt) } as never);
        prompt.push({ role: 'assistant', content: [{ type: 'text', text: `conv${id} answers ${step}: ${`conv${id} `.repeat(60)}` }] });
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  clearInterval(sampler);
  (globalThis as { gc?: () => void }).gc?.();
  const retained = process.memoryUsage().heapUsed - baseline.heapUsed;
  return { seconds, peakHeap, peakRss, retained, storeBytes: store?.bytes() };
}

export async function run(): Promise<void> {
  const passThrough: LanguageModelMiddleware = { specificationVersion: 'v3' };
  const store = memoryStore({ maxBytes: STORE_BYTES });
  // Interleave: pass-through, compaction, pass-through, compaction; report the better of each.
  const plain: Result[] = [];
  const compacted: Result[] = [];
  for (let round = 0; round < 2; round++) {
    plain.push(await runOnce(passThrough));
    compacted.push(await runOnce(compaction({ contextWindow: WINDOW, store: round === 0 ? store : memoryStore({ maxBytes: STORE_BYTES }) }), store));
  }
  const best = (results: Result[]) => results.reduce((a, b) => (a.seconds <= b.seconds ? a : b));
  const p = best(plain);
  const c = best(compacted);
  const steps = CONVERSATIONS * STEPS;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(`\n${CONVERSATIONS} conversations x ${STEPS} steps, concurrently, one instance (mock model, ${WINDOW.toLocaleString('en-US')}-token window)`);
  console.log('middleware      steps/s   peak heap used  retained after GC  peak RSS    store');
  console.log(`pass-through    ${String(Math.round(steps / p.seconds)).padStart(7)}   ${mb(p.peakHeap).padStart(14)}  ${mb(p.retained).padStart(17)}  ${mb(p.peakRss).padStart(8)}    -`);
  console.log(`ai-compaction   ${String(Math.round(steps / c.seconds)).padStart(7)}   ${mb(c.peakHeap).padStart(14)}  ${mb(c.retained).padStart(17)}  ${mb(c.peakRss).padStart(8)}    ${mb(store.bytes())} of ${mb(STORE_BYTES)}`);
  console.log(`throughput ratio (ai-compaction / pass-through): ${(p.seconds / c.seconds).toFixed(2)}x`);
}
