import { PROVIDER_OPTIONS_KEY } from '../checkpoint/summarize';
import { describe } from '../errors';
import type { CallOptions, ProviderOptions } from '../prompt/types';
import type { CompactionCallOptions } from '../types';

const FIELDS = ['scope', 'compact', 'conversation'] as const;
const NAME = `providerOptions.${PROVIDER_OPTIONS_KEY}`;

/**
 * Takes this package's per-call options out of `providerOptions`; the provider never sees them.
 * Anything but an object of their fields is a `TypeError` naming the option and the value
 * (docs/design.md, "Options"): a scope lost without a word would mix tenants.
 */
export function takeCallOptions(params: CallOptions): { clean: CallOptions; call: CompactionCallOptions } {
  const providerOptions = params.providerOptions as ProviderOptions | undefined;
  if (providerOptions === undefined || !Object.prototype.hasOwnProperty.call(providerOptions, PROVIDER_OPTIONS_KEY)) return { clean: params, call: {} };
  const options: unknown = providerOptions[PROVIDER_OPTIONS_KEY];
  if (options === undefined) return { clean: params, call: {} };
  const call = checkCallOptions(options);
  const { [PROVIDER_OPTIONS_KEY]: _taken, ...rest } = providerOptions;
  return { clean: { ...params, providerOptions: Object.keys(rest).length > 0 ? rest : undefined }, call };
}

/** The call options, checked: an object of `scope`, `compact` and `conversation`, each of its type. */
function checkCallOptions(options: unknown): CompactionCallOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`ai-compaction: ${NAME} must be an object of ${FIELDS.slice(0, -1).join(', ')} and ${FIELDS[FIELDS.length - 1]}, got ${describe(options)}`);
  }
  const unknown = Object.keys(options).filter((key) => !(FIELDS as readonly string[]).includes(key));
  if (unknown.length > 0) {
    const listed = unknown.map((key) => JSON.stringify(key)).join(', ');
    throw new TypeError(`ai-compaction: ${NAME} has ${unknown.length === 1 ? 'an unknown field' : 'unknown fields'} ${listed} (it takes ${FIELDS.slice(0, -1).join(', ')} and ${FIELDS[FIELDS.length - 1]})`);
  }
  const { scope, compact, conversation } = options as Record<(typeof FIELDS)[number], unknown>;
  for (const [field, value] of [['scope', scope], ['conversation', conversation]] as const) {
    if (value !== undefined && typeof value !== 'string') throw new TypeError(`ai-compaction: ${NAME}.${field} must be a string, got ${describe(value)}`);
  }
  if (compact !== undefined && typeof compact !== 'boolean') {
    throw new TypeError(`ai-compaction: ${NAME}.compact must be true or false, got ${describe(compact)}`);
  }
  return {
    ...(scope === undefined ? {} : { scope: scope as string }),
    ...(compact === undefined ? {} : { compact }),
    ...(conversation === undefined ? {} : { conversation: conversation as string }),
  };
}
