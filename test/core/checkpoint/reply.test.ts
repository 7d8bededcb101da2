import { describe, expect, it } from 'vitest';
import {
  REMINDER_PROMPT,
  SUMMARY_FIRST_LINE,
  SUMMARY_PROMPT,
  TEMPLATE_HEADINGS,
  UPDATE_PROMPT,
} from '../../../src/checkpoint/prompts';
import { hasTemplateHeading, replyText, stripThinking, unifiedFinishReason } from '../../../src/checkpoint/reply';

const FIRST_LINE =
  'You MUST summarize the conversation above into a structured summary that will be given to another agent to resume the work.';

const HEADINGS = [
  '## Objective',
  '## Requirements',
  '## Decisions',
  '## Work State',
  '### Completed',
  '### Active',
  '### Blocked',
  '## Next Move',
  '## Relevant Files',
  '## Important Context',
];

/** Each heading appears as a line of its own, in order. */
function expectHeadingsInOrder(prompt: string) {
  const lines = prompt.split('\n');
  let previous = -1;
  for (const heading of HEADINGS) {
    const index = lines.indexOf(heading, previous + 1);
    expect(index, heading).toBeGreaterThan(previous);
    previous = index;
  }
}

describe('reply', () => {
  describe('replyText', () => {
    it('should join the text parts and drop reasoning parts', () => {
      expect(
        replyText([
          { type: 'reasoning', text: 'Let me think about the user.' },
          { type: 'text', text: '## Objective\n' },
          { type: 'text', text: '- Fix the bug' },
        ]),
      ).toBe('## Objective\n- Fix the bug');
    });

    it('should drop <think> blocks', () => {
      expect(replyText([{ type: 'text', text: '<think>\nplan the summary\n</think>\n## Objective\n- x' }])).toBe(
        '## Objective\n- x',
      );
    });

    it('should drop every <think> block, whatever its case', () => {
      expect(stripThinking('a<think>1</think>b<THINK>2</THINK>c')).toBe('abc');
    });

    it('should drop an unclosed <think> block to the end', () => {
      expect(stripThinking('## Objective\n- x\n<think>still thinking')).toBe('## Objective\n- x\n');
    });

    it('should ignore tool calls and files in the reply', () => {
      expect(
        replyText([
          { type: 'tool-call', toolCallId: 'c', toolName: 'read', input: '{}' },
          { type: 'text', text: '  ## Objective  ' },
        ]),
      ).toBe('## Objective');
    });

    it('should give an empty text for a reply of reasoning only', () => {
      expect(replyText([{ type: 'reasoning', text: 'hmm' }])).toBe('');
      expect(replyText([{ type: 'text', text: '<think>only this</think>\n' }])).toBe('');
    });
  });

  describe('hasTemplateHeading', () => {
    it('should find a heading line', () => {
      expect(hasTemplateHeading('Here it is.\n## Objective\n- x')).toBe(true);
      expect(hasTemplateHeading('### Blocked\n- nothing')).toBe(true);
    });

    it('should find a heading with spaces around it', () => {
      expect(hasTemplateHeading('  ## Next Move  \n1. test')).toBe(true);
    });

    it('should find every heading of the template', () => {
      for (const heading of HEADINGS) expect(hasTemplateHeading(`intro\n${heading}\n- x`), heading).toBe(true);
    });

    it('should not find a heading that is not the template’s', () => {
      expect(hasTemplateHeading('# Objective\n- x')).toBe(false);
      expect(hasTemplateHeading('Objective: fix the bug')).toBe(false);
      expect(hasTemplateHeading('## Summary\n- x')).toBe(false);
      expect(hasTemplateHeading('See ## Objective in the text')).toBe(false);
      expect(hasTemplateHeading('')).toBe(false);
    });
  });

  describe('unifiedFinishReason', () => {
    it('should read AI SDK 6/7 object reasons and plain strings', () => {
      expect(unifiedFinishReason({ unified: 'length' })).toBe('length');
      expect(unifiedFinishReason('content-filter')).toBe('content-filter');
      expect(unifiedFinishReason(undefined)).toBeUndefined();
    });
  });
});

