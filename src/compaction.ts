import { type LanguageModel, type LanguageModelMiddleware, wrapLanguageModel } from 'ai';
import { recordBudget, selectRecord } from './checkpoint/record';
import { PROVIDER_OPTIONS_KEY, isAbort, isSummaryRequest, summarize } from './checkpoint/summarize';
import { CompactionError, messageOf } from './errors';
import { type CompactionLogger, describe, resolveOptions } from './options';
import {
  contextOverflowKind,
  contextOverflowLimit,
  isContextOverflowError,
  overflowFromStreamPart,
  promptTokensFromOverflow,
} from './overflow/recognize';
import { trailingUserStart } from './prompt/conversation';
import type { CallOptions, GenerateResult, Message, Model, Part, ProviderOptions, StreamPart, StreamResult, Usage } from './prompt/types';
import { ceiling } from './sizing/ceiling';
import { estimateMessages, estimatePrompt } from './sizing/estimate';
import { Keeper } from './store/keeper';
import { memoryStore } from './store/memory';
import { type Hold, type StoredCheckpoint, readableBy } from './store/records';
import type { CompactionStore } from './store/types';
import { type CompactionState, buildState, parseState } from './state';
import { nativeProviderFor } from './native/providers';
import { type StepView, arrange, coveredUpTo, frameDigest, outgoingPrompt, resolveView, supersededCounts, totalSize } from './view';

/** Why a compaction ran. */
export type CompactionReason = 'auto' | 'overflow' | 'manual';

/** What `last()` returns and `onCompaction` receives: one compaction. */
export interface CompactionRecord {
  reason: CompactionReason;
  /** Messages of the caller's conversation the checkpoint stands in for. */
  messagesCovered: number;
  /** Estimated (or provider-counted) size of the prompt before, in tokens. */
  tokensBefore: number;
  /** Estimated size of the prompt sent after, in tokens. */
  tokensAfter: number;
  summary: string;
  /** The serialized record of the newest covered messages. */
  record: string;
  /** With `native: true`: the provider's compaction item, sent back unchanged (summary and record are empty). */
  native?: { provider: 'openai' | 'anthropic'; item: Record<string, unknown> };
}

/** Options of `compaction()`. Every one is optional. */
export interface CompactionOptions {
  /** The model's context window in tokens, or a function of the model returning it (or `undefined`). Without one the middleware never compacts on its own. */
  contextWindow?: number | ((model: { provider: string; modelId: string }) => number | undefined);
  /**
   * Room kept free: a share of the window (`"20%"` compacts at 80 % full) or a number of tokens.
   * @default 15 % of the window, at least 16,000 tokens when the window is 32,000 or more
   */
  buffer?: `${number}%` | number;
  /**
   * Tokens of the newest conversation kept verbatim as the checkpoint's record.
   * @default 15_000
   */
  keep?: number;
  /**
   * `false`: compact only when asked (`compactNext()`, `providerOptions.compaction.compact`) or on overflow.
   * @default true
   */
  auto?: boolean;
  /** A model used for summaries instead of the step's own. @default the step's own model */
  summarizer?: Exclude<LanguageModel, string>;
  /**
   * The most tokens a summary may take.
   * @default 32_000
   */
  summaryOutputTokens?: number;
  /** `{ info, warn }`: one info line per compaction, a warning per rejection or failure. */
  logger?: CompactionLogger;
  /** Where checkpoints and provider counts live. @default an in-memory store bounded in bytes */
  store?: CompactionStore;
  /** A value from `state()` of another instance, to continue from. */
  state?: CompactionState;
  /** Called after each compaction with the record `last()` returns. */
  onCompaction?: (record: CompactionRecord) => void;
  /**
   * Let the provider compact where it can (OpenAI Responses with `@ai-sdk/openai` v4, Anthropic
   * on-demand compaction); any other model gets ordinary compaction, with one warning.
   * @default false
   */
  native?: boolean;
}

/** What the step that compacted carries in its result's `providerMetadata.compaction`. */
export interface CompactionMetadata {
  reason: CompactionReason;
  messagesCovered: number;
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
}

