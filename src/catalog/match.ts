import { CATALOG } from './models';

/** A model of the catalog (models.ts), as models.dev states it. */
export interface CatalogModel {
  /** models.dev's provider (`openai`, `anthropic`, `vercel` for the AI Gateway, ...). */
  provider: string;
  /** The model's id in that provider's catalog. */
  id: string;
  /** Context window, tokens (the prompt and the reply together). */
  context: number;
  /** Input limit, tokens, where the provider states one (gpt-5: 272,000 of its 400,000). */
  input: number | undefined;
  /** Output limit, tokens. */
  output: number | undefined;
  /** Prices in USD per million tokens; `undefined` where models.dev states no input or output price. */
  prices: { input: number; output: number; cacheRead: number | undefined; cacheWrite: number | undefined } | undefined;
}

/**
 * How long a provider keeps a prompt's prefix cached after its last use, in milliseconds: 5
 * minutes for all. Anthropic's default lifetime is 5 minutes (on Bedrock and Vertex too); OpenAI
 * keeps an in-memory prefix 5 to 10 minutes (up to an hour off-peak), of which the shorter is
 * the one a caller can count on (Azure OpenAI the same); Google states no lifetime for Gemini's
 * implicit cache, only that requests with the same prefix "in a short amount of time" hit it;
 * the other providers state none either. A lifetime thought shorter than the real one costs a
 * compaction made early; one thought longer, a cold cache paid as if it were warm.
 */
export const PROMPT_CACHE_TTL_MS = 300_000;

/**
 * The catalogs an AI SDK provider's models are looked up in, by the provider's name up to its
 * first dot (`openai.responses`, `anthropic.messages`, `google.generative-ai`, `amazon-bedrock`,
 * `gateway`...), as the AI SDK's clients name themselves. Azure's deployments are OpenAI's models
 * (a deployment named as the model is found in OpenAI's catalog when Azure's lacks it).
 */
const CATALOGS: Readonly<Record<string, readonly string[]>> = {
  openai: ['openai'],
  azure: ['azure', 'openai'],
  anthropic: ['anthropic'],
  google: ['google'],
  'amazon-bedrock': ['amazon-bedrock'],
  bedrock: ['amazon-bedrock'],
  'bedrock-mantle': ['amazon-bedrock'],
  xai: ['xai'],
  mistral: ['mistral'],
  deepseek: ['deepseek'],
  groq: ['groq'],
  cohere: ['cohere'],
  perplexity: ['perplexity'],
  togetherai: ['togetherai'],
  fireworks: ['fireworks-ai'],
  cerebras: ['cerebras'],
  deepinfra: ['deepinfra'],
  gateway: ['vercel'],
};

/** The catalogs a provider name points to: as above, with Google's Vertex AI (`google.vertex.chat`) and Claude on Vertex (`googleVertex.anthropic.messages`) apart. */
function catalogsOf(provider: string): readonly string[] {
  const name = provider.toLowerCase();
  if (name.startsWith('google.vertex') || /^(googlevertex|vertex)\.anthropic/.test(name)) return ['google-vertex'];
  return CATALOGS[name.split('.')[0]!] ?? [];
}

/** A date a model id ends with (`-20250929`, `-2025-08-07`, Vertex's `@20250929`): a dated id and its undated alias are one model. */
const DATE = /(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})(?=$|-v\d)/;
/** Bedrock's cross-region inference profile before a model id (`us.anthropic.claude-...`). */
const REGION = /^(?:us|eu|apac|au|jp|ca|global|us-gov)\./;

/** Each provider's models by id and by id without its date, parsed on first use. */
const indexes = new Map<string, Map<string, string>>();

function indexOf(provider: string): Map<string, string> {
  let index = indexes.get(provider);
  if (index !== undefined) return index;
  index = new Map();
  const rows = CATALOG[provider] ?? [];
  for (const row of rows) index.set(row.slice(0, row.indexOf('|')).toLowerCase(), row);
  // An undated id finds its dated model and a dated one its undated alias, where the catalog lacks the id itself.
  for (const row of rows) {
    const undated = row.slice(0, row.indexOf('|')).toLowerCase().replace(DATE, '');
    if (!index.has(undated)) index.set(undated, row);
  }
  indexes.set(provider, index);
  return index;
}

