import { clearToolOutputs } from './checkpoint/clear';
import { afterCheckpoint } from './checkpoint/live';
import { checkpointMessage } from './checkpoint/message';
import { canonical } from './prompt/canonical';
import { splitPrompt } from './prompt/conversation';
import { boundaryEnd, nativeBoundary } from './prompt/native-items';
import { type DigestKey, PrefixDigests, sha256Hex } from './prompt/hash';
import type { CallOptions, Message, SystemMessage } from './prompt/types';
import { type Estimator, type Measure, estimateMessages, estimatePrompt, measurePrompt, toTokens, windowEstimator } from './sizing/estimate';
import type { Keeper, StoreBudget } from './store/keeper';
import { type Count, type PaceRecord, type StoredCheckpoint, type Thread, readableBy } from './store/format';
import { mergeThreads } from './store/merge';
import type { CompactionRecord } from './types';
import { recallToolName } from './recall/marker';

/** One step as the middleware sees it: the caller's conversation, its checkpoint, what goes out, its size. */
export interface StepView {
  params: CallOptions;
  system: SystemMessage[];
  /** The caller's conversation (never changed). */
  conversation: Message[];
  digests: PrefixDigests | undefined;
  /** Digest of the conversation's prefix through its first reply (see `anchorLength`): where what it stores is indexed. */
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
  /** `provider:modelId` of the step's model. */
  modelKey: string;
  /** The step's scope (tenant): its model's characters a token are learned per scope. */
  scope: string;
  /** How this step's model turns text into tokens: the learned characters a token, or the `estimate` option (docs/design.md, "The size of a prompt"). */
  estimator: Estimator;
  /** The prompt's size: the provider's count it rests on, and what is estimated on top. */
  size: { counted: number; estimated: number };
  /** The measure of the whole prompt that goes out, when its size is that estimate (no count to rest on). */
  measured?: Measure;
  /** False while a provider item's size is unknown, until the provider has counted a prompt holding it. */
  sizeKnown: boolean;
  /** The step's pace as it went out (docs/design.md, "The policy"), kept with its count for the next step. */
  pace?: PaceRecord;
  /** The call ids of the `compaction` parts the caller's messages hold (hooks/part.ts). */
  heldParts?: ReadonlySet<string>;
  /** The compaction this step made, reported in its result's `providerMetadata.compaction`. */
  compaction?: CompactionRecord;
  /** What this step may still wait for the store, over all its calls (docs/stores.md). */
  budget: StoreBudget;
}

export function totalSize(view: StepView): number {
  return view.size.counted + view.size.estimated;
}

/**
 * The size a step is held against the window with (docs/design.md, "The size of a prompt"): its
 * size, or, while its model has no count and nothing of it was counted, its estimate with text as
 * dense as code, so that no prompt of code goes out on its own past the window.
 */
export function windowSize(view: StepView): number {
  const guard = windowEstimator(view.estimator);
  if (guard === view.estimator || view.size.counted > 0) return totalSize(view);
  return Math.max(totalSize(view), estimatePrompt(outgoingPrompt(view), view.params.tools, guard));
}

export function outgoingPrompt(view: StepView): Message[] {
  return view.system.length === 0 ? view.sent : [...view.system, ...view.sent];
}

/** The call a step's view sends: its params with the prompt that goes out. */
export function paramsFor(view: StepView): CallOptions {
  return { ...view.params, prompt: outgoingPrompt(view) };
}

/**
 * Where the conversation not yet covered by a checkpoint or a provider item begins. Messages whose
 * tool outputs a clearing replaced (docs/design.md, "Clearing old tool results") still go out, so
 * they are not covered: a summary covers them.
 */
export function coveredUpTo(view: Pick<StepView, 'checkpoint' | 'boundaryEnd'>): number {
  if (view.checkpoint === undefined) return view.boundaryEnd;
  return view.checkpoint.clear === undefined ? view.checkpoint.length : view.checkpoint.clear.from;
}

/**
 * The stand-in messages for a checkpoint (or a provider item in the conversation), and what goes
 * out. `recall`: the name of the recall tool among the step's tools, which the checkpoint then
 * names (docs/design.md, "Recall").
 */
