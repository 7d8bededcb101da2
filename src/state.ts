import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { z } from 'zod';
import { describe } from './errors';
import { canonical } from './prompt/canonical';
import { FORMAT_VERSION, type ModelSizing, type StoredCheckpoint, type Thread, checkpointSchema, sizingName, sizingSchema, threadSchema } from './store/format';
import { MAX_SEALED_LENGTH, STATE_KEY, type Sealer } from './store/seal';
import { STATE_LIMITS } from './tunables';

/** The JSON value `state()` returns and `compaction({ state })` continues from. */
export interface CompactionState {
  format: 'ai-compaction/state';
  version: number;
  threads: Record<string, unknown>;
  checkpoints: Record<string, unknown>;
  /** Per model and scope (keyed `["provider:modelId","scope"]`), the recent counts its characters a token are learned from; absent when none. */
  sizing?: Record<string, unknown>;
  /** SHA-256 of the canonical form of the rest: a state changed by mistake is refused (anyone can recompute it: the `secret` option seals a state against forgery). */
  checksum: string;
}

/**
 * A state `state()` made with the `secret` option: the JSON of the state sealed like a stored value
 * (AES-GCM, its own HKDF key), so that nobody without the secret reads its summaries or forges one.
 */
export interface SealedCompactionState {
  format: 'ai-compaction/state';
  version: number;
  /** `acs1.` and the base64 of the nonce and the ciphertext (docs/stores.md, "Sealed values"). */
  sealed: string;
}

// The most a state may hold (tunables.ts), exported here for the tests.
export { STATE_LIMITS } from './tunables';

const digestKey = z.string().regex(/^[0-9a-f]{64}$/);

const FORMAT = 'ai-compaction/state';

const stateSchema = z
  .object({
    format: z.literal(FORMAT),
    version: z.number(),
    threads: z.record(digestKey, threadSchema),
    checkpoints: z.record(digestKey, checkpointSchema),
    sizing: z.record(z.string().min(1), sizingSchema).optional(),
    checksum: digestKey,
  })
  .strict();

export interface ParsedState {
  threads: Record<string, Thread>;
  checkpoints: Record<string, StoredCheckpoint>;
  sizing?: Record<string, ModelSizing>;
}

function checksumOf(body: Omit<CompactionState, 'checksum'>): string {
  return bytesToHex(sha256(utf8ToBytes(canonical(body))));
}

export function buildState(
  threads: Map<string, Thread>,
  checkpoints: Map<string, StoredCheckpoint>,
  sizing: Record<string, ModelSizing> = {},
): CompactionState {
  const body = {
    format: 'ai-compaction/state' as const,
    version: FORMAT_VERSION,
    threads: Object.fromEntries(threads),
    checkpoints: Object.fromEntries(checkpoints),
    ...(Object.keys(sizing).length === 0 ? {} : { sizing }),
  };
  return structuredClone({ ...body, checksum: checksumOf(body) });
}

/** Seals a state with the secret (`state()` of an instance with the `secret` option). */
export async function sealState(state: CompactionState, sealer: Sealer): Promise<SealedCompactionState> {
  return { format: FORMAT, version: FORMAT_VERSION, sealed: await sealer.seal(STATE_KEY, JSON.stringify(state)) };
}

/**
 * Reads the `state` option. Without a secret, a state from `state()` (validated at once, or a
 * `TypeError`). With one (`sealer`), only a sealed state is accepted: it is opened and validated
 * when the first step awaits it, and one that does not open is refused like a malformed one.
 */
export function readState(value: unknown, sealer: Sealer | undefined): ParsedState | Promise<ParsedState> {
  const sealed = typeof value === 'object' && value !== null && Object.prototype.hasOwnProperty.call(value, 'sealed');
  if (!sealed) {
    if (sealer !== undefined) refuse('it is not sealed: with the secret option, only a state that state() sealed with the secret is accepted');
    return parseState(value);
  }
  const { format, version, sealed: text, ...rest } = value as Record<string, unknown>;
  if (format !== FORMAT) refuse(`it is not a state of ai-compaction (${notOurFormat(value as object)})`);
  if (version !== FORMAT_VERSION) refuse(`it is of version ${describe(version)}, this version reads ${FORMAT_VERSION}`);
  if (Object.keys(rest).length > 0) refuse(`the state has ${Object.keys(rest).length === 1 ? 'an unknown field' : 'unknown fields'} ${Object.keys(rest).map((key) => JSON.stringify(key)).join(', ')}`);
  if (typeof text !== 'string') refuse(`sealed is ${valueText(text)}, expected the text state() sealed`);
  if (text.length > MAX_SEALED_LENGTH) refuse(`it takes ${text.length} characters, more than the ${MAX_SEALED_LENGTH} a sealed state may take`);
  if (sealer === undefined) refuse('it is sealed: give compaction() the secret it was sealed with');
  return sealer.open(STATE_KEY, text).then((opened) => {
    if (opened === undefined) refuse('it does not open with the secret (sealed with another secret, or changed after state() sealed it)');
    let parsed: unknown;
    try {
      parsed = JSON.parse(opened!);
    } catch {
      refuse('what it seals is not JSON');
    }
    return parseState(parsed);
  });
}

