import { type Engine, ownState } from '../engine';
import { isAbort } from '../errors';
import type { StoredCheckpoint } from '../store/format';
import type { CompactionRecord } from '../types';

/** What a compaction made: the checkpoint, and its report when it was made now (not found in the store). */
export interface Made {
  checkpoint: StoredCheckpoint;
  report?: CompactionRecord;
  /** Made ahead in the background (docs/design.md, "Preparing ahead"): stored as prepared, reported by the step that first sends it. */
  prepared?: boolean;
}

/** A compaction under way, joined by concurrent steps that need the same one (docs/stores.md). */
interface Flight {
  made: Promise<Made>;
  /** The abort signal of the step that started it. */
  signal: AbortSignal | undefined;
}

/** An instance's compactions under way, by what they cover. */
const flightsOf = ownState(() => new Map<string, Flight>());

/**
 * Runs `start` once per `key` among an instance's concurrent steps (docs/stores.md): a step that
 * finds the same compaction under way waits for it. A step can be aborted while it waits; when the
 * step that started it is aborted, a waiting step that was not runs its own.
 */
export async function singleFlight(
  engine: Engine,
  key: string,
  signal: AbortSignal | undefined,
  start: () => Promise<Made>,
): Promise<Made> {
  const flights = flightsOf(engine);
  const shared = flights.get(key);
  if (shared !== undefined) {
    try {
      return await untilAborted(shared.made, signal);
    } catch (error) {
      // Only the step that started it was aborted, not this one: compact for this step.
      if (!isAbort(error, shared.signal) || signal?.aborted) throw error;
    }
  }
  const made: Promise<Made> = start().finally(() => {
    if (flights.get(key)?.made === made) flights.delete(key);
  });
  flights.set(key, { made, signal });
  return made;
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts (a step joining another's compaction). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  const reason = () => signal.reason ?? Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
