import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { type CanonicalSink, writeCanonical } from './canonical';
import type { Message } from './types';

const encoder = new TextEncoder();

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** `bytes` random bytes from Web Crypto, as hex. */
export function randomHex(bytes: number): string {
  let hex = '';
  for (const byte of crypto.getRandomValues(new Uint8Array(bytes))) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** A growing byte buffer written with TextEncoder.encodeInto: no per-message arrays, no final copy. */
class ByteSink {
  bytes = new Uint8Array(1 << 16);
  length = 0;
  private pending = '';

  /** Small pieces are gathered and encoded together. */
  text(piece: string): void {
    this.pending += piece;
    if (this.pending.length > 8192) this.flush();
  }

  /** A large string, encoded straight from the caller's string (no copy into a bigger one). */
  large(value: string): void {
    this.flush();
    this.encode(value);
  }

  flush(): void {
    if (this.pending === '') return;
    this.encode(this.pending);
    this.pending = '';
  }

  private encode(value: string): void {
    const worst = value.length * 3;
    if (this.length + worst > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + worst));
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    this.length += encoder.encodeInto(value, this.bytes.subarray(this.length)).written;
  }
}

const LARGE = 256;
type WellFormed = string & { isWellFormed?: () => boolean };

/**
 * The canonical form (see `writeCanonical`) as bytes, with each string written `s<length>:<its
 * characters>` rather than JSON-escaped: unambiguous, and a large string is encoded from the
 * caller's string without being escaped or copied first. A string with lone surrogates (which
 * UTF-8 cannot carry) is written `j<JSON>` instead.
 */
function byteSinkWriter(sink: ByteSink): CanonicalSink {
  return {
    text: (piece) => sink.text(piece),
    string(value) {
      if ((value as WellFormed).isWellFormed?.() === false) return sink.text(`j${JSON.stringify(value)}`);
      sink.text(`s${value.length}:`);
      if (value.length > LARGE) sink.large(value);
      else sink.text(value);
    },
  };
}

/**
 * What the digests of a conversation are keyed by besides its messages (docs/stores.md, "Keys and
 * records"): the scope (tenant) and, when the host names the conversation, that name; without a
 * name, the system messages the step was sent with, since a summary may hold what they hold.
 */
export interface DigestKey {
  scope: string;
  /** The host's name for the conversation (`providerOptions.compaction.conversation`). */
  conversation?: string;
  /** The step's leading system messages: the key without a name. */
  system?: readonly Message[];
}

/**
 * SHA-256 digests of the prefixes of one conversation, within one scope (tenant) and under one
 * name or one set of system messages. The canonical bytes are built once; each prefix digest is
 * computed at most once.
 */
export class PrefixDigests {
  private readonly bytes: Uint8Array;
  /** `offsets[k]` is where message `k` ends: the digest of a prefix of k messages covers `bytes[0, offsets[k])`. */
  private readonly offsets: number[];
  /** Where the scope ends and where the name or the system messages end, in `bytes`. */
  private readonly keyEnds: { scope: number; key: number };
  private readonly memo = new Map<number, Promise<string>>();

  /** `key`: a `DigestKey`, or a scope alone (no name, no system messages). */
  constructor(key: string | DigestKey, messages: readonly Message[]) {
    const { scope, conversation, system = [] } = typeof key === 'string' ? { scope: key } : key;
    const sink = new ByteSink();
    const writer = byteSinkWriter(sink);
    sink.text('ai-compaction/v2\u0000');
    writer.string(scope);
    sink.flush();
    const scopeEnd = sink.length;
    // A name, or the system messages: length-prefixed strings, so that neither can pass for the other.
    if (conversation !== undefined) {
      sink.text('n');
      writer.string(conversation);
    } else {
      sink.text('s');
      writeCanonical(system, writer);
    }
    sink.text('\u0000');
    sink.flush();
    this.keyEnds = { scope: scopeEnd, key: sink.length };
    this.offsets = [sink.length];
    for (const message of messages) {
      writeCanonical(message, writer);
      sink.text('\n');
      sink.flush();
      this.offsets.push(sink.length);
    }
    // Exactly its size: a step's digests live as long as the step.
    this.bytes = sink.length === sink.bytes.length ? sink.bytes : sink.bytes.slice(0, sink.length);
  }

  get length(): number {
    return this.offsets.length - 1;
  }

  /** The digest of the first `count` messages (scope, and name or system messages, included). */
  of(count: number): Promise<string> {
    if (!Number.isInteger(count) || count < 0 || count > this.length) {
      throw new RangeError(`prefix of ${count} messages is outside a conversation of ${this.length}`);
    }
    let digest = this.memo.get(count);
    if (digest === undefined) {
      digest = sha256Hex(this.bytes.subarray(0, this.offsets[count]));
      this.memo.set(count, digest);
    }
    return digest;
  }

  /**
   * The digest of the first `count` messages within the scope alone, whatever the name or the
   * system messages: what tells that a conversation came under other system messages than before.
   * Computed at once (not through Web Crypto's queue), so that noting it costs a step no wait.
   */
  opening(count: number): string {
    if (!Number.isInteger(count) || count < 0 || count > this.length) {
      throw new RangeError(`prefix of ${count} messages is outside a conversation of ${this.length}`);
    }
    const { scope, key } = this.keyEnds;
    const end = this.offsets[count]!;
    const bytes = new Uint8Array(scope + end - key);
    bytes.set(this.bytes.subarray(0, scope));
    bytes.set(this.bytes.subarray(key, end), scope);
    return bytesToHex(sha256(bytes));
  }

  /**
   * Whether `ref` (a length and a digest, as the store keeps them) names a prefix of this
   * conversation: no longer than it, and its digest that of its first `ref.length` messages.
   */
  async hasPrefix(ref: { length: number; digest: string }): Promise<boolean> {
    return ref.length <= this.length && (await this.of(ref.length)) === ref.digest;
  }
}
