import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { z } from 'zod';
import { describe } from './options';
import { canonical } from './prompt/canonical';
import { FORMAT_VERSION, type SizingRecord, type StoredCheckpoint, type Thread, checkpointSchema, sizingSchema, threadSchema } from './store/records';

/** The JSON value `state()` returns and `compaction({ state })` continues from. */
export interface CompactionState {
  format: 'ai-compaction/state';
  version: number;
  threads: Record<string, unknown>;
  checkpoints: Record<string, unknown>;
  /** Per model (`provider:modelId`), the recent counts its characters a token are learned from; absent when none. */
  sizing?: Record<string, unknown>;
  /** SHA-256 of the canonical form of the rest: a state changed by hand is refused. */
  checksum: string;
}

const digestKey = z.string().regex(/^[0-9a-f]{64}$/);

const stateSchema = z
  .object({
    format: z.literal('ai-compaction/state'),
    version: z.number(),
    threads: z.record(digestKey, threadSchema),
    checkpoints: z.record(digestKey, checkpointSchema),
    sizing: z.record(z.string().min(1), sizingSchema).optional(),
    checksum: digestKey,
  })
  .strict();

export interface ParsedState {
  threads: Record<string, Thread>;
  checkpoints: Record<string, StoredCheckpoint>;
  sizing?: Record<string, SizingRecord>;
}

function checksumOf(body: Omit<CompactionState, 'checksum'>): string {
  return bytesToHex(sha256(utf8ToBytes(canonical(body))));
}

export function buildState(
  threads: Map<string, Thread>,
  checkpoints: Map<string, StoredCheckpoint>,
  sizing: Record<string, SizingRecord> = {},
): CompactionState {
  const body = {
    format: 'ai-compaction/state' as const,
    version: FORMAT_VERSION,
    threads: Object.fromEntries(threads),
    checkpoints: Object.fromEntries(checkpoints),
    ...(Object.keys(sizing).length === 0 ? {} : { sizing }),
  };
  return structuredClone({ ...body, checksum: checksumOf(body) });
}

/**
 * Validates a state from `state()`. A malformed state, one of another version, or one changed
 * after it was made is refused with a `TypeError` saying why; nothing of it is applied.
 */
export function parseState(value: unknown): ParsedState {
  const fail = (why: string): never => {
    throw new TypeError(`ai-compaction: option state is refused: ${why}`);
  };
  if (typeof value !== 'object' || value === null) fail(`expected the object state() returns, got ${value === null ? 'null' : typeof value}`);
  const { format, version } = value as { format?: unknown; version?: unknown };
  if (format !== 'ai-compaction/state') fail('it is not a state of ai-compaction (format)');
  if (version !== FORMAT_VERSION) fail(`it is of version ${describe(version)}, this version reads ${FORMAT_VERSION}`);
  const parsed = stateSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    fail(`${issue.path.join('.') || 'state'}: ${issue.message}`);
  }
  const state = parsed.data!;
  const { checksum, ...body } = state;
  if (checksumOf(body) !== checksum) fail('its checksum does not match its content (it was changed after state() made it)');
  for (const [digest, checkpoint] of Object.entries(state.checkpoints)) {
    if (checkpoint.digest !== digest) fail(`checkpoints.${digest} holds the checkpoint of another conversation`);
  }
  for (const [digest, thread] of Object.entries(state.threads)) {
    for (const ref of thread.checkpoints) {
      const checkpoint = state.checkpoints[ref.digest];
      if (checkpoint !== undefined && checkpoint.length !== ref.length) {
        fail(`threads.${digest} lists checkpoint ${ref.digest} as covering ${ref.length} messages, but it covers ${checkpoint.length}`);
      }
    }
  }
  for (const [model, record] of Object.entries(state.sizing ?? {})) {
    if (record.model !== model) fail(`sizing.${model} holds what was learned of another model (${record.model})`);
  }
  return { threads: state.threads, checkpoints: state.checkpoints, ...(state.sizing === undefined ? {} : { sizing: state.sizing }) };
}
