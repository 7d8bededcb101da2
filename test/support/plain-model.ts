// A scripted language model (spec v3) as a plain object: unlike MockLanguageModelV3 it keeps no
// record of its calls and imports nothing, so it serves load runs and browser bundles alike.
import { isSummaryRequest } from '../../src';

export const PLAIN_SUMMARY = ['## Objective', '- go on', '## Requirements', '## Decisions', '## Work State', '### Completed', '### Active', '### Blocked', '## Next Move', '1. next', '## Relevant Files', '## Important Context'].join('\n');

type Content = Array<{ type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: string }>;

/**
 * Answers summary requests with a filled template and every other call with `reply(size)`; usage
 * is the prompt's JSON length / 4 in, 10 out.
 */
export function plainModel(provider: string, reply: (size: number) => { content: Content; toolCalls?: boolean }, onSummary?: () => void) {
  return {
    specificationVersion: 'v3' as const,
    provider,
    modelId: 'scripted',
    supportedUrls: {},
    doStream: async () => {
      throw new Error('not used');
    },
    doGenerate: async (options: { prompt: unknown[] }) => {
      const size = Math.round(JSON.stringify(options.prompt).length / 4);
      const usage = { inputTokens: { total: size, noCache: size, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 10, text: 10, reasoning: undefined } };
      if (isSummaryRequest(options as never)) {
        onSummary?.();
        return { content: [{ type: 'text' as const, text: PLAIN_SUMMARY }] as Content, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] };
      }
      const { content, toolCalls } = reply(size);
      const finishReason = toolCalls ? { unified: 'tool-calls' as const, raw: 'tool_calls' } : { unified: 'stop' as const, raw: 'stop' };
      return { content, finishReason, usage, warnings: [] };
    },
  };
}
