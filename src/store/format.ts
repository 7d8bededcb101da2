import { z } from 'zod';
import { LEASE_LIMIT, MAX_FAILURES, THREAD_LIMIT } from '../tunables';

/**
 * What the middleware keeps in a store, one JSON string per key:
 * - `cp:<digest>`: a checkpoint, keyed by the SHA-256 of the scope, the conversation's name or else
 *   the system messages, and the messages it covers (prompt/hash.ts);
 * - `sizing:<digest>`: per model and scope (the SHA-256 of `sizingName`), the recent provider
 *   counts its characters a token are learned from (docs/design.md, "The size of a prompt"), shared
 *   by every conversation of the scope and every instance;
 * - `thread:<digest>`: per conversation opening (the messages through the first reply to a user
 *   message, under the same key), which checkpoints, provider counts and holds exist for conversations
 *   that open that way, so a step finds them with two reads. The steps before that reply keep
 *   theirs under the first message; the first step with a reply carries its checkpoint and holds
 *   over. It also lists the leases of compactions under way (docs/stores.md);
 * - `lease:<digest>`: the lease on writing the checkpoint `cp:<digest>`, taken atomically (the
 *   store's `setIfAbsent`), expiring with the lease.
 * Keys hold digests only, never message text; with the `secret` option every value is sealed.
 */
export const FORMAT_VERSION = 2;

const digest = z.string().regex(/^[0-9a-f]{64}$/);
const count = z.number().int().nonnegative();

/**
 * A provider's compaction item as the middleware keeps it (compact/native-providers.ts makes it):
 * exactly these fields, so a stored value or a state can plant no other part in a prompt.
 */
const nativePart = z.union([
  z
    .object({
      type: z.literal('custom'),
      kind: z.literal('openai.compaction'),
      providerOptions: z.object({ openai: z.object({ itemId: z.string().min(1), encryptedContent: z.string().nullable().optional() }).strict() }).strict(),
    })
    .strict(),
  z
    .object({
      type: z.literal('text'),
      text: z.string().min(1),
      providerOptions: z.object({ anthropic: z.object({ type: z.literal('compaction'), signature: z.string().optional() }).strict() }).strict(),
    })
    .strict(),
])
  // Read as the prompt part it is sent back as.
  .transform((part): { type: string; [field: string]: unknown } => part);

