import { CATALOG_DATE } from './catalog/models';
import { type CatalogModel, PROMPT_CACHE_TTL_MS, catalogModel, catalogWindow } from './catalog/match';
import { type Engine, modelKey, modelOfKey, warnOnce } from './engine';
import { describe } from './errors';
import { bufferFillsWindow, defaultBuffer } from './sizing/ceiling';
import type { ModelPricing, WindowSource } from './types';

/** What an instance knows of a model (docs/design.md, "The window"): its window and prices, and where each came from. */
export interface ModelFacts {
  /** The window the ceiling is measured against, tokens; `undefined`: none known (only an overflow compacts). */
  window: number | undefined;
  /** Where it came from: `option` (`contextWindow`), `catalog`, `learned` (a provider's overflow stated a smaller one). */
  windowSource: WindowSource | undefined;
  /** Its prices as ratios to its input price, and its prompt cache's lifetime; `undefined`: unknown (not in the catalog, no complete `pricing`). */
  pricing: ModelPricing | undefined;
  /** `option` when any field of `pricing` is the host's (the others the catalog's), `catalog` when every field is the catalog's. */
  pricingSource: 'option' | 'catalog' | undefined;
  /** The catalog's entry, `undefined` when the catalog lacks the model. */
  catalog: CatalogModel | undefined;
}

type Known = Pick<Engine, 'settings' | 'learnedWindows'>;

/**
 * The one place that says what a model's window and prices are: the host's `contextWindow` and
 * `pricing` first (`pricing` field by field), then the model catalog, and a window a provider's
 * overflow stated where smaller. Says nothing in the log (`windowFor` does).
 */
export function modelFacts(engine: Known, model: { provider: string; modelId: string }): ModelFacts {
  return factsOf(engine, model, configuredWindow(engine, model));
}

function factsOf(engine: Known, model: { provider: string; modelId: string }, configured: Configured): ModelFacts {
  const catalog = catalogModel(model);
  // The host's window, else the catalog's; none when the host's function returned a bad value.
  const [given, givenSource]: [number | undefined, WindowSource | undefined] = configured.invalid
    ? [undefined, undefined]
    : configured.window !== undefined
      ? [configured.window, 'option']
      : catalog !== undefined
        ? [catalogWindow(catalog), 'catalog']
        : [undefined, undefined];
  const learned = engine.learnedWindows.get(modelKey(model));
  const useLearned = learned !== undefined && (given === undefined || learned < given);
  const { pricing, pricingSource } = pricingOf(engine.settings.pricing, catalog);
  return { window: useLearned ? learned : given, windowSource: useLearned ? 'learned' : givenSource, pricing, pricingSource, catalog };
}

/** The `contextWindow` option for a model: `invalid` when a function's result is neither a positive number nor `undefined` (`returned`). */
type Configured = { window: number | undefined; invalid: boolean; returned?: unknown };

function configuredWindow(engine: Known, model: { provider: string; modelId: string }): Configured {
  const { contextWindow } = engine.settings;
  const returned: unknown = typeof contextWindow === 'function' ? contextWindow(model as never) : contextWindow;
  if (returned === undefined) return { window: undefined, invalid: false };
  if (typeof returned === 'number' && Number.isFinite(returned) && returned > 0) return { window: returned, invalid: false };
  return { window: undefined, invalid: true, returned };
}

/** The catalog's prices as ratios to the input price, the host's fields over them; complete or `undefined`. */
function pricingOf(given: Partial<ModelPricing> | undefined, catalog: CatalogModel | undefined): Pick<ModelFacts, 'pricing' | 'pricingSource'> {
  const prices = catalog?.prices;
  const known: Partial<ModelPricing> =
    prices === undefined || !(prices.input > 0)
      ? {}
      : {
          cachedInput: ratio(prices.cacheRead ?? prices.input, prices.input),
          cacheWrite: ratio(prices.cacheWrite ?? prices.input, prices.input),
          output: ratio(prices.output, prices.input),
          cacheTtl: PROMPT_CACHE_TTL_MS,
        };
  const merged = { ...known, ...given };
  const { cachedInput, cacheWrite, output, cacheTtl } = merged;
  if (cachedInput === undefined || cacheWrite === undefined || output === undefined || cacheTtl === undefined) return { pricing: undefined, pricingSource: undefined };
  const hosts = given !== undefined && Object.keys(given).length > 0;
  return { pricing: { cachedInput, cacheWrite, output, cacheTtl }, pricingSource: hosts ? 'option' : 'catalog' };
}

/**
 * The most a summary may take: `summaryOutputTokens`, and no more than the output limit the
 * catalog states for the model that writes it (the `summarizer`, else the step's model `modelKey`),
 * which would reject a request for more (docs/design.md, "The window").
 */
export function summaryOutputTokensFor(engine: Pick<Engine, 'settings' | 'summarizer'>, modelKey: string): number {
  const { summaryOutputTokens } = engine.settings;
  const output = catalogModel(engine.summarizer ?? modelOfKey(modelKey))?.output;
  return output === undefined ? summaryOutputTokens : Math.min(summaryOutputTokens, output);
}

/** A price as a ratio to the input price, to six decimals (0.3 / 3 is 0.1, not 0.09999999999999999). */
function ratio(price: number, input: number): number {
  return Math.round((price / input) * 1e6) / 1e6;
}

/**
 * The model's window for a step (`modelFacts`), saying once what a step will not do
 * (docs/design.md, "Options", "The window", "The ceiling"): a `contextWindow` function whose
 * result is not a positive number (the step has no window), a buffer of the whole window or more
 * (the default stands), a model with no window at all (not in the catalog, no option: only an
 * overflow compacts).
 */
export function windowFor(engine: Engine, model: { provider: string; modelId: string }): number | undefined {
  const key = modelKey(model);
  const configured = configuredWindow(engine, model);
  if (configured.invalid) {
    warnOnce(
      engine,
      `contextWindow:${key}`,
      `ai-compaction: option contextWindow returned ${describe(configured.returned)} for ${key}, expected a positive number of tokens or undefined; its steps are treated as having no window`,
    );
  }
  const { window } = factsOf(engine, model, configured);
  const { buffer } = engine.settings;
  if (window === undefined && !configured.invalid) {
    warnOnce(
      engine,
      `no-window:${key}`,
      `ai-compaction: ${key} is not in the model catalog (models.dev, ${CATALOG_DATE}) and no contextWindow is given: it compacts only when the provider rejects a prompt as too long (then it learns the window the rejection states); set option contextWindow to compact before`,
    );
  } else if (window !== undefined && bufferFillsWindow(window, buffer)) {
    const shown = buffer === undefined ? '' : 'share' in buffer ? `"${buffer.share}%"` : `${buffer.tokens} tokens`;
    warnOnce(
      engine,
      `buffer:${window}`,
      `ai-compaction: option buffer ${shown} keeps the whole ${window}-token window of ${key} free or more; the default, ${defaultBuffer(window)} tokens, is kept free instead`,
    );
  }
  return window;
}
