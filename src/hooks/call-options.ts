import { PROVIDER_OPTIONS_KEY } from '../checkpoint/summarize';
import { describe } from '../errors';
import type { CallOptions, ProviderOptions } from '../prompt/types';
import type { CompactionCallOptions } from '../types';

/** Takes this package's per-call options out of `providerOptions`; the provider never sees them. */
export function takeCallOptions(params: CallOptions): { clean: CallOptions; call: CompactionCallOptions } {
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
