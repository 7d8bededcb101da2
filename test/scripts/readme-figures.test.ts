import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain script of the repository, without types
import { figures, measuredText, missingFigures } from '../../scripts/check-readme-figures.mjs';

const script = join(import.meta.dirname, '../../scripts/check-readme-figures.mjs');
const check = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

const BENCHMARKS = ['```text', 'strategy       steps  over shortest      input   full cost  mean/ceiling', 'ai-compaction    164              0  2,272,419     811,384          61 %', '1.78x  13.8 s  0.71 ms', '```'].join('\n');

describe('scripts/check-readme-figures.mjs', () => {
  it('passes on README.md and docs/benchmarks.md', () => {
    const result = check();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('reads numbers with their units, however spaced, and not inside code spans or link targets', () => {
    expect(figures('It took 164 steps, 2,272,419 tokens (61 % of it, 61% again), 1.78x, 13.8 s, 0.71 ms and 33.4 M; `keep: 15000` [see](#table-2).').map(({ figure }: { figure: string }) => figure)).toEqual([
      '164',
      '2,272,419',
      '61 %',
      '61 %',
      '1.78 x',
      '13.8 s',
      '0.71 ms',
      '33.4 M',
    ]);
    // a letter after a unit makes it a word: "59 steps" is 59
    expect(figures('59 steps, 3 seeds, 24k').map(({ figure }: { figure: string }) => figure)).toEqual(['59', '3', '24 k']);
  });

  it('measures the Measured section and the marked passages, not code blocks nor the rest', () => {
    const readme = [
      '## Options',
      'A default of 15,000.',
      '<!-- measured -->Prepared at 0.8, it billed 2,272,419.<!-- /measured -->',
      '## Measured',
      'It took 164 steps.',
      '```ts',
      'compaction({ keep: 27200 });',
      '```',
      '## Developing',
      'About 4 minutes.',
    ].join('\n');
    const text = measuredText(readme).split('\n');
    expect(text).toHaveLength(10);
    expect(text.filter((line: string) => line !== '')).toEqual(['Prepared at 0.8, it billed 2,272,419.', '## Measured', 'It took 164 steps.']);
    expect(missingFigures(readme, BENCHMARKS)).toEqual([{ figure: '0.8', line: 3 }]);
  });

  it('fails on a figure the benchmarks file does not hold, naming it and its line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'readme-figures-'));
    writeFileSync(join(dir, 'benchmarks.md'), BENCHMARKS);
    writeFileSync(join(dir, 'README.md'), ['# x', '## Measured', 'The default took 164 steps and billed 811,384 at cache prices, 1.78x the other.', 'Overflow recovery only billed 34.3 M.', ''].join('\n'));
    const result = check(join(dir, 'README.md'), join(dir, 'benchmarks.md'));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('line 4: 34.3 M');
    expect(result.stderr).not.toContain('line 3');
    writeFileSync(join(dir, 'README.md'), ['# x', '## Measured', 'The default took 164 steps.', ''].join('\n'));
    expect(check(join(dir, 'README.md'), join(dir, 'benchmarks.md')).status).toBe(0);
    expect(check(join(dir, 'README.md'), join(dir, 'missing.md')).stderr).toContain('does not exist: run `npm run bench`');
  });
});
