// Installs the Next.js example's dependencies (from its lock file) when they are missing, so that
// `npm test` runs its browser test on a fresh checkout.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const example = new URL('../examples/next-chat/', import.meta.url);
if (!existsSync(new URL('node_modules/next/package.json', example))) {
  console.log('Installing examples/next-chat (npm ci)...');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: example, stdio: 'inherit' });
}