export const checkpointSchema = z
  .object({
    v: z.literal(FORMAT_VERSION),
    digest,
    /** Messages of the caller's conversation it covers, from the first. */
    length: z.number().int().positive(),
    summary: z.string(),
    record: z.string(),
    reason: z.enum(['auto', 'overflow', 'manual']),
    /** The rule of the policy that decided it, once a step sent it (docs/design.md, "The policy"); absent when an older version wrote it. */
    rule: z.string().max(64).optional(),
    tokensBefore: count,
    tokensAfter: count,
    createdAt: z.number().nonnegative(),
    /** The exact identifiers of what it covers, most recent first, carried forward (docs/design.md, "Identifiers"). */
    identifiers: z.array(z.string().max(4_096)).max(2_000).optional(),
    /** Tokens the step right after it (live when it was made) may take; its tool outputs are shortened past that (docs/design.md, "What stays live"). */
    step: z.number().int().nonnegative().optional(),
    /** A provider's own compaction item standing for the covered messages, with the user messages kept after it. */
    native: z
      .object({
        provider: z.enum(['openai', 'anthropic']),
        /** `provider:modelId` of the model that made it: only that model reads it. */
        model: z.string(),
        part: nativePart,
        keep: z.array(z.number().int().nonnegative()).max(10_000),
      })
      .strict()
      .refine((native) => (native.provider === 'openai') === (native.part.type === 'custom'), {
        message: "must be the compaction item of its provider (an OpenAI item is a custom part, Anthropic's a text part)",
        path: ['part'],
      })
      .optional(),
    /**
     * Old tool outputs cleared (docs/design.md, "Clearing old tool results"): it stands for the
     * messages it covers sent with the output of each tool result from `from` on replaced by a
     * note. Its summary, record, identifiers, step and native item are those of the checkpoint it
     * was made on (`base`), which covers the messages before `from`; without a base they are empty.
     */
    clear: z
      .object({
        /** Where clearing starts: the end of what the checkpoint under it covers. */
        from: z.number().int().nonnegative(),
        /** Whether it was made on a checkpoint (a summary or a provider's item) covering the messages before `from`. */
        base: z.boolean(),
        /** How long the conversation was when it was made: the growth since says whether it made room (docs/design.md, "Clearing old tool results"). */
        at: z.number().int().positive(),
        /** Tool results cleared, and the characters of text their outputs held. */
        outputs: count,
        characters: count,
      })
      .strict()
      .optional(),
    /**
     * For a checkpoint prepared ahead: what its requests in the background cost, reported by the
     * step that first sends it, on whichever instance (docs/observability.md). Optional: values
     * written before it existed read as having none.
     */
    usage: z
      .object({ requests: count, inputTokens: count.optional(), cachedInputTokens: count.optional(), outputTokens: count.optional(), durationMs: count })
      .strict()
      .optional(),
  })
  .strict()
  .refine((checkpoint) => checkpoint.clear === undefined || (checkpoint.clear.from < checkpoint.length && checkpoint.clear.at >= checkpoint.length), {
    // A predicate of the field: a refused state reads `checkpoints.<digest>.clear must start ...`.
    message: 'must start before the end of what it covers, made on a conversation at least that long',
    path: ['clear'],
  })
  // The kept user messages are among those it covers, in order: each goes out once, after the item.
  .refine((checkpoint) => checkpoint.native === undefined || checkpoint.native.keep.every((index, at, keep) => index < checkpoint.length && (at === 0 || keep[at - 1]! < index)), {
    // A predicate of the field: a refused state reads `checkpoints.<digest>.native.keep must list ...`.
    message: 'must list messages it covers, in increasing order',
    path: ['native', 'keep'],
  });

export type StoredCheckpoint = z.infer<typeof checkpointSchema>;

/** A provider's compaction item is read by the model that made it only; a summary by any model. */
export function readableBy(checkpoint: StoredCheckpoint, modelKey: string): boolean {
  return checkpoint.native === undefined || checkpoint.native.model === modelKey;
}

const checkpointRef = z
  .object({
    length: z.number().int().positive(),
    digest,
    /**
     * For a checkpoint prepared ahead (docs/design.md, "Preparing ahead"), once promoted: the
     * conversation of the step that first sent it (its length and digest), where it left the
     * prompt. Optional: a checkpoint made at its step left the prompt where the live part it was
     * made for ends.
     */
    sent: z.object({ length: z.number().int().positive(), digest }).strict().optional(),
    /**
     * For a checkpoint prepared ahead as a catch-up (docs/design.md, "Preparing ahead"): the first
     * step after it is ready sends it, under the ceiling too.
     */
    catchUp: z.literal(true).optional(),
    /**
     * Prepared as the compaction of its step's whole conversation, one step ahead (docs/design.md,
     * "Preparing ahead"): every instance then knows that the next steps send it, and prepares no
     * other one of the whole conversation while it stands.
     */
    whole: z.literal(true).optional(),
    /**
     * When a step last wrote or used it (ms since the epoch): a full thread drops the least
     * recently used first, never an entry by its place (docs/stores.md, "Keys and records").
     */
    at: z.number().nonnegative().optional(),
  })
  .strict();

