// Bundled for the browser by test/e2e/browser-core.test.ts: the package's source in a
// generateText tool loop with a scripted model, run inside Chromium.
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { compaction } from '../../src';
import { plainModel } from '../support/plain-model';

const WINDOW = 12_000;

async function run() {
  const prompts: number[] = [];
  let summaries = 0;
  let step = 0;
  const model = plainModel(
    'browser',
    (size) => {
      prompts.push(size);
      step++;
      if (step >= 40) return { content: [{ type: 'text', text: 'done' }] };
      return { content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: 'read_file', input: JSON.stringify({ path: `src/${step}.ts` }) }], toolCalls: true };
    },
    () => void summaries++,
  );
  let compactions = 0;
  // One compaction per summary request, checked by the test: nothing prepared ahead
  // (docs/design.md, "Preparing ahead") here.
  const middleware = compaction({ contextWindow: WINDOW, prepare: false, onCompaction: () => void compactions++ });
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
