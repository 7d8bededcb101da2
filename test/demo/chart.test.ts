import { describe, expect, it } from 'vitest';
import { sessionChart, sparkline } from '../../demo/chart';

describe('demo chart', () => {
  it('should draw one bar per value, scaled to the maximum', () => {
    expect(sparkline([0, 16_000, 32_000], 32_000)).toBe('▁▅█');
  });

  it('should average values into at most `width` bars', () => {
    expect(sparkline([0, 0, 32_000, 32_000], 32_000, 2)).toBe('▁█');
    expect(sparkline([], 100)).toBe('');
  });

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
    expect(svg).toContain('window 32,000');
    expect(svg).toContain('ceiling 16,000');
    expect(svg.match(/<circle /g)).toHaveLength(1);
    expect(svg).toContain('<title>step 3: compacted</title>');
    expect(svg.match(/<polyline points="([^"]+)"/)![1]!.split(' ')).toHaveLength(3);
    expect(svg).toContain('demo &lt;session&gt;');
  });
});
