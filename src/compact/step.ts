import type { Engine } from '../engine';
import { CompactionError, failureDetail, isAbort, messageOf } from '../errors';
import { liveStart } from '../prompt/conversation';
import type { Model } from '../prompt/types';
import type { CompactionRule, CompactionUsage } from '../types';
import type { StoredCheckpoint } from '../store/format';
import { type StepView, coveredUpTo, totalSize } from '../view';
import { clearFirst } from './clear';
import { compact } from './compact';
import { sendPrepared } from './send-prepared';
import { type Found, gatherFacts } from './facts';
import { fitsWindow, holdAfterFailure, holdNothingOlder, stepStopped } from './holds';
import { type Arrival, paceOf, paceRecord } from './pace';
import { type Decision, type StepAction, type WaitOutcome, decideStep } from './policy';
import { adoptCatchUp, firstReadable, startPreparing } from './prepare';
import type { Economy } from './trigger';

/**
 * The executor (docs/design.md, "The policy"): gathers a step's facts once, asks the policy for
 * the step's action, and carries it out, and nothing else. A wait's outcome is a new fact: after
 * waiting, the facts are gathered once more and the policy decides on them (it never waits twice).
 * Returns the view that goes out, and the decision, for the log and tests.
 */
export async function runStep(engine: Engine, arrived: StepView, model: Model, manual: boolean, arrival: Arrival): Promise<{ step: StepView; decision: Decision }> {
  let view = arrived;
  const before = view.thread?.pace;
  const pace = paceOf(before, arrival, engine.clock.now());
  let waited: Waited | undefined;
  for (;;) {
    const { facts, found } = await gatherFacts(engine, view, model, { manual, waited: waited?.outcome, pace, awaited: waited?.checkpoint });
    const decision = decideStep(facts);
    const action = decision.step;
    if (action.kind === 'wait') {
      waited = await waitFor(engine, view, model, found, action.until);
      // What the wait ended: the thread as it is now (the lease gone, the checkpoint listed).
      if (view.threadDigest !== undefined) view = { ...view, thread: await engine.keeper.thread(view.threadDigest, view.budget) };
      continue;
    }
    const step = await carryOut(engine, view, model, action, found, waited?.outcome === 'deadline');
    // The step's pace as it goes out, kept with its count for every instance (written after its reply).
    if (view.threadDigest !== undefined && engine.settings.auto && (engine.settings.prepare !== false || engine.settings.compactAt === 'cost')) {
      step.pace = paceRecord(before, arrival, engine.clock.now(), { size: totalSize(step), counted: step.size.counted > 0, checkpoint: step.checkpoint?.digest, changed: step.compaction !== undefined });
    }
    if (decision.prepare !== undefined && found.limit !== undefined) {
      if (decision.prepare.kind === 'adopt-catch-up') await adoptCatchUp(engine, step);
      else await startPreparing(engine, step, model, found.window, found.limit, decision.prepare);
    }
    return { step, decision };
  }
}

/** Carries out a step's action. */
async function carryOut(engine: Engine, view: StepView, model: Model, action: Exclude<StepAction, { kind: 'wait' }>, found: Found, waited: boolean): Promise<StepView> {
  const { window, limit } = found;
  switch (action.kind) {
    case 'send':
      return view;
    case 'send-prepared':
      return sendPrepared(engine, view, action.which === 'ready' ? found.ready! : found.catchUp!, action.rule, { economy: found.economy });
    case 'clear': {
      const instead = action.rule === 'clear-instead';
      const cleared = await clearFirst(engine, { view, reason: 'auto', model, limit, target: instead ? undefined : limit, from: coveredUpTo(view), end: liveStart(view.conversation), instead });
      // Stored meanwhile by another step, unreadable, or no longer enough: it compacts.
      return cleared ?? compactNow(engine, view, model, { reason: 'auto', rule: 'ceiling', window, limit, found });
    }
    case 'compact': {
      if (action.rule === 'manual') return compactNow(engine, view, model, { reason: 'manual', rule: 'manual', window, limit, found });
      if (action.from === undefined) return compactNow(engine, view, model, { reason: 'auto', rule: action.rule, window, limit, found });
      // Made from a prepared checkpoint that does not fit: planned anew (it covers from where that
      // one ends); the prepared one's cost is reported with it. Failed, the step goes out with it.
      const placed = action.from === 'ready' ? found.ready! : found.catchUp!;
      const step = await compactNow(engine, placed, model, { reason: 'auto', rule: action.rule, window, limit, carried: placed.checkpoint!.usage, economy: found.economy });
      return step === placed ? sendPrepared(engine, view, placed, action.from === 'ready' ? 'prepared' : 'catch-up', { economy: found.economy }) : step;
    }
    case 'give-up': {
      // Goes on as after a failed compaction of its own: held from compacting again until it grows.
      const failure = new CompactionError({ reason: waited ? 'timeout' : 'summarizer-failed', message: 'the summary being written for this conversation failed or did not come by its deadline' });
      const thrown = window !== undefined && !fitsWindow(view, window) ? { window } : undefined;
      if (limit !== undefined) await holdAfterFailure(engine, view, limit, failure, thrown, failure);
      if (thrown !== undefined) throw stepStopped(failure, view, thrown.window, limit);
      return view;
    }
  }
}

