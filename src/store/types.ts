/**
 * Where checkpoints and provider counts live. Values are opaque strings written by the
 * middleware (JSON, or sealed with the `secret` option); a store only keeps them. Every method may
 * reject: the middleware then carries on as if the key were absent and logs a warning.
 *
 * Back it with anything that can get, set with a time to live, and delete a string by key. A step
 * waits for the store at most 5 seconds in all, whatever number of calls it makes; once a call has
 * not answered in time, or `connected()` says `false`, the middleware goes on without the store
 * (in memory) and probes it until it answers again (docs/stores.md).
 */
export interface CompactionStore {
  /** The value under `key`, or `undefined` when there is none. */
  get(key: string): Promise<string | undefined>;
  /** Stores `value` under `key`; `ttlSeconds` (when given) bounds how long it is kept. */
  set(key: string, value: string, options?: { ttlSeconds?: number }): Promise<void>;
  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Optional: stores `value` under `key` only when no value is there, atomically, to expire after
   * `ttlMs` milliseconds; resolves `true` when it stored it, `false` when a value was there (Redis
   * `SET key value NX PX ms`). Instances sharing the store take the lease on writing a summary with
   * it, so that two that ask at the same moment never both write it. Without it, the lease is taken
   * by a read, a write and a read back, which two instances asking at the same moment may both
   * win: each then writes the same summary (one more summary request, never a wrong checkpoint;
   * docs/stores.md).
   */
  setIfAbsent?(key: string, value: string, options: { ttlMs: number }): Promise<boolean>;
  /**
   * Optional: whether the store can answer now, from its client's own state (a network client that
   * has lost its connection and is reconnecting says `false`). Called before each store call, so it
   * must be cheap and synchronous. `false` makes the middleware skip the store at once instead of
   * waiting for a call to time out; leave it out, or return `true`, when the state is not known.
   */
  connected?(): boolean;
  /**
   * Optional: what the store puts before every key (the Redis store's `prefix`). With `secret`, a
   * sealed value is bound to its whole key, this prefix included, so a value copied to another
   * prefix under the same secret does not open.
   */
  readonly prefix?: string;
}