export function arrange(
  conversation: Message[],
  checkpoint: StoredCheckpoint | undefined,
  boundary: number,
  recall?: string,
): { standIn: Message[]; sent: Message[] } {
  // A clearing goes out as the checkpoint it was made on, over the messages with their old tool outputs cleared.
  if (checkpoint?.clear !== undefined) {
    const { clear, ...base } = checkpoint;
    const cleared = clearToolOutputs(conversation, clear.from, checkpoint.length).messages;
    return arrange(cleared, clear.base ? { ...base, length: clear.from } : undefined, boundary, recall);
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
  } else {
    const mention = recall === undefined ? undefined : { name: recall, conversation, covered: checkpoint.length };
    standIn = [...lead, checkpointMessage(checkpoint.summary, checkpoint.record, checkpoint.identifiers, mention)];
  }
  const from = checkpoint === undefined ? leadEnd : checkpoint.length;
  return { standIn, sent: from === 0 ? conversation : [...standIn, ...afterCheckpoint(conversation, from, checkpoint?.step)] };
}

/**
 * Finds the step's checkpoint and the provider count its prompt extends, and measures it with the
 * model's estimator (read beside the thread: `estimator` is the pending read). What the step stores
 * and finds is keyed by `key`: its scope, and its conversation's name or else its system messages.
 */
export async function resolveView(
  keeper: Keeper,
  params: CallOptions,
  key: Omit<DigestKey, 'system'>,
  modelKey: string,
  estimator: Estimator | Promise<Estimator>,
  budget: StoreBudget,
): Promise<StepView> {
  const { system, conversation } = splitPrompt(params.prompt);
  const boundary = nativeBoundary(conversation);
  const base = {
    params, system, conversation, boundary, boundaryEnd: boundaryEnd(conversation, boundary),
    digests: undefined, threadDigest: undefined, thread: undefined, checkpoint: undefined, modelKey, scope: key.scope, budget,
  };
  if (conversation.length === 0) {
    const empty: StepView = { ...base, estimator: await estimator, standIn: [], sent: conversation, size: { counted: 0, estimated: 0 }, sizeKnown: true };
    empty.size = measure(empty, undefined);
    return empty;
  }
  // Keyed by the scope and the conversation's name, or without a name by its system messages (docs/stores.md, "Keys and records").
  const digests = new PrefixDigests(key.conversation === undefined ? { scope: key.scope, system } : key, conversation);
  const anchor = anchorLength(conversation);
  const threadDigest = await digests.of(anchor ?? 1);
  let thread = await keeper.thread(threadDigest, budget);
  // Until this conversation has stored anything of its own, what its steps before the first reply
  // stored (counts, a checkpoint, a hold) is under the first message: read there too, and carry
  // its checkpoint and holds over to its own index.
  const early = anchor !== undefined && thread.checkpoints.length + thread.counts.length + thread.holds.length === 0;
  if (early) thread = mergeThreads(thread, await keeper.thread(await digests.of(1), budget), keeper.clock.now());
  const checkpoint = await findCheckpoint(keeper, thread, digests, base.boundaryEnd, modelKey, budget);
  if (early) {
    const holds: Thread['holds'] = [];
    for (const hold of thread.holds) {
      if (await digests.hasPrefix(hold)) holds.push(hold);
    }
    if (checkpoint !== undefined || holds.length > 0) {
      await keeper.adopt(threadDigest, { checkpoints: checkpoint === undefined ? [] : [{ length: checkpoint.length, digest: checkpoint.digest }], holds }, budget);
    }
  }
  const view: StepView = {
    ...base, digests, threadDigest, thread, checkpoint, estimator: await estimator,
    ...arrange(conversation, checkpoint, boundary, recallToolName(params.tools)),
    size: { counted: 0, estimated: 0 },
    sizeKnown: true,
  };
  const baseline = await findCount(view, thread, digests);
  view.size = measure(view, baseline);
  view.sizeKnown = baseline !== undefined || (boundary < 0 && checkpoint?.native === undefined);
  return view;
}

