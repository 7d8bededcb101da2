/**
 * Simulated time for a benchmark that waits as a person does: real time, plus the idle time it
 * skipped. A person's pause (`idle`) is waited for in real time only while something is still in
 * flight (a summary being written in the background); once nothing is, the rest of the pause is
 * skipped: added to the clock at once. Since time is skipped only when no work is under way, every
 * duration a piece of work measures is its real one, and every duration across a pause includes
 * the pause.
 *
 * Installed (`installSkippingClock`), the clock is what `Date.now()` and `performance.now()` of the
 * process read, so the middleware (which measures with both) and the provider server's prompt
 * cache (given `clock.now`) see the same time. Install it in a child process of its own (pool.ts):
 * it changes the process's clocks for good.
 *
 *   const clock = installSkippingClock();
 *   await clock.idle(90_000, backgroundWork);   // a person's 90 s pause, skipped once the work is done
 */

/** A clock that can skip idle time. */
export interface SkippingClock {
  /** Milliseconds: the real clock's, plus all the idle time skipped so far. */
  now: () => number;
  /**
   * A pause of `ms`: waits in real time until `busy` settles or `ms` have passed, whichever is
   * first; in the first case the rest of the pause is skipped.
   */
  idle: (ms: number, busy?: Promise<unknown>) => Promise<void>;
  /** Milliseconds skipped so far. */
  skipped: () => number;
}

/** The real time a skipping clock is built on. */
export interface RealTime {
  /** Milliseconds (`Date.now`). */
  now: () => number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Resolves once the work already queued (promise callbacks, I/O callbacks) has run. */
  tick: () => Promise<void>;
}

const realSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** The process's real time, as it is before any clock is installed. */
export const REAL_TIME: RealTime = {
  now: Date.now.bind(Date),
  sleep: realSleep,
  tick: () => new Promise<void>((resolve) => setImmediate(resolve)),
};

/** A skipping clock on `real` (see the top of this file); it changes no global clock. */
export function skippingClock(real: RealTime = REAL_TIME): SkippingClock {
  let skipped = 0;
  return {
    now: () => real.now() + skipped,
    skipped: () => skipped,
    async idle(ms, busy = Promise.resolve()) {
      if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`idle: a pause must be a non-negative number of milliseconds, got ${ms}`);
      const start = real.now();
      const stop = new AbortController();
      const settled = busy.then(
        () => 'settled' as const,
        () => 'settled' as const,
      );
      const first = await Promise.race([settled, real.sleep(ms, stop.signal).then(() => 'slept' as const)]);
      stop.abort();
      if (first === 'slept') return;
      // what the settled work queued runs first (a checkpoint stored after its summary came back)
      await real.tick();
      skipped += Math.max(0, ms - (real.now() - start));
    },
  };
}

/** The clocks `installSkippingClock` changes. */
export interface Clocks {
  Date: { now: () => number };
  performance: { now: () => number };
}

/**
 * A skipping clock on the process's real time, installed: from now on `Date.now()` and
 * `performance.now()` of `clocks` (default the process's own) add the time it skipped. Installed
 * once per `clocks`; a second call returns the same clock.
 */
export function installSkippingClock(clocks: Clocks = globalThis as unknown as Clocks, real?: RealTime): SkippingClock {
  const installed = INSTALLED.get(clocks);
  if (installed !== undefined) return installed;
  const date = clocks.Date.now.bind(clocks.Date);
  const performance = clocks.performance.now.bind(clocks.performance);
  const clock = skippingClock(real ?? { ...REAL_TIME, now: date });
  clocks.Date.now = () => date() + clock.skipped();
  clocks.performance.now = () => performance() + clock.skipped();
  INSTALLED.set(clocks, clock);
  return clock;
}

const INSTALLED = new WeakMap<Clocks, SkippingClock>();
