import { messageOf } from '../errors';
import type { CompactionStore } from './types';
import {
  type Hold,
  type SizingRecord,
  type StoredCheckpoint,
  type Thread,
  type CountRecord,
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
} from './records';

/** How many threads and checkpoints `state()` holds: the latest this instance wrote or read. */
const RECENT_LIMIT = 8;
/** Parsed checkpoints kept in memory, so a step does not re-read and re-parse its checkpoint. */
const PARSED_LIMIT = 64;
/** Writes of a checkpoint or hold to a thread, each read back to see it was not lost to a concurrent write. */
const VERIFIED_WRITES = 3;
/** A store call that has not settled by then counts as failed: a hung store never holds up a step. */
export const STORE_TIMEOUT_MS = 5_000;

/**
 * A call not made, or a try that timed out again, while the store is stalled (after a call timed
 * out, until one answers): warned about once, at the first timeout.
 */
class StoreStalled extends Error {}

/** How a patch is written to a thread. */
interface ThreadWrite {
  /** Writes at most, each read back to see the patch was not lost to a concurrent write (default 1: not read back). */
  attempts?: number;
  /** Which older counts stay (the newest always does). */
  keepCount?: (count: CountRecord) => boolean;
  /** The patch is older than what the store has (a restored state): the store's entries win. */
  older?: boolean;
}

/**
 * Reads and writes the middleware's records in a store. A store that fails or returns garbage
 * degrades to "nothing stored" with a warning: never a wrong checkpoint, never a failed step.
 * Checkpoints are immutable per digest, so parsed ones are kept in a small local cache.
 */
