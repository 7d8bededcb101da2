import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ai7 = fileURLToPath(new URL('./node_modules/ai7', import.meta.url));

const AI7_ONLY = ['test/e2e/clients-ai7.test.ts', 'test/e2e/native.test.ts'];

/**
 * Files that start before all others. They spend most of their time waiting for processes of their
 * own (`next build`, `next start`, Chromium): started first they overlap the rest of the suite on
 * the other worker; started late (a fresh checkout has no timings, so vitest keeps the order it
 * found the files in) they would add their whole time to the run's.
 */
const FIRST = ['test/e2e/next-chat.test.ts'];

/** Vitest's order (files that failed last time first, then the slowest), FIRST before all. */
class WaitingFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (spec: TestSpecification) => FIRST.some((file) => spec.moduleId.endsWith(`/${file}`));
    return [...sorted.filter(first), ...sorted.filter((spec) => !first(spec))];
  }
}

// One suite, three runs: AI SDK 6 on Node, AI SDK 7 on Node, and the core under the Edge runtime.
// Tests import `ai` and `ai/test`; the ai7 project points those names at the ai@7 install.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A page's state read by a poll (a browser test beside the rest of the suite on a busy machine):
    // ten seconds, not vitest's one, before the poll fails.
    expect: { poll: { timeout: 10_000 } },
    // At least two workers (vitest's default is one fewer than the cores: one on a 2-core machine,
    // where every file then waits for the Next.js example's browser test, which mostly waits for
    // its own processes). That test starts first, on a worker of its own; the rest runs beside it.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: WaitingFilesFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'ai6',
          include: ['test/**/*.test.ts'],
          // These drive AI SDK 7 end to end: they run in the ai7 project, where the package's own
          // runtime imports of `ai` are ai@7 too.
          exclude: AI7_ONLY,
          // tsc on the type tests and what they import, not the whole project (`npm run typecheck`)
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './test/types/tsconfig.test-d.json' },
        },
      },
      {
        extends: true,
        resolve: {
          alias: [
            { find: /^ai$/, replacement: `${ai7}/dist/index.js` },
            { find: /^ai\/test$/, replacement: `${ai7}/dist/test/index.js` },
          ],
        },
        test: {
          name: 'ai7',
          include: ['test/core/**/*.test.ts', 'test/support/**/*.test.ts', ...AI7_ONLY],
          env: { AI_SDK_MAJOR: '7' },
        },
      },
      {
        extends: true,
        test: {
          name: 'edge',
          environment: 'edge-runtime',
          include: ['test/core/**/*.test.ts'],
        },
      },
    ],
  },
});
