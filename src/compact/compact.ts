import { clearToolOutputs } from '../checkpoint/clear';
import { collectIdentifiers, identifiersSection, resolvedErrors, withoutIdentifiersSection } from '../checkpoint/identifiers';
import { type UserWords, collectUserWords, withUserWords, withoutUserWordsSection } from '../checkpoint/user-words';
import { recordOpening, selectRecord } from '../checkpoint/record';
import { roomFor, summarize } from '../checkpoint/summarize';
import { SUMMARY_PROMPT, UPDATE_PROMPT } from '../checkpoint/prompts';
import { type Engine, modelKey } from '../engine';
import { summaryOutputTokensFor } from '../model';
import { CompactionError } from '../errors';
import { liveStart, textMessage } from '../prompt/conversation';
import type { Message, Model } from '../prompt/types';
import { charsPerTokenOf, estimateMessages } from '../sizing/estimate';
import { FORMAT_VERSION, type StoredCheckpoint, readableBy } from '../store/format';
import { startCompactionSpan } from '../telemetry/spans';
import { MIN_SUMMARY_ROOM } from '../tunables';
import type { CompactionReason, CompactionRule, CompactionUsage } from '../types';
import { type Deadline, deadlineAt, summaryDeadline } from './deadline';
import { type StepView, totalSize, withCheckpoint } from '../view';
import { clearFirst } from './clear';
import { type Meter, addUsage, meter } from './cost';
import { type Made, singleFlight } from './flight';
import { leaseOrWait, releaseLease } from './lease';
import { measuredSummary } from './measured';
import { placeHold } from './holds';
import { keptUserMessages, nativeItem } from './native';
import { type CompactionPlan, expectedSummary, identifierAllowance, openingTokens, planOf, recordAllowance, sizedFor, summaryLimit, userMessageAllowance, userWordsAllowance } from './plan';
import { announce, kindOf, reportOf, ruleOf } from './report';
import { sendPrepared } from './send-prepared';
import type { Economy } from './trigger';

/** What a compaction is asked to do. */
export interface CompactRequest {
  view: StepView;
  reason: CompactionReason;
  model: Model;
  window: number | undefined;
  /** The size the compacted prompt must stay under to count as progress. */
  target: number | undefined;
  /** The ceiling the record takes at most a quarter of (docs/design.md, "The record"). */
  limit: number | undefined;
  /**
   * Made ahead in the background (docs/design.md, "Preparing ahead"): stored as a prepared
   * checkpoint (held back until a step at the ceiling sends it), not reported, no hold placed. The
   * view's params carry no abort signal.
   */
  prepare?: boolean;
  /**
   * Prepared as a catch-up (docs/design.md, "Preparing ahead"): listed so that the first step after
   * it is ready sends it, not held back until the ceiling.
   */
  catchUp?: boolean;
  /**
   * Covers the conversation up to here instead of up to its live part: the compaction the next step
   * will make, prepared one step ahead (this step's whole conversation, which the next step extends).
   */
  through?: number;
  /**
   * What a checkpoint prepared ahead cost, when this compaction is made from it and it was never
   * sent itself: reported with this compaction, so that no summary request goes unreported.
   */
  carried?: CompactionUsage;
  /**
   * The compaction decided already (docs/design.md, "One budget"): by the step at the ceiling for
   * its view (`compactAtCeiling`), or by `compact` for its cheap tier. By default it is planned from
   * the request (`planFor`).
   */
  plan?: CompactionPlan;
  /** The policy's rule that decided it (docs/design.md, "The policy"): on its record and in its log line. */
  rule?: CompactionRule;
  /** When its summary must be written by, on the instance's clock (`summaryTimeout`); by default that long from when it begins. */
  deadline?: number;
  /** What a compaction costs and saves in this conversation (trigger.ts): its record says what the policy expected it to save. */
  economy?: Economy;
}

/** One compaction to run: the request, its plan (what it covers, `from` to `end` of the conversation, and what each part of the checkpoint may take) and the digest of what it covers. */
interface Job extends CompactRequest {
  plan: CompactionPlan;
  digest: string;
}

