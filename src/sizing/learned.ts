import { LRUCache } from 'lru-cache';
import { sha256Hex } from '../prompt/hash';
import type { Keeper, StoreBudget } from '../store/keeper';
import { FORMAT_VERSION, type ModelSizing, type SizingSample, sizingName } from '../store/format';
import { oldestFirst } from '../store/recent';
import { CHARS_PER_TOKEN, CHARS_PER_TOKEN_BOUNDS, IMPLAUSIBLE_COUNT_DIVISOR, MODEL_LIMIT, PLAUSIBLE_SPREAD, REFRESH_MS, SAMPLE_LIMIT, TOKENIZER_FACTOR_BOUNDS } from '../tunables';
import type { Estimator, Tokenize } from './estimate';

// Exported here for the tests.
export { REFRESH_MS, SAMPLE_LIMIT } from '../tunables';

type Kind = 'chars' | 'tokenizer';

const clamp = (value: number, { min, max }: { min: number; max: number }) => Math.min(max, Math.max(min, value));

/**
 * Characters a token from samples: all their characters over all their counted tokens (so a long
 * prompt weighs more than a short one), within 1.5 to 5; 4 without samples.
 */
export function charsPerToken(samples: readonly SizingSample[]): number {
  const { measured, counted } = totals(samples);
  return counted === 0 ? CHARS_PER_TOKEN : clamp(measured / counted, CHARS_PER_TOKEN_BOUNDS);
}

/** The factor a tokenizer's figures are multiplied by: counted tokens over its tokens, within 1 to 2; 1 without samples. */
export function tokenizerFactor(samples: readonly SizingSample[]): number {
  const { measured, counted } = totals(samples);
  return measured === 0 ? 1 : clamp(counted / measured, TOKENIZER_FACTOR_BOUNDS);
}

function totals(samples: readonly SizingSample[]): { measured: number; counted: number } {
  let measured = 0;
  let counted = 0;
  for (const sample of samples) {
    measured += sample.measured;
    counted += sample.counted;
  }
  return { measured, counted };
}

/** The estimator a model's sizing gives: its characters a token, or the tokenizer with its factor. */
export function estimatorOf(sizing: ModelSizing | undefined, tokenize?: Tokenize): Estimator {
  const charsRatio = charsPerToken(sizing?.chars ?? []);
  if (tokenize === undefined) return (sizing?.chars.length ?? 0) === 0 ? { charsPerToken: charsRatio, untaught: true } : { charsPerToken: charsRatio };
  return { charsPerToken: charsRatio, tokenizer: { tokenize, factor: tokenizerFactor(sizing?.tokenizer ?? []) } };
}

/**
 * A sample of a provider's count of a prompt whose text measured `measured` (characters, or the
 * tokenizer's tokens) and whose files count `fixed` tokens (taken off the count: they keep their
 * fixed figures). `undefined` when the count says nothing of the text.
 */
export function sampleOf(kind: Kind, measured: number, fixed: number, input: number, at: number): SizingSample | undefined {
  const counted = input - fixed;
  if (!(measured > 0) || !(counted > 0) || !Number.isFinite(measured) || !Number.isInteger(counted)) return undefined;
  const [ratio, bounds] = kind === 'chars' ? [measured / counted, CHARS_PER_TOKEN_BOUNDS] : [counted / measured, TOKENIZER_FACTOR_BOUNDS];
  if (ratio < bounds.min / PLAUSIBLE_SPREAD || ratio > bounds.max * PLAUSIBLE_SPREAD) return undefined;
  return { at, measured, counted };
}

/**
 * Whether a provider's count of a prompt cannot be right (docs/design.md, "The size of a prompt"):
 * under its system messages and tool definitions alone (`frameChars`), or under a fifth of its
 * whole text (`chars`), each at 5 characters a token, the fewest tokens any text is taken to be.
 * Files are left out: their fixed figures can be far above what a provider counts for them.
 */
export function countCannotBeRight(input: number, chars: number, frameChars: number): boolean {
  const fewest = (characters: number) => characters / CHARS_PER_TOKEN_BOUNDS.max;
  return input < fewest(frameChars) || input < fewest(chars) / IMPLAUSIBLE_COUNT_DIVISOR;
}

/** Two lists of samples as one: each once, newest first, at most `SAMPLE_LIMIT`. */
export function mergeSamples(newer: readonly SizingSample[], older: readonly SizingSample[]): SizingSample[] {
  const seen = new Set<string>();
  const merged: SizingSample[] = [];
  for (const sample of [...newer, ...older]) {
    const key = `${sample.at}:${sample.measured}:${sample.counted}`;
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(sample);
  }
  // A stable sort: of two samples of the same moment, the newer list's comes first.
  return merged.sort((a, b) => b.at - a.at).slice(0, SAMPLE_LIMIT);
}

export function mergeSizing(newer: ModelSizing, older: ModelSizing | undefined): ModelSizing {
  if (older === undefined) return newer;
  return { ...newer, chars: mergeSamples(newer.chars, older.chars), tokenizer: mergeSamples(newer.tokenizer, older.tokenizer) };
}

export function emptySizing(model: string, scope: string): ModelSizing {
  return { v: FORMAT_VERSION, model, scope, chars: [], tokenizer: [] };
}

/** A prompt's text as measured for learning: its characters, the tokenizer's tokens (when known), its files' fixed tokens. */
export interface MeasuredText {
  chars: number;
  tokenized: number | undefined;
  fixed: number;
}

