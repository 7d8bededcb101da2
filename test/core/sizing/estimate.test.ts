import { describe, expect, it } from 'vitest';
import type { FunctionTool, Message } from '../../../src/prompt/types';
import { charsPerTokenOf, estimateMessages, estimatePrompt, estimateTools } from '../../../src/sizing/estimate';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const userFile = (data: unknown, mediaType: string, extra: Record<string, unknown> = {}): Message => ({
  role: 'user',
  content: [{ type: 'file', data, mediaType, ...extra }],
});

describe('estimate', () => {
  describe('text', () => {
    it('should count 4 characters a token', () => {
      expect(estimateMessages([user('x'.repeat(400))])).toBe(100);
    });

    it('should round to the nearest token', () => {
      expect(estimateMessages([user('x'.repeat(401))])).toBe(100);
      expect(estimateMessages([user('x'.repeat(402))])).toBe(101);
      expect(estimateMessages([user('x'.repeat(403))])).toBe(101);
    });

    it('should round once over all messages, not per message', () => {
      // 3 messages of 2 characters: 6 / 4 = 1.5 -> 2 (per message each would round 0.5 to 1 -> 3)
      expect(estimateMessages([user('ab'), user('cd'), user('ef')])).toBe(2);
    });

    it('should count system messages by their content', () => {
      expect(estimateMessages([{ role: 'system', content: 'y'.repeat(80) }, user('x'.repeat(40))])).toBe(30);
    });

    it('should count reasoning text', () => {
      const assistant: Message = {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'r'.repeat(40) },
          { type: 'text', text: 't'.repeat(40) },
        ],
      };
      expect(estimateMessages([assistant])).toBe(20);
    });

    it('should estimate a range of messages', () => {
      const messages = [user('a'.repeat(40)), user('b'.repeat(80)), user('c'.repeat(120))];
      expect(estimateMessages(messages, 1)).toBe(50);
      expect(estimateMessages(messages, 0, 2)).toBe(30);
      expect(estimateMessages(messages, 1, 2)).toBe(20);
    });

    it('should count an empty prompt as 0', () => {
      expect(estimateMessages([])).toBe(0);
      expect(estimatePrompt([])).toBe(0);
    });
  });

  describe('files (AI SDK 6 data)', () => {
    const bytes = new Uint8Array(100_000).fill(7);

    it('should count an image 1,500 tokens whatever its bytes', () => {
      expect(estimateMessages([userFile(bytes, 'image/png')])).toBe(1_500);
      expect(estimateMessages([userFile(new Uint8Array(3), 'image/jpeg')])).toBe(1_500);
    });

    it('should count a PDF 2,000 tokens whatever its bytes', () => {
      expect(estimateMessages([userFile(bytes, 'application/pdf')])).toBe(2_000);
    });

    it('should count a base64 string and a URL like the bytes', () => {
      const base64 = btoa('x'.repeat(60_000));
      expect(estimateMessages([userFile(base64, 'image/png')])).toBe(1_500);
      expect(estimateMessages([userFile(base64, 'application/pdf')])).toBe(2_000);
      expect(estimateMessages([userFile(new URL('https://example.com/a.png'), 'image/png')])).toBe(1_500);
      expect(estimateMessages([userFile(new URL('https://example.com/a.pdf'), 'application/pdf')])).toBe(2_000);
    });

    it('should not count a file name or text beside it as bytes', () => {
      const message: Message = {
        role: 'user',
        content: [
          { type: 'text', text: 'x'.repeat(40) },
          { type: 'file', data: bytes, mediaType: 'image/png', filename: 'screenshot.png' },
          { type: 'file', data: bytes, mediaType: 'application/pdf', filename: 'spec.pdf' },
        ],
      };
      expect(estimateMessages([message])).toBe(10 + 1_500 + 2_000);
    });
  });

  describe('files (AI SDK 7 tagged data)', () => {
    it('should count tagged bytes, base64 and URLs by media type', () => {
      expect(estimateMessages([userFile({ type: 'data', data: new Uint8Array(50_000) }, 'image/png')])).toBe(1_500);
      expect(estimateMessages([userFile({ type: 'data', data: btoa('y'.repeat(30_000)) }, 'application/pdf')])).toBe(
        2_000,
      );
      expect(estimateMessages([userFile({ type: 'url', url: new URL('https://example.com/x.png') }, 'image/png')])).toBe(
        1_500,
      );
    });

    it('should count the bare media type "image" as an image', () => {
      expect(estimateMessages([userFile({ type: 'data', data: new Uint8Array(10) }, 'image')])).toBe(1_500);
    });

    it('should count an inline text file by its text', () => {
      expect(estimateMessages([userFile({ type: 'text', text: 'z'.repeat(400) }, 'text/plain')])).toBe(100);
    });
  });

  describe('tool calls and results', () => {
    it('should count a tool call by its name and JSON input', () => {
      const input = { path: 'src/index.ts', line: 12 };
      const name = 'readFile';
      const message: Message = {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: name, input }],
      };
      const chars = name.length + JSON.stringify(input).length;
      expect(chars).toBe(8 + 33);
      expect(estimateMessages([message])).toBe(10);
    });

    it('should count a tool call whose input is a JSON string by that string', () => {
      const message: Message = {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'abcd', input: '{"path":"src/index.ts"}' }],
      };
      // 4 + 23 = 27 characters -> 7 tokens
      expect(estimateMessages([message])).toBe(7);
    });

    it('should not count a tool call id', () => {
      const message = (toolCallId: string): Message => ({
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId, toolName: 'abcd', input: {} }],
      });
      expect(estimateMessages([message('a')])).toBe(estimateMessages([message('a'.repeat(400))]));
    });

    it('should count a text tool result by its text', () => {
      const message: Message = {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call-1', toolName: 'read', output: { type: 'text', value: 'o'.repeat(800) } },
        ],
      };
      expect(estimateMessages([message])).toBe(200);
    });

    it('should count a JSON tool result by its JSON', () => {
      const value = { files: ['a.ts', 'b.ts'] };
      const message: Message = {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'call-1', toolName: 'ls', output: { type: 'json', value } }],
      };
      expect(JSON.stringify(value).length).toBe(25);
      expect(estimateMessages([message])).toBe(6);
    });

    it('should count images inside a content tool result 1,500 each', () => {
      const message: Message = {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call-1',
            toolName: 'screenshot',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'w'.repeat(40) },
                { type: 'image-data', data: btoa('x'.repeat(9_000)), mediaType: 'image/png' },
              ],
            },
          },
        ],
      };
      // the text, a newline and the line `[Attached image/png]`: 40 + 1 + 20 = 61 characters -> 15 tokens
      expect(estimateMessages([message])).toBe(15 + 1_500);
    });
  });

  describe('tool definitions', () => {
    const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const tools: FunctionTool[] = [
      { type: 'function', name: 'read', description: 'Reads a file.', inputSchema: schema },
      { type: 'function', name: 'ls', inputSchema: { type: 'object' } },
    ];

    it('should count name, description and JSON schema', () => {
      const chars =
        'read'.length +
        'Reads a file.'.length +
        JSON.stringify(schema).length +
        'ls'.length +
        JSON.stringify({ type: 'object' }).length;
      expect(chars).toBe(4 + 13 + 77 + 2 + 17);
      expect(estimateTools(tools)).toBe(28);
    });

    it('should count no tools as 0', () => {
      expect(estimateTools(undefined)).toBe(0);
      expect(estimateTools([])).toBe(0);
    });

    it('should add tool definitions to the whole prompt', () => {
      const prompt: Message[] = [{ role: 'system', content: 's'.repeat(400) }, user('u'.repeat(400))];
      expect(estimatePrompt(prompt)).toBe(200);
      expect(estimatePrompt(prompt, tools)).toBe(228);
    });
  });
});

describe('charsPerTokenOf', () => {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(600) }] }, { role: 'assistant', content: [{ type: 'text', text: 'y'.repeat(400) }] }];
  // 1,000 characters, 400 tokens by this tokenizer: 2.5 characters a token
  const tokenizer = { tokenize: (text: string) => (text.length * 2) / 5, factor: 1 };

  it('should give the learned ratio without a tokenizer', () => {
    expect(charsPerTokenOf({ charsPerToken: 2.9 }, messages)).toBe(2.9);
  });

  it('should give what the tokenizer finds in the messages, times its learned factor', () => {
    expect(charsPerTokenOf({ charsPerToken: 4, tokenizer }, messages)).toBe(2.5);
    // counts taught a factor of 1.25: each tokenizer token stands for 1.25 counted ones
    expect(charsPerTokenOf({ charsPerToken: 4, tokenizer: { ...tokenizer, factor: 1.25 } }, messages)).toBe(2);
  });

  it('should fall back to 4 divided by the factor with no text to measure', () => {
    expect(charsPerTokenOf({ charsPerToken: 4, tokenizer: { ...tokenizer, factor: 1.25 } })).toBe(3.2);
  });
});
