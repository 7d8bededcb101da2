import path from 'node:path';
import type { NextConfig } from 'next';

// `ai-compaction` is linked from the repository root (`file:../..`), so the bundler and the output
// tracing must be allowed to read files above this folder.
const root = path.resolve(process.cwd(), '../..');

const nextConfig: NextConfig = {
  turbopack: { root },
  outputFileTracingRoot: root,
  images: { unoptimized: true },
  experimental: {
    // No Turbopack cache on disk for `next build`: writing it took 20 to 30 s of every build on a
    // 2-core machine, and the build here runs once per change (the tests and `npm run example`
    // reuse it while the sources stay the same); edit the app with `next dev`, which keeps its cache.
    turbopackFileSystemCacheForBuild: false,
  },
};

export default nextConfig;
