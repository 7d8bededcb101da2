import { clearToolOutputs } from './checkpoint/clear';
import { afterCheckpoint } from './checkpoint/live';
import { checkpointMessage } from './checkpoint/message';
import { boundaryEnd, nativeBoundary } from './native/items';
import { splitPrompt } from './prompt/conversation';
import { canonical } from './prompt/canonical';
import { PrefixDigests, sha256Hex } from './prompt/hash';
import type { CallOptions, Message, SystemMessage } from './prompt/types';
import { estimateMessages, estimatePrompt } from './sizing/estimate';
import type { Keeper } from './store/keeper';
import { type CountRecord, type StoredCheckpoint, type Thread, mergeThreads, readableBy } from './store/records';
import type { CompactionRecord } from './types';

/** One step as the middleware sees it: the caller's conversation, its checkpoint, what goes out, its size. */
export interface StepView {
  params: CallOptions;
  system: SystemMessage[];
  /** The caller's conversation (never changed). */
  conversation: Message[];
  digests: PrefixDigests | undefined;
  /** Digest of the conversation's prefix through its first reply (see `anchorLength`): where its records are indexed. */
  threadDigest: string | undefined;
  thread: Thread | undefined;
  /** The last message of the conversation holding a provider's compaction item, or -1. */
  boundary: number;
  /** Where the conversation after that item (and the tool results of its message) begins; 0 without one. */
  boundaryEnd: number;
  checkpoint: StoredCheckpoint | undefined;
  /** The messages that stand in for everything before `from`: a checkpoint, a provider item. */
  standIn: Message[];
  /** What goes out after the system messages. */
  sent: Message[];
  /** The prompt's size: the provider's count it rests on, and what is estimated on top. */
  size: { counted: number; estimated: number };
  /** False while a provider item's size is unknown, until the provider has counted a prompt holding it. */
  sizeKnown: boolean;
  /** The compaction this step made, reported in its result's `providerMetadata.compaction`. */
  compaction?: CompactionRecord;
}

export function totalSize(view: StepView): number {
  return view.size.counted + view.size.estimated;
}

export function outgoingPrompt(view: StepView): Message[] {
  return view.system.length === 0 ? view.sent : [...view.system, ...view.sent];
}

/**
 * Where the conversation not yet covered by a checkpoint or a provider item begins. Messages whose
 * tool outputs a clearing replaced (SPEC 13) still go out, so they are not covered: a summary
 * covers them.
 */
export function coveredUpTo(view: Pick<StepView, 'checkpoint' | 'boundaryEnd'>): number {
  if (view.checkpoint === undefined) return view.boundaryEnd;
  return view.checkpoint.clear === undefined ? view.checkpoint.length : view.checkpoint.clear.from;
}

/** The stand-in messages for a checkpoint (or a provider item in the conversation), and what goes out. */
export function arrange(
  conversation: Message[],
  checkpoint: StoredCheckpoint | undefined,
  boundary: number,
): { standIn: Message[]; sent: Message[] } {
  // A clearing goes out as the checkpoint it was made on, over the messages with their old tool outputs cleared.
  if (checkpoint?.clear !== undefined) {
    const { clear, ...base } = checkpoint;
    const cleared = clearToolOutputs(conversation, clear.from, checkpoint.length).messages;
    return arrange(cleared, clear.base ? { ...base, length: clear.from } : undefined, boundary);
  }
  const leadEnd = boundaryEnd(conversation, boundary);
  const lead = boundary >= 0 ? conversation.slice(boundary, leadEnd) : [];
  let standIn: Message[];
  if (checkpoint === undefined) standIn = lead;
  else if (checkpoint.native !== undefined) {
    standIn = [
      { role: 'assistant', content: [checkpoint.native.part as Message['content'][number] & object] } as Message,
      ...checkpoint.native.keep.map((index) => conversation[index]!),
    ];
  } else standIn = [...lead, checkpointMessage(checkpoint.summary, checkpoint.record, checkpoint.identifiers)];
  const from = checkpoint === undefined ? leadEnd : checkpoint.length;
  return { standIn, sent: from === 0 ? conversation : [...standIn, ...afterCheckpoint(conversation, from, checkpoint?.step)] };
}

