import { wrapLanguageModel } from 'ai';
import type { Clock } from './clock';
import { describe } from './errors';
import { type ResolvedOptions, resolveOptions } from './options';
import type { Model } from './prompt/types';
import { guardTokenize } from './sizing/estimate';
import { LearnedSizing } from './sizing/learned';
import { Keeper } from './store/keeper';
import { type Sealer, createSealer } from './store/seal';
import { memoryStore } from './store/memory';
import type { CompactionStore } from './store/types';
import { type ParsedState, readState } from './state';
import type { CompactionLogger, CompactionOptions } from './types';

/**
 * The state of one `compaction()` instance that several modules share, for every conversation it
 * serves. A piece of state that one module alone uses is that module's (`ownState`).
 */
export interface Engine {
  readonly settings: ResolvedOptions;
  /** Where the time is read (clock.ts): the real clock, or a benchmark's simulated one. */
  readonly clock: Clock;
  readonly keeper: Keeper;
  /** Each model's characters a token (or the `estimate` option's factor), learned from its counts (docs/design.md, "The size of a prompt"). */
  readonly sizing: LearnedSizing;
  readonly warn: (message: string) => void;
  readonly info: (message: string) => void;
  /** The `summarizer` option, wrapped so that it reads prompts of the consumer's AI SDK version. */
  readonly summarizer: Model | undefined;
  /** Windows stated by providers' overflow errors, by `provider:modelId`. */
  readonly learnedWindows: Map<string, number>;
  /** Warnings given once per key (a model without native compaction, a ceiling at or below 0). */
  readonly warnedOnce: Set<string>;
  /** Seals `state()` with the `secret` option (no store key, no prefix: a state moves between instances). */
  readonly stateSealer: Sealer | undefined;
  /** The restore of a `state` option, awaited by the first step (which throws the `TypeError` of a refused sealed state). */
  ready: Promise<void> | undefined;
}

/**
 * A piece of an instance's state that one module owns and no other reads (what it prepares, how
 * long its summaries took, ...): made for each instance on first use, gone with it.
 */
export function ownState<T>(create: () => T): (engine: Engine) => T {
  const states = new WeakMap<Engine, T>();
  return (engine) => {
    let state = states.get(engine);
    if (state === undefined) states.set(engine, (state = create()));
    return state;
  };
}

/** Validates the options and builds an instance's state. Throws a `TypeError` naming a bad option. */
export function createEngine(options: CompactionOptions): Engine {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`ai-compaction: options must be an object, got ${describe(options)}`);
  }
  const settings = resolveOptions(options as Record<string, unknown>);
  const stateSealer = settings.secret === undefined ? undefined : createSealer(settings.secret);
  const restored = options.state === undefined ? undefined : readState(options.state, stateSealer);
  const warn = guardLogger(settings.logger, 'warn');
  const info = guardLogger(settings.logger, 'info');
  const store = settings.store ?? memoryStore();
  const { clock } = settings;
  const keeper = new Keeper(store, { warn, info, clock, ...(settings.secret === undefined ? {} : { sealer: createSealer(settings.secret, storePrefix(store)) }) });
  const sizing = new LearnedSizing(keeper, settings.estimate && guardTokenize(settings.estimate, warn), () => clock.now());
  return {
    settings,
    clock,
    keeper,
    sizing,
    warn,
    info,
    // Through the consumer's own `wrapLanguageModel`: AI SDK 7 turns a v3 or v2 model into a v4 one
    // there, as it does the models this middleware wraps, so the summarizer reads the prompts it gets.
    summarizer:
      settings.summarizer === undefined ? undefined : (wrapLanguageModel({ model: settings.summarizer as never, middleware: [] }) as unknown as Model),
    learnedWindows: new Map(),
    warnedOnce: new Set(),
    stateSealer,
    ready: restored && restoreState(restored, keeper, sizing),
  };
}

/**
 * One level of the host's logger, called as the host wrote it (`this` is the logger) and guarded:
 * whatever it throws, or a promise it returns rejects with, is dropped, so a logger's failure
 * never reaches a step, a store's timer or a background compaction (docs/design.md, "What the
 * host can read").
 */
function guardLogger(logger: CompactionLogger | undefined, level: 'info' | 'warn'): (message: string) => void {
  return (message) => {
    if (logger === undefined) return;
    try {
      const result: unknown = logger[level](message);
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
        Promise.resolve(result).catch(() => undefined);
      }
    } catch {
      // The host's logger failed: the message is lost, nothing else is.
    }
  };
}

/** Writes a restored state to the store and the learned sizing, once it is read (a sealed one is opened first). */
function restoreState(restored: ParsedState | Promise<ParsedState>, keeper: Keeper, sizing: LearnedSizing): Promise<void> {
  const write = (state: ParsedState) => Promise.all([keeper.restore(state.threads, state.checkpoints), sizing.restore(state.sizing ?? {})]).then(() => undefined);
  // A state read at once is held at once (`state()` holds it before any step).
  const ready = restored instanceof Promise ? restored.then(write) : write(restored);
  // Awaited by the first step, which throws what refused it; never an unhandled rejection before.
  ready.catch(() => undefined);
  return ready;
}

/** The prefix a store declares it puts before its keys, bound into sealed values ('' when none, or not a string). */
function storePrefix(store: CompactionStore): string {
  return typeof store.prefix === 'string' ? store.prefix : '';
}

export function modelKey(model: Pick<Model, 'provider' | 'modelId'>): string {
  return `${model.provider}:${model.modelId}`;
}

/** The model a `modelKey` names (a provider's name holds no colon; a model id may: `anthropic.claude-sonnet-4-5-20250929-v1:0`). */
export function modelOfKey(key: string): { provider: string; modelId: string } {
  const colon = key.indexOf(':');
  return { provider: key.slice(0, colon), modelId: key.slice(colon + 1) };
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
