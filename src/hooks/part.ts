import { metadataOf, withCompactionMetadata } from '../metadata';
import { COMPACTION_CALL_ID_PREFIX, COMPACTION_TOOL_NAME } from '../prompt/own-parts';
import type { GenerateResult, Part, StreamPart } from '../prompt/types';
import type { CompactionRecord } from '../types';

/**
 * A compaction as the AI SDK's agent harnesses show one (docs/design.md, "Compaction in the
 * stream"): a provider-executed, dynamic tool call named `compaction`, input `{}`, and its result,
 * `{ trigger, summary, tokensBefore, tokensAfter }`, and `expectedSaving` where the policy expected one. `generateText` keeps them in its content and
 * steps, `streamText` in its full stream, and `useChat` as a `dynamic-tool` part. The call's
 * `providerMetadata.compaction` is the step's (`useChat`: the part's `callProviderMetadata`), so
 * `compactionOf` reads the whole of it from the part.
 */
export function compactionParts(record: CompactionRecord): [Part, Part] {
  const toolCallId = `${COMPACTION_CALL_ID_PREFIX}${Array.from(crypto.getRandomValues(new Uint8Array(8)), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
  const { reason: trigger, summary, tokensBefore, tokensAfter, expectedSaving } = record;
  return [
    { type: 'tool-call', toolCallId, toolName: COMPACTION_TOOL_NAME, input: '{}', providerExecuted: true, dynamic: true, providerMetadata: { compaction: metadataOf(record) } },
    { type: 'tool-result', toolCallId, toolName: COMPACTION_TOOL_NAME, result: { trigger, summary, tokensBefore, tokensAfter, ...(expectedSaving === undefined ? {} : { expectedSaving }) }, dynamic: true },
  ];
}

/** A step's result with the compaction it made, if any: in `providerMetadata.compaction`, and (with `streamPart`) first in its content. */
export function withCompaction(result: GenerateResult, record: CompactionRecord | undefined, streamPart: boolean): GenerateResult {
  const reported = withCompactionMetadata(result, record);
  return record === undefined || !streamPart ? reported : { ...reported, content: [...compactionParts(record), ...reported.content] };
}

/**
 * What to send for each part of a stream, in turn: the part itself, and once the compaction's two
 * parts, right after `stream-start` (before the first part of a stream that sends none). Nothing is
 * held back.
 */
export function streamPartsInserter(record: CompactionRecord | undefined, streamPart: boolean): (part: StreamPart) => StreamPart[] {
  let pending = record === undefined || !streamPart ? undefined : compactionParts(record);
  return (part) => {
    if (pending === undefined) return [part];
    const parts = pending;
    pending = undefined;
    return part.type === 'stream-start' ? [part, ...parts] : [...parts, part];
  };
}