function refuse(why: string): never {
  throw new TypeError(`ai-compaction: option state is refused: ${why}`);
}

/** Refuses a state past `STATE_LIMITS`: the entries are counted first, then the characters of its JSON. */
function checkLimits(value: object): void {
  const { threads, checkpoints, sizing } = value as Record<string, unknown>;
  const entries = [threads, checkpoints, sizing].reduce<number>((sum, map) => sum + (typeof map === 'object' && map !== null ? Object.keys(map).length : 0), 0);
  if (entries > STATE_LIMITS.entries) refuse(`it holds ${entries} entries (threads, checkpoints and models), more than the ${STATE_LIMITS.entries} a state may hold`);
  const characters = JSON.stringify(value).length;
  if (characters > STATE_LIMITS.characters) refuse(`it takes ${characters} characters as JSON, more than the ${STATE_LIMITS.characters} a state may take`);
}

/**
 * Validates a state from `state()`. A malformed state, one of another version, one past the
 * limits, or one changed after it was made is refused with a `TypeError` saying why; nothing of it
 * is applied.
 */
export function parseState(value: unknown): ParsedState {
  const fail = refuse;
  if (typeof value !== 'object' || value === null) fail(`expected the object state() returns, got ${value === null ? 'null' : typeof value}`);
  const { format, version } = value as { format?: unknown; version?: unknown };
  if (format !== FORMAT) fail(`it is not a state of ai-compaction (${notOurFormat(value as object)})`);
  if (version !== FORMAT_VERSION) fail(`it is of version ${describe(version)}, this version reads ${FORMAT_VERSION}`);
  checkLimits(value as object);
  const parsed = stateSchema.safeParse(value);
  if (!parsed.success) {
    const [issue, ...more] = parsed.error.issues;
    fail(`${explainIssue(issue!, value)}${more.length === 0 ? '' : ` (and ${more.length} more ${more.length === 1 ? 'problem' : 'problems'})`}`);
  }
  const state = parsed.data!;
  const { checksum, ...body } = state;
  if (checksumOf(body) !== checksum) fail('its checksum does not match its content (it was changed after state() made it)');
  for (const [digest, checkpoint] of Object.entries(state.checkpoints)) {
    if (checkpoint.digest !== digest) fail(`checkpoints.${digest} holds the checkpoint of another conversation`);
  }
  for (const [digest, thread] of Object.entries(state.threads)) {
    for (const ref of [...thread.checkpoints, ...(thread.prepared ?? [])]) {
      const checkpoint = state.checkpoints[ref.digest];
      if (checkpoint !== undefined && checkpoint.length !== ref.length) {
        fail(`threads.${digest} lists checkpoint ${ref.digest} as covering ${ref.length} messages, but it covers ${checkpoint.length}`);
      }
    }
  }
  for (const [name, sizing] of Object.entries(state.sizing ?? {})) {
    if (sizingName(sizing.model, sizing.scope) !== name) fail(`sizing.${name} holds what was learned of another model or scope (${sizingName(sizing.model, sizing.scope)})`);
  }
  return { threads: state.threads, checkpoints: state.checkpoints, ...(state.sizing === undefined ? {} : { sizing: state.sizing }) };
}

