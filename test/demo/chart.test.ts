import { describe, expect, it } from 'vitest';
import { type ChartLayout, type StepPoint, chartLayout, overlaps, sessionChart, sparkline, sparklineScale, stepLine, stepsPerChar } from '../../demo/chart';

/** A sawtooth session: the prompt grows by `growth` a step and drops to `after` at each compaction, at the steps given. */
function session(steps: number, compactAt: readonly number[], { growth = 900, after = 1_000, start = 300 } = {}): StepPoint[] {
  const points: StepPoint[] = [];
  let tokens = start;
  for (let step = 1; step <= steps; step++) {
    const compacted = compactAt.includes(step);
    tokens = compacted ? after : step === 1 ? start : tokens + growth;
    points.push({ step, promptTokens: tokens, compacted });
  }
  return points;
}

const sessions: Array<{ name: string; points: StepPoint[]; window: number; ceiling: number }> = [
  { name: 'the demo: 120 steps, six compactions', points: session(120, [21, 44, 65, 81, 100, 117], { growth: 760 }), window: 32_000, ceiling: 16_000 },
  { name: 'a compaction at the last step', points: session(40, [18, 40]), window: 32_000, ceiling: 16_000 },
  { name: 'a compaction at the next-to-last step', points: session(41, [20, 40]), window: 32_000, ceiling: 16_000 },
  { name: 'a ceiling just under the window', points: session(30, [9, 18, 27], { growth: 800 }), window: 8_000, ceiling: 7_800 },
  { name: 'prompts above the window (rejections)', points: session(25, [12, 25], { growth: 3_500 }), window: 32_000, ceiling: 16_000 },
  { name: 'one step', points: session(1, []), window: 32_000, ceiling: 16_000 },
  { name: 'two steps, the second compacted', points: session(2, [2]), window: 32_000, ceiling: 16_000 },
  { name: '1,000 steps', points: session(1_000, Array.from({ length: 60 }, (_, index) => 16 * (index + 1) + 3)), window: 128_000, ceiling: 108_800 },
];

function layoutOf({ points, window, ceiling }: (typeof sessions)[number]): ChartLayout {
  return chartLayout(points, { window, ceiling, title: `ai-compaction: ${points.length} steps in a ${window.toLocaleString('en-US')}-token window` });
}

describe('demo step line', () => {
  it('should show the prompt as a share of the ceiling, not of the window', () => {
    expect(stepLine({ step: 99, promptTokens: 15_363, compacted: false }, { ceiling: 16_000, compactions: 4 })).toBe(
      'step  99  prompt 15,363 tokens  ███████████████████·  96 % of ceiling  compactions 4',
    );
    expect(stepLine({ step: 100, promptTokens: 1_057, compacted: true }, { ceiling: 16_000, compactions: 5 })).toBe(
      'step 100  prompt  1,057 tokens  █···················   7 % of ceiling  compactions 5  ← compacted',
    );
  });

  it('should fill the bar at the ceiling and not past it', () => {
    expect(stepLine({ step: 7, promptTokens: 16_073, compacted: false }, { ceiling: 16_000, compactions: 0 })).toContain(`${'█'.repeat(20)} 100 % of ceiling`);
    expect(stepLine({ step: 7, promptTokens: 24_000, compacted: false }, { ceiling: 16_000, compactions: 0 })).toContain(`${'█'.repeat(20)} 150 % of ceiling`);
  });
});

describe('demo sparkline', () => {
  it('should draw one bar per value, scaled to the maximum', () => {
    expect(sparkline([0, 16_000, 32_000], 32_000)).toBe('▁▅█');
    expect(sparkline([40_000], 32_000), 'above the maximum: full height').toBe('█');
  });

  it('should average a whole number of values into each bar, at most `width` bars, and say how many', () => {
    expect(sparkline([0, 0, 32_000, 32_000], 32_000, 2)).toBe('▁█');
    expect(sparkline([], 100)).toBe('');
    expect(sparkline(Array.from({ length: 120 }, () => 1), 1)).toHaveLength(60);
    expect(stepsPerChar(120)).toBe(2);
    expect(sparklineScale(120)).toBe('1 char = 2 steps');
    expect(sparklineScale(80)).toBe('1 char = 1 step');
    expect(sparkline(Array.from({ length: 200 }, () => 1), 1)).toHaveLength(67);
    expect(sparklineScale(200)).toBe('1 char = 3 steps');
  });
});

