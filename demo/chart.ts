/** A step of a session as the demo charts it. */
export interface StepPoint {
  step: number;
  promptTokens: number;
  /** A compaction happened before this step went out. */
  compacted: boolean;
}

const BARS = '▁▂▃▄▅▆▇█';

/**
 * The demo's line for a step: its prompt, and a bar and a percentage of the ceiling (the
 * compaction point, so 100 % is where the middleware compacts; a provider's count can go a little
 * over it, the bar stops at full).
 */
export function stepLine({ step, promptTokens, compacted }: StepPoint, { ceiling, compactions }: { ceiling: number; compactions: number }): string {
  const share = ceiling > 0 ? promptTokens / ceiling : 0;
  const bar = '█'.repeat(Math.min(20, Math.round(share * 20))).padEnd(20, '·');
  const percent = `${String(Math.round(share * 100)).padStart(3)} % of ceiling`;
  return `step ${String(step).padStart(3)}  prompt ${promptTokens.toLocaleString('en-US').padStart(6)} tokens  ${bar} ${percent}  compactions ${compactions}${compacted ? '  ← compacted' : ''}`;
}

/**
 * How many steps one character of a `width`-character sparkline stands for: 1 up to `width` steps,
 * then the smallest whole number that fits them all (so every character but the last averages the
 * same number of steps).
 */
export function stepsPerChar(count: number, width = 80): number {
  return Math.max(1, Math.ceil(count / Math.max(1, width)));
}

/**
 * A terminal sparkline of prompt sizes, at most `width` characters: past `width` values, each
 * character is the mean of `stepsPerChar(values.length, width)` of them. Values above `max` are
 * drawn at full height.
 */
export function sparkline(values: readonly number[], max: number, width = 80): string {
  if (values.length === 0 || max <= 0) return '';
  const per = stepsPerChar(values.length, width);
  let line = '';
  for (let from = 0; from < values.length; from += per) {
    const slice = values.slice(from, from + per);
    const mean = slice.reduce((sum, value) => sum + value, 0) / slice.length;
    const level = Math.min(BARS.length - 1, Math.max(0, Math.round((mean / max) * (BARS.length - 1))));
    line += BARS[level];
  }
  return line;
}

/** What the sparkline's scale is, for the line printed after it: "1 char = 2 steps" when downsampled. */
export function sparklineScale(count: number, width = 80): string {
  const per = stepsPerChar(count, width);
  return per === 1 ? '1 char = 1 step' : `1 char = ${per} steps`;
}

/** A box on the chart, in SVG user units, with its top-left corner at (x, y). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A text of the chart, with the box it takes (for a rotated label, the rotated box). */
export interface ChartLabel extends Box {
  id: string;
  text: string;
  fontSize: number;
  bold?: boolean;
  fill?: string;
  /** Drawn turned a quarter counter-clockwise (the y axis title). */
  rotated?: boolean;
  /** A legend entry: the sample of the line it names, drawn in the first `swatch` units of the box. */
  swatch?: 'prompt' | 'compaction' | 'ceiling';
  /** A line label moved off its line: a connector from the line's end to the label. */
  connector?: { x1: number; y1: number; x2: number; y2: number };
}

export interface ChartLayout {
  width: number;
  height: number;
  plot: Box;
  /** Every text of the chart; no two boxes overlap, none crosses a compaction marker. */
  labels: ChartLabel[];
  /** The x of each compaction's marker line (the line runs from the plot's top to its bottom). */
  markers: number[];
  /** The points of the prompt line. */
  line: Array<{ x: number; y: number; point: StepPoint }>;
  x(step: number): number;
  y(tokens: number): number;
  yTicks: number[];
  xTicks: number[];
}

const FONT = 12;
const TITLE_FONT = 16;
const SWATCH = 28;
/** Label boxes keep this much room between them. */
const GAP = 3;

/**
 * The width a text takes, over-estimated rather than under: DejaVu Sans (what `system-ui` is on a
 * Debian desktop, one of the widest) averages 0.53 to 0.64 em a character (bold: 0.6 to 0.7 em).
 */
export function textWidth(text: string, fontSize: number, bold = false): number {
  return Math.ceil(text.length * fontSize * (bold ? 0.72 : 0.64));
}

const lineHeight = (fontSize: number) => Math.ceil(fontSize * 1.25);

export function overlaps(a: Box, b: Box, gap = 0): boolean {
  return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap;
}

