import { isProviderCompactionPart } from './native-items';
import type { Part } from './types';

/**
 * The canonical form of prompt content, so that the same conversation always hashes the same:
 * object keys sorted, `undefined` dropped, bytes as base64 (a Buffer, a Uint8Array and a base64
 * string of the same bytes are one value), URLs as their `href`, and what only the transport adds
 * left out: `providerOptions` (cache markers that move from step to step) and transport-only parts.
 */

/** Parts a provider client adds in one mode and not the other; they say nothing of the content. */
const TRANSPORT_ONLY_CUSTOM_KINDS = new Set(['anthropic.message_start']);

function isTransportOnly(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const part = value as { type?: unknown; kind?: unknown };
  return part.type === 'custom' && typeof part.kind === 'string' && TRANSPORT_ONLY_CUSTOM_KINDS.has(part.kind);
}

/** Where the canonical form is written: punctuation and numbers as text, strings as they come. */
export interface CanonicalSink {
  text(piece: string): void;
  string(value: string): void;
}

/** Writes the canonical form of `value` into `sink`. */
export function writeCanonical(value: unknown, sink: CanonicalSink): void {
  switch (typeof value) {
    case 'string':
      return sink.string(value);
    case 'number':
      return sink.text(Number.isFinite(value) ? String(value) : 'null');
    case 'boolean':
      return sink.text(value ? 'true' : 'false');
    case 'bigint':
      return sink.string(value.toString());
    case 'object':
      break;
    default:
      return sink.text('null');
  }
  if (value === null) return sink.text('null');
  if (value instanceof Uint8Array) return sink.string(bytesToBase64(value));
  if (value instanceof ArrayBuffer) return sink.string(bytesToBase64(new Uint8Array(value)));
  if (value instanceof URL) return sink.string(value.href);
  if (value instanceof Date) return sink.string(value.toISOString());
  if (Array.isArray(value)) {
    sink.text('[');
    let first = true;
    for (const item of value) {
      if (isTransportOnly(item)) continue;
      if (!first) sink.text(',');
      if (item === undefined) sink.text('null');
      else writeCanonical(item, sink);
      first = false;
    }
    return sink.text(']');
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  sink.text('{');
  let first = true;
  for (const key of keys) {
    const item = object[key];
    if (item === undefined || typeof item === 'function') continue;
    // A provider compaction item is all in its provider options (OpenAI's id and encrypted content).
    if (key === 'providerOptions' && !isProviderCompactionPart(object as Part)) continue;
    if (!first) sink.text(',');
    sink.string(key);
    sink.text(':');
    writeCanonical(item, sink);
    first = false;
  }
  sink.text('}');
}

/** The canonical form as a JSON string. */
export function canonical(value: unknown): string {
  let out = '';
  writeCanonical(value, {
    text: (piece) => void (out += piece),
    string: (text) => void (out += JSON.stringify(text)),
  });
  return out;
}

const base64Cache = new WeakMap<Uint8Array, string>();

export function bytesToBase64(bytes: Uint8Array): string {
  const cached = base64Cache.get(bytes);
  if (cached !== undefined) return cached;
  const encoded = encodeBase64(bytes);
  base64Cache.set(bytes, encoded);
  return encoded;
}

type Base64Bytes = Uint8Array & { toBase64?: () => string };
type BufferLike = { from(buffer: ArrayBufferLike, offset: number, length: number): { toString(encoding: 'base64'): string } };
const NodeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

function encodeBase64(bytes: Uint8Array): string {
  // Native where there is one: Uint8Array.prototype.toBase64, Buffer on Node; else btoa.
  if (typeof (bytes as Base64Bytes).toBase64 === 'function') return (bytes as Base64Bytes).toBase64!();
  if (NodeBuffer !== undefined) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  const chunk = 0x1000;
  for (let index = 0; index < bytes.length; index += chunk) {
    // apply, not spread: spreading many arguments is much slower in V8.
    binary += String.fromCharCode.apply(null, bytes.subarray(index, index + chunk) as unknown as number[]);
  }
  return btoa(binary);
}
