import { type Clock, realClock } from '../../src/clock';
/**
 * The conversations the tests of preparing ahead (docs/design.md, "Preparing ahead") grow through,
 * in a 20,000-token window (a 17,000-token ceiling; `prepare: 0.8` prepares from 13,600).
 * `tokens(n)` is exactly n estimated tokens; the scripted provider counts prompts as the estimate
 * does.
 */
import type { Message } from '../../src/prompt/types';
import { assistant, user } from './harness';

export const tokens = (count: number, letter = 'u') => letter.repeat(count * 4);

/** A promise and the function that settles it. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** 7 exchanges of 1,000 + 1,000 tokens and a new user message: 13,994 tokens, in the prepare band. */
export const band = (): Message[] => {
  const messages: Message[] = [];
  for (let index = 0; index < 7; index++) messages.push(user(`${index} ${tokens(999)}`), assistant(`${index} ${tokens(999, 'a')}`));
  return [...messages, user('next')];
};

/** `band()` answered and followed by one more user message: 14,995 tokens, still under the ceiling. */
export const under = (): Message[] => [...band(), assistant(tokens(1_000, 'b')), user('more')];

/**
 * `under()` answered and followed by a 2,500-token user message: 18,495 tokens by estimate, and
 * 17,505 measured on the count of `band()` (whose reply the scripted provider counts as 10 tokens).
 */
export const atCeiling = (): Message[] => [...under(), assistant(tokens(1_000, 'c')), user(tokens(2_500, 'd'))];

/**
 * A clock at which time stands still for the middleware (its sleeps run on real timers): a summary
 * gated for a while in a test takes 0 ms by it, as a test double's does, so what the policy decides
 * does not depend on how long the test held the gate. Passed as `{ ...stillClock() }` in options.
 */
export function stillClock(): Record<symbol, Clock> {
  return { [Symbol.for('ai-compaction.clock')]: { now: () => 0, sleep: realClock.sleep } };
}

/**
 * The middleware's clock standing still, watched for waits: its sleeps (a summary's deadline, a
 * step's wait for the summary being written) end only when aborted. A step that begins to wait
 * (a sleep begun by compact/step.ts `waitFor`) is seen the moment it begins to, never by a time
 * waited for: `onWait` runs then (a test holding a summary lets it go, so that a wait shows as a
 * count, not as a loop that never ends). `waits()`: the waits begun; `waiting()`: those not over;
 * `advance(ms)` moves the clock (time between steps; a sleep still ends only when aborted).
 */
export function waitWatchingClock(onWait: () => void = () => undefined): { options: Record<symbol, Clock>; waits: () => number; waiting: () => number; advance: (ms: number) => void } {
  let waits = 0;
  let waiting = 0;
  let time = 0;
  const clock: Clock = {
    now: () => time,
    sleep: (_ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted === true) return resolve();
        const wait = new Error().stack?.includes('waitFor') === true;
        if (wait) (waits++, waiting++);
        signal?.addEventListener('abort', () => (wait && waiting--, resolve()), { once: true });
        if (wait) onWait();
      }),
  };
  return { options: { [Symbol.for('ai-compaction.clock')]: clock }, waits: () => waits, waiting: () => waiting, advance: (ms) => void (time += ms) };
}