/** The smallest step of 1, 2, 2.5 or 5 times a power of ten whose ticks are at least `minGap` units apart. */
function niceInterval(unitsPerStep: number, minGap: number): number {
  for (let power = 1; ; power *= 10) {
    for (const factor of [1, 2, 2.5, 5]) {
      const interval = factor * power;
      if (Number.isInteger(interval) && interval * unitsPerStep >= minGap) return interval;
    }
  }
}

/**
 * Where everything of the chart goes. Labels are placed one by one, each at the first of its
 * candidate positions whose box is clear of every box placed before it: the line labels (window,
 * ceiling) sit in the right margin, beside the end of their line, outside the plot that the
 * compaction markers cross, and move up or down (with a connector) when they would touch.
 */
export function chartLayout(points: readonly StepPoint[], { window, ceiling, title }: { window: number; ceiling: number; title: string }): ChartLayout {
  const width = 960;
  const height = 440;
  const labels: ChartLabel[] = [];
  const clear = (box: Box) => box.x >= 0 && box.y >= 0 && box.x + box.width <= width && box.y + box.height <= height && labels.every((placed) => !overlaps(placed, box, GAP));
  /** Places the label at the first clear candidate; an optional one is left out when none is. */
  const place = (label: Omit<ChartLabel, 'x' | 'y'>, candidates: Array<{ x: number; y: number }>, optional = false): ChartLabel | undefined => {
    const found = candidates.find((candidate) => clear({ ...candidate, width: label.width, height: label.height }));
    if (found === undefined && optional) return undefined;
    const placed = { ...label, ...(found ?? candidates[0]!) };
    labels.push(placed);
    return placed;
  };

  const compactions = points.filter((point) => point.compacted).length;
  const maxTokens = Math.max(window, ...points.map((point) => point.promptTokens));
  const maxY = maxTokens * 1.05;
  // quarters of the window (its half is the default ceiling); above the window, round numbers
  const yTicks =
    maxTokens === window
      ? [0, 0.25, 0.5, 0.75, 1].map((share) => Math.round(window * share))
      : Array.from({ length: 6 }, (_, index) => index * niceInterval(1, maxTokens / 5)).filter((tokens) => tokens <= maxTokens);
  const tickWidth = Math.max(...yTicks.map((tokens) => textWidth(tokens.toLocaleString('en-US'), FONT)));
  const lineLabels = [
    { id: 'window', text: `window ${window.toLocaleString('en-US')}`, tokens: window, fill: '#dc2626' },
    { id: 'ceiling', text: `ceiling ${ceiling.toLocaleString('en-US')}`, tokens: ceiling, fill: '#ea580c' },
  ];
  const rightLabelWidth = Math.max(...lineLabels.map((label) => textWidth(label.text, FONT)));

  // the title, then the legend on one row (wrapped if it must), then the plot
  const margin = 10;
  place({ id: 'title', text: title, fontSize: TITLE_FONT, bold: true, width: textWidth(title, TITLE_FONT, true), height: lineHeight(TITLE_FONT) }, [{ x: margin, y: margin }]);
  const legend: Array<Omit<ChartLabel, 'x' | 'y'>> = [
    { id: 'legend-prompt', text: 'prompt tokens per step (provider count)', swatch: 'prompt', fontSize: FONT, width: 0, height: 0 },
    { id: 'legend-compaction', text: `compaction before the step (${compactions})`, swatch: 'compaction', fontSize: FONT, width: 0, height: 0 },
    { id: 'legend-ceiling', text: 'ceiling: the compaction point', swatch: 'ceiling', fontSize: FONT, width: 0, height: 0 },
  ];
  let legendX = margin;
  let legendY = margin + lineHeight(TITLE_FONT) + 8;
  for (const entry of legend) {
    const box = { ...entry, width: SWATCH + 6 + textWidth(entry.text, FONT), height: lineHeight(FONT) };
    if (legendX > margin && legendX + box.width > width - margin) {
      legendX = margin;
      legendY += lineHeight(FONT) + GAP + 2;
    }
    place(box, [{ x: legendX, y: legendY }]);
    legendX += box.width + 24;
  }

  const axisTitleHeight = lineHeight(FONT);
  const plot: Box = { x: margin + axisTitleHeight + 8 + tickWidth + 8, y: legendY + lineHeight(FONT) + 14, width: 0, height: 0 };
  plot.width = width - plot.x - (rightLabelWidth + 8 + margin);
  plot.height = height - plot.y - (6 + lineHeight(FONT) + 4 + lineHeight(FONT) + margin);
  const firstStep = points[0]?.step ?? 1;
  const lastStep = points.at(-1)?.step ?? 1;
  const span = Math.max(1, lastStep - firstStep);
  const x = (step: number) => plot.x + ((step - firstStep) / span) * plot.width;
  const y = (tokens: number) => plot.y + plot.height - (tokens / maxY) * plot.height;

  // the line labels, beside the right end of their lines: at the line, else the nearest clear spot above or below
  for (const label of lineLabels) {
    const centre = y(label.tokens);
    const box = { id: label.id, text: label.text, fill: label.fill, fontSize: FONT, width: textWidth(label.text, FONT), height: lineHeight(FONT) };
    const candidates = [];
    for (let shift = 0; shift <= height; shift += 2) candidates.push({ x: plot.x + plot.width + 8, y: centre - box.height / 2 - shift }, { x: plot.x + plot.width + 8, y: centre - box.height / 2 + shift });
    const placed = place(box, candidates)!;
    if (Math.abs(placed.y + placed.height / 2 - centre) > 1) {
      placed.connector = { x1: plot.x + plot.width, y1: centre, x2: placed.x - 2, y2: placed.y + placed.height / 2 };
    }
  }

  // the y axis: its ticks, right-aligned against the axis, and its title, turned
  for (const tokens of yTicks) {
    const text = tokens.toLocaleString('en-US');
    const box = { id: `y-${tokens}`, text, fontSize: FONT, width: textWidth(text, FONT), height: lineHeight(FONT) };
    place(box, [{ x: plot.x - 8 - box.width, y: y(tokens) - box.height / 2 }], true);
  }
  const yTitle = 'prompt tokens';
  place({ id: 'y-title', text: yTitle, fontSize: FONT, rotated: true, width: axisTitleHeight, height: textWidth(yTitle, FONT) }, [
    { x: margin, y: plot.y + plot.height / 2 - textWidth(yTitle, FONT) / 2 },
  ]);

  // the x axis: step numbers at a round interval (and the first step when there is room), then its title
  const tickBox = (step: number) => {
    const text = String(step);
    const boxWidth = textWidth(text, FONT);
    return { id: `x-${step}`, text, fontSize: FONT, width: boxWidth, height: lineHeight(FONT), at: { x: x(step) - boxWidth / 2, y: plot.y + plot.height + 6 } };
  };
  const interval = niceInterval(plot.width / span, textWidth(String(lastStep), FONT) + 24);
  const xTicks: number[] = [];
  const steps = [firstStep, ...Array.from({ length: Math.floor(lastStep / interval) + 1 }, (_, index) => index * interval).filter((step) => step > firstStep && step <= lastStep)];
  // the round numbers first, so that the first step gives way to them
  for (const step of [...steps.slice(1), steps[0]!]) {
    const { at, ...box } = tickBox(step);
    if (place(box, [at], true) !== undefined) xTicks.push(step);
  }
  xTicks.sort((a, b) => a - b);
  const xTitle = firstStep === lastStep ? 'step' : `step (${firstStep} to ${lastStep})`;
  place({ id: 'x-title', text: xTitle, fontSize: FONT, width: textWidth(xTitle, FONT), height: lineHeight(FONT) }, [
    { x: plot.x + plot.width / 2 - textWidth(xTitle, FONT) / 2, y: plot.y + plot.height + 6 + lineHeight(FONT) + 4 },
  ]);

  return {
    width,
    height,
    plot,
    labels,
    markers: points.filter((point) => point.compacted).map((point) => x(point.step)),
    line: points.map((point) => ({ x: x(point.step), y: y(point.promptTokens), point })),
    x,
    y,
    yTicks,
    xTicks,
  };
}

