import { z } from 'zod';

/**
 * What the middleware keeps in a store, one JSON string per key:
 * - `cp:<digest>`: a checkpoint, keyed by the SHA-256 of the scope and the messages it covers;
 * - `thread:<digest>`: per first message (and scope), which checkpoints and provider counts exist
 *   for conversations starting with it, so a step finds them with two reads.
 * Keys hold digests only, never message text.
 */
export const FORMAT_VERSION = 1;

const digest = z.string().regex(/^[0-9a-f]{64}$/);
const count = z.number().int().nonnegative();

export const checkpointSchema = z
  .object({
    v: z.literal(FORMAT_VERSION),
    digest,
    /** Messages of the caller's conversation it covers, from the first. */
    length: z.number().int().positive(),
    summary: z.string(),
    record: z.string(),
    reason: z.enum(['auto', 'overflow', 'manual']),
    tokensBefore: count,
    tokensAfter: count,
    createdAt: z.number().nonnegative(),
    /** A provider's own compaction item standing for the covered messages, with the user messages kept after it. */
    native: z
      .object({
        provider: z.enum(['openai', 'anthropic']),
        /** `provider:modelId` of the model that made it: only that model reads it. */
        model: z.string(),
        part: z.object({ type: z.string() }).passthrough(),
        keep: z.array(z.number().int().nonnegative()).max(10_000),
      })
      .strict()
      .optional(),
  })
  .strict();

export type StoredCheckpoint = z.infer<typeof checkpointSchema>;

/** A provider's compaction item is read by the model that made it only; a summary by any model. */
export function readableBy(checkpoint: StoredCheckpoint, modelKey: string): boolean {
  return checkpoint.native === undefined || checkpoint.native.model === modelKey;
}

const checkpointRef = z.object({ length: z.number().int().positive(), digest }).strict();

const countRecord = z
  .object({
    /** Messages of the caller's conversation in the prompt the provider counted. */
    length: z.number().int().positive(),
    digest,
    /** The checkpoint that prompt was sent with, or null. */
    checkpoint: digest.nullable(),
    /** Digest of the system messages and tool definitions it was sent with. */
    frame: digest,
    input: count,
    output: count,
  })
  .strict();

export type CountRecord = z.infer<typeof countRecord>;

const hold = z
  .object({ length: z.number().int().positive(), digest, checkpoint: digest.nullable(), size: count })
  .strict();

export type Hold = z.infer<typeof hold>;

export const threadSchema = z
  .object({
    v: z.literal(FORMAT_VERSION),
    checkpoints: z.array(checkpointRef).max(64),
    counts: z.array(countRecord).max(64),
    hold: hold.nullable(),
  })
  .strict();

export type Thread = z.infer<typeof threadSchema>;

/** How many checkpoints and counts a thread keeps, newest first. */
export const THREAD_LIMIT = 32;

export function emptyThread(): Thread {
  return { v: FORMAT_VERSION, checkpoints: [], counts: [], hold: null };
}

export const checkpointKey = (digestHex: string) => `cp:${digestHex}`;
export const threadKey = (digestHex: string) => `thread:${digestHex}`;

/** What one write adds to a thread; a `hold` left undefined keeps the current one. */
export interface ThreadPatch {
  checkpoints?: Thread['checkpoints'];
  counts?: Thread['counts'];
  hold?: Hold | null;
}

/** Merges a write into a thread: union by digest, newest first, bounded. */
export function mergeThreads(current: Thread, next: ThreadPatch): Thread {
  const unique = <T>(items: T[], key: (item: T) => string) => {
    const seen = new Set<string>();
    return items.filter((item) => (seen.has(key(item)) ? false : (seen.add(key(item)), true)));
  };
  return {
    v: FORMAT_VERSION,
    checkpoints: unique([...(next.checkpoints ?? []), ...current.checkpoints], (item) => item.digest).slice(
      0,
      THREAD_LIMIT,
    ),
    counts: unique([...(next.counts ?? []), ...current.counts], (item) => `${item.digest}:${item.checkpoint}`).slice(
      0,
      THREAD_LIMIT,
    ),
    hold: next.hold === undefined ? current.hold : next.hold,
  };
}