/** Compacts a step (once among concurrent steps that need the same compaction) and returns the view to send. */
export async function compact(engine: Engine, request: CompactRequest): Promise<StepView> {
  const { view, reason, target } = request;
  const plan = planFor(engine, request);
  // The cheap tier first: old tool outputs cleared, no model call (docs/design.md, "Clearing old
  // tool results").
  const cleared = await clearFirst(engine, { view, reason, model: request.model, limit: request.limit, target, from: plan.from, end: plan.end });
  if (cleared !== undefined) return cleared;
  const made = await compactOnce(engine, { ...request, plan });
  // A compaction prepared in the background that this step joined or found: this step sends it first.
  const next = place(view, made);
  return made.prepared === true ? sendPrepared(engine, view, next, request.rule ?? ruleOf(reason), { reason, economy: request.economy }) : next;
}

/**
 * Runs the summary (or the provider's item) a step needs, or joins the same one under way (a
 * step's, or one being prepared in the background: docs/stores.md; docs/design.md, "Preparing
 * ahead"), and returns what it made.
 */
export async function compactOnce(engine: Engine, request: CompactRequest): Promise<Made> {
  const { view, reason, target } = request;
  const plan = planFor(engine, request);
  const job: Job = { ...request, plan, digest: await view.digests!.of(plan.end) };
  const key = `${reason === 'overflow' ? `${target}:` : ''}${job.digest}`;
  return singleFlight(engine, key, view.params.abortSignal, () => reuseOrRun(engine, job));
}

/**
 * What the conversation may add before the step that sends a checkpoint prepared ahead: up to the
 * ceiling from this step's size (docs/design.md, "One budget"). None for a catch-up, which the
 * first step after it is ready sends, or for a compaction a step sends itself.
 */
function aheadOf({ view, prepare, catchUp, limit }: CompactRequest): number {
  if (prepare !== true || catchUp === true || limit === undefined || !view.sizeKnown) return 0;
  return Math.max(0, limit - totalSize(view));
}

/**
 * The plan of a compaction (plan.ts): the request's own, or made once here from its step, ceiling
 * and options; throws when there is nothing older to compact.
 */
function planFor(engine: Engine, request: CompactRequest): CompactionPlan {
  const { view, reason, through, limit } = request;
  // What stays live (a new user turn, or the newest step of a tool loop) is never covered; a
  // compaction prepared for the next step covers this step's whole conversation, whose newest
  // step the next one's live part follows.
  const plan = request.plan ?? planOf(engine, view, limit, { end: through ?? liveStart(view.conversation), ahead: aheadOf(request) });
  const { from, end } = plan;
  if (end === 0 || end < from || view.digests === undefined || (end === from && reason === 'auto')) {
    throw new CompactionError({ reason: 'nothing-to-compact', message: 'there is no older conversation to compact' });
  }
  return plan;
}

/** This step's view with a checkpoint made for it or for a concurrent step of the same conversation. */
function place(view: StepView, made: Made): StepView {
  const next = withCheckpoint(view, made.checkpoint);
  if (made.report !== undefined) next.compaction = made.report;
  return next;
}

/**
 * A concurrent step may have made this very checkpoint a moment ago: use it rather than summarize
 * again; another instance may be writing it (its lease): wait for it. A clearing of the same
 * messages is no summary of them: one is made.
 */
async function reuseOrRun(engine: Engine, job: Job): Promise<Made> {
  const { view, digest, model } = job;
  const { end } = job.plan;
  let existing = digest === view.checkpoint?.digest ? undefined : await engine.keeper.checkpoint(digest, end, view.budget);
  if (existing === undefined && digest !== view.checkpoint?.digest) existing = await leaseOrWait(engine, view, { length: end, digest }, writerOf(engine, model));
  if (existing === undefined || existing.clear !== undefined || !readableBy(existing, modelKey(model))) return runLeased(engine, job);
  // Prepared again (by another instance, or before a restart): listed as prepared, still held back.
  if (job.prepare === true && view.threadDigest !== undefined) {
    await engine.keeper.savePrepared(view.threadDigest, existing, view.budget, job.catchUp === true, job.through !== undefined);
    return { checkpoint: existing, prepared: true };
  }
  // One prepared ahead and still held back (docs/design.md, "Preparing ahead"): this step is the
  // first to send it.
  if (view.threadDigest !== undefined && (await heldBack(engine, view, digest))) return { checkpoint: existing, prepared: true };
  return { checkpoint: existing };
}

