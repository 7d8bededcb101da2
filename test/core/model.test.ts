import { describe, expect, it } from 'vitest';
import { compaction } from '../../src';
import { type CatalogModel, catalogModels, catalogWindow } from '../../src/catalog/match';
import { CATALOG_DATE } from '../../src/catalog/models';
import { type StepFacts, stepAction } from '../../src/compact/policy';
import { createEngine } from '../../src/engine';
import { modelFacts } from '../../src/model';
import { ceiling } from '../../src/sizing/ceiling';
import { chat, recordingLogger, scriptedModel, user, wrap } from '../support/harness';

// What an instance knows of a model (docs/design.md, "The window"): the host's contextWindow and
// pricing first, then the model catalog, and a window a provider's overflow stated where smaller.

const gpt5 = { provider: 'openai.responses', modelId: 'gpt-5' };
const sonnet = { provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5' };
const unknown = { provider: 'mock-provider', modelId: 'mock-model-id' };

describe('modelFacts: where the window and the prices come from', () => {
  it("should take gpt-5's input limit and prices from the catalog when no option is given", () => {
    expect(modelFacts(createEngine({}), gpt5)).toMatchObject({
      window: 272_000,
      windowSource: 'catalog',
      pricing: { cachedInput: 0.1, cacheWrite: 1, output: 8, cacheTtl: 300_000 },
      pricingSource: 'catalog',
    });
  });

  it("should take claude-sonnet-4-5's context window and its cache-write premium from the catalog", () => {
    expect(modelFacts(createEngine({}), sonnet)).toMatchObject({
      window: 200_000,
      windowSource: 'catalog',
      pricing: { cachedInput: 0.1, cacheWrite: 1.25, output: 5, cacheTtl: 300_000 },
      pricingSource: 'catalog',
    });
  });

  it('should let contextWindow win over the catalog, as a number or a function', () => {
    expect(modelFacts(createEngine({ contextWindow: 100_000 }), gpt5)).toMatchObject({ window: 100_000, windowSource: 'option' });
    expect(modelFacts(createEngine({ contextWindow: 500_000 }), gpt5)).toMatchObject({ window: 500_000, windowSource: 'option' });
    expect(modelFacts(createEngine({ contextWindow: () => 50_000 }), gpt5)).toMatchObject({ window: 50_000, windowSource: 'option' });
  });

  it('should fall back to the catalog when a contextWindow function returns undefined', () => {
    expect(modelFacts(createEngine({ contextWindow: () => undefined }), gpt5)).toMatchObject({ window: 272_000, windowSource: 'catalog' });
  });

  it('should have no window when a contextWindow function returns a bad value, catalogued or not', () => {
    expect(modelFacts(createEngine({ contextWindow: () => -1 }), gpt5)).toMatchObject({ window: undefined, windowSource: undefined });
  });

  it('should take a window stated by an overflow when smaller than the catalog or the option, not when larger', () => {
    const engine = createEngine({});
    engine.learnedWindows.set('openai.responses:gpt-5', 200_000);
    expect(modelFacts(engine, gpt5)).toMatchObject({ window: 200_000, windowSource: 'learned' });
    engine.learnedWindows.set('openai.responses:gpt-5', 400_000);
    expect(modelFacts(engine, gpt5)).toMatchObject({ window: 272_000, windowSource: 'catalog' });
    const configured = createEngine({ contextWindow: 150_000 });
    configured.learnedWindows.set('openai.responses:gpt-5', 200_000);
    expect(modelFacts(configured, gpt5)).toMatchObject({ window: 150_000, windowSource: 'option' });
    const none = createEngine({});
    none.learnedWindows.set('mock-provider:mock-model-id', 30_000);
    expect(modelFacts(none, unknown)).toMatchObject({ window: 30_000, windowSource: 'learned' });
  });

  it("should let pricing win field by field over the catalog's", () => {
    expect(modelFacts(createEngine({ pricing: { output: 6, cacheTtl: 3_600_000 } }), gpt5)).toMatchObject({
      pricing: { cachedInput: 0.1, cacheWrite: 1, output: 6, cacheTtl: 3_600_000 },
      pricingSource: 'option',
    });
  });

  it('should know neither window nor prices of an uncatalogued model without options, and take complete prices from pricing', () => {
    expect(modelFacts(createEngine({}), unknown)).toEqual({ window: undefined, windowSource: undefined, pricing: undefined, pricingSource: undefined, catalog: undefined });
    expect(modelFacts(createEngine({ pricing: { cachedInput: 0.1, output: 4 } }), unknown)).toMatchObject({ pricing: undefined, pricingSource: undefined });
    const pricing = { cachedInput: 0.25, cacheWrite: 1, output: 4, cacheTtl: 600_000 };
    expect(modelFacts(createEngine({ pricing }), unknown)).toMatchObject({ pricing, pricingSource: 'option' });
  });
});

/** A first step of a conversation, nothing prepared or measured, of the given window, ceiling and size. */
function stepFacts(given: Pick<StepFacts, 'window' | 'ceiling' | 'size'>): StepFacts {
  return {
    now: 0, auto: true, prepare: 0.8, manual: false, sizeKnown: true, counted: 0, estimated: given.size, denseReach: false, held: false,
    olderToCover: true, wholeToCover: true, clearing: { meets: false, instead: false }, catchUp: undefined, ready: undefined, writing: undefined,
    waited: undefined, prepared: { live: false, whole: false }, prepareFrom: 0, coverWhole: true, tailFits: true, pace: undefined,
    summaryMs: undefined, cachedShare: undefined, ...given,
  };
}

/** The AI SDK's provider name for a catalog (as its clients name themselves). */
const SDK_PROVIDER: Record<string, string> = {
  openai: 'openai.responses',
  azure: 'azure.responses',
  anthropic: 'anthropic.messages',
  google: 'google.generative-ai',
  'google-vertex': 'google.vertex.chat',
  'amazon-bedrock': 'amazon-bedrock',
  xai: 'xai.responses',
  mistral: 'mistral.chat',
  deepseek: 'deepseek.chat',
  groq: 'groq.chat',
  cohere: 'cohere.chat',
  perplexity: 'perplexity',
  togetherai: 'togetherai.chat',
  'fireworks-ai': 'fireworks.chat',
  cerebras: 'cerebras.chat',
  deepinfra: 'deepinfra.chat',
  vercel: 'gateway',
};

describe('compaction() with no options, on every model of the catalog', () => {
  const models = catalogModels();

  it('should name an AI SDK client for every provider of the catalog', () => {
    expect(new Set(models.map((model) => model.provider))).toEqual(new Set(Object.keys(SDK_PROVIDER)));
    expect(models.length).toBeGreaterThan(500);
  });

  it('should find each model under its own id and compact at a ceiling below the window the provider enforces', () => {
    const engine = createEngine({});
    const wrong: string[] = [];
    for (const model of models) {
      const sdk = { provider: SDK_PROVIDER[model.provider]!, modelId: model.id };
      const facts = modelFacts(engine, sdk);
      const window = catalogWindow(model);
      const limit = ceiling(window, undefined);
      // The step whose prompt reaches the ceiling compacts (the policy), and the ceiling is below the window.
      const atCeiling = stepAction(stepFacts({ window, ceiling: limit, size: limit }));
      if (facts.windowSource !== 'catalog' || facts.window !== window || facts.catalog?.id !== model.id || !(limit > 0 && limit < window) || atCeiling.kind !== 'compact') {
        wrong.push(`${sdk.provider} ${sdk.modelId}: ${facts.windowSource} ${facts.window} (${facts.catalog?.id}), ceiling ${limit}, ${atCeiling.kind}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('should say the window of an input limit, not the context window, where the provider states one', () => {
    const limited = models.filter((model: CatalogModel) => model.input !== undefined && model.input < model.context);
    expect(limited.length).toBeGreaterThan(0);
    const engine = createEngine({});
    for (const model of limited) expect(modelFacts(engine, { provider: SDK_PROVIDER[model.provider]!, modelId: model.id }).window).toBe(model.input);
  });
});

describe('the window in a step, last() and the log', () => {
  /** A mock of `openai.chat` + `gpt-4`: 8,192 tokens in the catalog, a ceiling of 6,963. */
  function gpt4(scripted: ReturnType<typeof scriptedModel>) {
    const model = scripted.model as unknown as { provider: string; modelId: string };
    Object.defineProperty(model, 'provider', { value: 'openai.chat' });
    Object.defineProperty(model, 'modelId', { value: 'gpt-4' });
    return model;
  }

  it('should compact a catalogued model with no options before its window, and say the window came from the catalog', async () => {
    const log = recordingLogger();
    const scripted = scriptedModel();
    const middleware = compaction({ logger: log.logger });
    const prompt = [...chat(5, 1_000), user('go on')];
    await wrap(gpt4(scripted), middleware).doGenerate({ prompt });
    expect(scripted.summaryCalls()).toHaveLength(1);
    expect(middleware.last()?.window).toEqual({ tokens: 8_192, source: 'catalog' });
    expect(log.info).toHaveLength(1);
    expect(log.info[0]).toMatch(/; window 8192 tokens \(catalog\)$/);
    expect(log.warn).toEqual([]);
  });

  it('should say the window came from the option when contextWindow is given', async () => {
    const log = recordingLogger();
    const scripted = scriptedModel();
    const middleware = compaction({ contextWindow: 9_000, logger: log.logger });
    await wrap(gpt4(scripted), middleware).doGenerate({ prompt: [...chat(5, 1_000), user('go on')] });
    expect(middleware.last()?.window).toEqual({ tokens: 9_000, source: 'option' });
    expect(log.info[0]).toMatch(/; window 9000 tokens \(option\)$/);
  });

  it("should ask a summary of no more than the catalog's output limit of the model that writes it", async () => {
    // gpt-4-turbo: 128,000 tokens of context, 4,096 of output. A manual compaction at a 200,000
    // window leaves a summary more room: the uncatalogued mock asks for more, gpt-4-turbo for 4,096.
    const asked = async (modelId: string | undefined) => {
      const scripted = scriptedModel();
      const model = scripted.model as unknown as { provider: string; modelId: string };
      if (modelId !== undefined) {
        Object.defineProperty(model, 'provider', { value: 'openai.chat' });
        Object.defineProperty(model, 'modelId', { value: modelId });
      }
      const middleware = compaction({ contextWindow: 200_000 });
      middleware.compactNext();
      await wrap(model, middleware).doGenerate({ prompt: [...chat(20, 1_000), user('go on')] });
      expect(scripted.summaryCalls()).toHaveLength(1);
      return scripted.summaryCalls()[0]!.maxOutputTokens!;
    };
    expect(await asked('gpt-4-turbo')).toBe(4_096);
    expect(await asked(undefined)).toBeGreaterThan(4_096);
  });

  it('should keep an uncatalogued model as before: no compaction of its own, and one line a model naming contextWindow', async () => {
    const log = recordingLogger();
    const middleware = compaction({ logger: log.logger });
    const first = scriptedModel();
    const second = scriptedModel({ modelId: 'other-model' });
    const prompt = [...chat(5, 1_000), user('go on')];
    await wrap(first.model, middleware).doGenerate({ prompt });
    await wrap(first.model, middleware).doGenerate({ prompt: [...prompt, user('more')] });
    await wrap(second.model, middleware).doGenerate({ prompt });
    expect(first.summaryCalls()).toHaveLength(0);
    expect(middleware.last()).toBeUndefined();
    expect(log.warn).toEqual(
      ['mock-provider:mock-model-id', 'mock-provider:other-model'].map(
        (key) =>
          `ai-compaction: ${key} is not in the model catalog (models.dev, ${CATALOG_DATE}) and no contextWindow is given: it compacts only when the provider rejects a prompt as too long (then it learns the window the rejection states); set option contextWindow to compact before`,
      ),
    );
  });
});
