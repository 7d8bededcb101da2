import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock';
import { messageOf } from '../errors';
import { type MemoryStore, memoryStore } from './memory';
import { type Sealer, unopenedWarnings } from './seal';
import type { CompactionStore } from './types';
import { BACKLOG_LIMIT, PROBE_FIRST_MS, PROBE_MAX_MS, STORE_TIMEOUT_MS, WATCH_MS } from '../tunables';

/** What a probe reads: any key does, its value is not used. */
const PROBE_KEY = 'probe';

/** A call not made, or given up, because the store is down: said once, when the outage began. */
class StoreDown extends Error {}

/**
 * How long one step may still wait for the store: `limit` ms in all, counted while at least one of
 * its calls is pending (so calls made side by side count once). Every store call of a step, from
 * the reads of `transformParams` to the count written after the reply, draws on its budget. Read on
 * the middleware's clock (`now`, docs/design.md, "The policy"): on a simulated one the budget is
 * simulated time too, so a benchmark's store never goes down for the real time the machine spent
 * computing while a call was pending (docs/benchmarking.md, "Time").
 */
export class StoreBudget {
  private spent = 0;
  private pending = 0;
  private since = 0;

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds left. */
  remaining(): number {
    return this.limit - this.spent - (this.pending > 0 ? this.now() - this.since : 0);
  }

  begin(): void {
    if (this.pending++ === 0) this.since = this.now();
  }

  end(): void {
    if (--this.pending === 0) this.spent += this.now() - this.since;
  }
}

/**
 * What was written in memory while the store was down: the memory store and the keys written
 * there, in the order first written. Returns how many conversations were written back.
 */
export type WriteBack = (memory: MemoryStore, keys: string[]) => Promise<number>;

/** How the guard reports and how long it waits (the defaults outside tests). */
export interface GuardOptions {
  warn: (message: string) => void;
  info?: (message: string) => void;
  /** Seals every value written, opens every value read (option `secret`). */
  sealer?: Sealer;
  timeoutMs?: number;
  probeFirstMs?: number;
  probeMaxMs?: number;
  /** Writes what was kept in memory to the store, once it answers again. */
  writeBack?: WriteBack;
  /** Where a step's budget is counted (the middleware's clock); a call's own timer runs on real time. @default the real clock */
  clock?: Pick<Clock, 'now'>;
}

/**
 * The store's reads and writes, with the outage rule (docs/stores.md): a step waits for the store
 * at most `timeoutMs` in all (its `StoreBudget`). Once a call has timed out, or the store says its
 * client is not connected, the store is down: every call goes to memory at once (as without a
 * store), and one probe at a time, backing off from 1 s to 30 s, reads it until it answers. Its
 * first answer ends the outage (one info line), and what was written in memory meanwhile is
 * handed to `writeBack`.
 */
export class StoreGuard {
  private readonly warn: (message: string) => void;
  private readonly info: (message: string) => void;
  private readonly sealer: Sealer | undefined;
  readonly timeoutMs: number;
  private readonly now: () => number;
  private readonly probeFirstMs: number;
  private readonly probeMaxMs: number;
  private readonly writeBack: WriteBack;
  /** Warns about values that do not open, at a bounded rate. */
  private readonly unopened: (key: string) => void;

