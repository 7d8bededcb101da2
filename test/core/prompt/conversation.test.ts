import { describe, expect, it } from 'vitest';
import {
  exchanges,
  splitPrompt,
  textMessage,
  trailingUserStart,
} from '../../../src/prompt/conversation';
import type { Message } from '../../../src/prompt/types';

const system = (content: string): Message => ({ role: 'system', content });
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const call = (id: string): Message => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: id, toolName: 'read', input: { path: 'a.ts' } }],
});
const result = (id: string): Message => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: id, toolName: 'read', output: { type: 'text', value: 'x' } }],
});

describe('conversation', () => {
  describe('splitPrompt', () => {
    it('should split the leading system messages from the conversation', () => {
      const prompt = [system('a'), system('b'), user('hi'), assistant('hello')];
      const { system: head, conversation } = splitPrompt(prompt);
      expect(head).toEqual([system('a'), system('b')]);
      expect(conversation).toEqual([user('hi'), assistant('hello')]);
    });

    it('should keep a system message after the first user message in the conversation', () => {
      const prompt = [system('a'), user('hi'), system('later'), assistant('hello')];
      const { system: head, conversation } = splitPrompt(prompt);
      expect(head).toEqual([system('a')]);
      expect(conversation).toEqual([user('hi'), system('later'), assistant('hello')]);
    });

    it('should handle a prompt without system messages and an empty prompt', () => {
      expect(splitPrompt([user('hi')])).toEqual({ system: [], conversation: [user('hi')] });
      expect(splitPrompt([])).toEqual({ system: [], conversation: [] });
    });

    it('should not change the prompt', () => {
      const prompt = [system('a'), user('hi')];
      const copy = structuredClone(prompt);
      splitPrompt(prompt);
      expect(prompt).toEqual(copy);
    });
  });

  describe('trailingUserStart', () => {
    it('should find where the trailing user messages begin', () => {
      const conversation = [user('1'), assistant('2'), user('3'), user('4')];
      expect(trailingUserStart(conversation)).toBe(2);
    });

    it('should return the length when the conversation ends with the model', () => {
      const conversation = [user('1'), call('c1'), result('c1')];
      expect(trailingUserStart(conversation)).toBe(3);
      expect(trailingUserStart([user('1'), assistant('2')])).toBe(2);
    });

    it('should return 0 when every message is a user message', () => {
      expect(trailingUserStart([user('1'), user('2')])).toBe(0);
      expect(trailingUserStart([])).toBe(0);
    });
  });

  describe('exchanges', () => {
    it('should split at each user message, keeping tool calls with their results', () => {
      const conversation = [user('1'), call('c1'), result('c1'), assistant('2'), user('3'), assistant('4')];
      expect(exchanges(conversation)).toEqual([
        [user('1'), call('c1'), result('c1'), assistant('2')],
        [user('3'), assistant('4')],
      ]);
    });

    it('should make consecutive user messages exchanges of their own', () => {
      expect(exchanges([user('1'), user('2'), assistant('3')])).toEqual([[user('1')], [user('2'), assistant('3')]]);
    });

    it('should put messages before the first user message in an exchange of their own', () => {
      expect(exchanges([assistant('0'), user('1'), assistant('2')])).toEqual([[assistant('0')], [user('1'), assistant('2')]]);
    });

    it('should give no exchanges for no messages', () => {
      expect(exchanges([])).toEqual([]);
    });
  });

  describe('textMessage', () => {
    it('should build a user text message, with provider options only when given', () => {
      expect(textMessage('user', 'hi')).toEqual({ role: 'user', content: [{ type: 'text', text: 'hi' }] });
      expect('providerOptions' in textMessage('user', 'hi')).toBe(false);
      expect(textMessage('user', 'hi', { compaction: { summary: true } })).toEqual({
        role: 'user',
        content: [{ type: 'text', text: 'hi' }],
        providerOptions: { compaction: { summary: true } },
      });
    });
  });
});
