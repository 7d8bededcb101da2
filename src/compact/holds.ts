import { type Engine, ownState } from '../engine';
import { CompactionError, failureDetail } from '../errors';
import { liveStart } from '../prompt/conversation';
import { estimatePrompt, windowEstimator } from '../sizing/estimate';
import type { Hold } from '../store/format';
import { HOLD_GROWTH_DIVISOR, MAX_FAILURES } from '../tunables';
import { type StepView, coveredUpTo, outgoingPrompt, totalSize } from '../view';

/** Whether a step's prompt, as it would go out now, fits the window by estimate (docs/design.md, "Failure"). */
export function fitsWindow(view: StepView, window: number): boolean {
  // Before the model has a count, its text as dense as code (docs/design.md, "The size of a prompt").
  return estimatePrompt(outgoingPrompt(view), view.params.tools, windowEstimator(view.estimator)) <= window;
}

/**
 * The error a step that cannot go out is stopped with (docs/design.md, "Failure"): the failure,
 * with the step's sizes and what most likely fills the window, in its message and its fields.
 */
export function stepStopped(failure: CompactionError, view: StepView, window: number, limit: number | undefined): CompactionError {
  const estimator = windowEstimator(view.estimator);
  const sizes = {
    promptTokens: estimatePrompt(outgoingPrompt(view), view.params.tools, estimator),
    systemTokens: estimatePrompt(view.system, view.params.tools, estimator),
    ceiling: limit ?? window,
    contextWindow: window,
  };
  const { promptTokens, systemTokens, ceiling, contextWindow } = sizes;
  const likely =
    systemTokens >= ceiling
      ? `its system prompt and tool definitions alone take ${systemTokens} tokens, which no compaction makes smaller: shorten them, or check that contextWindow (${contextWindow}) is the model's real window`
      : failure.reason === 'nothing-to-compact'
        ? `the newest turn (kept whole) with the system prompt and tools (${systemTokens}) fills it: check that contextWindow (${contextWindow}) is the model's real window, or shorten the newest message`
        : `the compaction that would have made room failed: it is tried again on the next step`;
  const message = `${failureDetail(failure)}; the step cannot go out: its prompt takes about ${promptTokens} tokens, over the window of ${contextWindow} (compaction starts at ${ceiling}); ${likely}`;
  return new CompactionError({ reason: failure.reason, message, cause: failure.cause, sizes });
}

/** The growth that ends a hold: a tenth of the ceiling, doubled for each failure in a row after the first (docs/design.md, "No progress"). */
export function holdGrowth(hold: Pick<Hold, 'cause' | 'failures'>, limit: number): number {
  const tenth = Math.ceil(limit / HOLD_GROWTH_DIVISOR);
  return hold.cause === 'failed' ? tenth * 2 ** ((hold.failures ?? 1) - 1) : tenth;
}

/**
 * Whether a hold placed on this conversation stands (docs/design.md, "No progress"), so that it is
 * not compacted on its own. Each hold ends with its cause: growth by a tenth of the ceiling after
 * no progress; something older to compact after there was nothing; after a failure, growth by a
 * tenth of the ceiling doubled per failure in a row, or a prompt that no longer fits the window.
 */
export async function held(view: StepView, limit: number, window: number | undefined): Promise<boolean> {
  let fits: boolean | undefined;
  const stands = (hold: Hold): boolean => {
    if (hold.cause === 'nothing-older' && hold.end !== undefined) {
      // What a compaction covers ends where the live part begins (as in compact()).
      return liveStart(view.conversation) <= hold.end;
    }
    if (totalSize(view) >= hold.size + holdGrowth(hold, limit)) return false;
    if (hold.cause !== 'failed' || window === undefined) return true;
    fits ??= fitsWindow(view, window);
    return fits;
  };
  for (const hold of await ownHolds(view)) if (stands(hold)) return true;
  return false;
}

/**
 * The holds placed on this conversation as it is now. Conversations sharing an opening share a
 * thread: a hold is this conversation's when the prefix it names is this conversation's, sent with
 * the same checkpoint (a new checkpoint ends every hold).
 */
