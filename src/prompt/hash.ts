import { canonicalMessage } from './canonical';
import type { Message } from './types';

const encoder = new TextEncoder();

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * SHA-256 digests of the prefixes of one conversation, within one scope (tenant). The canonical
 * bytes are built once; each prefix digest is computed at most once.
 */
export class PrefixDigests {
  private readonly bytes: Uint8Array;
  /** `offsets[k]` is where message `k` ends: the digest of a prefix of k messages covers `bytes[0, offsets[k])`. */
  private readonly offsets: number[];
  private readonly memo = new Map<number, Promise<string>>();

  constructor(scope: string, messages: readonly Message[]) {
    const chunks = [encoder.encode(`ai-compaction/v1\u0000${scope}\u0000`)];
    for (const message of messages) chunks.push(encoder.encode(canonicalMessage(message) + '\n'));
    let total = 0;
    for (const chunk of chunks) total += chunk.length;
    this.bytes = new Uint8Array(total);
    this.offsets = [];
    let offset = 0;
    for (const chunk of chunks) {
      this.bytes.set(chunk, offset);
      offset += chunk.length;
      this.offsets.push(offset);
    }
  }

  get length(): number {
    return this.offsets.length - 1;
  }

  /** The digest of the first `count` messages (scope included). */
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
}