/** The ids a model id may stand under in a catalog: as given, without `models/` (Google), without Bedrock's region, without its date. */
function candidates(modelId: string): string[] {
  const id = modelId.toLowerCase().replace(/^models\//, '');
  const own = id.replace(REGION, '');
  return [...new Set([id, own, id.replace(DATE, ''), own.replace(DATE, '')])];
}

/**
 * What a model's creator calls it, for a gateway's or Bedrock's id the catalog lacks:
 * `anthropic/claude-sonnet-4.5` is Anthropic's `claude-sonnet-4-5`,
 * `anthropic.claude-sonnet-4-5-20250929-v1:0` its `claude-sonnet-4-5-20250929`.
 */
function creatorsId(modelId: string): { provider: string; id: string } | undefined {
  const gateway = /^([a-z]+)\/(.+)$/.exec(modelId.toLowerCase());
  if (gateway !== null) return { provider: gateway[1]!, id: gateway[2]!.replace(/(\d)\.(\d)/g, '$1-$2') };
  const bedrock = /^(anthropic|openai|mistral|deepseek)\.(.+?)(?:-v\d+(?::\d+)?)?$/.exec(modelId.toLowerCase().replace(REGION, ''));
  if (bedrock !== null) return { provider: bedrock[1]!, id: bedrock[2]! };
  return undefined;
}

function find(provider: string, modelId: string): CatalogModel | undefined {
  const index = indexOf(provider);
  for (const id of candidates(modelId)) {
    const row = index.get(id);
    if (row !== undefined) return parseRow(provider, row);
  }
  return undefined;
}

/**
 * The catalog's model for an AI SDK model (its `provider` and `modelId`), or `undefined` when the
 * catalog lacks it: `openai.responses` + `gpt-5`, `anthropic.messages` + `claude-sonnet-4-5` or
 * `claude-sonnet-4-5-20250929`, `gateway` + `anthropic/claude-sonnet-4.5`, `amazon-bedrock` +
 * `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `azure.responses` + a deployment named `gpt-5`.
 */
export function catalogModel(model: { provider: string; modelId: string }): CatalogModel | undefined {
  if (typeof model.provider !== 'string' || typeof model.modelId !== 'string') return undefined;
  const catalogs = catalogsOf(model.provider);
  for (const provider of catalogs) {
    const found = find(provider, model.modelId);
    if (found !== undefined) return found;
  }
  const creator = catalogs.length === 0 ? undefined : creatorsId(model.modelId);
  return creator === undefined || CATALOG[creator.provider] === undefined ? undefined : find(creator.provider, creator.id);
}

/** The window a catalogued model's prompt has: its input limit where stated, else its context window (the ceiling keeps room for the reply). */
export function catalogWindow(model: CatalogModel): number {
  return model.input ?? model.context;
}

function parseRow(provider: string, row: string): CatalogModel {
  const [id, context, input, output, inputPrice, outputPrice, cacheRead, cacheWrite] = row.split('|') as [string, ...string[]];
  const figure = (text: string | undefined) => (text === undefined || text === '' ? undefined : Number(text));
  const priceIn = figure(inputPrice);
  const priceOut = figure(outputPrice);
  return {
    provider,
    id,
    context: Number(context),
    input: figure(input),
    output: figure(output),
    prices: priceIn === undefined || priceOut === undefined ? undefined : { input: priceIn, output: priceOut, cacheRead: figure(cacheRead), cacheWrite: figure(cacheWrite) },
  };
}

/** Every model of the catalog, for the tests that walk it. */
export function catalogModels(): CatalogModel[] {
  return Object.entries(CATALOG).flatMap(([provider, rows]) => rows.map((row) => parseRow(provider, row)));
}