  /** Since when the store is down (ms since the epoch), or undefined while it is up. */
  private downSince: number | undefined;
  /** Where values go while the store is down, and the keys written there to write to the store once it is back. */
  private memory: MemoryStore | undefined;
  private readonly backlog = new LRUCache<string, true>({ max: BACKLOG_LIMIT });
  private probeDelay = 0;
  private probeTimer: ReturnType<typeof setTimeout> | undefined;
  /** Gives up every pending call at once, when the store goes down. */
  private readonly pending = new Set<() => void>();
  private watch: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly store: CompactionStore,
    options: GuardOptions,
  ) {
    this.warn = options.warn;
    this.info = options.info ?? (() => {});
    this.sealer = options.sealer;
    this.unopened = unopenedWarnings(this.warn);
    this.timeoutMs = options.timeoutMs ?? STORE_TIMEOUT_MS;
    const clock = options.clock;
    this.now = clock === undefined ? Date.now : () => clock.now();
    this.probeFirstMs = options.probeFirstMs ?? PROBE_FIRST_MS;
    this.probeMaxMs = options.probeMaxMs ?? PROBE_MAX_MS;
    this.writeBack = options.writeBack ?? (async () => 0);
  }

  /** A new step's budget: the most it may wait for the store, over all its calls. */
  budget(): StoreBudget {
    return new StoreBudget(this.timeoutMs, this.now);
  }

  /** Whether the store is down now (calls go to memory). */
  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** The value under `key`: from the store (opened, when sealed), or from memory while the store is down. */
  async read(key: string, budget: StoreBudget): Promise<string | undefined> {
    if (!this.down) {
      try {
        const value = await this.timed(budget, () => this.store.get(key));
        if (value === undefined || value === null) return undefined;
        if (typeof value !== 'string') {
          this.warn(`ai-compaction: the store returned a ${typeof value} for ${key}; ignored`);
          return undefined;
        }
        return await this.open(key, value);
      } catch (error) {
        if (!(error instanceof StoreDown)) {
          this.warn(`ai-compaction: reading ${key} from the store failed (${messageOf(error)}); going on without it`);
          return undefined;
        }
      }
    }
    return this.memory?.get(key);
  }

  /** Writes `value` under `key`: to the store (sealed, with a secret), or to memory while it is down. */
  async write(key: string, value: string, budget: StoreBudget): Promise<boolean> {
    if (!this.down) {
      try {
        const stored = this.sealer === undefined ? value : await this.sealer.seal(key, value);
        await this.timed(budget, () => this.store.set(key, stored));
        return true;
      } catch (error) {
        if (!(error instanceof StoreDown)) {
          this.warn(`ai-compaction: writing ${key} to the store failed (${messageOf(error)})`);
          return false;
        }
      }
    }
    this.memory ??= memoryStore();
    await this.memory.set(key, value);
    // Kept in the order first written: a key written again keeps its place.
    if (!this.backlog.has(key)) this.backlog.set(key, true);
    return true;
  }

  /**
   * Writes `value` under `key` only when none is there, to expire after `ms` (the lease:
   * docs/stores.md). Atomic with a store's `setIfAbsent`; without it, a read, a write and a read
   * back, which two instances at the same moment may both win. `true`: written; `false`: a value
   * is there; `undefined`: the store failed or is down (nothing taken).
   */
  async claim(key: string, value: string, ms: number, budget: StoreBudget): Promise<boolean | undefined> {
    if (this.down) return undefined;
    try {
      const stored = this.sealer === undefined ? value : await this.sealer.seal(key, value);
      const { store } = this;
      if (store.setIfAbsent !== undefined) return (await this.timed(budget, () => store.setIfAbsent!(key, stored, { ttlMs: ms }))) === true;
      const there = await this.timed(budget, () => store.get(key));
      if (there !== undefined && there !== null) return false;
      await this.timed(budget, () => store.set(key, stored, { ttlSeconds: ms / 1000 }));
      // The sealed text (with its random nonce), or the value naming this instance: another's write wins.
      return (await this.timed(budget, () => store.get(key))) === stored;
    } catch (error) {
      if (!(error instanceof StoreDown)) this.warn(`ai-compaction: writing ${key} to the store failed (${messageOf(error)})`);
      return undefined;
    }
  }

  /** Removes `key` from the store (nothing while it is down); `false` when the store failed. */
  async remove(key: string, budget: StoreBudget): Promise<boolean> {
    if (this.down) return false;
    try {
      await this.timed(budget, () => this.store.delete(key));
      return true;
    } catch (error) {
      if (!(error instanceof StoreDown)) this.warn(`ai-compaction: removing ${key} from the store failed (${messageOf(error)})`);
      return false;
    }
  }

  /**
   * Waits for `previous` (this instance's own earlier write) within what is left of the step's
   * budget, like a store call. Past it, the store is down: every pending call was given up, so the
   * earlier write goes on in memory at once, and the wait ends when it does.
   */
  async after(previous: Promise<unknown>, budget: StoreBudget): Promise<void> {
    try {
      await this.timed(budget, () => previous, false);
    } catch {
      await previous.catch(() => undefined);
    }
  }

  /**
   * The store call, within what is left of the step's budget. A call past it, or a store whose
   * client says it is not connected, puts the store down (and gives up every pending call); while
   * it is down no call is made. `store: false`: a wait on this instance's own queue, not a call.
   */
  private timed<T>(budget: StoreBudget, call: () => Promise<T>, store = true): Promise<T> {
    if (this.down) return Promise.reject(new StoreDown());
    if (store && this.store.connected?.() === false) {
      this.goDown('its client is not connected');
      return Promise.reject(new StoreDown());
    }
    const left = budget.remaining();
    if (left <= 0) {
      this.goDown(`it did not answer within ${this.timeoutMs} ms`);
      return Promise.reject(new StoreDown());
    }
    budget.begin();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = () => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        this.pending.delete(giveUp);
        if (this.pending.size === 0) this.stopWatching();
        budget.end();
        return true;
      };
      const giveUp = () => {
        if (settle()) reject(new StoreDown());
      };
      const timer = setTimeout(() => {
        if (!settle()) return;
        reject(new StoreDown());
        this.goDown(`it did not answer within ${this.timeoutMs} ms`);
      }, left);
      this.pending.add(giveUp);
      this.startWatching();
      Promise.resolve()
        .then(call)
        .then(
          (value) => {
            if (settle()) resolve(value);
          },
          (error: unknown) => {
            if (settle()) reject(error);
          },
        );
    });
  }

  /** While calls are pending, looks at the client's own state: a lost connection gives them up at once. */
  private startWatching(): void {
    if (this.watch !== undefined || this.store.connected === undefined) return;
    this.watch = unref(
      setInterval(() => {
        if (this.store.connected?.() === false) this.goDown('its client is not connected');
      }, WATCH_MS),
    );
  }

  private stopWatching(): void {
    if (this.watch === undefined) return;
    clearInterval(this.watch);
    this.watch = undefined;
  }

  /** The outage begins: said once, pending calls given up, the first probe planned. */
  private goDown(why: string): void {
    if (this.down) return;
    this.downSince = Date.now();
    this.warn(`ai-compaction: the store is unavailable (${why}); steps go on without it, with checkpoints and counts in memory, until it answers again`);
    for (const giveUp of [...this.pending]) giveUp();
    this.probeDelay = this.probeFirstMs;
    this.planProbe();
  }

  private planProbe(): void {
    this.probeTimer = unref(setTimeout(() => void this.probe(), this.probeDelay));
  }

  /** One probe: a read of the store on its own timeout. Its first answer ends the outage; else the next waits twice as long. */
  private async probe(): Promise<void> {
    this.probeTimer = undefined;
    let answered = false;
    if (this.store.connected?.() !== false) {
      answered = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), this.timeoutMs);
        Promise.resolve()
          .then(() => this.store.get(PROBE_KEY))
          .then(
            () => resolve(true),
            () => resolve(false),
          )
          .finally(() => clearTimeout(timer));
      });
    }
    if (!this.down) return;
    if (!answered) {
      this.probeDelay = Math.min(this.probeDelay * 2, this.probeMaxMs);
      this.planProbe();
      return;
    }
    const seconds = ((Date.now() - this.downSince!) / 1000).toFixed(1);
    this.downSince = undefined;
    const memory = this.memory;
    const keys = [...this.backlog.rkeys()];
    this.backlog.clear();
    this.memory = undefined;
    const threads = memory === undefined ? 0 : await this.writeBack(memory, keys);
    this.info(
      `ai-compaction: the store answers again after ${seconds} s; ${threads === 0 ? 'nothing was stored meanwhile' : `what ${threads === 1 ? 'one conversation' : `${threads} conversations`} stored meanwhile was written to it`}`,
    );
  }

  /** A value read from the store as the middleware wrote it: opened with the secret, or `undefined` (with a warning, at a bounded rate) when it does not open. */
  private async open(key: string, value: string): Promise<string | undefined> {
    if (this.sealer === undefined) return value;
    const opened = await this.sealer.open(key, value);
    if (opened === undefined) this.unopened(key);
    return opened;
  }
}

/** A timer that does not keep a Node process alive (elsewhere, as it is). */
function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
