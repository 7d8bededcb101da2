import { isSummaryRequest } from './checkpoint/summarize';
import { takeCallOptions } from './call-options';
import { decide } from './compact/decide';
import { compactAtCeiling, prepareAhead, sendCatchUp } from './compact/prepare';
import { type Engine, createEngine, modelKey, whenReady } from './engine';
import { generateWithRecovery, paramsFor } from './overflow/recover';
import { streamWithRecovery } from './overflow/stream';
import type { CallOptions, GenerateResult, Model, StreamResult } from './prompt/types';
import { buildState } from './state';
import type { CompactionMiddleware, CompactionOptions } from './types';
import { type StepView, resolveView } from './view';

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
  const engine = createEngine(options);

  const middleware = {
    specificationVersion: 'v3',

    async transformParams({ params, model }: { type: 'generate' | 'stream'; params: CallOptions; model: Model }) {
      await whenReady(engine);
      if (isSummaryRequest(params)) return params;
      const { clean, call } = takeCallOptions(params);
      const key = modelKey(model);
      // Every store call of this step, to the count written after its reply, draws on one budget.
      const budget = engine.keeper.budget();
      const view = await resolveView(engine.keeper, clean, call.scope ?? '', key, engine.sizing.estimator(key, budget), budget);
      // A catch-up prepared in the background after a checkpoint that left the prompt over the
      // budget is sent by the first step after it is ready.
      const current = await sendCatchUp(engine, view, model);
      const plan = await decide(engine, current, model, call);
      const step = plan.reason === undefined ? current : await compactAtCeiling(engine, current, model, { ...plan, reason: plan.reason });
      // Near the ceiling (also right after a prepared checkpoint was sent): the next checkpoint is
      // prepared beside this step, which does not wait for it.
      await prepareAhead(engine, step, model, plan);
      return send(engine, params, view, step);
    },

    async wrapGenerate({ doGenerate, params, model }: { doGenerate: () => PromiseLike<GenerateResult>; params: CallOptions; model: Model }) {
      return generateWithRecovery(engine, engine.steps.get(params), model, doGenerate);
    },

    async wrapStream({ doStream, params, model }: { doStream: () => PromiseLike<StreamResult>; params: CallOptions; model: Model }) {
      return streamWithRecovery(engine, engine.steps.get(params), model, doStream);
    },

    compactNext() {
      engine.pendingManual = true;
    },

    last() {
      return engine.last;
    },

    state() {
      return buildState(engine.keeper.recentThreads, engine.keeper.recentCheckpoints, engine.sizing.records());
    },
  };
  return middleware as unknown as CompactionMiddleware;
}

/**
 * The params that go out for a step, remembered with its view for `wrapGenerate` / `wrapStream`:
 * the caller's own params when nothing changed.
 */
function send(engine: Engine, params: CallOptions, view: StepView, step: StepView): CallOptions {
  const out = step.sent === view.conversation && view.params === params ? params : paramsFor(step);
  engine.steps.set(out, step);
  return out;
}
