/**
 * Where the middleware reads the time (docs/design.md, "The policy"): the decision of a step takes
 * the clock's reading as a number, the summaries' durations, deadlines and leases are measured on
 * it. Outside the benchmarks it is the real clock; a benchmark hands in a simulated one (under
 * `Symbol.for('ai-compaction.clock')`), so that a model's time is simulated, never slept, and every
 * figure is the same whatever the machine's load (docs/benchmarking.md).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds, or at once when `signal` aborts (it never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `Date.now()`, and a timer that does not keep a Node process alive. */
export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted === true) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      (timer as { unref?: () => void }).unref?.();
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** Whether `value` is a clock (the benchmarks' option). */
export function isClock(value: unknown): value is Clock {
  return typeof value === 'object' && value !== null && typeof (value as Clock).now === 'function' && typeof (value as Clock).sleep === 'function';
}
