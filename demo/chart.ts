/** A step of a session as the demo charts it. */
export interface StepPoint {
  step: number;
  promptTokens: number;
  /** A compaction happened before this step went out. */
  compacted: boolean;
}

const BARS = '▁▂▃▄▅▆▇█';

/** A terminal sparkline of prompt sizes, at most `width` characters (steps averaged into buckets). */
export function sparkline(values: readonly number[], max: number, width = 80): string {
  if (values.length === 0 || max <= 0) return '';
  const buckets = Math.min(width, values.length);
  let line = '';
  for (let bucket = 0; bucket < buckets; bucket++) {
    const from = Math.floor((bucket * values.length) / buckets);
    const to = Math.max(from + 1, Math.floor(((bucket + 1) * values.length) / buckets));
    const slice = values.slice(from, to);
    const mean = slice.reduce((sum, value) => sum + value, 0) / slice.length;
    const level = Math.min(BARS.length - 1, Math.max(0, Math.round((mean / max) * (BARS.length - 1))));
    line += BARS[level];
  }
  return line;
}

/**
 * An SVG chart of prompt tokens per step, with the ceiling and the window drawn as lines and each
 * compaction marked.
 */
export function sessionChart(points: readonly StepPoint[], { window, ceiling, title }: { window: number; ceiling: number; title: string }): string {
  const width = 960;
  const height = 420;
  const left = 70;
  const right = 20;
  const top = 40;
  const bottom = 50;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const maxY = Math.max(window, ...points.map((point) => point.promptTokens)) * 1.05;
  const steps = Math.max(1, points.length - 1);
  const x = (index: number) => left + (index / steps) * plotWidth;
  const y = (tokens: number) => top + plotHeight - (tokens / maxY) * plotHeight;
  const line = points.map((point, index) => `${x(index).toFixed(1)},${y(point.promptTokens).toFixed(1)}`).join(' ');
  const marks = points
    .map((point, index) =>
      point.compacted
        ? `<line x1="${x(index).toFixed(1)}" y1="${top}" x2="${x(index).toFixed(1)}" y2="${top + plotHeight}" stroke="#16a34a" stroke-dasharray="3 3"/>` +
          `<circle cx="${x(index).toFixed(1)}" cy="${y(point.promptTokens).toFixed(1)}" r="4" fill="#16a34a"><title>step ${point.step}: compacted</title></circle>`
        : '',
    )
    .join('');
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map((share) => {
      const tokens = Math.round((maxY / 1.05) * share);
      return `<text x="${left - 8}" y="${y(tokens) + 4}" text-anchor="end">${tokens.toLocaleString('en-US')}</text>`;
    })
    .join('');
  const compactions = points.filter((point) => point.compacted).length;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">
<rect width="100%" height="100%" fill="#fff"/>
<text x="${left}" y="24" font-size="16" font-weight="600">${escapeXml(title)}</text>
<line x1="${left}" y1="${y(window)}" x2="${left + plotWidth}" y2="${y(window)}" stroke="#dc2626"/>
<text x="${left + plotWidth}" y="${y(window) - 6}" text-anchor="end" fill="#dc2626">window ${window.toLocaleString('en-US')}</text>
<line x1="${left}" y1="${y(ceiling)}" x2="${left + plotWidth}" y2="${y(ceiling)}" stroke="#ea580c" stroke-dasharray="6 4"/>
<text x="${left + plotWidth}" y="${y(ceiling) - 6}" text-anchor="end" fill="#ea580c">ceiling ${ceiling.toLocaleString('en-US')}</text>
${marks}
<polyline points="${line}" fill="none" stroke="#2563eb" stroke-width="2"/>
<line x1="${left}" y1="${top + plotHeight}" x2="${left + plotWidth}" y2="${top + plotHeight}" stroke="#111"/>
<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}" stroke="#111"/>
${ticks}
<text x="${left + plotWidth / 2}" y="${height - 12}" text-anchor="middle">step (1 to ${points.length}); green: ${compactions} compaction${compactions === 1 ? '' : 's'}</text>
<text x="16" y="${top + plotHeight / 2}" transform="rotate(-90 16 ${top + plotHeight / 2})" text-anchor="middle">prompt tokens</text>
</svg>
`;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (char) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[char]!);
}