describe('demo chart', () => {
  it('should draw the window, the ceiling, the prompt line and one mark per compaction', () => {
    const svg = sessionChart(
      [
        { step: 1, promptTokens: 1_000, compacted: false },
        { step: 2, promptTokens: 16_500, compacted: false },
        { step: 3, promptTokens: 1_200, compacted: true },
      ],
      { window: 32_000, ceiling: 16_000, title: 'demo <session>' },
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('>window 32,000</text>');
    expect(svg).toContain('>ceiling 16,000</text>');
    expect(svg.match(/<circle [^>]*><title>/g)).toHaveLength(1);
    expect(svg).toContain('<title>step 3: compacted</title>');
    expect(svg.match(/<polyline points="([^"]+)"/)![1]!.split(' ')).toHaveLength(3);
    expect(svg).toContain('demo &lt;session&gt;');
  });

  it('should number the steps on the x axis at a round interval', () => {
    const layout = layoutOf(sessions[0]!);
    expect(layout.xTicks).toEqual([1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120]);
    const svg = sessionChart(sessions[0]!.points, { window: 32_000, ceiling: 16_000, title: 't' });
    for (const step of layout.xTicks) expect(svg).toContain(`>${step}</text>`);
    expect(svg).toContain('>step (1 to 120)</text>');
    // each number stands under its step
    for (const step of layout.xTicks) {
      const label = layout.labels.find((candidate) => candidate.id === `x-${step}`)!;
      expect(label.x + label.width / 2).toBeCloseTo(layout.x(step), 5);
      expect(label.y).toBeGreaterThan(layout.plot.y + layout.plot.height);
    }
    expect(layoutOf(sessions[7]!).xTicks.length).toBeLessThanOrEqual(16);
    expect(layoutOf(sessions[5]!).xTicks).toEqual([1]);
  });

  it('should have a legend for the prompt line, the compaction marks and the ceiling', () => {
    const layout = layoutOf(sessions[0]!);
    const legend = layout.labels.filter((label) => label.id.startsWith('legend-'));
    expect(legend.map((label) => [label.swatch, label.text])).toEqual([
      ['prompt', 'prompt tokens per step (provider count)'],
      ['compaction', 'compaction before the step (6)'],
      ['ceiling', 'ceiling: the compaction point'],
    ]);
    for (const label of legend) expect(label.y + label.height).toBeLessThan(layout.plot.y);
    const svg = sessionChart(sessions[0]!.points, { window: 32_000, ceiling: 16_000, title: 't' });
    expect(svg).toContain('>prompt tokens per step (provider count)</text>');
  });

  describe.each(sessions)('$name', (fixture) => {
    const layout = layoutOf(fixture);

    it('should place no two label boxes over each other, all on the canvas', () => {
      const { labels } = layout;
      expect(labels.length).toBeGreaterThan(8);
      for (const [index, a] of labels.entries()) {
        expect(a.x, a.id).toBeGreaterThanOrEqual(0);
        expect(a.y, a.id).toBeGreaterThanOrEqual(0);
        expect(a.x + a.width, a.id).toBeLessThanOrEqual(layout.width);
        expect(a.y + a.height, a.id).toBeLessThanOrEqual(layout.height);
        for (const b of labels.slice(index + 1)) expect(overlaps(a, b), `${a.id} (${a.text}) and ${b.id} (${b.text})`).toBe(false);
      }
    });

    it('should run no compaction marker through a label', () => {
      expect(layout.markers).toHaveLength(fixture.points.filter((point) => point.compacted).length);
      for (const at of layout.markers) {
        const marker = { x: at - 1, y: layout.plot.y, width: 2, height: layout.plot.height };
        for (const label of layout.labels) expect(overlaps(marker, label), `marker at ${at} and ${label.id}`).toBe(false);
      }
    });

    it('should label the window and the ceiling beside their lines, a moved label with a connector', () => {
      for (const [id, tokens] of [
        ['window', fixture.window],
        ['ceiling', fixture.ceiling],
      ] as const) {
        const label = layout.labels.find((candidate) => candidate.id === id)!;
        expect(label.x).toBeGreaterThan(layout.plot.x + layout.plot.width);
        const centre = label.y + label.height / 2;
        if (Math.abs(centre - layout.y(tokens)) > 1) expect(label.connector, `${id} moved off its line`).toBeDefined();
        else expect(label.connector).toBeUndefined();
      }
    });
  });

  it('should move the ceiling label off the window label when the two lines are close', () => {
    const layout = layoutOf(sessions[3]!);
    const window = layout.labels.find((label) => label.id === 'window')!;
    const ceiling = layout.labels.find((label) => label.id === 'ceiling')!;
    expect(Math.abs(layout.y(8_000) - layout.y(7_800))).toBeLessThan(window.height);
    expect(ceiling.connector).toBeDefined();
    expect(ceiling.y).toBeGreaterThan(window.y);
  });
});