/** Finds the step's checkpoint and the provider count its prompt extends, and measures it. */
export async function resolveView(keeper: Keeper, params: CallOptions, scope: string, modelKey: string): Promise<StepView> {
  const { system, conversation } = splitPrompt(params.prompt);
  const boundary = nativeBoundary(conversation);
  const base = {
    params, system, conversation, boundary, boundaryEnd: boundaryEnd(conversation, boundary),
    digests: undefined, threadDigest: undefined, thread: undefined, checkpoint: undefined,
  };
  if (conversation.length === 0) {
    return { ...base, standIn: [], sent: conversation, size: { counted: 0, estimated: estimatePrompt(params.prompt, params.tools) }, sizeKnown: true };
  }
  const digests = new PrefixDigests(scope, conversation);
  const anchor = anchorLength(conversation);
  const threadDigest = await digests.of(anchor ?? 1);
  let thread = await keeper.thread(threadDigest);
  // Until this conversation has stored anything of its own, what its steps before the first reply
  // stored (counts, a checkpoint, a hold) is under the first message: read there too, and carry
  // its checkpoint and holds over to its own index.
  const early = anchor !== undefined && thread.checkpoints.length + thread.counts.length + thread.holds.length === 0;
  if (early) thread = mergeThreads(thread, await keeper.thread(await digests.of(1)));
  const checkpoint = await findCheckpoint(keeper, thread, digests, base.boundaryEnd, modelKey);
  if (early) {
    const holds: Thread['holds'] = [];
    for (const hold of thread.holds) {
      if (hold.length <= conversation.length && (await digests.of(hold.length)) === hold.digest) holds.push(hold);
    }
    if (checkpoint !== undefined || holds.length > 0) {
      await keeper.adopt(threadDigest, { checkpoints: checkpoint === undefined ? [] : [{ length: checkpoint.length, digest: checkpoint.digest }], holds });
    }
  }
  const view: StepView = {
    ...base, digests, threadDigest, thread, checkpoint,
    ...arrange(conversation, checkpoint, boundary),
    size: { counted: 0, estimated: 0 },
    sizeKnown: true,
  };
  const count = await findCount(view, thread, digests);
  view.size = measure(view, count);
  view.sizeKnown = count !== undefined || (boundary < 0 && checkpoint?.native === undefined);
  return view;
}

/**
 * How many messages of a conversation its records are indexed under: through the first assistant
 * message after a user message (its first reply). Conversations that open with the same words (a
 * suggested prompt, an agent's fixed task) part there, so each keeps its own index. The steps
 * before that reply index their records under the first message.
 */
export function anchorLength(conversation: readonly Message[]): number | undefined {
  const user = conversation.findIndex((message) => message.role === 'user');
  if (user < 0) return undefined;
  const reply = conversation.findIndex((message, index) => index > user && message.role === 'assistant');
  return reply < 0 ? undefined : reply + 1;
}

async function findCheckpoint(
  keeper: Keeper,
  thread: Thread,
  digests: PrefixDigests,
  floor: number,
  modelKey: string,
): Promise<StoredCheckpoint | undefined> {
  const candidates = thread.checkpoints
    .filter((ref) => ref.length <= digests.length && ref.length >= Math.max(1, floor))
    .sort((a, b) => b.length - a.length);
  for (const ref of candidates) {
    if ((await digests.of(ref.length)) !== ref.digest) continue;
    const checkpoint = await keeper.checkpoint(ref.digest, ref.length);
    if (checkpoint !== undefined && readableBy(checkpoint, modelKey)) return checkpoint;
  }
  return undefined;
}

/**
 * The provider's count for the last step whose prompt this one extends (input + output tokens),
 * plus an estimate of every message after that reply; without such a count, an estimate of the
 * whole prompt.
 */
function measure(view: StepView, count: CountRecord | undefined): StepView['size'] {
  if (count === undefined) {
    return { counted: 0, estimated: estimatePrompt([...view.system, ...view.sent], view.params.tools) };
  }
  const { conversation } = view;
  if (count.length === conversation.length) return { counted: count.input, estimated: 0 };
  const afterReply = conversation[count.length]!.role === 'assistant' ? count.length + 1 : count.length;
  return { counted: count.input + count.output, estimated: estimateMessages(conversation, afterReply) };
}

async function findCount(view: StepView, thread: Thread, digests: PrefixDigests): Promise<CountRecord | undefined> {
  const checkpoint = view.checkpoint?.digest ?? null;
  const floor = coveredUpTo(view);
  const candidates = thread.counts
    .filter((count) => count.checkpoint === checkpoint && count.length <= digests.length && count.length >= floor)
    .sort((a, b) => b.length - a.length);
  if (candidates.length === 0) return undefined;
  const frame = await frameDigest(view);
  for (const count of candidates) {
    if (count.frame === frame && (await digests.of(count.length)) === count.digest) return count;
  }
  return undefined;
}

const frames = new WeakMap<CallOptions, Promise<string>>();

/**
 * Digest of what a prompt holds besides the conversation (system messages, tool definitions): a
 * provider count stands for the whole prompt, so it is used only where these are the same.
 */
export function frameDigest(view: Pick<StepView, 'params' | 'system'>): Promise<string> {
  let digest = frames.get(view.params);
  if (digest === undefined) {
    digest = sha256Hex(new TextEncoder().encode(canonical([view.system, view.params.tools ?? null])));
    frames.set(view.params, digest);
  }
  return digest;
}

/** Counts of this conversation's shorter prompts: superseded once a longer one is counted. */
export async function supersededCounts(view: StepView): Promise<Set<string>> {
  const superseded = new Set<string>();
  const { thread, digests } = view;
  if (thread === undefined || digests === undefined) return superseded;
  for (const count of thread.counts) {
    if (count.length < digests.length && (await digests.of(count.length)) === count.digest) superseded.add(count.digest);
  }
  return superseded;
}

/** The view of a step sent with `checkpoint` in place of what it covers, measured by estimate. */
export function withCheckpoint(view: StepView, checkpoint: StoredCheckpoint): StepView {
  const arranged = arrange(view.conversation, checkpoint, view.boundary);
  const estimated = estimatePrompt([...view.system, ...arranged.sent], view.params.tools);
  return { ...view, checkpoint, ...arranged, size: { counted: 0, estimated }, sizeKnown: checkpoint.native === undefined };
}