export class Keeper {
  private readonly parsed = new Map<string, StoredCheckpoint>();
  /** What this instance last wrote or read, newest last: the content of `state()`. */
  readonly recentThreads = new Map<string, Thread>();
  readonly recentCheckpoints = new Map<string, StoredCheckpoint>();
  /** The last pending write of each thread: this instance's writes of one thread run one at a time. */
  private readonly writing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: CompactionStore,
    private readonly warn: (message: string) => void,
    private readonly timeoutMs = STORE_TIMEOUT_MS,
  ) {}

  /** A call timed out and none has answered since: one call at a time tries the store. */
  private stalled = false;
  private trying = false;

  async thread(digest: string): Promise<Thread> {
    const raw = await this.read(threadKey(digest));
    if (raw === undefined) return emptyThread();
    const parsed = parseJson(raw, threadSchema);
    if (parsed === undefined) {
      this.warn(`ai-compaction: ignored a malformed thread record under ${threadKey(digest)}`);
      return emptyThread();
    }
    this.remember(this.recentThreads, digest, parsed);
    return parsed;
  }

  async checkpoint(digest: string, length: number): Promise<StoredCheckpoint | undefined> {
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
    const raw = await this.read(checkpointKey(digest));
    if (raw === undefined) return undefined;
    const parsed = parseJson(raw, checkpointSchema);
    if (parsed === undefined || parsed.digest !== digest || parsed.length !== length) {
      this.warn(`ai-compaction: ignored a malformed checkpoint under ${checkpointKey(digest)}`);
      return undefined;
    }
    this.cache(parsed);
    return parsed;
  }

  /** What a model's counts taught (SPEC 5), under the digest of its `provider:modelId`; `undefined` when none or malformed. */
  async sizing(digest: string, model: string): Promise<SizingRecord | undefined> {
    const raw = await this.read(sizingKey(digest));
    if (raw === undefined) return undefined;
    const parsed = parseJson(raw, sizingSchema);
    if (parsed === undefined || parsed.model !== model) {
      this.warn(`ai-compaction: ignored a malformed sizing record under ${sizingKey(digest)}`);
      return undefined;
    }
    return parsed;
  }

  /** Writes a model's sizing record whole (merged by the caller with what it last read). */
  saveSizing(digest: string, record: SizingRecord): Promise<boolean> {
    return this.write(sizingKey(digest), JSON.stringify(record));
  }

  /** Stores a checkpoint and adds it to its thread. Returns false (after a warning) when the store failed. */
  async saveCheckpoint(threadDigest: string, checkpoint: StoredCheckpoint): Promise<boolean> {
    this.cache(checkpoint);
    const written = await this.write(checkpointKey(checkpoint.digest), JSON.stringify(checkpoint));
    if (!written) return false;
    return this.updateThread(threadDigest, { checkpoints: [{ length: checkpoint.length, digest: checkpoint.digest }] }, { attempts: VERIFIED_WRITES });
  }

  /**
   * Stores a checkpoint prepared ahead (SPEC 14) and lists it among its thread's prepared ones, not
   * among the checkpoints steps find: it is held back until a step at the ceiling promotes it.
   */
  async savePrepared(threadDigest: string, checkpoint: StoredCheckpoint): Promise<boolean> {
    this.cache(checkpoint);
    const written = await this.write(checkpointKey(checkpoint.digest), JSON.stringify(checkpoint));
    if (!written) return false;
    return this.updateThread(threadDigest, { prepared: [{ length: checkpoint.length, digest: checkpoint.digest }] }, { attempts: VERIFIED_WRITES });
  }

  /**
   * Lists a prepared checkpoint, sent for the first time, among its thread's checkpoints: later
   * steps find it like any other. `sent` names the conversation of the step that sent it.
   */
  async promote(threadDigest: string, checkpoint: StoredCheckpoint, sent?: { length: number; digest: string }): Promise<boolean> {
    const ref = { length: checkpoint.length, digest: checkpoint.digest, ...(sent === undefined ? {} : { sent }) };
    return this.updateThread(threadDigest, { checkpoints: [ref] }, { attempts: VERIFIED_WRITES });
  }

  /** Adds a count to its thread; counts of shorter prompts of the same conversation (`superseded`) go. */
  async saveCount(threadDigest: string, count: CountRecord, superseded: ReadonlySet<string>): Promise<boolean> {
    // A count lost to a concurrent write only means the next step estimates more: not read back.
    return this.updateThread(threadDigest, { counts: [count] }, { keepCount: (kept) => !superseded.has(kept.digest) });
  }

  /** Adds entries found under another index (a conversation's first message) to this one. */
  async adopt(threadDigest: string, patch: ThreadPatch): Promise<boolean> {
    return this.updateThread(threadDigest, patch, { attempts: VERIFIED_WRITES });
  }

  async saveHold(threadDigest: string, hold: Hold): Promise<boolean> {
    return this.updateThread(threadDigest, { holds: [hold] }, { attempts: VERIFIED_WRITES });
  }

  /**
   * Writes what `state()` held into the store, merged with what the store already has (which is
   * newer: its entries come first). `state()` holds it all from the start.
   */
  async restore(threads: Record<string, Thread>, checkpoints: Record<string, StoredCheckpoint>): Promise<void> {
    for (const checkpoint of Object.values(checkpoints)) this.cache(checkpoint);
    for (const [digest, thread] of Object.entries(threads)) this.remember(this.recentThreads, digest, thread);
    await Promise.all([
      ...Object.values(checkpoints).map((checkpoint) => this.write(checkpointKey(checkpoint.digest), JSON.stringify(checkpoint))),
      ...Object.entries(threads).map(([digest, thread]) => this.updateThread(digest, thread, { attempts: VERIFIED_WRITES, older: true })),
    ]);
  }

  /**
   * Merges `patch` into a thread: read, merge, write. The store has no compare-and-set, so another
   * instance writing the same thread in between can drop the patch; up to `attempts` times the
   * thread is read back and the patch merged again until it holds it. This instance's own writes
   * of a thread are queued, so they never drop each other.
   */
  private updateThread(digest: string, patch: ThreadPatch, how: ThreadWrite = {}): Promise<boolean> {
    const run = (this.writing.get(digest) ?? Promise.resolve()).then(() => this.mergeInto(digest, patch, how));
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

  private async mergeInto(digest: string, patch: ThreadPatch, { attempts = 1, keepCount, older = false }: ThreadWrite): Promise<boolean> {
    let current = await this.thread(digest);
    for (let attempt = 1; ; attempt++) {
      // Entries of the same identity: the newer wins, and the newest come first.
      const merged = older ? mergeThreads({ ...emptyThread(), ...patch }, current) : mergeThreads(current, patch);
      if (keepCount !== undefined) merged.counts = merged.counts.filter((count, index) => index === 0 || keepCount(count));
      this.remember(this.recentThreads, digest, merged);
      if (!(await this.write(threadKey(digest), JSON.stringify(merged)))) return false;
      if (attempt >= attempts) return true;
      current = await this.thread(digest);
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
   * The store call, or a rejection once it has taken longer than the timeout. After a timeout the
   * store is stalled: until a call answers (a value or an error) one call at a time tries it and
   * the others fail at once, so a hung store holds up one step at a time, and a store that was
   * slow once is used again as soon as it answers.
   */
  private timed<T>(call: () => Promise<T>): Promise<T> {
    if (this.stalled && this.trying) return Promise.reject(new StoreStalled());
    const trying = this.stalled;
    this.trying ||= trying;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (trying) this.trying = false;
        const first = !this.stalled;
        this.stalled = true;
        reject(first ? new Error(`no answer within ${this.timeoutMs} ms; until it answers, one call at a time tries it`) : new StoreStalled());
      }, this.timeoutMs);
      const answered = () => {
        clearTimeout(timer);
        if (trying) this.trying = false;
        this.stalled = false;
      };
      Promise.resolve()
        .then(call)
        .then(
          (value) => {
            answered();
            resolve(value);
          },
          (error: unknown) => {
            answered();
            reject(error);
          },
        );
    });
  }

  private async read(key: string): Promise<string | undefined> {
    try {
      const value = await this.timed(() => this.store.get(key));
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'string') {
        this.warn(`ai-compaction: the store returned a ${typeof value} for ${key}; ignored`);
        return undefined;
      }
      return value;
    } catch (error) {
      if (!(error instanceof StoreStalled)) this.warn(`ai-compaction: reading ${key} from the store failed (${messageOf(error)}); going on without it`);
      return undefined;
    }
  }

  private async write(key: string, value: string): Promise<boolean> {
    try {
      await this.timed(() => this.store.set(key, value));
      return true;
    } catch (error) {
      if (!(error instanceof StoreStalled)) this.warn(`ai-compaction: writing ${key} to the store failed (${messageOf(error)})`);
      return false;
    }
  }
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
