import path from 'node:path';
import type { NextConfig } from 'next';

// `ai-compaction` is linked from the repository root (`file:../..`), so the bundler and the output
// tracing must be allowed to read files above this folder.
const root = path.resolve(process.cwd(), '../..');

const nextConfig: NextConfig = {
  turbopack: { root },
  outputFileTracingRoot: root,
  images: { unoptimized: true },
};

export default nextConfig;
