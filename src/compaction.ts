import { instanceUsage } from './compact/cost';
import { lastReport } from './compact/report';
import { createEngine } from './engine';
import { generateWithRecovery } from './hooks/generate';
import { streamWithRecovery } from './hooks/stream';
import { transformStep } from './hooks/transform';
import type { CallOptions, GenerateResult, Model, StreamResult } from './prompt/types';
import { type CompactionState, type SealedCompactionState, buildState, sealState } from './state';
import type { CompactionMiddleware, CompactionOptions } from './types';
import type { StepView } from './view';

/**
 * Keeps every step of an AI SDK conversation inside the model's context window: over the ceiling,
 * older conversation is replaced by a checkpoint (a structured summary plus a verbatim record of
 * the newest turns); a step the provider still rejects as too long is compacted and sent once more.
 *
 * @example
 * const model = wrapLanguageModel({
 *   model: openai('gpt-5'),
 *   middleware: compaction({ contextWindow: 272_000 }), // the largest prompt gpt-5 takes (README, "The window")
 * });
 */
export function compaction(options: CompactionOptions & { secret: string | readonly string[] }): CompactionMiddleware<Promise<SealedCompactionState>>;
export function compaction(options?: CompactionOptions & { secret?: undefined }): CompactionMiddleware<CompactionState>;
/** With `secret`, `state()` returns a promise of the state sealed with it; without, the state. */
export function compaction(options?: CompactionOptions): CompactionMiddleware<CompactionState | Promise<SealedCompactionState>>;
export function compaction(options: CompactionOptions = {}): CompactionMiddleware<CompactionState | Promise<SealedCompactionState>> {
  const engine = createEngine(options);
  /** The view of each step, by the params `transformParams` returned, for `wrapGenerate` / `wrapStream`. */
  const steps = new WeakMap<object, StepView>();
  /** `compactNext()` was called and no step has compacted for it yet. */
  let pendingManual = false;
  const takeManual = () => {
    const manual = pendingManual;
    pendingManual = false;
    return manual;
  };

  const middleware = {
    specificationVersion: 'v3',

    async transformParams({ params, model }: { type: 'generate' | 'stream'; params: CallOptions; model: Model }) {
      const sent = await transformStep(engine, params, model, takeManual);
      if (sent.step !== undefined) steps.set(sent.params, sent.step);
      return sent.params;
    },

    async wrapGenerate({ doGenerate, params, model }: { doGenerate: () => PromiseLike<GenerateResult>; params: CallOptions; model: Model }) {
      return generateWithRecovery(engine, steps.get(params), model, doGenerate);
    },

    async wrapStream({ doStream, params, model }: { doStream: () => PromiseLike<StreamResult>; params: CallOptions; model: Model }) {
      return streamWithRecovery(engine, steps.get(params), model, doStream);
    },

    compactNext() {
      pendingManual = true;
    },

    last() {
      return lastReport(engine);
    },

    usage() {
      return instanceUsage(engine);
    },

    state() {
      const state = buildState(engine.keeper.recentThreads, engine.keeper.recentCheckpoints, engine.sizing.known());
      return engine.stateSealer === undefined ? state : sealState(state, engine.stateSealer);
    },
  };
  return middleware as unknown as CompactionMiddleware<CompactionState | Promise<SealedCompactionState>>;
}