/** How a wait ended: with the checkpoint it waited for, with its writer failing (or gone: a lease that ran out), or at its summary's deadline. */
interface Waited {
  outcome: WaitOutcome;
  checkpoint?: StoredCheckpoint;
}

/**
 * Waits for the summary being written for this conversation, until `until` on the instance's clock
 * (and the step's abort signal).
 */
async function waitFor(engine: Engine, view: StepView, model: Model, found: Found, until: number): Promise<Waited> {
  const stop = new AbortController();
  try {
    const bound = Number.isFinite(until) ? [engine.clock.sleep(Math.max(0, until - engine.clock.now()), stop.signal).then((): Waited => ({ outcome: found.ownDeadline ? 'deadline' : 'failed' }))] : [];
    // A summary of this instance's that failed at its deadline ended the wait at its deadline.
    const failed = (): Waited => ({ outcome: found.ownDeadline && engine.clock.now() >= until ? 'deadline' : 'failed' });
    const made = firstReadable(found.pending, model).then(
      (checkpoint): Waited => (checkpoint === undefined ? failed() : { outcome: 'made', checkpoint }),
      (error: unknown): Waited => {
        if (isAbort(error, view.params.abortSignal)) throw error;
        return failed();
      },
    );
    return await Promise.race([made, ...bound]);
  } finally {
    stop.abort();
  }
}

/**
 * Compacts a step now (docs/design.md, "Failure"). A failure leaves the step as it was: it goes out
 * unchanged when its estimate still fits the window, else the `CompactionError` is thrown. A failed
 * compaction holds the conversation from compacting on its own until it has grown (docs/design.md,
 * "No progress").
 */
async function compactNow(
  engine: Engine,
  view: StepView,
  model: Model,
  { reason, rule, window, limit, found, carried, economy = found?.economy }: { reason: 'auto' | 'manual'; rule: CompactionRule; window: number | undefined; limit: number | undefined; found?: Found; carried?: CompactionUsage; economy?: Economy | undefined },
): Promise<StepView> {
  const plan = found?.plan;
  try {
    return await compact(engine, { view, reason, rule, model, window, target: limit, limit, ...(carried === undefined ? {} : { carried }), ...(plan === undefined ? {} : { plan }), ...(economy === undefined ? {} : { economy }) });
  } catch (error) {
    if (isAbort(error, view.params.abortSignal)) throw error;
    const failure = CompactionError.isInstance(error) ? error : new CompactionError({ reason: 'summarizer-failed', message: messageOf(error), cause: error });
    const thrown = window !== undefined && !fitsWindow(view, window) ? { window } : undefined;
    if (failure.reason === 'nothing-to-compact') {
      if (limit !== undefined && reason === 'auto') await holdNothingOlder(engine, view, limit);
      else engine.warn(`ai-compaction: compaction failed (${failure.reason}): ${failureDetail(failure)}`);
    } else if (limit !== undefined && limit > 0) {
      await holdAfterFailure(engine, view, limit, failure, thrown, error);
    } else {
      engine.warn(`ai-compaction: compaction failed (${failure.reason}): ${failureDetail(failure)}`);
    }
    if (thrown !== undefined) throw stepStopped(failure, view, thrown.window, limit);
    return view;
  }
}