/**
 * Whether a summary request of `size` (the conversation it covers, as the step sent it) leaves the
 * reply its minimum room in the window: otherwise it goes out shortened.
 */
export function summaryFitsWhole(view: StepView, size: { counted: number; estimated: number }, window: number | undefined): boolean {
  const appended = estimateMessages([textMessage('user', view.standIn.length === 0 ? SUMMARY_PROMPT : UPDATE_PROMPT)], 0, 1, view.estimator);
  return roomFor(window, size.counted, size.estimated + appended) >= MIN_SUMMARY_ROOM;
}

/** Whether the checkpoint of `digest` is listed in its thread as prepared and not yet among the checkpoints steps find. */
async function heldBack(engine: Engine, view: StepView, digest: string): Promise<boolean> {
  const thread = await engine.keeper.thread(view.threadDigest!, view.budget);
  return (thread.prepared ?? []).some((ref) => ref.digest === digest) && !thread.checkpoints.some((ref) => ref.digest === digest);
}

/** The model that writes a summary for `model`'s steps: the `summarizer` option, or the model itself. */
export function writerOf(engine: Engine, model: Model): string {
  return modelKey(engine.summarizer ?? model);
}

/** Runs a compaction under this instance's lease on its prefix: a failure releases it. */
async function runLeased(engine: Engine, job: Job): Promise<Made> {
  try {
    return await run(engine, job);
  } catch (error) {
    await releaseLease(engine, job.view, { length: job.plan.end, digest: job.digest }).catch(() => undefined);
    throw error;
  }
}

/**
 * Makes the checkpoint, stores it and reports it, as the span `ai-compaction.compact` when a tracer
 * provider is registered (docs/observability.md).
 */
async function run(engine: Engine, job: Job): Promise<Made> {
  const span = startCompactionSpan({ reason: job.reason, prepared: job.prepare === true, tokensBefore: totalSize(job.view) });
  const costs = meter(span, engine);
  try {
    const made = await make(engine, job, costs);
    const { checkpoint } = made;
    span?.end({ kind: kindOf(checkpoint), messagesCovered: checkpoint.length, tokensAfter: checkpoint.tokensAfter, usage: costs.usage() });
    return made;
  } catch (error) {
    span?.fail(error);
    throw error;
  }
}

/** Makes the checkpoint (a summary and record, or the provider's item) with metered model calls, stores it and reports it. */
async function make(engine: Engine, job: Job, costs: Meter): Promise<Made> {
  // Every summary request of this compaction shares one deadline (docs/design.md, "No summary holds a step without bound").
  const deadline = deadlineAt(engine, job.deadline ?? summaryDeadline(engine), job.view.params.abortSignal);
  try {
    return await makeBy(engine, { ...job, view: { ...job.view, params: { ...job.view.params, abortSignal: deadline.signal } } }, costs, deadline, job.view);
  } catch (error) {
    if (deadline.passed()) throw new CompactionError({ reason: 'timeout', message: `the summary was not written within summaryTimeout (${engine.settings.summaryTimeout} ms)`, cause: error });
    throw error;
  } finally {
    deadline.dispose();
  }
}

