import type { Engine } from '../engine';
import { CompactionError } from '../errors';

/**
 * No summary holds a step without bound (docs/design.md, "No summary holds a step without
 * bound"): a compaction's summary requests (its reminder and shortened retries included) share one
 * deadline, `summaryTimeout` after it began, on the instance's clock. Past it they are aborted
 * (their `abortSignal`) and the compaction fails with reason `timeout`, even where a model ignores
 * the signal.
 */
export interface Deadline {
  /** Aborts when the deadline passes or the step's own signal aborts. */
  signal: AbortSignal;
  /** `work`, or a `timeout` failure as soon as the deadline passes. */
  race<T>(work: Promise<T>): Promise<T>;
  /** Whether the deadline passed (the failure to report is then `timeout`). */
  passed(): boolean;
  /** Ends the timer. */
  dispose(): void;
}

/** When a summary begun now must be written by: `summaryTimeout` from now on the instance's clock, `Infinity` without a bound. */
export function summaryDeadline(engine: Engine): number {
  const timeout = engine.settings.summaryTimeout;
  return timeout === false ? Number.POSITIVE_INFINITY : engine.clock.now() + timeout;
}

/** A deadline at `until` (the clock's milliseconds) for work that the step's `stepSignal` may abort too. */
export function deadlineAt(engine: Engine, until: number, stepSignal: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  const disposed = new AbortController();
  let passed = false;
  const timeout = () => new CompactionError({ reason: 'timeout', message: `the summary was not written within summaryTimeout (${engine.settings.summaryTimeout} ms)` });
  let expire!: (error: CompactionError) => void;
  const expired = new Promise<never>((_, reject) => (expire = reject));
  expired.catch(() => undefined);
  if (stepSignal !== undefined) {
    if (stepSignal.aborted) controller.abort(stepSignal.reason);
    else stepSignal.addEventListener('abort', () => controller.abort(stepSignal.reason), { once: true, signal: disposed.signal });
  }
  if (Number.isFinite(until)) {
    void engine.clock.sleep(Math.max(0, until - engine.clock.now()), disposed.signal).then(() => {
      if (disposed.signal.aborted) return;
      passed = true;
      const error = timeout();
      controller.abort(error);
      expire(error);
    });
  }
  return {
    signal: controller.signal,
    race: (work) => (Number.isFinite(until) ? Promise.race([work, expired]) : work),
    passed: () => passed,
    dispose: () => disposed.abort(),
  };
}
