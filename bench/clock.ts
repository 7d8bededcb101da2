/**
 * Simulated time for the benchmarks (docs/benchmarking.md, "Time"): a model's time (the provider's
 * pace) and a person's pauses are waited on a virtual clock, never in real time. The clock stands
 * still while anything computes, and moves to the next pending sleep only when the process is
 * quiescent: nothing is left to run but what sleeps on a virtual clock. So time spent computing
 * costs 0 simulated ms, every simulated duration is a sum of the sleeps the run asked for, and no
 * simulated time depends on real time or on the machine's load.
 *
 *   const clock = virtualClock();
 *   const provider = createProvider({ contextWindow, speed, clock });              // paces on it
 *   const middleware = compaction({ contextWindow, [Symbol.for('ai-compaction.clock')]: clock });
 *   await clock.sleep(90_000);                                                     // a person's pause
 *
 * Quiescence, exactly. The scheduler looks in a `setImmediate` callback, when the microtask queue
 * is empty (Node drains it after every callback): what is left is what the event loop still holds
 * (`process.getActiveResourcesInfo()`: timers, immediates, I/O requests; and the timers made
 * through the globals, counted from the first clock on, unref'd ones too) and work on the thread
 * pool, which that list does not show. Only stdio and IPC handles may remain (a handle alone runs
 * nothing; a request on it, such as a write, is listed on its own). The thread pool's work in a
 * benchmark is Web Crypto (the middleware hashes with `crypto.subtle.digest`): the clock takes it
 * off the pool (`digest` computed in-thread, the same bytes, with `node:crypto`) and counts every
 * other `crypto.subtle` call while it is pending. The provider runs in-process (its `fetch`): a
 * request over loopback would be a socket read nothing could tell from idleness. Until the process
 * is quiescent the scheduler looks again on the next turn of the event loop; one sleeper wakes per
 * look, the earliest first (ties in the order they began), so what runs next is decided by the
 * program alone, never by which real event came first.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../src/clock';

/** Where a virtual clock starts, in milliseconds since the epoch (2030-01-01): a constant, never the real date. */
export const EPOCH = Date.UTC(2030, 0, 1);

/** A clock on which sleeping takes no real time (see the top of this file). */
export interface VirtualClock extends Clock {
  /** Simulated milliseconds since the clock was made. */
  elapsed(): number;
}


interface Sleeper {
  at: number;
  order: number;
  wake: () => void;
}

interface State {
  time: number;
  /** Pending sleeps, earliest first (then in the order they began). */
  sleepers: Sleeper[];
}

/** Event-loop handles that run nothing by themselves: stdio, a child's IPC channel, a worker's port. */
const HANDLES = new Set(['PipeWrap', 'TTYWrap', 'MessagePort', 'SignalWrap', 'ProcessWrap']);
/** Real time a process may stay busy before the scheduler says what it waits for (on stderr; it changes no figure). */
const STUCK_MS = 10_000;

const clocks: State[] = [];
/** Timers and immediates made through the globals since the first clock was made, not yet run or cleared. */
const timers = new Set<object>();
/** Whether the host keeps timers of its own (`hostKeepsTimers`). */
let hostTimers = false;
/** The event loop's own `setImmediate`, for the scheduler's looks (not counted as work). */
const immediate = globalThis.setImmediate;
let order = 0;
let looking = false;
let offThread = 0;
let busySince: number | undefined;

/** A new virtual clock (see the top of this file). Clocks made side by side share the scheduler; each has its own time. */
export function virtualClock(start = EPOCH): VirtualClock {
  keepCryptoInThread();
  countTimers();
  const state: State = { time: start, sleepers: [] };
  clocks.push(state);
  return {
    now: () => state.time,
    elapsed: () => state.time - start,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted === true) return resolve();
        const sleeper: Sleeper = {
          at: state.time + (Number.isNaN(ms) ? 0 : Math.max(0, ms)),
          order: order++,
          wake: () => {
            signal?.removeEventListener('abort', cancel);
            resolve();
          },
        };
        const cancel = () => {
          const index = state.sleepers.indexOf(sleeper);
          if (index >= 0) state.sleepers.splice(index, 1);
          resolve();
        };
        signal?.addEventListener('abort', cancel, { once: true });
        // an infinite sleep ends only when aborted
        if (sleeper.at === Infinity) return;
        let index = state.sleepers.length;
        while (index > 0 && state.sleepers[index - 1]!.at > sleeper.at) index--;
        state.sleepers.splice(index, 0, sleeper);
        lookSoon();
      }),
  };
}

/**
 * The host keeps timers of its own throughout (a test runner's timeouts, made through timer
 * functions it saved before): from now on the only timers and immediates counted as work are those
 * made through the globals `setTimeout`, `setInterval` and `setImmediate` since the first clock was
 * made (every other resource of the event loop still counts). Not in a benchmark, where every
 * timer counts.
 */
export function hostKeepsTimers(): void {
  hostTimers = true;
}

