import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', redis: 'src/redis.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
  external: ['ai', '@ai-sdk/provider'],
  // ESM-only; bundled so the CommonJS build loads on every Node 20 release.
  noExternal: ['@noble/hashes'],
});
