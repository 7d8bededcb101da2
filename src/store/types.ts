/**
 * Where checkpoints and provider counts live. Values are opaque JSON strings written by the
 * middleware; a store only keeps them. Every method may reject: the middleware then carries on
 * as if the key were absent and logs a warning.
 *
 * Back it with anything that can get, set with a time to live, and delete a string by key.
 */
export interface CompactionStore {
  /** The value under `key`, or `undefined` when there is none. */
  get(key: string): Promise<string | undefined>;
  /** Stores `value` under `key`; `ttlSeconds` (when given) bounds how long it is kept. */
  set(key: string, value: string, options?: { ttlSeconds?: number }): Promise<void>;
  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}
