import { describe, expect, it } from 'vitest';
import { bytesToBase64, canonical } from '../../../src/prompt/canonical';
import { PrefixDigests, sha256Hex } from '../../../src/prompt/hash';
import type { Message } from '../../../src/prompt/types';

const encoder = new TextEncoder();

/** SHA-256 hex computed here, independently of the module under test. */
async function expectedDigest(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', encoder.encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

/** The bytes "hello" (base64 `aGVsbG8=`). */
const HELLO = [104, 101, 108, 108, 111];

describe('canonical', () => {
  it('should sort object keys', () => {
    expect(canonical({ b: 1, a: { d: true, c: 'x' } })).toBe('{"a":{"c":"x","d":true},"b":1}');
    expect(canonical({ b: 1, a: 2 })).toBe(canonical({ a: 2, b: 1 }));
  });

  it('should drop undefined values and keep null', () => {
    expect(canonical({ a: 1, b: undefined, c: null })).toBe('{"a":1,"c":null}');
    expect(canonical({ a: 1, b: undefined })).toBe(canonical({ a: 1 }));
  });

  it('should write an undefined array item as null, keeping positions', () => {
    expect(canonical([1, undefined, 2])).toBe('[1,null,2]');
  });

  it('should write a message with sorted keys', () => {
    expect(canonical(user('hi'))).toBe('{"content":[{"text":"hi","type":"text"}],"role":"user"}');
    expect(canonical({ role: 'system', content: 'Be brief.' })).toBe('{"content":"Be brief.","role":"system"}');
  });

  it('should escape strings as JSON', () => {
    expect(canonical('a"b\n')).toBe('"a\\"b\\n"');
  });

  it('should write bytes as base64', () => {
    expect(bytesToBase64(new Uint8Array(HELLO))).toBe('aGVsbG8=');
    expect(canonical(new Uint8Array(HELLO))).toBe('"aGVsbG8="');
    expect(canonical(new Uint8Array(HELLO).buffer)).toBe('"aGVsbG8="');
  });

  it('should write a view into a larger buffer as its own bytes only', () => {
    // Node Buffers are such views into a shared pool
    const pool = new Uint8Array([0, 0, 0, ...HELLO, 255, 255]);
    const view = new Uint8Array(pool.buffer, 3, HELLO.length);
    expect(canonical(view)).toBe('"aGVsbG8="');
  });

  it('should write large byte arrays correctly', () => {
    const bytes = new Uint8Array(100_000);
    for (let index = 0; index < bytes.length; index++) bytes[index] = index % 256;
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    expect(bytesToBase64(bytes)).toBe(btoa(binary));
  });

  it('should make bytes and a base64 string of the same bytes one value', () => {
    const file = (data: unknown): Message => ({ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data }] });
    expect(canonical(file(new Uint8Array(HELLO)))).toBe(canonical(file('aGVsbG8=')));
    expect(canonical(file({ type: 'data', data: new Uint8Array(HELLO) }))).toBe(
      canonical(file({ type: 'data', data: 'aGVsbG8=' })),
    );
  });

  it('should write a URL as its href', () => {
    expect(canonical(new URL('HTTPS://Example.COM/a b?x=1'))).toBe('"https://example.com/a%20b?x=1"');
    expect(canonical({ url: new URL('https://example.com/a.png') })).toBe(canonical({ url: 'https://example.com/a.png' }));
  });

  it('should write numbers, booleans and non-finite numbers', () => {
    expect(canonical([1.5, -2, true, false, Number.NaN, Number.POSITIVE_INFINITY])).toBe('[1.5,-2,true,false,null,null]');
  });

  it('should leave out providerOptions at every level', () => {
    const plain: Message = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
    const marked: Message = {
      role: 'user',
      content: [{ type: 'text', text: 'hi', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }],
      providerOptions: { openai: { store: false } },
    };
    expect(canonical(marked)).toBe(canonical(plain));
  });

  it('should leave out custom parts of kind anthropic.message_start', () => {
    const plain = assistant('done');
    const withStart: Message = {
      role: 'assistant',
      content: [{ type: 'custom', kind: 'anthropic.message_start', value: { id: 'msg_1' } }, { type: 'text', text: 'done' }],
    };
    expect(canonical(withStart)).toBe(canonical(plain));
  });

  it('should keep other custom parts, such as a provider compaction item', () => {
    const withItem: Message = {
      role: 'assistant',
      content: [{ type: 'custom', kind: 'openai.compaction', value: 'enc' }, { type: 'text', text: 'done' }],
    };
    expect(canonical(withItem)).not.toBe(canonical(assistant('done')));
    expect(canonical(withItem)).toContain('openai.compaction');
  });

  it('should tell different content apart', () => {
    expect(canonical(user('a'))).not.toBe(canonical(user('b')));
    expect(canonical(user('a'))).not.toBe(canonical(assistant('a')));
    expect(canonical(new Uint8Array([1]))).not.toBe(canonical(new Uint8Array([2])));
  });
});

