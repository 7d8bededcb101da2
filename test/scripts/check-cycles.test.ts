import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '../../scripts/check-cycles.mjs');
const fixtures = join(import.meta.dirname, '../fixtures/layers');

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
      'compact/a.ts': "import { b } from './b';\nexport const a = b;\n",
      'compact/b.ts': "import type { C } from './c';\nexport const b = 1 as unknown as C;\n",
      'compact/c/index.ts': "export type { A } from '../a';\nexport type C = number;\n",
    });
    const result = check(dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('import cycle: compact/a.ts -> compact/b.ts -> compact/c/index.ts -> compact/a.ts');
  });

  it('should pass on a graph without a cycle', () => {
    const dir = tree({ 'compact/a.ts': "import { b } from './b';\nexport const a = b;\n", 'compact/b.ts': 'export const b = 1;\n' });
    expect(check(dir).status).toBe(0);
  });

  it('should pass on a tree whose imports all run down the layers', () => {
    const result = check(join(fixtures, 'clean'));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('its 5 folders and top files keep their');
  });

  it('should fail on an import that runs back up, naming it and both layers', () => {
    const result = check(join(fixtures, 'back'));
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe('import runs back up: prompt/conversation.ts -> view.ts (prompt is in layer 1, view.ts in layer 6)');
  });

  it('should fail on two folders of one layer that import each other, naming an import of each', () => {
    const result = check(join(fixtures, 'loop'));
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe('folder loop: sizing -> store -> sizing (sizing/learned.ts -> store/format.ts, store/keeper.ts -> sizing/estimate.ts)');
  });

  it('should fail on a folder that is in no layer', () => {
    const dir = tree({ 'errors.ts': 'export const code = 1;\n', 'helpers/code.ts': "export { code } from '../errors';\n" });
    const result = check(dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('helpers is in no layer');
  });
});