/**
 * The compaction a step made, read from its `providerMetadata` (a `generateText` step, or the
 * `finish-step` part of `streamText`); `undefined` when that step did not compact.
 */
export function compactionOf(providerMetadata: unknown): CompactionMetadata | undefined {
  const value = (providerMetadata as { compaction?: unknown } | undefined)?.compaction;
  if (typeof value !== 'object' || value === null) return undefined;
  const { reason, messagesCovered, tokensBefore, tokensAfter, summary } = value as Record<string, unknown>;
  if (reason !== 'auto' && reason !== 'overflow' && reason !== 'manual') return undefined;
  if (typeof messagesCovered !== 'number' || typeof tokensBefore !== 'number' || typeof tokensAfter !== 'number') return undefined;
  return { reason, messagesCovered, tokensBefore, tokensAfter, summary: typeof summary === 'string' ? summary : '' };
}

/** Per-call options, under `providerOptions.compaction`. Removed before the provider sees the call. */
export interface CompactionCallOptions {
  /** Separates tenants: identical messages in two scopes never share a checkpoint. */
  scope?: string;
  /** Compact this step whatever its size. */
  compact?: boolean;
}

/** The middleware, with the host's controls. */
export type CompactionMiddleware = LanguageModelMiddleware & {
  /** Makes the next step compact, whatever its size. */
  compactNext(): void;
  /** The last compaction, or `undefined` before the first. */
  last(): CompactionRecord | undefined;
  /** A JSON value holding the recent checkpoints and counts; `compaction({ state })` continues from it. */
  state(): CompactionState;
};

/** One compaction to run: the step, why, and what it covers (`from` to `end` of the conversation). */
interface Job {
  view: StepView;
  reason: CompactionReason;
  model: Model;
  window: number | undefined;
  target: number | undefined;
  /** The ceiling the record takes at most a quarter of (SPEC 6.4). */
  limit: number | undefined;
  from: number;
  end: number;
  digest: string;
}

/** What a compaction made: the checkpoint, and its record when it was made now (not found in the store). */
interface Made {
  checkpoint: StoredCheckpoint;
  record?: CompactionRecord;
}

const NON_CONTENT_PARTS = new Set(['stream-start', 'response-metadata', 'raw', 'ping', 'custom']);

/**
 * Keeps every step of an AI SDK conversation inside the model's context window: over the ceiling,
 * older conversation is replaced by a checkpoint (a structured summary plus a verbatim record of
 * the newest turns); a step the provider still rejects as too long is compacted and sent once more.
 *
 * @example
 * const model = wrapLanguageModel({
 *   model: openai('gpt-5'),
 *   middleware: compaction({ contextWindow: 400_000 }),
 * });
 */