/**
 * How many messages of a conversation what it stores is indexed under: through the first assistant
 * message after a user message (its first reply). Conversations that open with the same words (a
 * suggested prompt, an agent's fixed task) part there, so each keeps its own index. The steps
 * before that reply index theirs under the first message.
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
  budget: StoreBudget,
): Promise<StoredCheckpoint | undefined> {
  const candidates = thread.checkpoints
    .filter((ref) => ref.length >= Math.max(1, floor))
    .sort((a, b) => b.length - a.length);
  for (const ref of candidates) {
    if (!(await digests.hasPrefix(ref))) continue;
    const checkpoint = await keeper.checkpoint(ref.digest, ref.length, budget);
    if (checkpoint !== undefined && readableBy(checkpoint, modelKey)) return checkpoint;
  }
  return undefined;
}

/**
 * The provider's count for the last step whose prompt this one extends (input + output tokens),
 * plus an estimate of every message after that reply, and of the growth of the system messages and
 * tool definitions when only those changed since (never less than the count); without such a
 * count, an estimate of the whole prompt (kept in `measured`, to learn from its count).
 */
function measure(view: StepView, baseline: Baseline | undefined): StepView['size'] {
  const { conversation, estimator } = view;
  if (baseline === undefined) {
    view.measured = measurePrompt(outgoingPrompt(view), view.params.tools, estimator.tokenizer?.tokenize);
    return { counted: 0, estimated: toTokens(view.measured, estimator) };
  }
  view.measured = undefined;
  const { count, frameBefore } = baseline;
  const growth = frameBefore === undefined ? 0 : frameGrowth(view, frameBefore);
  if (count.length === conversation.length) return { counted: count.input, estimated: growth };
  const afterReply = conversation[count.length]!.role === 'assistant' ? count.length + 1 : count.length;
  return { counted: count.input + count.output, estimated: growth + estimateMessages(conversation, afterReply, conversation.length, estimator) };
}

/** A count a step rests on, and the characters of the system messages and tools it was made with when those changed since. */
interface Baseline {
  count: Count;
  frameBefore?: number;
}

/**
 * The count a step rests on: the longest of its conversation's prefixes counted with the same
 * checkpoint and the same system messages and tool definitions; failing that, the longest counted
 * with other ones whose size is known (docs/design.md, "The size of a prompt": an agent that adds a
 * tool keeps its count).
 */
async function findCount(view: StepView, thread: Thread, digests: PrefixDigests): Promise<Baseline | undefined> {
  const checkpoint = view.checkpoint?.digest ?? null;
  const floor = coveredUpTo(view);
  const candidates = thread.counts
    .filter((count) => count.checkpoint === checkpoint && count.length <= digests.length && count.length >= floor)
    .sort((a, b) => b.length - a.length);
  if (candidates.length === 0) return undefined;
  const frame = await frameDigest(view);
  for (const count of candidates) {
    if (count.frame === frame && (await digests.hasPrefix(count))) return { count };
  }
  for (const count of candidates) {
    const frameBefore = count.frameChars;
    if (count.frame !== frame && frameBefore !== undefined && (await digests.hasPrefix(count))) return { count, frameBefore };
  }
  return undefined;
}

/** Characters of what a prompt holds besides the conversation: its system messages and tool definitions. */
export function frameChars(view: Pick<StepView, 'params' | 'system'>): number {
  return frameMeasure(view).chars;
}

function frameMeasure(view: Pick<StepView, 'params' | 'system'>, estimator?: Estimator): Measure {
  return measurePrompt(view.system, view.params.tools, estimator?.tokenizer?.tokenize);
}

/**
 * The estimated growth of the system messages and tool definitions since a count made with others
 * of `before` characters: the added characters at the estimator's rule (with a tokenizer, at the
 * tokens a character of the frame now takes); 0 when they shrank, so the size never falls below
 * the count.
 */
function frameGrowth(view: StepView, before: number): number {
  const now = frameMeasure(view, view.estimator);
  const added = now.chars - before;
  if (added <= 0) return 0;
  const share = added / now.chars;
  return toTokens({ chars: added, tokenized: now.tokenized * share, tokens: 0 }, view.estimator);
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
    if (count.length < digests.length && (await digests.hasPrefix(count))) superseded.add(count.digest);
  }
  return superseded;
}

/** The view of a step sent with `checkpoint` in place of what it covers, measured by estimate. */
export function withCheckpoint(view: StepView, checkpoint: StoredCheckpoint): StepView {
  const arranged = arrange(view.conversation, checkpoint, view.boundary, recallToolName(view.params.tools));
  const next: StepView = { ...view, checkpoint, ...arranged, sizeKnown: checkpoint.native === undefined };
  next.size = measure(next, undefined);
  return next;
}
