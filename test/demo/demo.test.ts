// `npm run demo` end to end, shortened: the embedded local provider, 25 steps (one compaction, at
// about step 21), the chart written to a temporary folder.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
let folder: string;
let output: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'ai-compaction-demo-'));
  const { stdout } = await promisify(execFile)(join(REPO, 'node_modules/.bin/tsx'), ['demo/index.ts', '--steps', '25', '--out', join(folder, 'session.svg')], {
    cwd: REPO,
    timeout: 60_000,
  });
  output = stdout;
}, 90_000);

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('npm run demo', () => {
  it('should say that the live line is of the ceiling, and show each step as a share of it', () => {
    expect(output).toContain('Bar and % are of the ceiling (16,000 tokens), the compaction point');
    const steps = output.split('\n').filter((line) => line.startsWith('step '));
    expect(steps).toHaveLength(25);
    for (const line of steps) expect(line).toMatch(/^step +\d+ {2}prompt +[\d,]+ tokens {2}[█·]{20} +\d+ % of ceiling {2}compactions \d+/);
    // the step before the compaction is near the ceiling, so near 100 %, not near 50 % (of the window)
    const compacted = steps.findIndex((line) => line.endsWith('← compacted'));
    expect(compacted).toBeGreaterThan(0);
    const before = steps[compacted - 1]!;
    const tokens = Number(before.match(/prompt +([\d,]+) tokens/)![1]!.replaceAll(',', ''));
    const percent = Number(before.match(/(\d+) % of ceiling/)![1]);
    expect(percent).toBe(Math.round((tokens / 16_000) * 100));
    expect(percent).toBeGreaterThan(75);
  });

  it('should say that the ceiling holds by the middleware\'s measure, and count the steps the provider counted over it', () => {
    expect(output).toContain("The middleware holds a step to it by its own measure (the provider's count of the step before, plus an estimate of what was added since)");
    expect(output).toContain('When what was added is denser than estimated, the provider counts a step a little over the ceiling; the window (32,000) is the limit.');
    const counted = output.split('\n').filter((line) => line.startsWith('step ')).map((line) => Number(line.match(/prompt +([\d,]+) tokens/)![1]!.replaceAll(',', '')));
    const over = counted.filter((tokens) => tokens >= 16_000);
    const row = output.split('\n').find((line) => line.startsWith('counted over the ceiling'))!;
    expect(row).toBe(
      over.length === 0
        ? 'counted over the ceiling    no step'
        : `counted over the ceiling    ${over.length} step${over.length === 1 ? '' : 's'} (largest ${Math.round((Math.max(...over) / 16_000) * 100)} %; none over the window)`,
    );
  });

  it('should say how the sparkline is scaled', () => {
    expect(output).toMatch(/\n[▁▂▃▄▅▆▇█]{25} {3}\(prompt per step, 1 char = 1 step; full height = the ceiling, 16,000\)\n/);
  });

  it('should write the chart', async () => {
    const svg = await readFile(join(folder, 'session.svg'), 'utf8');
    expect(svg).toContain('>ai-compaction: 25 steps in a 32,000-token window</text>');
    expect(svg).toContain('>prompt tokens per step (provider count)</text>');
    expect(svg).toContain('>step (1 to 25)</text>');
  });
});
