// Installs the Next.js example's dependencies (from its lock file) when they are missing or the
// lock file changed since they were installed, so that `npm test` runs its browser test on a fresh
// checkout and after a pull that adds a dependency.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const example = new URL('../examples/next-chat/', import.meta.url);
const installed = new URL('node_modules/.package-lock.json', example);

/** The packages a lock file pins, by path: version and whether it is optional (a platform binary npm may skip). */
function pinned(url) {
  const packages = JSON.parse(readFileSync(url, 'utf8')).packages ?? {};
  return new Map(Object.entries(packages).filter(([path]) => path.startsWith('node_modules/')));
}

/** Whether what is installed is what the lock file pins (optional packages may be left out). */
function matches(installedUrl, lockUrl) {
  const have = pinned(installedUrl);
  const want = pinned(lockUrl);
  for (const [path, entry] of have) if (want.get(path)?.version !== entry.version) return false;
  for (const [path, entry] of want) if (!entry.optional && !have.has(path)) return false;
  return true;
}

const stale =
  !existsSync(new URL('node_modules/next/package.json', example)) ||
  !existsSync(installed) ||
  !matches(installed, new URL('package-lock.json', example));
if (stale) {
  console.log('Installing examples/next-chat (npm ci)...');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: example, stdio: 'inherit' });
}
