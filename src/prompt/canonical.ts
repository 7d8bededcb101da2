import type { Message } from './types';

/**
 * The canonical form of prompt content, so that the same conversation always hashes the same:
 * object keys sorted, `undefined` dropped, bytes as base64 (a Buffer, a Uint8Array and a base64
 * string of the same bytes are one value), URLs as their `href`, and what only the transport adds
 * left out: `providerOptions` (cache markers that move from step to step) and transport-only parts.
 */
export function canonicalMessage(message: Message): string {
  return canonical(message);
}

/** Parts a provider client adds in one mode and not the other; they say nothing of the content. */
const TRANSPORT_ONLY_CUSTOM_KINDS = new Set(['anthropic.message_start']);

function isTransportOnly(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const part = value as { type?: unknown; kind?: unknown };
  return part.type === 'custom' && typeof part.kind === 'string' && TRANSPORT_ONLY_CUSTOM_KINDS.has(part.kind);
}

export function canonical(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(value.toString());
    case 'object':
      break;
    default:
      return 'null';
  }
  if (value === null) return 'null';
  if (value instanceof Uint8Array) return JSON.stringify(bytesToBase64(value));
  if (value instanceof ArrayBuffer) return JSON.stringify(bytesToBase64(new Uint8Array(value)));
  if (value instanceof URL) return JSON.stringify(value.href);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) {
    let out = '[';
    let first = true;
    for (const item of value) {
      if (isTransportOnly(item)) continue;
      out += (first ? '' : ',') + (item === undefined ? 'null' : canonical(item));
      first = false;
    }
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined || key === 'providerOptions' || typeof item === 'function') continue;
    out += (first ? '' : ',') + JSON.stringify(key) + ':' + canonical(item);
    first = false;
  }
  return out + '}';
}

const base64Cache = new WeakMap<Uint8Array, string>();

export function bytesToBase64(bytes: Uint8Array): string {
  const cached = base64Cache.get(bytes);
  if (cached !== undefined) return cached;
  let binary = '';
  const chunk = 0x8000;
  for (let index = 0; index < bytes.length; index += chunk) {
    binary += String.fromCharCode(...bytes.subarray(index, index + chunk));
  }
  const encoded = btoa(binary);
  base64Cache.set(bytes, encoded);
  return encoded;
}