async function ownHolds(view: StepView): Promise<Hold[]> {
  const { digests } = view;
  if (digests === undefined) return [];
  const checkpoint = view.checkpoint?.digest ?? null;
  const own: Hold[] = [];
  for (const hold of view.thread?.holds ?? []) {
    if (hold.checkpoint === checkpoint && (await digests.hasPrefix(hold))) own.push(hold);
  }
  return own;
}

/** Holds the conversation at `size` (it is not compacted on its own again until it grows by a tenth of `limit`), and says why. */
export async function placeHold(engine: Engine, view: StepView, size: number, limit: number, why: string): Promise<void> {
  await saveHold(engine, view, { size, cause: 'no-progress' },
    `ai-compaction: ${why}; the prompt stays at ${size} tokens, at or above the ceiling of ${limit}. ` +
      `Not compacting again until it grows by ${holdGrowth({}, limit)} tokens.`);
}

/** Holds a conversation with nothing older to compact until there is (a new exchange, a new step), and says so. */
export async function holdNothingOlder(engine: Engine, view: StepView, limit: number): Promise<void> {
  const size = totalSize(view);
  await saveHold(engine, view, { size, cause: 'nothing-older', end: coveredUpTo(view) },
    `ai-compaction: there is nothing older to compact; the prompt stays at ${size} tokens, at or above the ceiling of ${limit}. ` +
      'Not compacting again until there is (a new exchange or step).');
}

/**
 * After a failed compaction (docs/design.md, "No progress"): holds the conversation from compacting
 * on its own until it has grown by a tenth of the ceiling, doubled for each further failure in a
 * row, and says once per failure what happens to the step and until when. `thrown`: the step does
 * not fit the window and fails with the error. `error`: what was thrown, shared by the steps that
 * joined the compaction.
 */
export async function holdAfterFailure(
  engine: Engine,
  view: StepView,
  limit: number,
  failure: CompactionError,
  thrown: { window: number } | undefined,
  error: unknown,
  background?: string,
): Promise<void> {
  const size = totalSize(view);
  const before = (await ownHolds(view)).reduce((most, hold) => (hold.cause === 'failed' ? Math.max(most, hold.failures ?? 1) : most), 0);
  const failures = Math.min(before + 1, MAX_FAILURES);
  const growth = holdGrowth({ cause: 'failed', failures }, limit);
  const key = typeof error === 'object' && error !== null ? error : failure;
  const told = failuresTold(engine);
  const first = !told.has(key);
  told.add(key);
  const what = thrown === undefined ? 'the step goes out unchanged' : `the step does not fit the window of ${thrown.window} tokens, so the CompactionError is thrown`;
  const said = background === undefined ? `ai-compaction: compaction failed (${failure.reason}): ${failureDetail(failure)}; ${what}.` : `ai-compaction: ${background} (${failure.reason}: ${failureDetail(failure)}).`;
  const until =
    `${said} Not compacting this conversation on its own again until its prompt grows by ${growth} tokens (from ${size} to ${size + growth}), ` +
    `except a step that no longer fits the window (failure ${failures} in a row; each further one doubles the growth).`;
  const placed = await saveHold(engine, view, { size, cause: 'failed', failures }, first ? until : undefined);
  if (!placed && first) engine.warn(said);
}

/** Failed compactions already warned about: the steps that joined one (docs/stores.md) share its error. */
const failuresTold = ownState(() => new WeakSet<object>());

/** Stores a hold on this conversation, after warning with `message`; false when it has no index to hold it under. */
async function saveHold(engine: Engine, view: StepView, fields: Omit<Hold, 'length' | 'digest' | 'checkpoint'>, message: string | undefined): Promise<boolean> {
  if (view.digests === undefined || view.threadDigest === undefined) return false;
  const length = view.conversation.length;
  const hold: Hold = { length, digest: await view.digests.of(length), checkpoint: view.checkpoint?.digest ?? null, ...fields };
  if (message !== undefined) engine.warn(message);
  await engine.keeper.saveHold(view.threadDigest, hold, view.budget);
  return true;
}
