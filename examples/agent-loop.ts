/**
 * A small agent loop with a scripted model: `generateText` with a tool, 60 steps, a 20,000-token
 * window. Prints one line per step and what the middleware did. No API key needed.
 */
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { compaction, isSummaryRequest } from '../src';

const WINDOW = 20_000;
let step = 0;

const scripted = new MockLanguageModelV3({
  doGenerate: async (options) => {
    const size = Math.round(JSON.stringify(options.prompt).length / 4);
    const usage = { inputTokens: { total: size, noCache: size, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 20, text: 20, reasoning: undefined } };
    if (isSummaryRequest(options)) {
      const summary = ['## Objective', '- Read every module', '## Requirements', '- none', '## Decisions', '- none', '## Work State', '### Completed', `- ${step} modules read`, '### Active', '- reading', '### Blocked', '- none', '## Next Move', '1. Read the next module', '## Relevant Files', '- `src/module-1.ts`: first module', '## Important Context', '- none'].join('\n');
      return { content: [{ type: 'text', text: summary }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    }
    step++;
    const share = ((size / WINDOW) * 100).toFixed(0).padStart(3);
    console.log(`step ${String(step).padStart(2)}  prompt ~${String(size).padStart(6)} tokens  ${share} % of the window  compactions ${compactions}`);
    if (step >= 60) return { content: [{ type: 'text', text: 'Read all 60 modules.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    return {
      content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: 'read_file', input: JSON.stringify({ path: `src/module-${step}.ts` }) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    };
  },
});

let compactions = 0;
const middleware = compaction({ contextWindow: WINDOW, onCompaction: () => void compactions++ });

const result = await generateText({
  model: wrapLanguageModel({ model: scripted, middleware }),
  tools: {
    read_file: tool({
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => `// ${path}\n${'export function handler() { return 42; }\n'.repeat(200)}`,
    }),
  },
  stopWhen: stepCountIs(70),
  prompt: 'Read every module of the project.',
});

console.log(`\n${result.text}\n${result.steps.length} steps, ${compactions} compactions; the last one:`);
console.log(middleware.last());