/** Why a value with another `format` is not a state: what it has instead. */
function notOurFormat(value: object): string {
  if (Array.isArray(value)) return `no format ${JSON.stringify(FORMAT)}; got an array`;
  const { format } = value as { format?: unknown };
  if (format !== undefined) return `its format is ${valueText(format)}, expected ${JSON.stringify(FORMAT)}`;
  const keys = Object.keys(value);
  const listed = keys.length > 8 ? `${keys.slice(0, 8).join(', ')} and ${keys.length - 8} more` : keys.join(', ');
  return `no format ${JSON.stringify(FORMAT)}; got ${keys.length === 0 ? 'an empty object' : `an object with keys ${listed}`}`;
}

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/** Where in the state a path points: `checkpoints.<digest>.native.keep`, `threads.<digest>.holds[0].size`. */
function at(path: Path): string {
  if (path.length === 0) return 'the state';
  return path.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`)).join('');
}

/** The value at `path` of `root`, and whether it is there at all. */
function valueAt(root: unknown, path: Path): { found: boolean; value: unknown } {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.prototype.hasOwnProperty.call(value, key)) return { found: false, value: undefined };
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return { found: true, value };
}

/** A value as a refusal shows it: text quoted and cut, numbers as they are, objects by their kind. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  if (typeof value === 'bigint') return `${value}n`;
  return typeof value === 'function' ? 'a function' : String(value);
}

const EXPECTED_TYPES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  null: 'null',
};

const DIGEST_PATTERN = '/^[0-9a-f]{64}$/';

/** What a string format asks for, in words. */
function formatText(issue: Extract<Issue, { code: 'invalid_format' }>): string {
  if (issue.format === 'regex') return 'pattern' in issue && issue.pattern === DIGEST_PATTERN ? 'a 64-hex-digit digest' : `text matching ${issue.pattern}`;
  return `a valid ${issue.format}`;
}

/** How many of what a too-big or too-small value has: a number's value, an array's entries, a text's characters. */
function amount(origin: string, value: unknown): string {
  if (origin === 'array' && Array.isArray(value)) return `has ${value.length} entries`;
  if (origin === 'string' && typeof value === 'string') return `is ${value.length} characters long`;
  return `is ${valueText(value)}`;
}

/** A bound in words: `at least 1 entry`, `more than 0`, `64 or less`. */
function bound(origin: string, limit: number | bigint, inclusive: boolean, side: 'least' | 'most'): string {
  const unit = origin === 'array' ? ' entries' : origin === 'string' ? ' characters' : '';
  if (unit === '') return inclusive ? `${limit} or ${side === 'least' ? 'more' : 'less'}` : `${side === 'least' ? 'more' : 'less'} than ${limit}`;
  return inclusive ? `at ${side} ${limit}${unit}` : `${side === 'least' ? 'more' : 'fewer'} than ${limit}${unit}`;
}

/**
 * One schema issue as a sentence in the package's words: which field is wrong, what it holds and
 * what was expected (`checkpoints.<digest> has an unknown field "extra"`).
 */
function explainIssue(issue: Issue, root: unknown): string {
  const { path } = issue;
  const where = at(path);
  const { found, value } = valueAt(root, path);
  const parent = at(path.slice(0, -1));
  const field = JSON.stringify(String(path[path.length - 1]));
  /** `is <value>, expected <what>`, or that the field is missing. */
  const expected = (what: string) => (found ? `${where} is ${valueText(value)}, expected ${what}` : `${parent} has no field ${field} (expected ${what})`);
  switch (issue.code) {
    case 'invalid_type':
      return expected(EXPECTED_TYPES[issue.expected] ?? `a value of type ${issue.expected}`);
    case 'invalid_value':
      return expected(issue.values.length === 1 ? valueText(issue.values[0]) : `one of ${issue.values.map(valueText).join(', ')}`);
    case 'invalid_format':
      return expected(formatText(issue));
    case 'too_small':
      return `${where} ${amount(issue.origin, value)}, expected ${bound(issue.origin, issue.minimum, issue.inclusive !== false, 'least')}`;
    case 'too_big':
      return `${where} ${amount(issue.origin, value)}, expected ${bound(issue.origin, issue.maximum, issue.inclusive !== false, 'most')}`;
    case 'not_multiple_of':
      return expected(`a multiple of ${issue.divisor}`);
    case 'unrecognized_keys': {
      const keys = issue.keys.map((key) => JSON.stringify(key)).join(', ');
      return `${where} has ${issue.keys.length === 1 ? 'an unknown field' : 'unknown fields'} ${keys}`;
    }
    case 'invalid_key': {
      const why = issue.issues[0];
      const want = why?.code === 'invalid_format' ? formatText(why) : 'a valid key';
      return `${parent} has a key ${JSON.stringify(String(path[path.length - 1]))} that is not ${want}`;
    }
    case 'invalid_element':
      return `${where} has an entry ${valueText(issue.key)} that is not valid`;
    case 'invalid_union':
      return `${where} is ${found ? valueText(value) : 'missing'}, which is none of the forms expected`;
    case 'custom':
      return `${where} ${issue.message}`;
    default:
      return `${where}: ${(issue as { message: string }).message}`;
  }
}
