import { messageOf } from '../errors';
import { type MemoryStore, memoryStore } from './memory';
import {
  type Count,
  type Hold,
  type Lease,
  type ModelSizing,
  type StoredCheckpoint,
  type Thread,
  type ThreadPatch,
  checkpointKey,
  checkpointSchema,
  emptyThread,
  mergeThreads,
  sizingKey,
  sizingSchema,
  threadHas,
  threadKey,
  threadSchema,
} from './format';
import { type Sealer, unopenedWarnings } from './seal';
import type { CompactionStore } from './types';

/** How many threads and checkpoints `state()` holds: the latest this instance wrote or read. */
const RECENT_LIMIT = 8;
/** Parsed checkpoints kept in memory, so a step does not re-read and re-parse its checkpoint. */
const PARSED_LIMIT = 64;
/** Writes of a checkpoint or hold to a thread, each read back to see it was not lost to a concurrent write. */
const VERIFIED_WRITES = 3;
/** The most one step waits for the store, over all the calls it makes (docs/stores.md, the outage rule). */
export const STORE_TIMEOUT_MS = 5_000;
/** The first probe of a store that is down, after this long; each next one after twice as long, up to `PROBE_MAX_MS`. */
export const PROBE_FIRST_MS = 1_000;
export const PROBE_MAX_MS = 30_000;
/** How often the client's own state is looked at while calls are pending (a store with `connected()`). */
const WATCH_MS = 250;
/** Keys written while the store was down, remembered to be written to it once it is back. */
const BACKLOG_LIMIT = 10_000;
/** What a probe reads: any key does, its value is not used. */
const PROBE_KEY = 'probe';
/** Waits between two reads of a thread while another instance writes the checkpoint it needs. */
const LEASE_POLL_MS = { first: 200, max: 1_000 } as const;

/** A call not made, or given up, because the store is down: said once, when the outage began. */
class StoreDown extends Error {}

/** How the Keeper reports and how long it waits (the defaults outside tests). */
export interface KeeperOptions {
  warn: (message: string) => void;
  info?: (message: string) => void;
  /** Seals every value written, opens every value read (option `secret`). */
  sealer?: Sealer;
  timeoutMs?: number;
  probeFirstMs?: number;
  probeMaxMs?: number;
}

/**
 * How long one step may still wait for the store: `limit` ms in all, counted while at least one of
 * its calls is pending (so calls made side by side count once). Every store call of a step, from
 * the reads of `transformParams` to the count written after the reply, draws on its budget.
 */
export class StoreBudget {
  private spent = 0;
  private pending = 0;
  private since = 0;

  constructor(private readonly limit: number) {}

  /** Milliseconds left. */
  remaining(): number {
    return this.limit - this.spent - (this.pending > 0 ? Date.now() - this.since : 0);
  }

  begin(): void {
    if (this.pending++ === 0) this.since = Date.now();
  }

  end(): void {
    if (--this.pending === 0) this.spent += Date.now() - this.since;
  }
}

/** How a patch is written to a thread. */
interface ThreadWrite {
  /** Writes at most, each read back to see the patch was not lost to a concurrent write (default 1: not read back). */
  attempts?: number;
  /** Which older counts stay (the newest always does). */
  keepCount?: (count: Count) => boolean;
  /** The patch is older than what the store has (a restored state): the store's entries win. */
  older?: boolean;
}

/**
 * Reads and writes what the middleware keeps in a store. A store that fails or returns garbage
 * degrades to "nothing stored" with a warning: never a wrong checkpoint, never a failed step.
 * Checkpoints are immutable per digest, so parsed ones are kept in a small local cache.
 *
 * The outage rule (docs/stores.md): a step waits for the store at most `timeoutMs` in all (its
 * `StoreBudget`). Once a call has timed out, or the store says its client is not connected, the
 * store is down: every call goes to memory at once (as without a store), and one probe at a time,
 * backing off from 1 s to 30 s, reads it until it answers. Its first answer ends the outage (one
 * info line), and what was written in memory meanwhile is written to the store.
 */