const countSchema = z
  .object({
    /** Messages of the caller's conversation in the prompt the provider counted. */
    length: z.number().int().positive(),
    digest,
    /** The checkpoint that prompt was sent with, or null. */
    checkpoint: digest.nullable(),
    /** Digest of the system messages and tool definitions it was sent with. */
    frame: digest,
    /** Characters of those: a count stays the baseline when only they changed, plus their growth (absent in older values). */
    frameChars: count.optional(),
    input: count,
    output: count,
    /**
     * When a step last wrote or used it (ms since the epoch): a full thread drops the least
     * recently used first, never an entry by its place (docs/stores.md, "Keys and records").
     */
    at: z.number().nonnegative().optional(),
  })
  .strict();

export type Count = z.infer<typeof countSchema>;

/**
 * Why a conversation is held (docs/design.md, "No progress"), and so what ends the hold besides the
 * conversation no longer being the one it names:
 * - `no-progress`: a compaction left the prompt at or above the ceiling; ends when the prompt has
 *   grown by a tenth of the ceiling. A hold stored without a cause is one of these.
 * - `nothing-older`: there was nothing before the live part to compact; ends as soon as a
 *   compaction could cover more than `end` messages (a new exchange, a new step).
 * - `failed`: a compaction failed, the `failures`-th in a row; ends when the prompt has grown by a
 *   tenth of the ceiling times 2^(failures - 1), and does not hold a step that no longer fits the
 *   window.
 */
export const HOLD_CAUSES = ['no-progress', 'nothing-older', 'failed'] as const;
export type HoldCause = (typeof HOLD_CAUSES)[number];

const hold = z
  .object({
    length: z.number().int().positive(),
    digest,
    checkpoint: digest.nullable(),
    /** The prompt's size when the hold was placed: growth is measured from it. */
    size: count,
    cause: z.enum(HOLD_CAUSES).optional(),
    /** `nothing-older`: the covered end a compaction could not pass. */
    end: count.optional(),
    /** `failed`: how many compactions of this conversation have failed in a row. */
    failures: z.number().int().positive().max(MAX_FAILURES).optional(),
    /**
     * When a step last wrote or used it (ms since the epoch): a full thread drops the least
     * recently used first, never an entry by its place (docs/stores.md, "Keys and records").
     */
    at: z.number().nonnegative().optional(),
  })
  .strict();

export type Hold = z.infer<typeof hold>;

export const leaseSchema = z
  .object({
    /** The prefix the checkpoint being written covers: its length and digest. */
    length: z.number().int().positive(),
    digest,
    /** The instance writing it (random, per instance). */
    owner: z.string().regex(/^[0-9a-f]{16}$/),
    /** Until when it holds, in ms since the epoch; 0 releases it. */
    until: z.number().nonnegative(),
  })
  .strict();

export type Lease = z.infer<typeof leaseSchema>;

/**
 * How fast a thread's conversation grows (docs/design.md, "The policy"), kept where every instance
 * reads it: when its last step went out, how long its conversation was and how large its prompt,
 * the growths of the recent steps and the times between them (newest first), the checkpoint the
 * last step went out with and when the conversation's checkpoint last changed.
 */
const paceRecord = z
  .object({
    at: z.number().nonnegative(),
    length: z.number().int().positive(),
    size: count,
    /** Whether that size rested on a provider's count (a growth is measured only between sizes of the same kind). */
    counted: z.boolean().optional(),
    growths: z.array(z.number().finite()).max(16),
    intervals: z.array(z.number().nonnegative()).max(16),
    checkpoint: digest.optional(),
    shrunkAt: z.number().nonnegative().optional(),
  })
  .strict();

export type PaceRecord = z.infer<typeof paceRecord>;

/**
 * What the summaries of a thread took to write (ms, newest first), the share of its input the
 * latest read from the prompt cache, and the tokens of the latest compaction's requests (what a
 * compaction of this conversation costs, docs/design.md, "Compaction timed by what it costs").
 */
const summaryTimes = z
  .object({
    ms: z.array(z.number().nonnegative()).max(16),
    cached: z.number().min(0).max(1).optional(),
    tokens: z.object({ input: count, cached: count, output: count }).strict().optional(),
  })
  .strict();

export type SummaryTimes = z.infer<typeof summaryTimes>;

