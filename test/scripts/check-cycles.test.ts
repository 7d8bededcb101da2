import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '../../scripts/check-cycles.mjs');

function check(dir: string) {
  return spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
}

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cycles-'));
  for (const [name, source] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), source);
  }
  return dir;
}

describe('scripts/check-cycles.mjs', () => {
  it('should pass on src/', () => {
    const result = check(join(import.meta.dirname, '../../src'));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('should fail on a cycle through a type-only import and a folder index, naming it', () => {
    const dir = tree({
      'a.ts': "import { b } from './b';\nexport const a = b;\n",
      'b.ts': "import type { C } from './c';\nexport const b = 1 as unknown as C;\n",
      'c/index.ts': "export type { A } from '../a';\nexport type C = number;\n",
    });
    const result = check(dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('import cycle: a.ts -> b.ts -> c/index.ts -> a.ts');
  });

  it('should pass on a graph without a cycle', () => {
    const dir = tree({ 'a.ts': "import { b } from './b';\nexport const a = b;\n", 'b.ts': 'export const b = 1;\n' });
    expect(check(dir).status).toBe(0);
  });
});