/**
 * An SVG chart of prompt tokens per step, with the ceiling and the window drawn as lines, each
 * compaction marked, step numbers on the x axis and a legend.
 */
export function sessionChart(points: readonly StepPoint[], options: { window: number; ceiling: number; title: string }): string {
  const layout = chartLayout(points, options);
  const { plot, x, y } = layout;
  const f = (value: number) => value.toFixed(1);
  const right = plot.x + plot.width;
  const bottom = plot.y + plot.height;
  const horizontal = (tokens: number, stroke: string, dash?: string) =>
    `<line x1="${f(plot.x)}" y1="${f(y(tokens))}" x2="${f(right)}" y2="${f(y(tokens))}" stroke="${stroke}"${dash === undefined ? '' : ` stroke-dasharray="${dash}"`}/>`;
  const marks = layout.line
    .filter(({ point }) => point.compacted)
    .map(
      ({ x: at, y: level, point }) =>
        `<line x1="${f(at)}" y1="${f(plot.y)}" x2="${f(at)}" y2="${f(bottom)}" stroke="#16a34a" stroke-dasharray="3 3"/>` +
        `<circle cx="${f(at)}" cy="${f(level)}" r="4" fill="#16a34a"><title>step ${point.step}: compacted</title></circle>`,
    )
    .join('\n');
  const ticks = [
    ...layout.yTicks.map((tokens) => `<line x1="${f(plot.x - 4)}" y1="${f(y(tokens))}" x2="${f(plot.x)}" y2="${f(y(tokens))}" stroke="#111"/>`),
    ...layout.xTicks.map((step) => `<line x1="${f(x(step))}" y1="${f(bottom)}" x2="${f(x(step))}" y2="${f(bottom + 4)}" stroke="#111"/>`),
  ].join('');
  const polyline = layout.line.map((point) => `${f(point.x)},${f(point.y)}`).join(' ');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${layout.height}" viewBox="0 0 ${layout.width} ${layout.height}" font-family="system-ui, sans-serif" font-size="${FONT}">
<rect width="100%" height="100%" fill="#fff"/>
${horizontal(options.window, '#dc2626')}
${horizontal(options.ceiling, '#ea580c', '6 4')}
${marks}
<polyline points="${polyline}" fill="none" stroke="#2563eb" stroke-width="2"/>${layout.line.length === 1 ? `<circle cx="${f(layout.line[0]!.x)}" cy="${f(layout.line[0]!.y)}" r="2.5" fill="#2563eb"/>` : ''}
<line x1="${f(plot.x)}" y1="${f(bottom)}" x2="${f(right)}" y2="${f(bottom)}" stroke="#111"/>
<line x1="${f(plot.x)}" y1="${f(plot.y)}" x2="${f(plot.x)}" y2="${f(bottom)}" stroke="#111"/>
${ticks}
${layout.labels.map(renderLabel).join('\n')}
</svg>
`;
}

function renderLabel(label: ChartLabel): string {
  const f = (value: number) => value.toFixed(1);
  const style = `${label.fontSize === FONT ? '' : ` font-size="${label.fontSize}"`}${label.bold ? ' font-weight="600"' : ''}${label.fill === undefined ? '' : ` fill="${label.fill}"`}`;
  // the baseline: the box is 1.25 em high, DejaVu Sans rises 0.93 em above it and drops 0.24 em below
  const baseline = (top: number) => top + (lineHeight(label.fontSize) - label.fontSize * 1.17) / 2 + label.fontSize * 0.93;
  const text = escapeXml(label.text);
  if (label.rotated) {
    const cx = label.x + label.width / 2;
    const cy = label.y + label.height / 2;
    return `<text x="${f(cx)}" y="${f(baseline(cy - label.width / 2))}" transform="rotate(-90 ${f(cx)} ${f(cy)})" text-anchor="middle"${style}>${text}</text>`;
  }
  const parts: string[] = [];
  let textX = label.x;
  const middle = label.y + label.height / 2;
  if (label.swatch === 'prompt') {
    parts.push(`<line x1="${f(label.x)}" y1="${f(middle)}" x2="${f(label.x + SWATCH)}" y2="${f(middle)}" stroke="#2563eb" stroke-width="2"/>`);
    textX += SWATCH + 6;
  } else if (label.swatch === 'ceiling') {
    parts.push(`<line x1="${f(label.x)}" y1="${f(middle)}" x2="${f(label.x + SWATCH)}" y2="${f(middle)}" stroke="#ea580c" stroke-dasharray="6 4"/>`);
    textX += SWATCH + 6;
  } else if (label.swatch === 'compaction') {
    const at = label.x + SWATCH / 2;
    parts.push(
      `<line x1="${f(at)}" y1="${f(label.y)}" x2="${f(at)}" y2="${f(label.y + label.height)}" stroke="#16a34a" stroke-dasharray="3 3"/><circle cx="${f(at)}" cy="${f(middle)}" r="4" fill="#16a34a"/>`,
    );
    textX += SWATCH + 6;
  }
  if (label.connector !== undefined) {
    const { x1, y1, x2, y2 } = label.connector;
    parts.push(`<line x1="${f(x1)}" y1="${f(y1)}" x2="${f(x2)}" y2="${f(y2)}" stroke="${label.fill ?? '#111'}" stroke-width="0.8"/>`);
  }
  parts.push(`<text x="${f(textX)}" y="${f(baseline(label.y))}"${style}>${text}</text>`);
  return parts.join('');
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (char) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[char]!);
}
