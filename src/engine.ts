import { wrapLanguageModel } from 'ai';
import { LRUCache } from 'lru-cache';
import { describe, resolveOptions, type ResolvedOptions } from './options';
import type { Model } from './prompt/types';
import { guardTokenize } from './sizing/estimate';
import { LearnedSizing } from './sizing/learned';
import { Keeper } from './store/keeper';
import { createSealer } from './store/seal';
import { memoryStore } from './store/memory';
import type { StoredCheckpoint } from './store/records';
import { parseState } from './state';
import type { CompactionOptions, CompactionRecord } from './types';
import type { StepView } from './view';

/** What a compaction made: the checkpoint, and its record when it was made now (not found in the store). */
export interface Made {
  checkpoint: StoredCheckpoint;
  record?: CompactionRecord;
  /** Made ahead in the background (SPEC 14): stored as prepared, reported by the step that first sends it. */
  prepared?: boolean;
}

/** A checkpoint this instance started preparing in the background for a prefix of a conversation (SPEC 14). */
export interface Preparing {
  /** The prefix it covers: its length and digest. */
  length: number;
  digest: string;
  /** The prepared checkpoint, or `undefined` when the background compaction failed. */
  made: Promise<StoredCheckpoint | undefined>;
  /** Whether `made` has settled. */
  settled: boolean;
  /** Covers its step's whole conversation: the compaction the next step makes, prepared one step ahead. */
  whole: boolean;
  /** A catch-up: the first step after it is ready sends it, not held back until the ceiling. */
  catchUp: boolean;
}

/** What this instance prepares for the conversations of one thread. */
export interface PreparingThread {
  /** Newest first. */
  entries: Preparing[];
  /** The steps of the thread check and start one at a time: this settles when the last has. */
  turn: Promise<void>;
}

/** Threads whose background compactions an instance remembers (SPEC 14). */
const PREPARING_THREADS = 512;

/** A compaction under way, joined by concurrent steps that need the same one (SPEC 11). */
export interface Flight {
  made: Promise<Made>;
  /** The abort signal of the step that started it. */
  signal: AbortSignal | undefined;
}

/**
 * The state of one `compaction()` instance, shared by every conversation it serves. Every module
 * of the engine receives it explicitly; nothing else is mutable across steps.
 */
export interface Engine {
  readonly settings: ResolvedOptions;
  readonly keeper: Keeper;
  /** Each model's characters a token (or the `estimate` option's factor), learned from its counts (SPEC 5). */
  readonly sizing: LearnedSizing;
  readonly warn: (message: string) => void;
  readonly info: (message: string) => void;
  /** The `summarizer` option, wrapped so that it reads prompts of the consumer's AI SDK version. */
  readonly summarizer: Model | undefined;
  /** Windows stated by providers' overflow errors, by `provider:modelId`. */
  readonly learnedWindows: Map<string, number>;
  /** Compactions under way, by what they cover. */
  readonly flights: Map<string, Flight>;
  /**
   * Checkpoints prepared in the background, by the thread digest of their conversation: while
   * one covers more than a conversation's checkpoint, it is not prepared again (a failed one
   * included, so a failing summarizer costs one background request, not one per step). The least
   * recently used threads are forgotten first.
   */
  readonly preparing: LRUCache<string, PreparingThread>;
  /** Warnings given once per key (a model without native compaction, a ceiling at or below 0). */
  readonly warnedOnce: Set<string>;
  /** Models whose provider refused native compaction or answered it without an item. */
  readonly nativeUnavailable: Set<string>;
  /** Failed compactions already warned about: the steps that joined one (SPEC 11) share its error. */
  readonly failuresTold: WeakSet<object>;
  /** The view of each step, by the params `transformParams` returned, for `wrapGenerate` / `wrapStream`. */
  readonly steps: WeakMap<object, StepView>;
  /** `compactNext()` was called and no step has compacted for it yet. */
  pendingManual: boolean;
  /** The last compaction, for `last()`. */
  last: CompactionRecord | undefined;
  /** How long the summaries of each model (`provider:modelId`) took here, newest first: the lease's bound (docs/stores.md). */
  readonly summaryTimes: Map<string, number[]>;
  /**
   * When this instance last served a step of each thread, how long its conversation was and how
   * large its prompt, with the recent growths and times between steps: how fast a conversation grows.
   */
  readonly stepTimes: LRUCache<string, { at: number; length: number; size: number; growths: number[]; intervals: number[] }>;
  /** The restore of a `state` option, awaited by the first step. */
  ready: Promise<void> | undefined;
}

/** Validates the options and builds an instance's state. Throws a `TypeError` naming a bad option. */
export function createEngine(options: CompactionOptions): Engine {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`ai-compaction: options must be an object, got ${describe(options)}`);
  }
  const settings = resolveOptions(options as Record<string, unknown>);
  const restored = options.state === undefined ? undefined : parseState(options.state);
  const warn = (message: string) => settings.logger?.warn(message);
  const info = (message: string) => settings.logger?.info(message);
  const keeper = new Keeper(settings.store ?? memoryStore(), { warn, info, ...(settings.secret === undefined ? {} : { sealer: createSealer(settings.secret) }) });
  const sizing = new LearnedSizing(keeper, settings.estimate && guardTokenize(settings.estimate, warn));
  return {
    settings,
    keeper,
    sizing,
    warn,
    info,
    // Through the consumer's own `wrapLanguageModel`: AI SDK 7 turns a v3 or v2 model into a v4 one
    // there, as it does the models this middleware wraps, so the summarizer reads the prompts it gets.
    summarizer:
      settings.summarizer === undefined ? undefined : (wrapLanguageModel({ model: settings.summarizer as never, middleware: [] }) as unknown as Model),
    learnedWindows: new Map(),
    flights: new Map(),
    preparing: new LRUCache({ max: PREPARING_THREADS }),
    warnedOnce: new Set(),
    nativeUnavailable: new Set(),
    failuresTold: new WeakSet(),
    steps: new WeakMap(),
    pendingManual: false,
    last: undefined,
    summaryTimes: new Map(),
    stepTimes: new LRUCache({ max: PREPARING_THREADS }),
    ready: restored && Promise.all([keeper.restore(restored.threads, restored.checkpoints), sizing.restore(restored.sizing ?? {})]).then(() => undefined),
  };
}

export function modelKey(model: Pick<Model, 'provider' | 'modelId'>): string {
  return `${model.provider}:${model.modelId}`;
}

/** The model's window: the configured one, or the one its provider stated if smaller. */
export function windowFor(engine: Engine, model: Model): number | undefined {
  const { contextWindow } = engine.settings;
  const configured = typeof contextWindow === 'function' ? contextWindow(model) : contextWindow;
  const learned = engine.learnedWindows.get(modelKey(model));
  if (configured === undefined || !(configured > 0)) return learned;
  return learned === undefined ? configured : Math.min(configured, learned);
}

export function warnOnce(engine: Engine, key: string, message: string): void {
  if (engine.warnedOnce.has(key)) return;
  engine.warnedOnce.add(key);
  engine.warn(message);
}

/** Waits for a restored state to be written to the store, once. */
export async function whenReady(engine: Engine): Promise<void> {
  if (engine.ready === undefined) return;
  await engine.ready;
  engine.ready = undefined;
}
