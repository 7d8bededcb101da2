// Every figure README.md quotes from a measurement must be one that docs/benchmarks.md holds, the
// file `npm run bench` writes: a figure typed by hand drifts from the tables. The measured text is
// README's `## Measured` section and every passage between `<!-- measured -->` and
// `<!-- /measured -->` elsewhere. A figure is a number (`776,322`, `1.78`, `59`) with the unit
// that follows it, if any (`61 %`, `1.78x`, `13.8 s`, `0.71 ms`); it must stand in
// docs/benchmarks.md as it is written, unit and all (spaces before a unit do not matter). Code
// spans, code blocks and link targets are not measured text (option values, commands, anchors).
//
//   node scripts/check-readme-figures.mjs [README.md] [docs/benchmarks.md]
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** A number, and its unit when one follows (a letter unit only when no letter follows it). */
const FIGURE = /(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s?(%|x|ms|s|M|k)(?![A-Za-z0-9]))?/g;

/** The figures of a text, each as `number unit` (`61 %`, `1.78 x`, `776,322`), with the line it is on. */
export function figures(text) {
  const found = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const prose = line.replace(/`[^`]*`/g, ' ').replace(/\]\([^)]*\)/g, '] ');
    for (const match of prose.matchAll(FIGURE)) found.push({ figure: `${match[1]}${match[2] ?? ''}${match[3] ? ` ${match[3]}` : ''}`, line: index + 1 });
  });
  return found;
}

/** README's measured text, line numbers kept (every other line blank): the Measured section and the marked passages; code blocks left out. */
export function measuredText(readme) {
  const lines = readme.split('\n');
  let inSection = false;
  let inMarked = false;
  let inCode = false;
  return lines
    .map((line) => {
      if (/^```/.test(line)) {
        inCode = !inCode;
        return '';
      }
      if (inCode) return '';
      if (/^## /.test(line)) inSection = /^## Measured\s*$/.test(line);
      if (line.includes('<!-- measured -->')) inMarked = true;
      const kept = inSection || inMarked ? line.replace(/<!--.*?-->/g, '') : '';
      if (line.includes('<!-- /measured -->')) inMarked = false;
      return kept;
    })
    .join('\n');
}

/** The figures of README's measured text that docs/benchmarks.md does not hold. */
export function missingFigures(readme, benchmarks) {
  const held = new Set(figures(benchmarks).map(({ figure }) => figure));
  return figures(measuredText(readme)).filter(({ figure }) => !held.has(figure));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readmePath = process.argv[2] ?? `${root}README.md`;
  const benchmarksPath = process.argv[3] ?? `${root}docs/benchmarks.md`;
  if (!existsSync(benchmarksPath)) {
    console.error(`${benchmarksPath} does not exist: run \`npm run bench\` to write it`);
    process.exit(1);
  }
  const readme = readFileSync(readmePath, 'utf8');
  if (!/^## Measured\s*$/m.test(readme)) {
    console.error(`${readmePath} has no "## Measured" section`);
    process.exit(1);
  }
  const missing = missingFigures(readme, readFileSync(benchmarksPath, 'utf8'));
  if (missing.length > 0) {
    console.error(`${readmePath} quotes figures that ${benchmarksPath} does not hold (write them as the file prints them, or run the benchmark):`);
    for (const { figure, line } of missing) console.error(`  line ${line}: ${figure}`);
    process.exit(1);
  }
}