export class Keeper {
  private readonly parsed = new Map<string, StoredCheckpoint>();
  /** What this instance last wrote or read, newest last: the content of `state()`. */
  readonly recentThreads = new Map<string, Thread>();
  readonly recentCheckpoints = new Map<string, StoredCheckpoint>();
  /** This instance, in the leases it writes. */
  readonly owner = randomHex(8);
  /** The last pending write of each thread: this instance's writes of one thread run one at a time. */
  private readonly writing = new Map<string, Promise<unknown>>();
  private readonly warn: (message: string) => void;
  private readonly info: (message: string) => void;
  private readonly sealer: Sealer | undefined;
  private readonly timeoutMs: number;
  private readonly probeFirstMs: number;
  private readonly probeMaxMs: number;
  /** Warns about values that do not open, at a bounded rate. */
  private readonly unopened: (key: string) => void;

  /** Since when the store is down (ms since the epoch), or undefined while it is up. */
  private downSince: number | undefined;
  /** Where values go while the store is down, and the keys written there to write to the store once it is back. */
  private memory: MemoryStore | undefined;
  private readonly backlog = new Set<string>();
  /** Threads being written back after an outage: read merged with the store's until they are. */
  private readonly returning = new Map<string, Thread>();
  private probeDelay = 0;
  private probeTimer: ReturnType<typeof setTimeout> | undefined;
  /** Gives up every pending call at once, when the store goes down. */
  private readonly pending = new Set<() => void>();
  private watch: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly store: CompactionStore,
    options: KeeperOptions,
  ) {
    this.warn = options.warn;
    this.info = options.info ?? (() => {});
    this.sealer = options.sealer;
    this.unopened = unopenedWarnings(this.warn);
    this.timeoutMs = options.timeoutMs ?? STORE_TIMEOUT_MS;
    this.probeFirstMs = options.probeFirstMs ?? PROBE_FIRST_MS;
    this.probeMaxMs = options.probeMaxMs ?? PROBE_MAX_MS;
  }

  /** A new step's budget: the most it may wait for the store, over all its calls. */
  budget(): StoreBudget {
    return new StoreBudget(this.timeoutMs);
  }

  /** Whether the store is down now (calls go to memory). */
  get down(): boolean {
    return this.downSince !== undefined;
  }

  async thread(digest: string, budget: StoreBudget): Promise<Thread> {
    const raw = await this.read(threadKey(digest), budget);
    let parsed = raw === undefined ? undefined : parseJson(raw, threadSchema);
    if (raw !== undefined && parsed === undefined) this.warn(`ai-compaction: ignored a malformed thread record under ${threadKey(digest)}`);
    const returning = this.returning.get(digest);
    if (returning !== undefined) parsed = mergeThreads(parsed ?? emptyThread(), returning);
    if (parsed === undefined) return emptyThread();
    this.remember(this.recentThreads, digest, parsed);
    return parsed;
  }

  async checkpoint(digest: string, length: number, budget: StoreBudget): Promise<StoredCheckpoint | undefined> {
    const cached = this.parsed.get(digest);
    // A checkpoint is found through a thread's entry: both must name the same prefix.
    if (cached !== undefined && cached.length !== length) {
      this.warn(`ai-compaction: ignored a checkpoint under ${checkpointKey(digest)} whose length does not match its entry`);
      return undefined;
    }
    if (cached !== undefined) {
      // Used now: `state()` must hold it along with its thread.
      this.remember(this.recentCheckpoints, digest, cached);
      return cached;
    }
    const raw = await this.read(checkpointKey(digest), budget);
    if (raw === undefined) return undefined;
    const parsed = parseJson(raw, checkpointSchema);
    if (parsed === undefined || parsed.digest !== digest || parsed.length !== length) {
      this.warn(`ai-compaction: ignored a malformed checkpoint under ${checkpointKey(digest)}`);
      return undefined;
    }
    this.cache(parsed);
    return parsed;
  }

  /** What a model's counts taught (docs: sizing), under the digest of its `provider:modelId`; `undefined` when none or malformed. */
  async sizing(digest: string, model: string, budget: StoreBudget): Promise<ModelSizing | undefined> {
    const raw = await this.read(sizingKey(digest), budget);
    if (raw === undefined) return undefined;
    const parsed = parseJson(raw, sizingSchema);
    if (parsed === undefined || parsed.model !== model) {
      this.warn(`ai-compaction: ignored a malformed sizing record under ${sizingKey(digest)}`);
      return undefined;
    }
    return parsed;
  }

  /** Writes a model's sizing whole (merged by the caller with what it last read). */
  saveSizing(digest: string, sizing: ModelSizing, budget: StoreBudget): Promise<boolean> {
    return this.write(sizingKey(digest), JSON.stringify(sizing), budget);
  }

  /** Stores a checkpoint and adds it to its thread (which ends the lease on it). Returns false (after a warning) when the store failed. */
  async saveCheckpoint(threadDigest: string, checkpoint: StoredCheckpoint, budget: StoreBudget): Promise<boolean> {
    this.cache(checkpoint);
    const written = await this.write(checkpointKey(checkpoint.digest), JSON.stringify(checkpoint), budget);
    if (!written) return false;
    return this.updateThread(threadDigest, { checkpoints: [{ length: checkpoint.length, digest: checkpoint.digest }] }, budget, { attempts: VERIFIED_WRITES });
  }

  /**
   * Stores a checkpoint prepared ahead (docs/design.md, "Preparing ahead") and lists it among its
   * thread's prepared ones, not among the checkpoints steps find: it is held back until a step at
   * the ceiling promotes it.
   */
  async savePrepared(threadDigest: string, checkpoint: StoredCheckpoint, budget: StoreBudget, catchUp = false): Promise<boolean> {
    this.cache(checkpoint);
    const written = await this.write(checkpointKey(checkpoint.digest), JSON.stringify(checkpoint), budget);
    if (!written) return false;
    return this.markPrepared(threadDigest, checkpoint, budget, catchUp);
  }

  /** Lists a stored checkpoint among its thread's prepared ones; `catchUp`: the first step after it sends it (not held back). */
  markPrepared(threadDigest: string, ref: { length: number; digest: string }, budget: StoreBudget, catchUp = false): Promise<boolean> {
    const entry = { length: ref.length, digest: ref.digest, ...(catchUp ? { catchUp: true as const } : {}) };
    return this.updateThread(threadDigest, { prepared: [entry] }, budget, { attempts: VERIFIED_WRITES });
  }

  /**
   * Lists a prepared checkpoint, sent for the first time, among its thread's checkpoints: later
   * steps find it like any other. `sent` names the conversation of the step that sent it.
   */
  async promote(threadDigest: string, checkpoint: StoredCheckpoint, sent: { length: number; digest: string } | undefined, budget: StoreBudget): Promise<boolean> {
    const ref = { length: checkpoint.length, digest: checkpoint.digest, ...(sent === undefined ? {} : { sent }) };
    return this.updateThread(threadDigest, { checkpoints: [ref] }, budget, { attempts: VERIFIED_WRITES });
  }

  /** Adds a count to its thread; counts of shorter prompts of the same conversation (`superseded`) go. */
  async saveCount(threadDigest: string, count: Count, superseded: ReadonlySet<string>, budget: StoreBudget): Promise<boolean> {
    // A count lost to a concurrent write only means the next step estimates more: not read back.
    return this.updateThread(threadDigest, { counts: [count] }, budget, { keepCount: (kept) => !superseded.has(kept.digest) });
  }

  /** Adds entries found under another index (a conversation's first message) to this one. */
  async adopt(threadDigest: string, patch: ThreadPatch, budget: StoreBudget): Promise<boolean> {
    return this.updateThread(threadDigest, patch, budget, { attempts: VERIFIED_WRITES });
  }

  async saveHold(threadDigest: string, hold: Hold, budget: StoreBudget): Promise<boolean> {
    return this.updateThread(threadDigest, { holds: [hold] }, budget, { attempts: VERIFIED_WRITES });
  }

  /**
   * Takes the lease on writing the checkpoint of a prefix (`ref`) for `ms` (docs/stores.md, the
   * lease), unless another instance holds one: that lease is returned, and the caller waits for
   * its checkpoint. Two instances that take it at the same moment both see both leases once
   * written; the one of the smaller owner keeps it. While the store is down there is no lease.
   */
  async lease(threadDigest: string, ref: { length: number; digest: string }, ms: number, budget: StoreBudget): Promise<Lease | undefined> {
    if (this.down) return undefined;
    const others = (thread: Thread) => otherLeases(thread, ref.digest, this.owner);
    const held = others(await this.thread(threadDigest, budget))[0];
    if (held !== undefined || this.down) return held;
    const mine: Lease = { ...ref, owner: this.owner, until: Date.now() + ms };
    if (!(await this.updateThread(threadDigest, { leases: [mine] }, budget)) || this.down) return undefined;
    const after = await this.thread(threadDigest, budget);
    const rival = others(after).sort((a, b) => (a.owner < b.owner ? -1 : 1))[0];
    const kept = (after.leases ?? []).some((item) => item.owner === this.owner && item.digest === ref.digest);
    // Another's lease only: its write replaced this one. Both: the smaller owner keeps it.
    if (rival !== undefined && (!kept || rival.owner < this.owner)) return rival;
    return undefined;
  }

  /** Ends this instance's lease on a prefix whose checkpoint it did not write (the compaction failed). */
  async release(threadDigest: string, ref: { length: number; digest: string }, budget: StoreBudget): Promise<void> {
    if (this.down) return;
    await this.updateThread(threadDigest, { leases: [{ ...ref, owner: this.owner, until: 0 }] }, budget);
  }

  /**
   * Waits for the checkpoint another instance's lease (`held`) is writing: reads its thread until
   * it lists it (then returns it), until the lease is gone, `deadline` (ms since the epoch) has
   * passed or the store is down (then `undefined`).
   */
  async awaitLeased(threadDigest: string, held: Lease, deadline: number, budget: StoreBudget): Promise<StoredCheckpoint | undefined> {
    let wait: number = LEASE_POLL_MS.first;
    for (;;) {
      const until = Math.min(deadline, held.until);
      const now = Date.now();
      if (now >= until) return undefined;
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, until - now)));
      wait = Math.min(wait * 2, LEASE_POLL_MS.max);
      if (this.down) return undefined;
      const thread = await this.thread(threadDigest, budget);
      if ([...thread.checkpoints, ...(thread.prepared ?? [])].some((item) => item.digest === held.digest)) {
        return this.checkpoint(held.digest, held.length, budget);
      }
      if (!(thread.leases ?? []).some((item) => item.owner === held.owner && item.digest === held.digest && item.until > Date.now())) return undefined;
    }
  }

  /**
   * Writes what `state()` held into the store, merged with what the store already has (which is
   * newer: its entries come first). `state()` holds it all from the start.
   */
  async restore(threads: Record<string, Thread>, checkpoints: Record<string, StoredCheckpoint>): Promise<void> {
    for (const checkpoint of Object.values(checkpoints)) this.cache(checkpoint);
    for (const [digest, thread] of Object.entries(threads)) this.remember(this.recentThreads, digest, thread);
    const budget = this.budget();
    await Promise.all([
      ...Object.values(checkpoints).map((checkpoint) => this.write(checkpointKey(checkpoint.digest), JSON.stringify(checkpoint), budget)),
      ...Object.entries(threads).map(([digest, thread]) => this.updateThread(digest, thread, budget, { attempts: VERIFIED_WRITES, older: true })),
    ]);
  }

  /**
   * Merges `patch` into a thread: read, merge, write. The store has no compare-and-set, so another
   * instance writing the same thread in between can drop the patch; up to `attempts` times the
   * thread is read back and the patch merged again until it holds it. This instance's own writes
   * of a thread are queued, so they never drop each other; the wait in the queue counts against
   * the step's budget like a store call.
   */
  private updateThread(digest: string, patch: ThreadPatch, budget: StoreBudget, how: ThreadWrite = {}): Promise<boolean> {
    const previous = this.writing.get(digest);
    const run = (previous === undefined ? Promise.resolve() : this.queued(previous, budget)).then(() => this.mergeInto(digest, patch, budget, how));
    const done = run.then(
      () => undefined,
      () => undefined,
    );
    this.writing.set(digest, done);
    void done.then(() => {
      if (this.writing.get(digest) === done) this.writing.delete(digest);
    });
    return run;
  }

  /** Waits for this instance's previous write of a thread, within the step's budget (then the store is down). */
  private async queued(previous: Promise<unknown>, budget: StoreBudget): Promise<void> {
    try {
      await this.timed(budget, () => previous, false);
    } catch {
      // Down now: every pending call was given up, so the previous write goes on in memory at
      // once; this one follows it there, in order.
      await previous.catch(() => undefined);
    }
  }

  private async mergeInto(digest: string, patch: ThreadPatch, budget: StoreBudget, { attempts = 1, keepCount, older = false }: ThreadWrite): Promise<boolean> {
    let current = await this.thread(digest, budget);
    for (let attempt = 1; ; attempt++) {
      // Entries of the same identity: the newer wins, and the newest come first.
      const merged = older ? mergeThreads({ ...emptyThread(), ...patch }, current) : mergeThreads(current, patch);
      if (keepCount !== undefined) merged.counts = merged.counts.filter((count, index) => index === 0 || keepCount(count));
      this.remember(this.recentThreads, digest, merged);
      if (!(await this.write(threadKey(digest), JSON.stringify(merged), budget))) return false;
      if (attempt >= attempts) return true;
      current = await this.thread(digest, budget);
      if (threadHas(current, patch)) return true;
    }
  }

  private cache(checkpoint: StoredCheckpoint): void {
    this.remember(this.parsed, checkpoint.digest, checkpoint, PARSED_LIMIT);
    this.remember(this.recentCheckpoints, checkpoint.digest, checkpoint);
  }

  private remember<T>(map: Map<string, T>, key: string, value: T, limit = RECENT_LIMIT): void {
    map.delete(key);
    map.set(key, value);
    while (map.size > limit) map.delete(map.keys().next().value as string);
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
    const threads = await this.writeBack();
    this.info(
      `ai-compaction: the store answers again after ${seconds} s; ${threads === 0 ? 'nothing was stored meanwhile' : `what ${threads === 1 ? 'one conversation' : `${threads} conversations`} stored meanwhile was written to it`}`,
    );
  }

  /**
   * After an outage: the threads written in memory meanwhile are merged into the store's (their
   * entries are the newer), each after the checkpoints it still lists. A checkpoint no thread
   * lists any more, and counts of models' characters a token (written again by the next count),
   * are not written back. Returns how many threads were.
   */
  private async writeBack(): Promise<number> {
    const memory = this.memory;
    const keys = [...this.backlog];
    this.backlog.clear();
    this.memory = undefined;
    if (memory === undefined) return 0;
    const threads: [string, Thread][] = [];
    for (const key of keys) {
      if (!key.startsWith('thread:')) continue;
      const raw = await memory.get(key);
      const thread = raw === undefined ? undefined : parseJson(raw, threadSchema);
      if (thread !== undefined) threads.push([key.slice('thread:'.length), thread]);
    }
    for (const [digest, thread] of threads) this.returning.set(digest, thread);
    await Promise.all(
      threads.map(async ([digest, thread]) => {
        const budget = this.budget();
        try {
          for (const ref of [...thread.checkpoints, ...(thread.prepared ?? [])]) {
            const key = checkpointKey(ref.digest);
            const value = await memory.get(key);
            if (value !== undefined && (await this.read(key, budget)) === undefined) await this.write(key, value, budget);
          }
          await this.updateThread(digest, thread, budget, { attempts: VERIFIED_WRITES });
        } finally {
          if (this.returning.get(digest) === thread) this.returning.delete(digest);
        }
      }),
    );
    return threads.length;
  }

  /** The value under `key`: from the store (opened, when sealed), or from memory while the store is down. */
  private async read(key: string, budget: StoreBudget): Promise<string | undefined> {
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
  private async write(key: string, value: string, budget: StoreBudget): Promise<boolean> {
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
    if (this.backlog.size >= BACKLOG_LIMIT) this.backlog.delete(this.backlog.values().next().value as string);
    this.backlog.add(key);
    return true;
  }

  /** A value read from the store as the middleware wrote it: opened with the secret, or `undefined` (with a warning, at a bounded rate) when it does not open. */
  private async open(key: string, value: string): Promise<string | undefined> {
    if (this.sealer === undefined) return value;
    const opened = await this.sealer.open(key, value);
    if (opened === undefined) this.unopened(key);
    return opened;
  }
}

/** The leases on `digest` of instances other than `owner` that hold now, in a thread. */
function otherLeases(thread: Thread, digest: string, owner: string): Lease[] {
  const now = Date.now();
  return (thread.leases ?? []).filter((item) => item.digest === digest && item.owner !== owner && item.until > now);
}

/** A timer that does not keep a Node process alive (elsewhere, as it is). */
function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

function randomHex(bytes: number): string {
  let hex = '';
  for (const byte of crypto.getRandomValues(new Uint8Array(bytes))) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

function parseJson<T>(raw: string, schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } }): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
