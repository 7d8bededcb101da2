import { checkpointMetadata, metadataOf, withCompactionMetadata } from '../metadata';
import { randomHex } from '../prompt/hash';
import { COMPACTION_CALL_ID_PREFIX, COMPACTION_TOOL_NAME } from '../prompt/own-parts';
import type { GenerateResult, Part, StreamPart } from '../prompt/types';
import type { StoredCheckpoint } from '../store/format';
import type { CompactionMetadata } from '../types';
import type { StepView } from '../view';

/** The `compaction` part a step shows: its call id, and the compaction it stands for. */
export interface ShownCompaction {
  toolCallId: string;
  compaction: CompactionMetadata;
}

/**
 * The part a step shows (docs/design.md, "Compaction in the stream"): the compaction it made, or
 * else the checkpoint it sends when the caller's messages hold no part of it (a regenerated reply,
 * a conversation reloaded elsewhere, another instance), so a page shows what the model reads. None
 * with `streamPart: false`. The call id is the checkpoint's, so a part sent back is recognised.
 */
export function shownBy(step: StepView | undefined, streamPart: boolean): ShownCompaction | undefined {
  const checkpoint = step?.checkpoint;
  if (step === undefined || !streamPart || (checkpoint === undefined && step.compaction === undefined)) return undefined;
  const toolCallId = checkpoint === undefined ? randomId() : partId(checkpoint);
  if (step.compaction !== undefined) return { toolCallId, compaction: metadataOf(step.compaction) };
  return step.heldParts?.has(toolCallId) === true ? undefined : { toolCallId, compaction: checkpointMetadata(checkpoint!) };
}

/**
 * A compaction as the AI SDK's agent harnesses show one: a provider-executed, dynamic tool call
 * named `compaction`, input `{}`, and its result `{ trigger, reason, rule, summary, tokensBefore,
 * tokensAfter }` (`trigger` and `reason` the same value), and `expectedSaving` where the policy expected one. `generateText` keeps them in its content
 * and steps, `streamText` in its full stream, and `useChat` as a `dynamic-tool` part. The call's
 * `providerMetadata.compaction` holds the rest of the compaction (what it covered, its cost) and
 * not the summary, which the result carries once; `compactionOf(part)` reads both.
 */
export function compactionParts({ toolCallId, compaction }: ShownCompaction): [Part, Part] {
  const { summary, ...rest } = compaction;
  const { reason, rule, tokensBefore, tokensAfter, expectedSaving } = compaction;
  return [
    { type: 'tool-call', toolCallId, toolName: COMPACTION_TOOL_NAME, input: '{}', providerExecuted: true, dynamic: true, providerMetadata: { compaction: rest } },
    { type: 'tool-result', toolCallId, toolName: COMPACTION_TOOL_NAME, result: { trigger: reason, reason, rule, summary, tokensBefore, tokensAfter, ...(expectedSaving === undefined ? {} : { expectedSaving }) }, dynamic: true },
  ];
}

/** A step's result with the compaction it made in `providerMetadata.compaction`, and the part it shows first in its content. */
export function withCompaction(result: GenerateResult, step: StepView, shown: ShownCompaction | undefined): GenerateResult {
  const reported = withCompactionMetadata(result, step.compaction);
  return shown === undefined ? reported : { ...reported, content: [...compactionParts(shown), ...reported.content] };
}

/**
 * What to send for each part of a stream, in turn: the part itself, and once the compaction's two
 * parts, right after `stream-start` (before the first part of a stream that sends none). Nothing is
 * held back.
 */
export function streamPartsInserter(shown: ShownCompaction | undefined): (part: StreamPart) => StreamPart[] {
  let pending = shown === undefined ? undefined : compactionParts(shown);
  return (part) => {
    if (pending === undefined) return [part];
    const parts = pending;
    pending = undefined;
    return part.type === 'stream-start' ? [part, ...parts] : [...parts, part];
  };
}

/**
 * The call id of a checkpoint's part: the same on every instance, another for each checkpoint (its
 * prefix's digest and when it was made). Worked out at once: a step's result is never held for it.
 */
function partId(checkpoint: StoredCheckpoint): string {
  const made = (Math.floor(checkpoint.createdAt) % 0x1000000).toString(16).padStart(6, '0');
  return `${COMPACTION_CALL_ID_PREFIX}${checkpoint.digest.slice(0, 10)}${made}`;
}

function randomId(): string {
  return `${COMPACTION_CALL_ID_PREFIX}${randomHex(8)}`;
}
