import type { ResolvedOptions } from '../options';
import type { Model } from '../prompt/types';
import type { ModelPricing } from '../types';

/**
 * A model's prices (docs/design.md, "Compaction timed by what it costs"): the one place they are
 * read. The `pricing` option's, when it gives all four; `undefined` otherwise (the conversation is
 * then compacted at the ceiling).
 */
export function pricingOf(settings: Pick<ResolvedOptions, 'pricing'>, _model: Pick<Model, 'provider' | 'modelId'>): ModelPricing | undefined {
  const given = settings.pricing;
  if (given === undefined) return undefined;
  const { cachedInput, cacheWrite, output, cacheTtl } = given;
  if (cachedInput === undefined || cacheWrite === undefined || output === undefined || cacheTtl === undefined) return undefined;
  return { cachedInput, cacheWrite, output, cacheTtl };
}
