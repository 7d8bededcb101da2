import { describe, expect, it } from 'vitest';
import { afterCheckpoint, shortenStep } from '../../../src/checkpoint/live';
import { liveEnd, liveStart, stepEnd } from '../../../src/prompt/conversation';
import type { Message } from '../../../src/prompt/types';
import { estimateMessages } from '../../../src/sizing/estimate';
import { assistant, toolCall, toolResult, user } from '../../support/harness';

const output = (id: string, value: unknown): Message => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: id, toolName: 'read', output: value as never }],
});

describe('what stays live', () => {
  describe('liveStart', () => {
    it('should keep the user messages at the very end live: a new turn', () => {
      expect(liveStart([user('a'), assistant('b'), user('c'), user('d')])).toBe(2);
    });

    it('should keep the newest step of a tool loop live: the last assistant message and its tool results', () => {
      const loop = [user('task'), toolCall('c1', 'read', {}), toolResult('c1', 'read', 'x'), toolCall('c2', 'read', {}), toolResult('c2', 'read', 'y')];
      expect(liveStart(loop)).toBe(3);
    });

    it('should keep a final assistant message live, so a prompt never ends with the checkpoint', () => {
      expect(liveStart([user('a'), assistant('b')])).toBe(1);
    });

    it('should be 0 when only the live part is there', () => {
      expect(liveStart([user('a')])).toBe(0);
      expect(liveStart([])).toBe(0);
    });
  });

  describe('stepEnd', () => {
    it('should end past the tool messages that follow an assistant message', () => {
      const messages = [user('a'), toolCall('c1', 'read', {}), toolResult('c1', 'read', 'x'), output('c1', { type: 'text', value: 'y' }), user('b')];
      expect(stepEnd(messages, 1)).toBe(4);
      expect(stepEnd(messages, 0)).toBe(0);
    });
  });

  describe('liveEnd', () => {
    it('should end a new turn past its user messages, and a step past its tool results', () => {
      const messages = [user('a'), user('b'), toolCall('c1', 'read', {}), toolResult('c1', 'read', 'x'), toolCall('c2', 'read', {}), toolResult('c2', 'read', 'y'), user('c')];
      expect(liveEnd(messages, 0)).toBe(2);
      expect(liveEnd(messages, 2)).toBe(4);
      expect(liveEnd(messages, 4)).toBe(6);
      expect(liveEnd(messages, 6)).toBe(7);
      expect(liveEnd(messages, 7)).toBe(7);
    });
  });

  describe('shortenStep', () => {
    it('should leave a step within the budget as it is (the same objects)', () => {
      const step = [toolCall('c1', 'read', { path: 'a.ts' }), toolResult('c1', 'read', 'x'.repeat(400))];
      expect(shortenStep(step, 200)).toBe(step);
    });

    it('should cut an output to its first and last parts with a note of the characters left out', () => {
      const text = `HEAD${'m'.repeat(40_000)}TAIL`;
      const step = [toolCall('c1', 'read', { path: 'a.ts' }), toolResult('c1', 'read', text)];
      const shortened = shortenStep(step, 4_000);
      expect(estimateMessages(shortened)).toBeLessThanOrEqual(4_000);
      const value = (shortened[1]!.content[0] as unknown as { output: { type: string; value: string } }).output;
      expect(value.type).toBe('text');
      expect(value.value.startsWith('HEADm')).toBe(true);
      expect(value.value.endsWith('mTAIL')).toBe(true);
      const cut = Number(/\[(\d+) characters cut\]/.exec(value.value)![1]);
      expect(value.value.length - `\n[${cut} characters cut]\n`.length + cut).toBe(text.length);
      // the call and the result part stay: the pair is whole
      expect(shortened[0]).toBe(step[0]);
      expect(shortened[1]!.content[0]).toMatchObject({ type: 'tool-result', toolCallId: 'c1', toolName: 'read' });
      // the caller's messages are not changed
      expect((step[1]!.content[0] as unknown as { output: { value: string } }).output.value).toBe(text);
    });

    it('should share the room among outputs: a short one stays whole, the long ones get the same share', () => {
      const step: Message[] = [
        { role: 'assistant', content: [{ type: 'text', text: 'Reading three files.' }, ...['a', 'b', 'c'].map((id) => ({ type: 'tool-call', toolCallId: id, toolName: 'read', input: {} }))] },
        { role: 'tool', content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 'read', output: { type: 'text', value: 'short' } },
          { type: 'tool-result', toolCallId: 'b', toolName: 'read', output: { type: 'text', value: 'b'.repeat(20_000) } },
          { type: 'tool-result', toolCallId: 'c', toolName: 'read', output: { type: 'text', value: 'c'.repeat(30_000) } },
        ] },
      ];
      const shortened = shortenStep(step, 2_000);
      const values = (shortened[1]!.content as unknown as Array<{ output: { value: string } }>).map((part) => part.output.value);
      expect(values[0]).toBe('short');
      expect(values[1]!.replace(/\n\[\d+ characters cut\]\n/, '').length).toBe(values[2]!.replace(/\n\[\d+ characters cut\]\n/, '').length);
      expect(shortened[0]).toBe(step[0]);
      expect(estimateMessages(shortened)).toBeLessThanOrEqual(2_000);
    });

    it('should turn a cut JSON output into text of the same kind, and cut text items of a content output', () => {
      const step: Message[] = [
        toolCall('j', 'read', {}),
        output('j', { type: 'json', value: { data: 'd'.repeat(20_000) } }),
        output('e', { type: 'error-json', value: { error: 'e'.repeat(20_000) } }),
        output('k', { type: 'content', value: [{ type: 'text', text: 'k'.repeat(20_000) }, { type: 'image-data', data: 'AAAA', mediaType: 'image/png' }] }),
      ];
      const shortened = shortenStep(step, 3_000);
      const outputOf = (index: number) => (shortened[index]!.content[0] as unknown as { output: { type: string; value: unknown } }).output;
      expect(outputOf(1).type).toBe('text');
      expect(String(outputOf(1).value).startsWith('{"data":"ddd')).toBe(true);
      expect(outputOf(2).type).toBe('error-text');
      const content = outputOf(3).value as Array<{ type: string; text?: string }>;
      expect(content[0]!.text).toMatch(/^k+\n\[\d+ characters cut\]\nk+$/);
      expect(content[1]).toEqual({ type: 'image-data', data: 'AAAA', mediaType: 'image/png' });
    });

    it('should never cut inside a surrogate pair', () => {
      const text = '😀'.repeat(20_000);
      const shortened = shortenStep([toolCall('c', 'read', {}), toolResult('c', 'read', text)], 1_000);
      const value = (shortened[1]!.content[0] as unknown as { output: { value: string } }).output.value;
      expect(value).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    });

    it('should never shorten user or assistant words', () => {
      const words = 'w'.repeat(40_000);
      const step: Message[] = [{ role: 'assistant', content: [{ type: 'text', text: words }] }];
      expect(shortenStep(step, 1_000)).toBe(step);
    });
  });

  describe('afterCheckpoint', () => {
    it('should shorten only the step right after the checkpoint, the same way on every step', () => {
      const huge = toolResult('c1', 'read', 'h'.repeat(80_000));
      const conversation = [user('task'), toolCall('c1', 'read', {}), huge, toolCall('c2', 'read', {}), toolResult('c2', 'read', 'x'.repeat(80_000))];
      const first = afterCheckpoint(conversation, 1, 4_000);
      const again = afterCheckpoint(structuredClone(conversation), 1, 4_000);
      expect(JSON.stringify(first)).toBe(JSON.stringify(again));
      expect(estimateMessages(first.slice(0, 2))).toBeLessThanOrEqual(4_000);
      expect(first[3]).toBe(conversation[4]);
      expect(afterCheckpoint(conversation, 1, undefined)).toEqual(conversation.slice(1));
      // a new turn after the checkpoint: user words, nothing shortened
      expect(afterCheckpoint([user('a'), assistant('b'), user('x'.repeat(80_000))], 2, 100)).toEqual([user('x'.repeat(80_000))]);
    });
  });
});
