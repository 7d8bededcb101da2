import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const ai7 = fileURLToPath(new URL('./node_modules/ai7', import.meta.url));

const AI7_ONLY = ['test/e2e/clients-ai7.test.ts', 'test/e2e/native.test.ts'];

// One suite, three runs: AI SDK 6 on Node, AI SDK 7 on Node, and the core under the Edge runtime.
// Tests import `ai` and `ai/test`; the ai7 project points those names at the ai@7 install.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'ai6',
          include: ['test/**/*.test.ts'],
          // These drive AI SDK 7 end to end: they run in the ai7 project, where the package's own
          // runtime imports of `ai` are ai@7 too.
          exclude: AI7_ONLY,
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
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