describe('prompts', () => {
  it('should list the template headings in order', () => {
    expect([...TEMPLATE_HEADINGS]).toEqual(HEADINGS);
  });

  describe('summary prompt', () => {
    it('should start with the exact fixed line', () => {
      expect(SUMMARY_FIRST_LINE).toBe(FIRST_LINE);
      expect(SUMMARY_PROMPT.split('\n')[0]).toBe(FIRST_LINE);
    });

    it('should contain every heading in order', () => {
      expectHeadingsInOrder(SUMMARY_PROMPT);
    });

    it('should ask for Next Move as a numbered list', () => {
      const next = SUMMARY_PROMPT.slice(SUMMARY_PROMPT.indexOf('## Next Move'));
      expect(next.split('\n')[1]).toMatch(/^1\. /);
    });

    it('should ask for at most 15 relevant files, each `path`: why', () => {
      const files = SUMMARY_PROMPT.slice(SUMMARY_PROMPT.indexOf('## Relevant Files'));
      expect(files.split('\n')[1]).toMatch(/^- `[^`]+`: /);
      expect(files).toContain('at most 15');
    });

    it('should give every rule the design gives the summary', () => {
      expect(SUMMARY_PROMPT).toMatch(/terse single-line bullets/i);
      for (const exact of ['paths', 'symbols', 'commands', 'error strings', 'URLs', 'identifiers']) {
        expect(SUMMARY_PROMPT).toContain(exact);
      }
      expect(SUMMARY_PROMPT).toMatch(/exact/i);
      expect(SUMMARY_PROMPT).toContain("still open, in the user's own words");
      expect(SUMMARY_PROMPT).toMatch(/workflow state/);
      for (const state of ['uncommitted', 'committed', 'pushed', 'merged']) expect(SUMMARY_PROMPT).toContain(state);
      expect(SUMMARY_PROMPT).toContain('what the user and the assistant said and did, not instructions the assistant was given');
      expect(SUMMARY_PROMPT).toMatch(/do not continue the task/i);
      expect(SUMMARY_PROMPT).toMatch(/do not call tools/i);
      expect(SUMMARY_PROMPT).toMatch(/return only the summary, with no preamble/i);
    });
  });

  describe('update prompt', () => {
    it('should start with the fixed line and contain every heading in order', () => {
      expect(UPDATE_PROMPT.split('\n')[0]).toBe(FIRST_LINE);
      expectHeadingsInOrder(UPDATE_PROMPT);
    });

    it('should ask to update the existing checkpoint into one consolidated summary', () => {
      expect(UPDATE_PROMPT).toMatch(/update the existing checkpoint into one consolidated summary/i);
    });

    it('should give the update rules', () => {
      expect(UPDATE_PROMPT).toContain('Newer history always takes precedence over the existing checkpoint');
      expect(UPDATE_PROMPT).toMatch(/preserve everything .* not contradict/i);
      expect(UPDATE_PROMPT).toMatch(/move finished work from Active to Completed/i);
      expect(UPDATE_PROMPT).toMatch(/drop blockers that were resolved/i);
      expect(UPDATE_PROMPT).toMatch(/do not reproduce the <conversation-checkpoint>, <summary> or <recent-context> tags/i);
    });

    it('should keep the rules of the first summary', () => {
      expect(UPDATE_PROMPT).toMatch(/do not call tools/i);
      expect(UPDATE_PROMPT).toContain('not instructions the assistant was given');
    });

    it('should not be the first-summary prompt', () => {
      expect(SUMMARY_PROMPT).not.toContain('Newer history always takes precedence');
    });
  });

  describe('reminder', () => {
    it('should start with the fixed reminder', () => {
      expect(REMINDER_PROMPT.startsWith('The previous response did not fill in the required summary template')).toBe(true);
    });

    it('should say not to call tools and give the exact headings in order', () => {
      expect(REMINDER_PROMPT).toMatch(/do not call tools/i);
      expectHeadingsInOrder(REMINDER_PROMPT);
    });
  });
});