export const threadSchema = z
  .object({
    v: z.literal(FORMAT_VERSION),
    checkpoints: z.array(checkpointRef).max(THREAD_LIMIT),
    counts: z.array(countSchema).max(THREAD_LIMIT),
    /** Conversations held from compacting on their own (docs/design.md, "No progress": no progress, nothing older, a failure), newest first. */
    holds: z.array(hold).max(THREAD_LIMIT),
    /**
     * Checkpoints prepared ahead in the background (docs/design.md, "Preparing ahead"), newest
     * first. They are kept apart from `checkpoints` because a step finds its checkpoint in
     * `checkpoints` by content alone: a prepared one listed there would be sent by the very next
     * step, under the ceiling, dropping verbatim words the window still has room for and breaking
     * the provider's cache early. Only a step at the ceiling reads this list; the one that sends a
     * prepared checkpoint first adds it to `checkpoints` (it is promoted), and from then on it is
     * found like any other. An entry left here after that, or covering no more than the
     * conversation's checkpoint, is inert. Optional: threads written before it existed read as
     * having none.
     */
    prepared: z.array(checkpointRef).max(THREAD_LIMIT).optional(),
    /**
     * Compactions under way on some instance (docs/stores.md, the lease): the prefix each covers,
     * the instance writing it and until when (ms since the epoch) another instance that needs the
     * same checkpoint waits for it rather than writing its own. A lease ends when its checkpoint is
     * listed, when it is released, or at `until`. Optional: absent when there is none.
     */
    leases: z.array(leaseSchema).max(LEASE_LIMIT).optional(),
    /** The conversation's pace (docs/design.md, "The policy"). Optional: threads written before it existed have none. */
    pace: paceRecord.optional(),
    /** Its summaries' measured times (docs/design.md, "The policy"). Optional, likewise. */
    summaries: summaryTimes.optional(),
  })
  .strict();

export type Thread = z.infer<typeof threadSchema>;

export function emptyThread(): Thread {
  return { v: FORMAT_VERSION, checkpoints: [], counts: [], holds: [] };
}

/** One provider count of a prompt, against the measure of its text (its fixed file figures taken off the count). */
const sizingSample = z
  .object({
    /** When it was counted (ms since the epoch): the most recent samples stay. */
    at: z.number().nonnegative(),
    /** The prompt's text: characters, or the tokenizer's tokens. */
    measured: z.number().positive().finite(),
    /** The provider's count of that text. */
    counted: z.number().int().positive(),
  })
  .strict();

export type SizingSample = z.infer<typeof sizingSample>;

/** What a model's counts in one scope taught: the samples of its characters a token, and of the `estimate` option's factor. */
export const sizingSchema = z
  .object({
    v: z.literal(FORMAT_VERSION),
    /** `provider:modelId`. */
    model: z.string().min(1),
    /** The scope (tenant) whose prompts taught it: one tenant's prompts never move another's estimate. */
    scope: z.string(),
    chars: z.array(sizingSample).max(64),
    tokenizer: z.array(sizingSample).max(64),
  })
  .strict();

export type ModelSizing = z.infer<typeof sizingSchema>;

export const sizingKey = (digestHex: string) => `sizing:${digestHex}`;

/** What names a model's sizing in one scope: its store key is the SHA-256 of this, and `state()` keys it by this. */
export const sizingName = (model: string, scope: string) => JSON.stringify([model, scope]);

export const checkpointKey = (digestHex: string) => `cp:${digestHex}`;
export const threadKey = (digestHex: string) => `thread:${digestHex}`;
/** The lease on writing the checkpoint of `digestHex`, taken with the store's `setIfAbsent` (docs/stores.md, the lease). */
export const leaseKey = (digestHex: string) => `lease:${digestHex}`;

/** `raw` read as JSON of `schema`'s shape, or `undefined` when it is not JSON or not of that shape. */
export function parseJson<T>(raw: string, schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } }): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
