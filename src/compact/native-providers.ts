import type { CallOptions, Model, Part, ProviderOptions } from '../prompt/types';

/** A provider that compacts on request: how to ask, and where the item comes back. */
export interface NativeProvider {
  readonly name: 'openai' | 'anthropic';
  /** The step's request with the provider's compaction trigger. */
  trigger(params: CallOptions): CallOptions;
  /** The compaction item of a reply, as a prompt part that sends it back unchanged. */
  extract(content: readonly Part[]): Part | undefined;
}

const openai: NativeProvider = {
  name: 'openai',
  trigger: (params) => withOptions(params, 'openai', (options) => ({ ...options, compactionTrigger: true })),
  extract(content) {
    const item = content.find((part) => part.type === 'custom' && part.kind === 'openai.compaction');
    const metadata = metadataOf(item, 'openai');
    if (item === undefined || typeof metadata?.itemId !== 'string') return undefined;
    return {
      type: 'custom',
      kind: 'openai.compaction',
      providerOptions: { openai: { itemId: metadata.itemId, encryptedContent: metadata.encryptedContent } },
    };
  },
};

const anthropic: NativeProvider = {
  name: 'anthropic',
  // On-demand compaction cannot be combined with contextManagement.
  trigger: (params) =>
    withOptions(params, 'anthropic', ({ contextManagement: _dropped, ...options }) => ({
      ...options,
      compaction: { type: 'summarize' },
    })),
  extract(content) {
    const item = content.find((part) => part.type === 'text' && metadataOf(part, 'anthropic')?.type === 'compaction');
    if (item === undefined || typeof item.text !== 'string' || item.text === '') return undefined;
    const signature = metadataOf(item, 'anthropic')?.signature;
    return {
      type: 'text',
      text: item.text,
      providerOptions: { anthropic: { type: 'compaction', ...(typeof signature === 'string' ? { signature } : {}) } },
    };
  },
};

/** The native compaction of a model's provider, if it has one (OpenAI Responses, Anthropic Messages). */
export function nativeProviderFor(model: Model): NativeProvider | undefined {
  if (model.provider === 'openai.responses') return openai;
  if (model.provider === 'anthropic.messages') return anthropic;
  return undefined;
}

function withOptions(
  params: CallOptions,
  key: string,
  change: (options: Record<string, unknown>) => Record<string, unknown>,
): CallOptions {
  const providerOptions: ProviderOptions = { ...params.providerOptions, [key]: change({ ...params.providerOptions?.[key] }) };
  return { ...params, providerOptions };
}

function metadataOf(part: Part | undefined, key: string): Record<string, unknown> | undefined {
  const metadata = (part?.providerMetadata as Record<string, Record<string, unknown>> | undefined)?.[key];
  return typeof metadata === 'object' && metadata !== null ? metadata : undefined;
}
