// The benchmarks' virtual clock (bench/clock.ts), with exact times: overlapping sleeps wake in
// simulated time, in order; the clock stands still while anything computes or waits off the
// thread; and a short paced session run twice gives the very same figures.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { EPOCH, hostKeepsTimers, virtualClock } from '../../bench/clock';
import { runContinuity } from '../../bench/continuity';
import { compacting } from '../../bench/strategies';
import type { Speed } from '../support/provider-server';

beforeAll(() => hostKeepsTimers());

describe('the virtual clock', () => {
  it('wakes overlapping sleeps at their simulated times, earliest first, ties in the order they began', async () => {
    const clock = virtualClock();
    expect(clock.now()).toBe(EPOCH);
    const woke: [string, number][] = [];
    const sleep = async (name: string, ms: number) => {
      await clock.sleep(ms);
      woke.push([name, clock.elapsed()]);
    };
    const chain = async () => {
      await sleep('chain 100', 100);
      await sleep('chain +250', 250);
    };
    await Promise.all([sleep('a 300', 300), chain(), sleep('b 50', 50), sleep('c 350', 350), sleep('d 350', 350), sleep('e 0', 0)]);
    expect(woke).toEqual([
      ['e 0', 0],
      ['b 50', 50],
      ['chain 100', 100],
      ['a 300', 300],
      // three due at 350: c and d began at 0, the chain's second sleep at 100
      ['c 350', 350],
      ['d 350', 350],
      ['chain +250', 350],
    ]);
    expect(clock.elapsed()).toBe(350);
    expect(clock.now()).toBe(EPOCH + 350);
  });

  it('stands still while anything computes, waits for a real timer, and for Web Crypto off the thread', async () => {
    const clock = virtualClock();
    const order: string[] = [];
    const sleeper = clock.sleep(1_000).then(() => order.push(`slept, ${clock.elapsed()}`));
    // real work the clock does not own: 30 ms of a real timer, then a Web Crypto key import
    await new Promise((resolve) => setTimeout(resolve, 30));
    order.push(`timer, ${clock.elapsed()}`);
    await crypto.subtle.importKey('raw', new Uint8Array(16), 'HKDF', false, ['deriveKey']);
    order.push(`crypto, ${clock.elapsed()}`);
    // a busy loop of 20 ms of real time
    const until = performance.now() + 20;
    while (performance.now() < until);
    order.push(`computed, ${clock.elapsed()}`);
    await sleeper;
    expect(order).toEqual(['timer, 0', 'crypto, 0', 'computed, 0', 'slept, 1000']);
  });

  it('computes SHA digests in this thread, the same bytes', async () => {
    virtualClock();
    const bytes = new TextEncoder().encode('the same bytes');
    const digest = Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex');
    expect(digest).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('ends a sleep at once when its signal aborts, and never wakes an infinite one', async () => {
    const clock = virtualClock();
    const stop = new AbortController();
    const endless = clock.sleep(Infinity, stop.signal);
    const short = clock.sleep(10);
    await short;
    stop.abort();
    await endless;
    expect(clock.elapsed()).toBe(10);
    await clock.sleep(5, AbortSignal.abort());
    expect(clock.elapsed()).toBe(10);
  });
});

describe('a paced session on the virtual clock', () => {
  const SPEED: Speed = { promptTokensPerSecond: 5_000, outputTokensPerSecond: 60 };

  it('gives the same figures, exactly, every time', async () => {
    const figures = async () => {
      const run = await runContinuity(compacting('ai-compaction', {}), 'honest', { window: 24_000, failing: 6, speed: SPEED });
      const { calls: _calls, ...rest } = run;
      return rest;
    };
    const first = await figures();
    const second = await figures();
    expect(second).toEqual(first);
    // the waits are simulated: sums of the provider's pace, not the machine's
    expect(first.compactingMs.length).toBeGreaterThan(0);
    expect(first.summaryMs.length).toBe(first.summaryRequests);
    expect(Math.min(...first.compactingMs)).toBeGreaterThan(0);
  });

  it('gives the same figures when real time flies (a loaded machine computing a lookup while a store call is pending)', async () => {
    const figures = async () => {
      const run = await runContinuity(compacting('ai-compaction', {}), 'lossy', { window: 24_000, failing: 6, recall: 'tool' });
      const { calls: _calls, ...rest } = run;
      return rest;
    };
    const first = await figures();
    // every reading of the real clock is a second later than the one before
    let real = Date.now();
    const now = vi.spyOn(Date, 'now').mockImplementation(() => (real += 1_000));
    try {
      const second = await figures();
      expect(second).toEqual(first);
    } finally {
      now.mockRestore();
    }
    expect(first.compactions).toBeGreaterThan(0);
    // the middleware saw the tool as the recall tool at every step (else the run measures another program)
    expect(first.recognised).toBe(first.steps);
  });
});