describe('hash', () => {
  describe('sha256Hex', () => {
    it('should give the standard SHA-256 test vectors', async () => {
      expect(await sha256Hex(encoder.encode('abc'))).toBe(
        'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      );
      expect(await sha256Hex(new Uint8Array(0))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    });
  });

  describe('PrefixDigests', () => {
    const conversation: Message[] = [user('fix the bug'), assistant('Which file?'), user('src/a.ts')];

    it('should give the SHA-256 of the scope, the system messages or the name, and the canonical messages of each prefix', async () => {
      const digests = new PrefixDigests('tenant-1', conversation);
      expect(digests.length).toBe(3);
      // No system messages, no name: the scope, then `s` and the empty list of system messages.
      const header = 'ai-compaction/v2\u0000s8:tenant-1s[]\u0000';
      // The hashed form is the canonical form with every string written s<length>:<characters>.
      const hashed = (value: unknown): string =>
        typeof value === 'string'
          ? `s${value.length}:${value}`
          : Array.isArray(value)
            ? `[${value.map(hashed).join(',')}]`
            : `{${Object.keys(value as object).sort().map((key) => `${hashed(key)}:${hashed((value as Record<string, unknown>)[key])}`).join(',')}}`;
      const lines = conversation.map((message) => hashed(message) + '\n');
      expect(lines[0]).toBe('{s7:content:[{s4:text:s11:fix the bug,s4:type:s4:text}],s4:role:s4:user}\n');
      for (let count = 0; count <= 3; count++) {
        const digest = await digests.of(count);
        expect(digest).toMatch(/^[0-9a-f]{64}$/);
        expect(digest).toBe(await expectedDigest(header + lines.slice(0, count).join('')));
      }
    });

    it('should key the digests by the system messages without a name, by the name with one, and the opening by the scope alone', async () => {
      const digest = (key: ConstructorParameters<typeof PrefixDigests>[0]) => new PrefixDigests(key, conversation).of(3);
      const monday = [{ role: 'system' as const, content: 'Today is Monday.' }];
      const tuesday = [{ role: 'system' as const, content: 'Today is Tuesday.' }];
      expect(await digest({ scope: '', system: monday })).not.toBe(await digest({ scope: '', system: tuesday }));
      expect(await digest({ scope: '', system: monday, conversation: 'chat-1' })).toBe(await digest({ scope: '', system: tuesday, conversation: 'chat-1' }));
      expect(await digest({ scope: '', conversation: 'chat-1' })).not.toBe(await digest({ scope: '', conversation: 'chat-2' }));
      // A name never passes for system messages, nor the other way round.
      expect(await digest({ scope: '', conversation: '[]' })).not.toBe(await digest({ scope: '' }));
      const opening = (key: ConstructorParameters<typeof PrefixDigests>[0]) => new PrefixDigests(key, conversation).opening(2);
      expect(opening({ scope: 't', system: monday })).toBe(opening({ scope: 't', conversation: 'chat-1' }));
      expect(opening({ scope: 't', system: monday })).not.toBe(opening({ scope: 'u', system: monday }));
      expect(opening({ scope: 't' })).not.toBe(await new PrefixDigests('t', conversation).of(2));
    });

    it('should tell apart strings with lone surrogates, which UTF-8 cannot carry', async () => {
      const one = new PrefixDigests('', [user('a\ud800')]);
      const other = new PrefixDigests('', [user('a\udc00')]);
      expect(await one.of(1)).not.toBe(await other.of(1));
    });

    it('should not confuse a string with the punctuation around it', async () => {
      const one = new PrefixDigests('', [user('a","type":"text')]);
      const other = new PrefixDigests('', [user('a')]);
      expect(await one.of(1)).not.toBe(await other.of(1));
    });

    it('should give a different digest for every prefix', async () => {
      const digests = new PrefixDigests('', conversation);
      const all = await Promise.all([0, 1, 2, 3].map((count) => digests.of(count)));
      expect(new Set(all).size).toBe(4);
    });

    it('should give the same digest for a shared prefix of two conversations', async () => {
      const one = new PrefixDigests('', conversation);
      const other = new PrefixDigests('', [...conversation.slice(0, 2), user('src/b.ts'), assistant('ok')]);
      expect(await one.of(2)).toBe(await other.of(2));
      expect(await one.of(3)).not.toBe(await other.of(3));
    });

    it('should say which lengths and digests name a prefix of the conversation, and that a longer one names none', async () => {
      const one = new PrefixDigests('', conversation);
      const other = new PrefixDigests('', [...conversation.slice(0, 2), user('src/b.ts'), assistant('ok')]);
      expect(await one.hasPrefix({ length: 2, digest: await other.of(2) })).toBe(true);
      expect(await one.hasPrefix({ length: 3, digest: await one.of(3) })).toBe(true);
      expect(await one.hasPrefix({ length: 3, digest: await other.of(3) })).toBe(false);
      // Named by a longer conversation: no prefix of this one (and no RangeError).
      const longer = new PrefixDigests('', [...conversation, user('more')]);
      expect(await one.hasPrefix({ length: conversation.length + 1, digest: await longer.of(conversation.length + 1) })).toBe(false);
    });

    it('should change every digest with the scope', async () => {
      const one = new PrefixDigests('tenant-1', conversation);
      const other = new PrefixDigests('tenant-2', conversation);
      const unscoped = new PrefixDigests('', conversation);
      for (let count = 0; count <= 3; count++) {
        expect(await one.of(count)).not.toBe(await other.of(count));
        expect(await one.of(count)).not.toBe(await unscoped.of(count));
      }
    });

    it('should hash Uint8Array, base64 and tagged data of the same bytes the same', async () => {
      const withFile = (data: unknown): Message[] => [
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'file', mediaType: 'image/png', data }] },
        assistant('a cat'),
      ];
      const bytes = new PrefixDigests('', withFile(new Uint8Array(HELLO)));
      const view = new PrefixDigests('', withFile(new Uint8Array(new Uint8Array([9, ...HELLO]).buffer, 1, 5)));
      const base64 = new PrefixDigests('', withFile('aGVsbG8='));
      expect(await bytes.of(2)).toBe(await base64.of(2));
      expect(await view.of(2)).toBe(await base64.of(2));
      const taggedBytes = new PrefixDigests('', withFile({ type: 'data', data: new Uint8Array(HELLO) }));
      const taggedBase64 = new PrefixDigests('', withFile({ type: 'data', data: 'aGVsbG8=' }));
      expect(await taggedBytes.of(2)).toBe(await taggedBase64.of(2));
    });

    it('should hash a URL and its href the same', async () => {
      const withUrl = (data: unknown): Message[] => [
        { role: 'user', content: [{ type: 'file', mediaType: 'application/pdf', data }] },
      ];
      const url = new PrefixDigests('', withUrl(new URL('https://example.com/spec.pdf')));
      const href = new PrefixDigests('', withUrl('https://example.com/spec.pdf'));
      expect(await url.of(1)).toBe(await href.of(1));
      const taggedUrl = new PrefixDigests('', withUrl({ type: 'url', url: new URL('https://example.com/spec.pdf') }));
      const taggedHref = new PrefixDigests('', withUrl({ type: 'url', url: 'https://example.com/spec.pdf' }));
      expect(await taggedUrl.of(1)).toBe(await taggedHref.of(1));
    });

    it('should hash the same whatever cache markers and transport-only parts a step adds', async () => {
      const marked: Message[] = [
        { ...conversation[0]!, providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } } as Message,
        {
          role: 'assistant',
          content: [
            { type: 'custom', kind: 'anthropic.message_start', value: {} },
            { type: 'text', text: 'Which file?', providerOptions: { openai: { itemId: 'msg_1' } } },
          ],
        },
        conversation[2]!,
      ];
      const plain = new PrefixDigests('', conversation);
      const other = new PrefixDigests('', marked);
      for (let count = 0; count <= 3; count++) expect(await other.of(count)).toBe(await plain.of(count));
    });

    it('should return one promise per prefix', () => {
      const digests = new PrefixDigests('', conversation);
      expect(digests.of(2)).toBe(digests.of(2));
    });

    it('should refuse a prefix outside the conversation', () => {
      const digests = new PrefixDigests('', conversation);
      expect(() => digests.of(4)).toThrow(RangeError);
      expect(() => digests.of(-1)).toThrow(RangeError);
      expect(() => digests.of(1.5)).toThrow(RangeError);
    });
  });
});

describe('canonical form of provider compaction items', () => {
  const item = (encryptedContent: string) => ({
    role: 'assistant' as const,
    content: [{ type: 'custom', kind: 'openai.compaction', providerOptions: { openai: { itemId: 'cmp_1', encryptedContent } } }],
  });

  it('should keep the provider options of a compaction item, which are all its content', () => {
    expect(canonical(item('AAAA'))).not.toBe(canonical(item('BBBB')));
  });
});
