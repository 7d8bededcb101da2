import { checkpointMessage } from './checkpoint/message';
import { splitPrompt } from './prompt/conversation';
import { PrefixDigests } from './prompt/hash';
import type { CallOptions, ContentMessage, Message, SystemMessage } from './prompt/types';
import { estimateMessages, estimatePrompt } from './sizing/estimate';
import type { Keeper } from './store/keeper';
import type { CountRecord, StoredCheckpoint, Thread } from './store/records';

/** One step as the middleware sees it: the caller's conversation, its checkpoint, what goes out, its size. */
export interface StepView {
  params: CallOptions;
  scope: string;
  system: SystemMessage[];
  /** The caller's conversation (never changed). */
  conversation: Message[];
  digests: PrefixDigests | undefined;
  /** Digest of the first message: the thread this conversation's records live in. */
  threadDigest: string | undefined;
  thread: Thread | undefined;
  checkpoint: StoredCheckpoint | undefined;
  /** The checkpoint message that stands in for what the checkpoint covers. */
  checkpointMessage: ContentMessage | undefined;
  /** What goes out after the system messages. */
  sent: Message[];
  /** The prompt's size: the provider's count it rests on, and what is estimated on top. */
  size: { counted: number; estimated: number };
}

export function totalSize(view: StepView): number {
  return view.size.counted + view.size.estimated;
}

export function outgoingPrompt(view: StepView): Message[] {
  return view.system.length === 0 ? view.sent : [...view.system, ...view.sent];
}

/** Finds the step's checkpoint and the provider count its prompt extends, and measures it. */
export async function resolveView(keeper: Keeper, params: CallOptions, scope: string): Promise<StepView> {
  const { system, conversation } = splitPrompt(params.prompt);
  if (conversation.length === 0) {
    return {
      params, scope, system, conversation, digests: undefined, threadDigest: undefined, thread: undefined,
      checkpoint: undefined, checkpointMessage: undefined, sent: conversation,
      size: { counted: 0, estimated: estimatePrompt(params.prompt, params.tools) },
    };
  }
  const digests = new PrefixDigests(scope, conversation);
  const threadDigest = await digests.of(1);
  const thread = await keeper.thread(threadDigest);
  const checkpoint = await findCheckpoint(keeper, thread, digests);
  const view: StepView = {
    params, scope, system, conversation, digests, threadDigest, thread, checkpoint,
    checkpointMessage: checkpoint && checkpointMessage(checkpoint.summary, checkpoint.record),
    sent: conversation,
    size: { counted: 0, estimated: 0 },
  };
  if (view.checkpointMessage !== undefined) view.sent = [view.checkpointMessage, ...conversation.slice(checkpoint!.length)];
  view.size = await measure(view, thread, digests);
  return view;
}

async function findCheckpoint(keeper: Keeper, thread: Thread, digests: PrefixDigests): Promise<StoredCheckpoint | undefined> {
  const candidates = thread.checkpoints.filter((ref) => ref.length <= digests.length).sort((a, b) => b.length - a.length);
  for (const ref of candidates) {
    if ((await digests.of(ref.length)) !== ref.digest) continue;
    const checkpoint = await keeper.checkpoint(ref.digest, ref.length);
    if (checkpoint !== undefined) return checkpoint;
  }
  return undefined;
}

/**
 * The provider's count for the last step whose prompt this one extends (input + output tokens),
 * plus an estimate of every message after that reply; without such a count, an estimate of the
 * whole prompt.
 */
async function measure(view: StepView, thread: Thread, digests: PrefixDigests): Promise<StepView['size']> {
  const count = await findCount(view, thread, digests);
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
  const floor = view.checkpoint?.length ?? 0;
  const candidates = thread.counts
    .filter((count) => count.checkpoint === checkpoint && count.length <= digests.length && count.length >= floor)
    .sort((a, b) => b.length - a.length);
  for (const count of candidates) {
    if ((await digests.of(count.length)) === count.digest) return count;
  }
  return undefined;
}