function lookSoon(): void {
  if (looking) return;
  looking = true;
  immediate(look);
}

/** One look of the scheduler: when the process is quiescent, wakes the one sleeper due first. */
function look(): void {
  looking = false;
  const waiting = clocks.filter((state) => state.sleepers.length > 0);
  if (waiting.length === 0) return;
  const work = busy();
  if (work !== undefined) {
    busySince ??= performance.now();
    if (performance.now() - busySince > STUCK_MS) {
      console.error(`bench/clock: the process has been busy for ${STUCK_MS / 1_000} s of real time (${work}); the virtual clock waits for it`);
      busySince = performance.now();
    }
    lookSoon();
    return;
  }
  busySince = undefined;
  // the clock that has least far to go; of two, the one made first
  let next = waiting[0]!;
  for (const state of waiting) if (state.sleepers[0]!.at - state.time < next.sleepers[0]!.at - next.time) next = state;
  const sleeper = next.sleepers.shift()!;
  next.time = Math.max(next.time, sleeper.at);
  sleeper.wake();
  lookSoon();
}

/** What the process is still doing besides sleeping on a virtual clock (a description), or undefined when it is quiescent. */
function busy(): string | undefined {
  if (offThread > 0) return `${offThread} Web Crypto call(s) on the thread pool`;
  if (timers.size > 0) return `${timers.size} timer(s)`;
  const work = process.getActiveResourcesInfo().filter((name) => !HANDLES.has(name) && !(hostTimers && (name === 'Timeout' || name === 'Immediate')));
  return work.length === 0 ? undefined : work.join(', ');
}

/** Counts the timers made through the globals while they are pending (`timers`), from the first clock on. */
function countTimers(): void {
  const global = globalThis as typeof globalThis & { [COUNTED]?: true };
  if (global[COUNTED]) return;
  global[COUNTED] = true;
  const { setTimeout, setInterval, setImmediate, clearTimeout, clearInterval, clearImmediate } = globalThis;
  const done = (timer: object | undefined) => {
    if (timer !== undefined && timers.delete(timer)) lookSoon();
  };
  // a timer cleared by its number (`+timer`) is found among those pending
  const byNumber = (id: unknown) => (typeof id === 'object' && id !== null ? id : [...timers].find((timer) => Number(timer) === id));
  const once = <A extends unknown[]>(make: (run: (...args: A) => void, ...rest: never[]) => object) =>
    ((callback: (...args: A) => void, ...rest: never[]) => {
      const timer: object = make((...args: A) => {
        done(timer);
        callback(...args);
      }, ...rest);
      timers.add(timer);
      return timer;
    }) as never;
  globalThis.setTimeout = Object.assign(once(setTimeout as never), setTimeout);
  globalThis.setImmediate = Object.assign(once(setImmediate as never), setImmediate);
  globalThis.setInterval = ((callback: (...args: unknown[]) => void, ...rest: never[]) => {
    const timer = setInterval(callback, ...rest);
    timers.add(timer);
    return timer;
  }) as never;
  globalThis.clearTimeout = (id) => {
    done(byNumber(id));
    clearTimeout(id);
  };
  globalThis.clearInterval = (id) => {
    done(byNumber(id));
    clearInterval(id);
  };
  globalThis.clearImmediate = (id) => {
    done(id);
    clearImmediate(id);
  };
}

const COUNTED = Symbol('ai-compaction.bench.timersCounted');

const DIGESTS: Record<string, string> = { 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

/**
 * Web Crypto in a benchmark process, where the scheduler sees it: `digest` computed in this thread
 * (the same bytes; its promise settles at once), every other call counted while it is pending.
 */
function keepCryptoInThread(): void {
  const subtle = globalThis.crypto.subtle as SubtleCrypto & { [KEPT]?: true };
  if (subtle[KEPT]) return;
  subtle[KEPT] = true;
  const prototype = Object.getPrototypeOf(subtle) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const method = prototype[name];
    if (name === 'constructor' || typeof method !== 'function') continue;
    Object.defineProperty(subtle, name, {
      configurable: true,
      value: (...args: unknown[]) => {
        if (name === 'digest') {
          const algorithm = typeof args[0] === 'string' ? args[0] : (args[0] as { name?: string } | undefined)?.name;
          const hash = DIGESTS[algorithm?.toUpperCase() ?? ''];
          if (hash !== undefined) return Promise.resolve(digestInThread(hash, args[1] as BufferSource));
        }
        offThread++;
        return (method.apply(subtle, args) as Promise<unknown>).finally(() => {
          offThread--;
          lookSoon();
        });
      },
    });
  }
}

const KEPT = Symbol('ai-compaction.bench.cryptoInThread');

function digestInThread(hash: string, data: BufferSource): ArrayBuffer {
  const bytes = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
  const digest = createHash(hash).update(bytes).digest();
  return digest.buffer.slice(digest.byteOffset, digest.byteOffset + digest.byteLength) as ArrayBuffer;
}