interface Entry {
  /** What it was learned of: the model and scope of `sizing`. */
  model: string;
  scope: string;
  sizing: ModelSizing;
  estimator: Estimator;
  /** When the store was last asked for this model (-Infinity: never). */
  readAt: number;
  reading: Promise<void> | undefined;
  writing: Promise<void> | undefined;
  /** Learned since the last write began. */
  dirty: boolean;
  key: Promise<string> | undefined;
}

/**
 * What an instance knows of each model's characters a token in each scope (docs/design.md, "The
 * size of a prompt": one tenant's prompts never move another tenant's estimate), shared with other
 * instances through the store under `sizing:<digest of sizingName(model, scope)>`. The sizing is
 * read on a model's first step in a scope (beside the step's other reads) and after that at most
 * every `REFRESH_MS`; each count adds a sample and writes the sizing, merged
 * with what was last read (the store has no compare-and-set: a sample another instance wrote
 * meanwhile may be lost, and the ratio then rests on one count fewer). A store that fails leaves
 * what this instance learned itself.
 */
export class LearnedSizing {
  private readonly models = new LRUCache<string, Entry>({ max: MODEL_LIMIT });

  constructor(
    private readonly keeper: Keeper,
    private readonly tokenize: Tokenize | undefined,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /**
   * The estimator for a model's step in a scope: the sizing is read on its first step and then at
   * most every `REFRESH_MS` (the step starts this before its thread read, so both run at once).
   * Never rejects.
   */
  estimator(model: string, scope: string, budget: StoreBudget): Promise<Estimator> {
    const entry = this.entry(model, scope);
    if (this.now() - entry.readAt >= REFRESH_MS) this.startRead(entry, budget);
    return entry.reading === undefined ? Promise.resolve(entry.estimator) : entry.reading.then(() => entry.estimator);
  }

  /** Learns from a provider's count (`input` tokens) of a prompt of a scope whose text measured `text`. */
  async learn(model: string, scope: string, text: MeasuredText, input: number, budget: StoreBudget): Promise<void> {
    const at = this.now();
    const chars = sampleOf('chars', text.chars, text.fixed, input, at);
    const tokenizer = this.tokenize === undefined || text.tokenized === undefined ? undefined : sampleOf('tokenizer', text.tokenized, text.fixed, input, at);
    if (chars === undefined && tokenizer === undefined) return;
    const entry = this.entry(model, scope);
    this.update(entry, { ...entry.sizing, chars: chars === undefined ? [] : [chars], tokenizer: tokenizer === undefined ? [] : [tokenizer] });
    await this.persist(entry, budget);
  }

  /** The sizing of each model and scope this instance knows, for `state()`, by `sizingName`. */
  known(): Record<string, ModelSizing> {
    const known: Record<string, ModelSizing> = {};
    for (const [name, entry] of oldestFirst(this.models)) {
      if (entry.sizing.chars.length + entry.sizing.tokenizer.length > 0) known[name] = entry.sizing;
    }
    return known;
  }

  /** Takes over the sizing of models from `state()`, at once, and writes it to the store merged with what it has. */
  async restore(restored: Record<string, ModelSizing>): Promise<void> {
    const budget = this.keeper.budget();
    await Promise.all(
      Object.values(restored).map(async (sizing) => {
        const entry = this.entry(sizing.model, sizing.scope);
        this.update(entry, sizing);
        this.startRead(entry, budget);
        await this.persist(entry, budget);
      }),
    );
  }

  private entry(model: string, scope: string): Entry {
    const name = sizingName(model, scope);
    // A look makes it the most recently used.
    let entry = this.models.get(name);
    if (entry === undefined) {
      const sizing = emptySizing(model, scope);
      entry = { model, scope, sizing, estimator: estimatorOf(sizing, this.tokenize), readAt: Number.NEGATIVE_INFINITY, reading: undefined, writing: undefined, dirty: false, key: undefined };
      this.models.set(name, entry);
    }
    return entry;
  }

  private update(entry: Entry, newer: ModelSizing): void {
    entry.sizing = mergeSizing(newer, entry.sizing);
    entry.estimator = estimatorOf(entry.sizing, this.tokenize);
  }

  private key(entry: Entry): Promise<string> {
    entry.key ??= sha256Hex(new TextEncoder().encode(sizingName(entry.model, entry.scope)));
    return entry.key;
  }

  private startRead(entry: Entry, budget: StoreBudget): void {
    if (entry.reading !== undefined) return;
    entry.readAt = this.now();
    entry.reading = this.read(entry, budget).finally(() => {
      entry.reading = undefined;
    });
  }

  private async read(entry: Entry, budget: StoreBudget): Promise<void> {
    const stored = await this.keeper.sizing(await this.key(entry), entry.model, entry.scope, budget);
    if (stored !== undefined) this.update(entry, stored);
  }

  /** Writes the sizing; writes of one model run one at a time, and a write begun later carries every sample learned before it. */
  private async persist(entry: Entry, budget: StoreBudget): Promise<void> {
    entry.dirty = true;
    while (entry.writing !== undefined) await entry.writing;
    if (!entry.dirty) return;
    entry.dirty = false;
    const write = async () => {
      // A read under way may bring samples of other instances: the write carries them too.
      if (entry.reading !== undefined) await entry.reading;
      await this.keeper.saveSizing(await this.key(entry), entry.sizing, budget);
    };
    entry.writing = write().finally(() => {
      entry.writing = undefined;
    });
    await entry.writing;
  }
}
