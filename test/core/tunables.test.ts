import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * "Every tunable number the package uses is named once, in one place, and documented there"
 * (docs/design.md, "Tunable numbers"): src/tunables.ts names them, and no other file of src/
 * defines a top-level SCREAMING_CASE constant holding a number, except the ones below, which are
 * not tunables.
 */
const NOT_TUNABLE: Record<string, string> = {
  'overflow/patterns.ts OVERFLOW_STATUSES': 'the HTTP statuses providers answer an overflow with: facts of their APIs, not a choice',
  'telemetry/spans.ts SPAN_KIND_INTERNAL': "OpenTelemetry's code for an internal span: wire format",
  'telemetry/spans.ts SPAN_KIND_CLIENT': "OpenTelemetry's code for a client span: wire format",
  'telemetry/spans.ts STATUS_ERROR': "OpenTelemetry's code for an error status: wire format",
  'store/format.ts FORMAT_VERSION': 'the version of the stored format: changing it is a format change, not a tuning',
  'store/seal.ts NONCE_BYTES': 'the AES-GCM nonce of a sealed value (96 bits): fixed by the format, values sealed before must open',
  'store/seal.ts TAG_BYTES': "the AES-GCM tag of a sealed value (128 bits, Web Crypto's default): fixed by the format",
  'store/seal.ts MAX_SEALED_LENGTH': 'derived from STATE_LIMITS (tunables.ts) by the format: UTF-8, nonce, tag, base64',
  'sizing/estimate.ts UNTAUGHT_ESTIMATOR': "the dense measure as an estimator: its factor 1 is the identity (the measure's own figure), not a choice",
  'catalog/match.ts PROMPT_CACHE_TTL_MS': "the providers' prompt-cache lifetime (5 minutes, the shortest they state): data of the model catalog, a fact of their APIs, not a choice",
  'prompt/hash.ts LARGE': 'the length from which a string is encoded on its own: changes how fast a digest is made, never its bytes',
};

const root = join(import.meta.dirname, '..', '..');
const srcDir = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function parse(path: string): ts.SourceFile {
  return ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
}

/**
 * Whether a value holds a number as data: a number, arithmetic on numbers, or an object, array or
 * `new Set([...])` of them. A number inside a call or a function (`z.number().min(1)`) is not data.
 */
function holdsNumber(node: ts.Node): boolean {
  if (ts.isNumericLiteral(node) || ts.isBigIntLiteral(node)) return true;
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isTypeAssertionExpression(node)) return holdsNumber(node.expression);
  if (ts.isPrefixUnaryExpression(node)) return holdsNumber(node.operand);
  if (ts.isBinaryExpression(node)) return holdsNumber(node.left) || holdsNumber(node.right);
  if (ts.isConditionalExpression(node)) return holdsNumber(node.whenTrue) || holdsNumber(node.whenFalse);
  if (ts.isArrayLiteralExpression(node)) return node.elements.some(holdsNumber);
  if (ts.isObjectLiteralExpression(node)) return node.properties.some((property) => ts.isPropertyAssignment(property) && holdsNumber(property.initializer));
  if (ts.isNewExpression(node)) return (node.arguments ?? []).some(holdsNumber);
  return false;
}

/** Top-level `const NAME = ...` of a file, with their initializers. */
function topLevelConstants(file: ts.SourceFile): { name: string; initializer: ts.Expression; exported: boolean }[] {
  const found: { name: string; initializer: ts.Expression; exported: boolean }[] = [];
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement) || !(statement.declarationList.flags & ts.NodeFlags.Const)) continue;
    const exported = statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword) ?? false;
    for (const declaration of statement.declarationList.declarations) {
      if (ts.isIdentifier(declaration.name) && declaration.initializer !== undefined) found.push({ name: declaration.name.text, initializer: declaration.initializer, exported });
    }
  }
  return found;
}

const SCREAMING = /^[A-Z][A-Z0-9_]*$/;

/** The initializer as written, without `as const`. */
function valueText(initializer: ts.Expression): string {
  const value = ts.isAsExpression(initializer) ? initializer.expression : initializer;
  return value.getText().replace(/\s+/g, ' ');
}

describe('tunable numbers', () => {
  const tunables = topLevelConstants(parse(join(srcDir, 'tunables.ts'))).filter((constant) => constant.exported);

  it('are defined in src/tunables.ts only', () => {
    const offenders: string[] = [];
    const allowed = new Set<string>();
    for (const path of sourceFiles(srcDir)) {
      const name = relative(srcDir, path).split(sep).join('/');
      if (name === 'tunables.ts') continue;
      for (const constant of topLevelConstants(parse(path))) {
        if (!SCREAMING.test(constant.name) || !holdsNumber(constant.initializer)) continue;
        const key = `${name} ${constant.name}`;
        if (key in NOT_TUNABLE) allowed.add(key);
        else offenders.push(`${key} = ${valueText(constant.initializer)}`);
      }
    }
    expect(offenders, 'move these to src/tunables.ts (or, if not tunable, allow-list them here with the reason)').toEqual([]);
    // An allow-listed constant that is gone, or no longer holds a number, leaves the list.
    expect([...allowed].sort()).toEqual(Object.keys(NOT_TUNABLE).sort());
  });

  it('import nothing from src', () => {
    const file = parse(join(srcDir, 'tunables.ts'));
    expect(file.statements.filter((statement) => ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))).toEqual([]);
  });

  it('are each documented in docs/design.md, "Tunable numbers", with the value they have', () => {
    const design = readFileSync(join(root, 'docs', 'design.md'), 'utf8');
    const section = /\n## Tunable numbers\n([\s\S]*?)(?=\n## |$)/.exec(design)?.[1];
    expect(section, 'docs/design.md has a section "## Tunable numbers"').toBeDefined();
    const rows = new Map<string, string>();
    for (const line of section!.split('\n')) {
      const cells = line.split('|').map((cell) => cell.trim());
      const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[1] ?? '')?.[1];
      if (name !== undefined) rows.set(name, cells[2] ?? '');
    }
    expect(tunables.length).toBeGreaterThan(0);
    expect([...rows.keys()].sort(), 'one row per constant of src/tunables.ts, and no other').toEqual(tunables.map((constant) => constant.name).sort());
    const wrong = tunables.filter((constant) => !rows.get(constant.name)!.includes(`\`${valueText(constant.initializer)}\``));
    expect(
      wrong.map((constant) => `${constant.name}: the table says ${rows.get(constant.name)}, src/tunables.ts \`${valueText(constant.initializer)}\``),
      'the value column shows the value as src/tunables.ts writes it',
    ).toEqual([]);
  });
});
