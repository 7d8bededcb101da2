import { bytesToBase64 } from '../prompt/canonical';
import { STATE_LIMITS, UNOPENED_WARNING_INTERVAL_MS } from '../tunables';

// How often values that do not open are warned about (tunables.ts), exported here for the tests.
export { UNOPENED_WARNING_INTERVAL_MS } from '../tunables';

/**
 * Sealed values (option `secret`, docs/stores.md): every value the middleware writes to a store is
 * encrypted and authenticated with AES-256-GCM through Web Crypto. The key is derived with HKDF
 * (SHA-256) from the secret, one per kind of value, and the whole key the value is written under
 * (the store's `prefix` included) is bound into it as additional data: a value moved to another
 * key or prefix, changed by a byte, or sealed with another secret does not open. The first secret seals, any of them opens, so a secret can be
 * rotated by putting the new one first.
 *
 * A sealed value reads `acs1.` followed by the base64 of the 12-byte nonce and the ciphertext.
 */
export const SEALED_PREFIX = 'acs1.';

/** The kinds of value kept, each sealed with its own key: what a warning about a value names. */
export type ValueKind = 'checkpoint' | 'thread record' | 'sizing record' | 'state';

/** What a sealed `state()` is bound to, in place of a store key (never a key of a store). */
export const STATE_KEY = 'state';

/**
 * The AES-GCM nonce (96 bits, the size GCM is specified for) and authentication tag (128 bits, Web
 * Crypto's default): fixed by the format of a sealed value, not tunable.
 */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The longest text a sealed value opens to, in characters: as long as the longest state (`STATE_LIMITS`). */
const MAX_SEALED_TEXT = STATE_LIMITS.characters;

/**
 * The longest value opened, in characters: a sealed value of `MAX_SEALED_TEXT` (16 MiB) of text at
 * most (3 bytes a character at worst, base64). A longer one is not decoded at all: it does not open.
 */
export const MAX_SEALED_LENGTH = SEALED_PREFIX.length + Math.ceil((NONCE_BYTES + TAG_BYTES + 3 * MAX_SEALED_TEXT) / 3) * 4;

/** The kind of value a store key holds (`cp:`, `thread:`, `sizing:`, or a sealed `state()`). */
export function kindOf(key: string): ValueKind {
  if (key === STATE_KEY) return 'state';
  if (key.startsWith('cp:')) return 'checkpoint';
  return key.startsWith('sizing:') ? 'sizing record' : 'thread record';
}

/** Seals and opens values with a list of secrets. */
export interface Sealer {
  /** `value` sealed with the first secret, bound to `key`. */
  seal(key: string, value: string): Promise<string>;
  /** The value sealed under `key` with any of the secrets, or `undefined` when it does not open. */
  open(key: string, sealed: string): Promise<string | undefined>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const SALT = encoder.encode('ai-compaction/seal');

type Bytes = Uint8Array<ArrayBuffer>;

/**
 * A sealer for `secrets` (validated by the options: at least one, each of 32 characters or more).
 * `prefix`: what the store puts before every key (`CompactionStore.prefix`), bound in with the key.
 */
export function createSealer(secrets: readonly string[], prefix = ''): Sealer {
  const keys = new Map<string, Promise<CryptoKey>>();
  const keyFor = (index: number, kind: ValueKind): Promise<CryptoKey> => {
    const id = `${index}:${kind}`;
    let key = keys.get(id);
    if (key === undefined) {
      key = derive(secrets[index]!, kind);
      keys.set(id, key);
    }
    return key;
  };
  return {
    async seal(storeKey, value) {
      const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
      const key = await keyFor(0, kindOf(storeKey));
      const sealed = new Uint8Array(
        await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: encoder.encode(prefix + storeKey) }, key, encoder.encode(value)),
      );
      const out = new Uint8Array(NONCE_BYTES + sealed.length);
      out.set(nonce);
      out.set(sealed, NONCE_BYTES);
      return SEALED_PREFIX + bytesToBase64(out);
    },
    async open(storeKey, sealed) {
      if (!sealed.startsWith(SEALED_PREFIX) || sealed.length > MAX_SEALED_LENGTH) return undefined;
      const bytes = base64ToBytes(sealed.slice(SEALED_PREFIX.length));
      // A nonce and the 16-byte tag at least.
      if (bytes === undefined || bytes.length < NONCE_BYTES + TAG_BYTES) return undefined;
      const nonce = bytes.subarray(0, NONCE_BYTES);
      const data = bytes.subarray(NONCE_BYTES);
      const additionalData = encoder.encode(prefix + storeKey);
      for (let index = 0; index < secrets.length; index++) {
        try {
          const key = await keyFor(index, kindOf(storeKey));
          const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonce, additionalData }, key, data);
          return decoder.decode(plain);
        } catch {
          // Not this secret (or not a value sealed by this package): try the next.
        }
      }
      return undefined;
    },
  };
}

/**
 * Warns about values that do not open (docs/stores.md, "Sealed values"): the first of each kind at
 * once, then at most one warning per kind every `UNOPENED_WARNING_INTERVAL_MS`, which counts those
 * ignored since the last one. Tampering goes on being reported for an instance's whole life,
 * without a line per value.
 */
export function unopenedWarnings(warn: (message: string) => void): (key: string) => void {
  const kinds = new Map<ValueKind, { warnedAt: number; quiet: number }>();
  return (key) => {
    const kind = kindOf(key);
    const now = Date.now();
    const seen = kinds.get(kind);
    if (seen !== undefined && now - seen.warnedAt < UNOPENED_WARNING_INTERVAL_MS) {
      seen.quiet++;
      return;
    }
    const quiet = seen?.quiet ?? 0;
    kinds.set(kind, { warnedAt: now, quiet: 0 });
    const since = quiet === 0 ? '' : `; ${quiet} more ${kind}${quiet === 1 ? '' : 's'} did not open since the last warning`;
    warn(
      `ai-compaction: ignored a ${kind} under ${key} that does not open with the secret (not sealed, sealed with another secret, changed, or moved from another key)${since}; others in the next minute are counted in the next warning`,
    );
  };
}

async function derive(secret: string, kind: ValueKind): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: SALT, info: encoder.encode(`ai-compaction/seal/v1/${kind}`) },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

function base64ToBytes(text: string): Bytes | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return bytes;
  } catch {
    return undefined;
  }
}