export function compaction(options: CompactionOptions = {}): CompactionMiddleware {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`ai-compaction: options must be an object, got ${describe(options)}`);
  }
  const settings = resolveOptions(options as Record<string, unknown>);
  const restored = options.state === undefined ? undefined : parseState(options.state);
  const logger = settings.logger;
  const warn = (message: string) => logger?.warn(message);
  const keeper = new Keeper(settings.store ?? memoryStore(), warn);
  let ready: Promise<void> | undefined = restored && keeper.restore(restored.threads, restored.checkpoints);
  /** The view of each step, by the params `transformParams` returned, for `wrapGenerate` / `wrapStream`. */
  const steps = new WeakMap<object, StepView>();
  const learnedWindows = new Map<string, number>();
  // Through the consumer's own `wrapLanguageModel`: AI SDK 7 turns a v3 or v2 model into a v4 one
  // there, as it does the models this middleware wraps, so the summarizer reads the prompts it gets.
  const summarizer =
    settings.summarizer === undefined ? undefined : (wrapLanguageModel({ model: settings.summarizer as never, middleware: [] }) as unknown as Model);
  const flights = new Map<string, { made: Promise<Made>; signal: AbortSignal | undefined }>();
  const warnedOnce = new Set<string>();
  /** Models whose provider answered a native compaction request without an item. */
  const nativeUnavailable = new Set<string>();
  let pendingManual = false;
  let lastRecord: CompactionRecord | undefined;

  const modelKey = (model: Model) => `${model.provider}:${model.modelId}`;

  function windowFor(model: Model): number | undefined {
    const configured =
      typeof settings.contextWindow === 'function' ? settings.contextWindow(model) : settings.contextWindow;
    const learned = learnedWindows.get(modelKey(model));
    if (configured === undefined || !(configured > 0)) return learned;
    return learned === undefined ? configured : Math.min(configured, learned);
  }

  /** Whether a compaction that made no progress holds this conversation until it grows by a tenth of the ceiling. */
  async function held(view: StepView, limit: number): Promise<boolean> {
    const { digests } = view;
    if (digests === undefined) return false;
    const checkpoint = view.checkpoint?.digest ?? null;
    const size = totalSize(view);
    // Conversations sharing an opening share a thread: a hold is this conversation's when
    // the prefix it names is this conversation's.
    for (const hold of view.thread?.holds ?? []) {
      if (hold.checkpoint !== checkpoint || hold.length > view.conversation.length || size >= hold.size + limit / 10) continue;
      if ((await digests.of(hold.length)) === hold.digest) return true;
    }
    return false;
  }

  function warnOnce(key: string, message: string): void {
    if (warnedOnce.has(key)) return;
    warnedOnce.add(key);
    warn(message);
  }

  async function placeHold(view: StepView, size: number, limit: number, why: string): Promise<void> {
    if (view.digests === undefined || view.threadDigest === undefined) return;
    const length = view.conversation.length;
    const hold: Hold = { length, digest: await view.digests.of(length), checkpoint: view.checkpoint?.digest ?? null, size };
    warn(
      `ai-compaction: ${why}; the prompt stays at ${size} tokens, at or above the ceiling of ${limit}. ` +
        `Not compacting again until it grows by ${Math.ceil(limit / 10)} tokens.`,
    );
    await keeper.saveHold(view.threadDigest, hold);
  }

  /** Compacts a step (single flight per covered prefix) and returns the view to send. */
  async function compact(
    view: StepView,
    reason: CompactionReason,
    model: Model,
    window: number | undefined,
    target: number | undefined,
    limit = target,
  ): Promise<StepView> {
    const end = trailingUserStart(view.conversation);
    const from = coveredUpTo(view);
    if (end === 0 || end < from || view.digests === undefined || (end === from && reason === 'auto')) {
      throw new CompactionError({ reason: 'nothing-to-compact', message: 'there is no older conversation to compact' });
    }
    const job: Job = { view, reason, model, window, target, limit, from, end, digest: await view.digests.of(end) };
    const key = `${reason === 'overflow' ? `${target}:` : ''}${job.digest}`;
    const shared = flights.get(key);
    if (shared !== undefined) {
      try {
        return place(view, await untilAborted(shared.made, view.params.abortSignal));
      } catch (error) {
        // Only the step that started it was aborted, not this one: compact for this step.
        if (!isAbort(error, shared.signal) || view.params.abortSignal?.aborted) throw error;
      }
    }
    const made: Promise<Made> = reuseOrRun(job).finally(() => {
      if (flights.get(key)?.made === made) flights.delete(key);
    });
    flights.set(key, { made, signal: view.params.abortSignal });
    return place(view, await made);
  }

  /** This step's view with a checkpoint made for it or for a concurrent step of the same conversation. */
  function place(view: StepView, made: Made): StepView {
    const next = withCheckpoint(view, made.checkpoint);
    if (made.record !== undefined) next.compaction = made.record;
    return next;
  }

  /** A concurrent step may have made this very checkpoint a moment ago: use it rather than summarize again. */
  async function reuseOrRun(job: Job): Promise<Made> {
    const { view, digest, end, model } = job;
    const existing = digest === view.checkpoint?.digest ? undefined : await keeper.checkpoint(digest, end);
    return existing === undefined || !readableBy(existing, modelKey(model)) ? run(job) : { checkpoint: existing };
  }

  async function run({ view, reason, model, window, target, limit, from, end, digest }: Job): Promise<Made> {
    const covered = view.conversation.slice(from, end);
    const tokensBefore = totalSize(view);
    // An overflow is recovered by ordinary compaction: the native trigger would carry the very
    // prompt the provider just rejected.
    const native = settings.native && reason !== 'overflow' ? await nativeItem(view, model, end) : undefined;
    let summary = '';
    let recordText = '';
    if (native === undefined) {
      const record = selectRecord(covered, recordBudget(settings.keep, limit));
      recordText = record.text;
      summary = await summarize({
        model: summarizer ?? model,
        params: view.params,
        system: view.system,
        previous: view.standIn,
        sent: view.sent,
        beforeRecord: covered.slice(0, record.start),
        size: view.size,
        window,
        summaryOutputTokens: settings.summaryOutputTokens,
        warn,
      });
    }
    const made: StoredCheckpoint = {
      v: 1,
      digest,
      length: end,
      summary,
      record: recordText,
      reason,
      tokensBefore,
      tokensAfter: 0,
      createdAt: Date.now(),
      // The newest user messages of the whole conversation after any caller-held provider item, not
      // only of the newly covered part: a later native compaction must not drop the user's request.
      ...(native === undefined ? {} : { native: { ...native, model: modelKey(model), keep: keptUserMessages(view.conversation, view.boundaryEnd, end, settings.keep) } }),
    };
    const next = withCheckpoint(view, made);
    const tokensAfter = next.size.estimated;
    const checkpoint: StoredCheckpoint = { ...made, tokensAfter };
    next.checkpoint = checkpoint;
    const noProgress = target !== undefined && tokensAfter >= target;
    if (view.threadDigest !== undefined) {
      const saved = await keeper.saveCheckpoint(view.threadDigest, checkpoint);
      if (!saved) warn('ai-compaction: the checkpoint could not be stored; this step uses it, later steps may compact again');
    }
    if (noProgress && reason !== 'overflow') await placeHold(next, tokensAfter, target, 'the compaction made no progress');
    lastRecord = {
      reason,
      messagesCovered: end,
      tokensBefore,
      tokensAfter,
      summary,
      record: recordText,
      ...(native === undefined ? {} : { native: { provider: native.provider, item: native.part } }),
    };
    logger?.info(
      `ai-compaction: compacted ${end} messages (${reason}): ${tokensBefore} -> ${tokensAfter} estimated tokens`,
    );
    try {
      const returned: unknown = settings.onCompaction?.(lastRecord as never);
      if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
        (returned as PromiseLike<unknown>).then(undefined, (error: unknown) => warn(`ai-compaction: onCompaction failed: ${messageOf(error)}`));
      }
    } catch (error) {
      warn(`ai-compaction: onCompaction failed: ${messageOf(error)}`);
    }
    return { checkpoint, record: lastRecord };
  }

  /**
   * Asks the provider to compact the step's own request (up to its new user messages). `undefined` (after one warning per model)
   * when the model has no native compaction or returned no item: ordinary compaction follows.
   */
  async function nativeItem(
    view: StepView,
    model: Model,
    end: number,
  ): Promise<{ provider: 'openai' | 'anthropic'; part: Part } | undefined> {
    const provider = nativeUnavailable.has(modelKey(model)) ? undefined : nativeProviderFor(model);
    if (provider !== undefined) {
      // The item stands for what it is asked about: everything but the new user messages at the end,
      // which go out live after it (and not twice).
      const trailing = view.conversation.length - end;
      const prompt = outgoingPrompt(view);
      let result: GenerateResult;
      try {
        result = await model.doGenerate(provider.trigger({ ...view.params, prompt: trailing > 0 ? prompt.slice(0, -trailing) : prompt }));
      } catch (error) {
        if (isAbort(error, view.params.abortSignal)) throw error;
        // The trigger carries the whole prompt: when the provider rejects it as too long, ordinary
        // compaction (which can send less) takes over for this compaction.
        if (isContextOverflowError(error)) {
          warn(`ai-compaction: the native compaction request was rejected as too long (${messageOf(error)}); using ordinary compaction`);
          return undefined;
        }
        // Refused outright (a model without on-demand compaction, options the client rejects):
        // ordinary compaction from now on. A transient failure falls back for this compaction only.
        const transient = (error as { isRetryable?: unknown } | null)?.isRetryable === true;
        if (!transient) nativeUnavailable.add(modelKey(model));
        warn(
          `ai-compaction: the native compaction request failed (${messageOf(error)}); using ordinary compaction` +
            (transient ? '' : ` for ${modelKey(model)} from now on`),
        );
        return undefined;
      }
      const part = provider.extract(result.content);
      if (part !== undefined) return { provider: provider.name, part };
      // A model that answers the trigger without an item (an older client, a model without native
      // compaction) is not asked again: each try costs a whole generation.
      nativeUnavailable.add(modelKey(model));
    }
    warnOnce(`native:${modelKey(model)}`, `ai-compaction: native compaction is not available for ${modelKey(model)}; using ordinary compaction`);
    return undefined;
  }

  /** A rejected step: learn the window, compact aimed at 85 % of its size, return what to send once more. */
  async function recover(step: StepView, error: unknown, model: Model): Promise<StepView> {
    const limit = contextOverflowLimit(error);
    if (limit !== undefined) learnedWindows.set(modelKey(model), limit);
    const what = contextOverflowKind(error) === 'request-size' ? 'the request as too large' : 'the prompt as too long';
    warn(`ai-compaction: the provider rejected ${what} (${messageOf(error)}); compacting and retrying once`);
    // The rejected prompt is larger than the real window, whatever the window was thought to be:
    // the summary request's room is measured against that too, so it is not rejected in turn.
    // Where the provider states the rejected prompt's size, the window it states is scaled to this
    // package's estimate (which can read far less than the provider counts: code, PDFs, CJK text).
    const rejected = totalSize(step);
    const stated = promptTokensFromOverflow(error);
    const scaled = limit !== undefined && stated !== undefined && stated > 0 ? Math.floor((rejected * limit) / stated) : rejected;
    const window = Math.min(windowFor(model) ?? scaled, scaled, rejected);
    const target = Math.floor(Math.min(rejected * 0.85, window));
    try {
      return await compact(step, 'overflow', model, window, target, ceiling(window, settings.buffer, step.params.maxOutputTokens));
    } catch (failure) {
      if (CompactionError.isInstance(failure) || isAbort(failure, step.params.abortSignal)) throw failure;
      throw new CompactionError({ reason: 'summarizer-failed', message: messageOf(failure), cause: failure });
    }
  }

  async function recordUsage(view: StepView, usage: Usage | undefined): Promise<void> {
    const input = usage?.inputTokens?.total;
    // No prompt is 0 tokens: some OpenAI-compatible servers say 0 for a cached prompt. No count.
    if (typeof input !== 'number' || !(input > 0) || view.digests === undefined || view.threadDigest === undefined) return;
    const output = usage?.outputTokens?.total;
    const length = view.conversation.length;
    const count = {
      length,
      digest: await view.digests.of(length),
      checkpoint: view.checkpoint?.digest ?? null,
      frame: await frameDigest(view),
      input,
      output: typeof output === 'number' ? output : 0,
    };
    await keeper.saveCount(view.threadDigest, count, await supersededCounts(view));
  }

  function usageFailed(error: unknown): void {
    warn(`ai-compaction: recording usage failed: ${messageOf(error)}`);
  }

  function paramsFor(view: StepView): CallOptions {
    return { ...view.params, prompt: outgoingPrompt(view) };
  }

  /** Reads the stream ahead to its first content part; an overflow error before it is recovered. */
  async function streamWithRecovery(
    step: StepView | undefined,
    model: Model,
    start: () => PromiseLike<StreamResult>,
    recovered: boolean,
  ): Promise<StreamResult> {
    let result: StreamResult;
    try {
      result = await start();
    } catch (error) {
      if (step === undefined || recovered || !isContextOverflowError(error) || isAbort(error, step.params.abortSignal)) throw error;
      const next = await recover(step, error, model);
      return streamWithRecovery(next, model, () => model.doStream(paramsFor(next)), true);
    }
    // Read ahead only where a retry can follow; otherwise pass the stream straight through.
    if (step === undefined || recovered) return { ...result, stream: observe(result.stream, step) };
    const reader = result.stream.getReader();
    const heldParts: StreamPart[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (NON_CONTENT_PARTS.has(value.type)) {
        heldParts.push(value);
        continue;
      }
      if (value.type === 'error' && !isAbort(value.error, step.params.abortSignal) && overflowFromStreamPart(value)) {
        await reader.cancel().catch(() => undefined);
        const next = await recover(step, value.error, model);
        return streamWithRecovery(next, model, () => model.doStream(paramsFor(next)), true);
      }
      heldParts.push(value);
      break;
    }
    return { ...result, stream: observe(replay(heldParts, reader), step) };
  }

  function observe(stream: ReadableStream<StreamPart>, step: StepView | undefined): ReadableStream<StreamPart> {
    if (step === undefined) return stream;
    let usage: Usage | undefined;
    return stream.pipeThrough(
      new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          if (part.type !== 'finish') return controller.enqueue(part);
          usage = part.usage as Usage | undefined;
          controller.enqueue(withCompactionMetadata(part, step));
        },
        async flush() {
          await recordUsage(step, usage).catch(usageFailed);
        },
      }),
    );
  }

  const middleware = {
    specificationVersion: 'v3',

    async transformParams({ params, model }: { type: 'generate' | 'stream'; params: CallOptions; model: Model }) {
      if (ready !== undefined) {
        await ready;
        ready = undefined;
      }
      if (isSummaryRequest(params)) return params;
      const { clean, call } = takeCallOptions(params);
      const view = await resolveView(keeper, clean, call.scope ?? '', modelKey(model));
      const window = windowFor(model);
      const limit = window === undefined ? undefined : ceiling(window, settings.buffer, clean.maxOutputTokens);
      const manual = call.compact === true || pendingManual;
      pendingManual = false;
      const size = totalSize(view);
      let step = view;
      if (limit !== undefined && limit <= 0) {
        warnOnce(`ceiling:${modelKey(model)}`, `ai-compaction: the ceiling for ${modelKey(model)} is ${limit} tokens (the window less the room kept free); not compacting on its own`);
      }
      const due =
        settings.auto && view.sizeKnown && limit !== undefined && limit > 0 && size >= limit && !(await held(view, limit));
      if (manual || due) {
        try {
          step = await compact(view, manual ? 'manual' : 'auto', model, window, limit);
        } catch (error) {
          if (isAbort(error, clean.abortSignal)) throw error;
          const failure = CompactionError.isInstance(error)
            ? error
            : new CompactionError({ reason: 'summarizer-failed', message: messageOf(error), cause: error });
          if (failure.reason === 'nothing-to-compact' && limit !== undefined && !manual) {
            await placeHold(view, size, limit, 'there is nothing older to compact');
          } else {
            warn(`ai-compaction: compaction failed (${failure.reason}): ${failure.message}`);
          }
          if (window !== undefined && estimatePrompt(outgoingPrompt(view), clean.tools) > window) throw failure;
        }
      }
      const out = step.sent === view.conversation && clean === params ? params : paramsFor(step);
      steps.set(out, step);
      return out;
    },

    async wrapGenerate({ doGenerate, params, model }: { doGenerate: () => PromiseLike<GenerateResult>; params: CallOptions; model: Model }) {
      const step = steps.get(params);
      try {
        const result = await doGenerate();
        if (step === undefined) return result;
        await recordUsage(step, result.usage).catch(usageFailed);
        return withCompactionMetadata(result, step);
      } catch (error) {
        if (step === undefined || !isContextOverflowError(error) || isAbort(error, params.abortSignal)) throw error;
        const next = await recover(step, error, model);
        const result = await model.doGenerate(paramsFor(next));
        await recordUsage(next, result.usage).catch(usageFailed);
        return withCompactionMetadata(result, next);
      }
    },

    async wrapStream({ doStream, params, model }: { doStream: () => PromiseLike<StreamResult>; params: CallOptions; model: Model }) {
      return streamWithRecovery(steps.get(params), model, doStream, false);
    },

    compactNext() {
      pendingManual = true;
    },

    last() {
      return lastRecord;
    },

    state() {
      return buildState(keeper.recentThreads, keeper.recentCheckpoints);
    },
  };
  return middleware as unknown as CompactionMiddleware;
}

