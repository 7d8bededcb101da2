// Bundled for the browser by test/e2e/browser-core.test.ts: the package's source in a
// generateText tool loop with a scripted model, run inside Chromium.
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { compaction, isSummaryRequest } from '../../src';

const WINDOW = 12_000;
const SUMMARY = ['## Objective', '- read files', '## Requirements', '## Decisions', '## Work State', '### Completed', '### Active', '### Blocked', '## Next Move', '1. next', '## Relevant Files', '## Important Context'].join('\n');

async function run() {
  const prompts: number[] = [];
  let summaries = 0;
  let step = 0;
  const model = {
    specificationVersion: 'v3' as const,
    provider: 'browser',
    modelId: 'scripted',
    supportedUrls: {},
    doStream: async () => {
      throw new Error('not used');
    },
    doGenerate: async (options: { prompt: unknown[] }) => {
      const size = Math.round(JSON.stringify(options.prompt).length / 4);
      const usage = { inputTokens: { total: size, noCache: size, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 10, text: 10, reasoning: undefined } };
      const finishReason = { unified: 'stop' as const, raw: 'stop' };
      if (isSummaryRequest(options as never)) {
        summaries++;
        return { content: [{ type: 'text' as const, text: SUMMARY }], finishReason, usage, warnings: [] };
      }
      prompts.push(size);
      step++;
      if (step >= 40) return { content: [{ type: 'text' as const, text: 'done' }], finishReason, usage, warnings: [] };
      return {
        content: [{ type: 'tool-call' as const, toolCallId: `call-${step}`, toolName: 'read_file', input: JSON.stringify({ path: `src/${step}.ts` }) }],
        finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  };
  let compactions = 0;
  const middleware = compaction({ contextWindow: WINDOW, onCompaction: () => void compactions++ });
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware }),
    tools: {
      read_file: tool({
        inputSchema: jsonSchema<{ path: string }>({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
        execute: async ({ path }) => `// ${path}\n${'export const x = 1;\n'.repeat(200)}`,
      }),
    },
    stopWhen: stepCountIs(50),
    prompt: 'Read every file.',
  });
  return { text: result.text, steps: result.steps.length, prompts, summaries, compactions, last: middleware.last()?.reason, secure: globalThis.isSecureContext };
}

(globalThis as { runCompaction?: typeof run }).runCompaction = run;
