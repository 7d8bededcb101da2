import type { Clock } from '../../src/clock';

/**
 * A clock the test moves (the middleware's clock, src/clock.ts, handed in under
 * `Symbol.for('ai-compaction.clock')`): `now()` stands still until the test moves it, and a sleep
 * ends only when the test moves the clock past its end. So a test asserts what happens at a given
 * time, never how long something took in real time, and its outcome is the same whatever the
 * machine's load.
 */
export interface ManualClock extends Clock {
  /** The sleeps pending now. */
  pending(): number;
  /** Moves the clock to the end of the earliest pending sleep and ends it (false: none was pending). */
  next(): boolean;
  /** Moves the clock by `ms`, ending every sleep due by then, earliest first. */
  advance(ms: number): void;
}

interface Sleeper {
  at: number;
  wake: () => void;
}

export function manualClock(start = 1_000_000): ManualClock {
  let at = start;
  const sleepers: Sleeper[] = [];
  const wakeEarliest = () => {
    sleepers.sort((a, b) => a.at - b.at);
    const first = sleepers.shift()!;
    at = Math.max(at, first.at);
    first.wake();
  };
  return {
    now: () => at,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted === true) return resolve();
        const sleeper: Sleeper = {
          at: at + Math.max(0, ms),
          wake: () => {
            signal?.removeEventListener('abort', cancel);
            resolve();
          },
        };
        const cancel = () => {
          const index = sleepers.indexOf(sleeper);
          if (index >= 0) sleepers.splice(index, 1);
          resolve();
        };
        signal?.addEventListener('abort', cancel, { once: true });
        if (sleeper.at !== Infinity) sleepers.push(sleeper);
      }),
    pending: () => sleepers.length,
    next: () => {
      if (sleepers.length === 0) return false;
      wakeEarliest();
      return true;
    },
    advance: (ms) => {
      const target = at + ms;
      while (sleepers.some((sleeper) => sleeper.at <= target)) wakeEarliest();
      at = target;
    },
  };
}

const realSetTimeout = globalThis.setTimeout;

/**
 * Lets what is pending run (promises, and Web Crypto's digests, which leave the event loop) until
 * `condition` holds: turns of the event loop, counted, never a time waited for. Fails when it never
 * holds.
 */
export async function settle(condition: () => boolean, turns = 20_000): Promise<void> {
  for (let turn = 0; turn < turns && !condition(); turn++) await new Promise((resolve) => realSetTimeout(resolve, 0));
  if (!condition()) throw new Error('condition not met');
}

/**
 * Runs the clock until `done()` holds: lets the pending work run until it holds or a sleep is
 * pending and nothing is `busy()` (work the test counts: a store call or a model call under way),
 * then ends the earliest sleep, and so on. Fails when neither ever comes.
 */
export async function runUntil(clock: ManualClock, done: () => boolean, busy: () => boolean = () => false): Promise<void> {
  for (;;) {
    await settle(() => done() || (clock.pending() > 0 && !busy()));
    if (done()) return;
    clock.next();
  }
}

/**
 * Moves the clock by `stepMs` at a time, letting `turns` turns of the event loop run between
 * moves, until `done()` holds (at most `moves` moves). For work that sleeps on the clock while
 * other work runs beside it: the clock never leaps to a far sleep while the rest still computes.
 */
export async function stepUntil(clock: ManualClock, done: () => boolean, stepMs: number, { turns = 20, moves = 1_000 } = {}): Promise<void> {
  for (let move = 0; move < moves; move++) {
    for (let turn = 0; turn < turns && !done(); turn++) await new Promise((resolve) => realSetTimeout(resolve, 0));
    if (done()) return;
    clock.advance(stepMs);
  }
  throw new Error('condition not met');
}