/**
 * A result (or `finish` stream part) of a step that compacted, with the compaction in
 * `providerMetadata.compaction`, so a host can show it (e.g. as message metadata in `useChat`).
 */
function withCompactionMetadata<T extends object>(result: T, view: StepView): T {
  const record = view.compaction;
  if (record === undefined) return result;
  const { reason, messagesCovered, tokensBefore, tokensAfter, summary } = record;
  const metadata: CompactionMetadata = { reason, messagesCovered, tokensBefore, tokensAfter, summary };
  const providerMetadata = ((result as { providerMetadata?: unknown }).providerMetadata ?? {}) as Record<string, unknown>;
  return { ...result, providerMetadata: { ...providerMetadata, compaction: metadata } };
}

/** The view of a step sent with `checkpoint` in place of what it covers, measured by estimate. */
function withCheckpoint(view: StepView, checkpoint: StoredCheckpoint): StepView {
  const arranged = arrange(view.conversation, checkpoint, view.boundary);
  const estimated = estimatePrompt([...view.system, ...arranged.sent], view.params.tools);
  return { ...view, checkpoint, ...arranged, size: { counted: 0, estimated }, sizeKnown: checkpoint.native === undefined };
}

/** Takes this package's per-call options out of `providerOptions`; the provider never sees them. */
function takeCallOptions(params: CallOptions): { clean: CallOptions; call: CompactionCallOptions } {
  const options = params.providerOptions?.[PROVIDER_OPTIONS_KEY];
  if (options === undefined) return { clean: params, call: {} };
  const { scope, compact } = options as { scope?: unknown; compact?: unknown };
  if (scope !== undefined && typeof scope !== 'string') {
    throw new TypeError(`ai-compaction: providerOptions.compaction.scope must be a string, got ${describe(scope)}`);
  }
  if (compact !== undefined && typeof compact !== 'boolean') {
    throw new TypeError(`ai-compaction: providerOptions.compaction.compact must be true or false, got ${describe(compact)}`);
  }
  const { [PROVIDER_OPTIONS_KEY]: _taken, ...rest } = params.providerOptions as ProviderOptions;
  return {
    clean: { ...params, providerOptions: Object.keys(rest).length > 0 ? rest : undefined },
    call: { ...(scope === undefined ? {} : { scope }), ...(compact === undefined ? {} : { compact }) },
  };
}

/** Replays held parts, then pulls from the reader; cancelling cancels the inner stream. */
function replay(held: StreamPart[], reader: ReadableStreamDefaultReader<StreamPart>): ReadableStream<StreamPart> {
  let index = 0;
  return new ReadableStream<StreamPart>({
    async pull(controller) {
      if (index < held.length) {
        controller.enqueue(held[index++]!);
        return;
      }
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The newest user messages among the covered ones, within `keep` tokens, oldest first (their indexes). */
function keptUserMessages(conversation: Message[], from: number, end: number, keep: number): number[] {
  const kept: number[] = [];
  let tokens = 0;
  for (let index = end - 1; index >= from; index--) {
    if (conversation[index]!.role !== 'user') continue;
    tokens += estimateMessages(conversation, index, index + 1);
    if (tokens > keep) break;
    kept.unshift(index);
  }
  return kept;
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts (a step joining another's compaction). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  const reason = () => signal.reason ?? Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