/** Makes the checkpoint, its requests under `deadline` (`asked`: the view whose params carry its signal; `view`: the step's own). */
async function makeBy(engine: Engine, { view: asked, reason, model, window, target, limit, digest, plan, prepare = false, catchUp = false, carried, rule, through, economy }: Job, costs: Meter, deadline: Deadline, view: StepView): Promise<Made> {
  const { settings } = engine;
  const { from, end } = plan;
  // What stays live cannot fit the window beside any checkpoint: no summary request is made for it.
  if (window !== undefined && plan.frame + plan.live + plan.wrapper > window) {
    throw new CompactionError({
      reason: 'too-large',
      message: `what stays live after the checkpoint (${plan.live} tokens, with the system messages and tools ${plan.frame}) does not fit the window of ${window}`,
    });
  }
  const started = engine.clock.now();
  const covered = view.conversation.slice(from, end);
  const tokensBefore = totalSize(view);
  // The request is what the step sent up to the end of what the checkpoint covers: never the live
  // part, whose words another conversation sharing this prefix must not see (docs/design.md, "The
  // summary request").
  const request = coveredRequest(view, view.conversation.length - end);
  // An overflow is recovered by ordinary compaction: the native trigger would carry the very
  // prompt the provider just rejected.
  const native = settings.native && reason !== 'overflow' ? await deadline.race(nativeItem(engine, asked, costs.wrap(model), request.sent)) : undefined;
  let summary = '';
  let recordText = '';
  let identifiers: string[] | undefined;
  if (native === undefined) {
    // The newest of all it stands for, the previous checkpoint's part too: those messages are the
    // caller's, still at hand, and the newest steps are what the model continues from. Each part
    // takes what the plan's budget leaves it, in order: the live part, the summary, the identifiers,
    // the record (docs/design.md, "One budget").
    const charsPerToken = charsPerTokenOf(view.estimator, covered);
    const tokensOf = (text: string) => Math.round(text.length / charsPerToken);
    const userMessage = userMessageAllowance(plan, settings.keep);
    // The least the record holds: what it opens with, until the record it never holds less than is chosen.
    const openingSize = openingTokens(plan, view.conversation, end, view.estimator);
    const summaryOutputTokens = summaryOutputTokensFor(engine, view.modelKey);
    const firstLimit = summaryLimit(plan, summaryOutputTokens, openingSize);
    const recordOfSize = (budget: number) => selectRecord(view.conversation, budget, view.boundaryEnd, end, charsPerToken, userMessage);
    // Before the summary is written its size is unknown: the record is first sized for the summary
    // this conversation's last one suggests (a quarter more), or half its limit; the shortened
    // request carries what that record leaves out, and the record made once the summary is written
    // never holds less (so nothing covered is in neither).
    const previous = view.checkpoint?.summary === undefined || view.checkpoint.summary === '' ? undefined : tokensOf(view.checkpoint.summary);
    const expected = expectedSummary(firstLimit, previous);
    const sized = sizedFor(plan, !summaryFitsWhole(view, request.size, window));
    const expectedIdentifiers = identifierAllowance(sized, expected, openingSize);
    // The user's messages the record will not hold (docs/design.md, "The user's words"): at first
    // those before the newest turn it covers (whose user message the record always holds).
    const wordsOf = (to: number, summaryTokens: number, identifierTokens: number, record: number) =>
      collectUserWords(view.conversation, view.boundaryEnd, to, userWordsAllowance(sized, summaryTokens, identifierTokens, record), charsPerToken);
    const wordsTokens = (words: UserWords[]) => tokensOf(withUserWords(words.map((each) => each.line), ''));
    const reserved = wordsTokens(wordsOf(recordOpening(view.conversation, end, end), expected, expectedIdentifiers, openingSize));
    const first = recordAllowance(sized, expected, expectedIdentifiers, settings.keep, reserved);
    const smallest = recordOfSize(first);
    // The record never holds less than this first one: the summary's limit leaves it its room.
    const least = Math.max(openingSize, smallest.tokens);
    const outputLimit = summaryLimit(plan, summaryOutputTokens, least);
    const reply = await deadline.race(summarize({
      model: costs.wrap(engine.summarizer ?? model),
      params: asked.params,
      system: view.system,
      previous: view.standIn,
      sent: request.sent,
      // What the shortened request must carry: the newly covered messages the record does not
      // hold, or all of them when the record reaches back past them (it draws on the whole prefix);
      // over messages whose old tool outputs were cleared, as they were sent.
      beforeRecord: asSent(view).slice(from, smallest.start > from ? smallest.start : end),
      size: request.size,
      window,
      summaryOutputTokens: outputLimit,
      estimator: view.estimator,
      warn: engine.warn,
    }));
    summary = withoutUserWordsSection(withoutIdentifiersSection(reply));
    const summaryTokens = tokensOf(summary);
    identifiers = collectIdentifiers(covered, view.checkpoint?.identifiers ?? [], identifierAllowance(sized, summaryTokens, least), charsPerToken, resolvedErrors(view.conversation.slice(0, end)));
    const identifierTokens = tokensOf(identifiersSection(identifiers));
    const words = wordsOf(recordOpening(view.conversation, smallest.start, end), summaryTokens, identifierTokens, least);
    const record = recordOfSize(Math.max(first, recordAllowance(sized, summaryTokens, identifierTokens, settings.keep, wordsTokens(words))));
    // Those the record holds (from its start, and the turn's user message it opens with) are left out.
    const opening = recordOpening(view.conversation, record.start, end);
    recordText = withUserWords(words.filter((each) => each.index < opening).map((each) => each.line), record.text);
  }
  // How long this model takes to write one: how long another instance waits for it (the lease).
  await measuredSummary(engine, view, native === undefined ? writerOf(engine, model) : modelKey(model), engine.clock.now() - started, costs.usage());
  const made: StoredCheckpoint = {
    v: FORMAT_VERSION,
    digest,
    length: end,
    summary,
    record: recordText,
    reason,
    // A prepared one's rule is that of the step that first sends it (send-prepared.ts).
    ...(prepare ? {} : { rule: rule ?? ruleOf(reason) }),
    tokensBefore,
    tokensAfter: 0,
    createdAt: engine.clock.now(),
    ...(identifiers === undefined || identifiers.length === 0 ? {} : { identifiers }),
    // The live step takes at most a quarter of the room, in this step and the ones after it.
    ...(plan.budget === undefined ? {} : { step: plan.budget.step }),
    // The newest user messages of the whole conversation after any caller-held provider item, not
    // only of the newly covered part: a later native compaction must not drop the user's request.
    ...(native === undefined ? {} : { native: { ...native, model: modelKey(model), keep: keptUserMessages(view.conversation, view.boundaryEnd, end, settings.keep, view.estimator) } }),
  };
  const next = withCheckpoint(view, made);
  const tokensAfter = next.size.estimated;
  // Never a step over the window by this package's own estimate: nothing is stored
  // (docs/design.md, "Failure").
  if (window !== undefined && tokensAfter > window) {
    throw new CompactionError({
      reason: 'too-large',
      message: `the checkpoint and what stays live after it take ${tokensAfter} tokens, over the window of ${window}`,
    });
  }
  const checkpoint: StoredCheckpoint = { ...made, tokensAfter };
  next.checkpoint = checkpoint;
  const noProgress = target !== undefined && tokensAfter >= target;
  if (prepare) {
    // Reported by the step that first sends it, with that step's sizes and this cost (sendPrepared),
    // which travels with it in the store: another instance may be the one to send it.
    const prepared: StoredCheckpoint = { ...checkpoint, usage: costs.usage() };
    const saved = view.threadDigest !== undefined && (await engine.keeper.savePrepared(view.threadDigest, prepared, view.budget, catchUp, through !== undefined));
    if (!saved) engine.warn('ai-compaction: the checkpoint prepared ahead could not be stored; the step at the ceiling will compact');
    return { checkpoint: prepared, prepared: true };
  }
  if (view.threadDigest !== undefined) {
    const saved = await engine.keeper.saveCheckpoint(view.threadDigest, checkpoint, view.budget);
    if (!saved) engine.warn('ai-compaction: the checkpoint could not be stored; this step uses it, later steps may compact again');
  }
  if (noProgress && reason !== 'overflow') await placeHold(engine, next, tokensAfter, target, 'the compaction made no progress');
  const report = announce(engine, reportOf(checkpoint, reason, rule ?? ruleOf(reason), tokensBefore, tokensAfter, addUsage(costs.usage(), carried), economy), view.modelKey);
  return { checkpoint, report };
}

/** The caller's conversation with the tool outputs its clearing replaced, if its checkpoint is one. */
function asSent(view: StepView): Message[] {
  const clear = view.checkpoint?.clear;
  return clear === undefined ? view.conversation : clearToolOutputs(view.conversation, clear.from, view.checkpoint!.length).messages;
}

/**
 * What the step sent up to the end of what a checkpoint will cover (the last `live` messages left
 * out), and its size: the provider's count it rests on, and the estimate on top, less the live part.
 */
function coveredRequest(view: StepView, live: number): { sent: Message[]; size: StepView['size'] } {
  if (live === 0) return { sent: view.sent, size: view.size };
  const sent = view.sent.slice(0, view.sent.length - live);
  const liveTokens = estimateMessages(view.sent, sent.length, view.sent.length, view.estimator);
  const estimated = Math.max(0, view.size.estimated - liveTokens);
  const counted = Math.max(0, view.size.counted - Math.max(0, liveTokens - view.size.estimated));
  return { sent, size: { counted, estimated } };
}
