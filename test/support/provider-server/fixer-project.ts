// The project of the continuity benchmark: a seeded TypeScript repository whose suite has a number
// of failing tests (14 by default), each failing because of one line of one source file, and the
// three tools an agent fixes it with. Unlike project.ts (read-only, for the coding agent of
// agent.ts), the tools here hold real state: an accepted edit fixes its test, and `npm test` and
// the single-test runs report it.
//
//   const tools = createFixerTools({ seed: 1 });
//   tools.run_command({ command: 'npm test' });                        // FAIL/PASS per test file, a count; no errors
//   tools.run_command({ command: 'npx vitest run test/billing/totals.test.ts' }); // the error and `src/...:line`
//   tools.read_file({ path: 'src/billing/totals.ts' });                // numbered lines, each with its token
//   tools.edit_file({ path: 'src/billing/totals.ts', line: 137, token: 'tok_3fa9c1' });
//
// Output formats (the agent of fixer.ts reads them; nothing else in them is special):
// - `npm test`: a line `FAIL test/<x>.test.ts` or `PASS test/<x>.test.ts` per test file, then
//   `Suite: N failing, M passing (T test files)`.
// - `npx vitest run test/<x>.test.ts` on a failing test: vitest-like output (log lines, the test
//   list, a diff, stack frames) around the three lines
//   `FAIL test/<x>.test.ts > <test name>` / `<Error>: <message>` / `  at src/<path>.ts:<line>`,
//   which stand within the first 1,250 characters; on a fixed test, `PASS test/<x>.test.ts` and counts.
// - `read_file`: `<path> (<n> lines)`, then `<number> <token> | <code>` per line. Every token is
//   unique in the project. The failing line stands past the first 2,000 characters of the output.
// - `edit_file`: `edit applied: <path>:<line>` when `token` is the token on that line (the line is
//   rewritten and gets a new token), otherwise a result starting `edit rejected: ` (counted).
// Everything is a pure function of the seed and of the edits made so far.

import { hex, int, pick, rng, shuffle } from './random';

export interface FixerFailure {
  /** `test/billing/totals.test.ts` */
  test: string;
  suite: string;
  /** The failing test's name. */
  name: string;
  /** One line, e.g. `AssertionError: expected 41 to be 42 // Object.is equality`. */
  error: string;
  /** The source file holding the bad line. */
  file: string;
  /** 1-based line number of the bad line. */
  line: number;
}

export interface FixerProject {
  seed: number;
  name: string;
  version: string;
  /** Every file's lines (code only, no numbers or tokens): sources under `src/`, tests under `test/`. */
  files: Map<string, string[]>;
  /** Every test file, sorted. */
  tests: string[];
  /** The failing tests, sorted by test file. */
  failures: FixerFailure[];
  /** Tests per test file. */
  testNames: Map<string, string[]>;
}

export interface FixerProjectOptions {
  /** @default 1 */
  seed?: number;
  /** Failing test files (at most 24). @default 14 */
  failing?: number;
  /** Test files that pass from the start. @default 6 */
  passing?: number;
}

export interface FixerTools {
  project: FixerProject;
  run_command(input: { command: string }): string;
  read_file(input: { path: string }): string;
  edit_file(input: { path: string; line: number; token: string }): string;
  /** Failing tests not fixed yet, sorted. */
  failing(): string[];
  /** Tests fixed by an accepted edit. */
  fixed(): string[];
  /** Edits accepted and rejected so far. */
  edits: { accepted: number; rejected: number };
  /** The token on a line now (1-based), or undefined. */
  tokenAt(path: string, line: number): string | undefined;
}

export const fixerToolDescriptions = {
  run_command: 'Run a shell command in the repository (for example `npm test`, or `npx vitest run <test file>` for one test file with its errors) and return its output.',
  read_file: 'Read a whole file of the repository. Each line comes as `<number> <token> | <code>`.',
  edit_file: 'Fix one line of a file. `line` is its number and `token` the token read_file showed on it; an edit whose token is not the one on that line is rejected.',
} as const;

// ---------------------------------------------------------------------------------------------
// modules

interface Module {
  area: string;
  name: string;
  /** The record the module works on. */
  entity: string;
  /** Nouns for its functions. */
  nouns: string[];
  /** Field names of the record. */
  fields: string[];
  /** Names of its tests. */
  tests: string[];
}

const MODULES: Module[] = [
  { area: 'billing', name: 'totals', entity: 'invoice', nouns: ['Total', 'Subtotal', 'Balance'], fields: ['amount', 'currency', 'dueDate', 'customerId'], tests: ['computes totals', 'ignores zero quantities', 'rounds each line to minor units', 'applies credit notes'] },
  { area: 'billing', name: 'tax', entity: 'taxLine', nouns: ['Tax', 'VatAmount', 'Rate'], fields: ['rate', 'country', 'amount', 'exempt'], tests: ['applies the reduced rate', 'exempts reverse-charge customers', 'rounds tax per line', 'uses the country of delivery'] },
  { area: 'billing', name: 'discounts', entity: 'coupon', nouns: ['Discount', 'Saving', 'Cap'], fields: ['code', 'percent', 'maxUses', 'expiresAt'], tests: ['caps the discount at the subtotal', 'rejects expired coupons', 'stacks one coupon only', 'counts redemptions'] },
  { area: 'billing', name: 'invoice-number', entity: 'sequence', nouns: ['Number', 'Prefix', 'Counter'], fields: ['prefix', 'year', 'next', 'width'], tests: ['pads invoice numbers', 'restarts the counter each year', 'keeps the prefix'] },
  { area: 'orders', name: 'status', entity: 'order', nouns: ['Status', 'Transition', 'State'], fields: ['status', 'paidAt', 'shippedAt', 'cancelledAt'], tests: ['moves paid orders to shipped', 'refuses to ship cancelled orders', 'records the transition time'] },
  { area: 'orders', name: 'shipping', entity: 'shipment', nouns: ['Rate', 'Weight', 'Zone'], fields: ['weightGrams', 'zone', 'carrier', 'trackingId'], tests: ['charges by weight band', 'ships free above the threshold', 'picks the zone from the postcode'] },
  { area: 'orders', name: 'refunds', entity: 'refund', nouns: ['Refund', 'Restock', 'Reason'], fields: ['orderId', 'amount', 'reason', 'restock'], tests: ['refunds at most the amount paid', 'restocks returned items', 'keeps the refund reason'] },
  { area: 'users', name: 'roles', entity: 'member', nouns: ['Role', 'Permission', 'Grant'], fields: ['role', 'teamId', 'invitedBy', 'joinedAt'], tests: ['lets admins manage members', 'keeps viewers read-only', 'inherits the team role'] },
  { area: 'users', name: 'email', entity: 'address', nouns: ['Address', 'Domain', 'Alias'], fields: ['email', 'verifiedAt', 'primary', 'userId'], tests: ['normalises the case of emails', 'rejects disposable domains', 'keeps one primary address'] },
  { area: 'users', name: 'profile', entity: 'profile', nouns: ['Profile', 'Avatar', 'Locale'], fields: ['displayName', 'locale', 'timezone', 'avatarUrl'], tests: ['falls back to the default locale', 'trims the display name', 'validates the timezone'] },
  { area: 'auth', name: 'session', entity: 'session', nouns: ['Session', 'Expiry', 'Renewal'], fields: ['userId', 'expiresAt', 'ip', 'userAgent'], tests: ['rejects expired sessions', 'renews sessions close to expiry', 'binds the session to the user'] },
  { area: 'auth', name: 'tokens', entity: 'apiToken', nouns: ['Token', 'Scope', 'Digest'], fields: ['scopes', 'lastUsedAt', 'digest', 'revokedAt'], tests: ['refuses revoked tokens', 'checks every scope', 'compares digests in constant time'] },
  { area: 'auth', name: 'password', entity: 'credential', nouns: ['Hash', 'Strength', 'Reset'], fields: ['hash', 'algorithm', 'updatedAt', 'failedAttempts'], tests: ['locks after five failed attempts', 'rehashes legacy hashes', 'scores password strength'] },
  { area: 'inventory', name: 'stock', entity: 'stockLevel', nouns: ['Stock', 'Reorder', 'Level'], fields: ['sku', 'onHand', 'reserved', 'reorderAt'], tests: ['subtracts reserved units', 'flags items to reorder', 'never goes below zero'] },
  { area: 'inventory', name: 'reservations', entity: 'reservation', nouns: ['Reservation', 'Hold', 'Release'], fields: ['sku', 'quantity', 'expiresAt', 'orderId'], tests: ['releases expired holds', 'reserves across warehouses', 'refuses to over-reserve'] },
  { area: 'reports', name: 'monthly', entity: 'reportRow', nouns: ['Revenue', 'Churn', 'Period'], fields: ['month', 'revenue', 'customers', 'churned'], tests: ['groups revenue by month', 'counts churned customers', 'uses the account timezone'] },
  { area: 'reports', name: 'export', entity: 'exportJob', nouns: ['Export', 'Column', 'Chunk'], fields: ['format', 'rows', 'requestedBy', 'finishedAt'], tests: ['quotes CSV fields', 'streams in chunks', 'names columns in order'] },
  { area: 'lib', name: 'dates', entity: 'period', nouns: ['DueDate', 'Duration', 'Window'], fields: ['start', 'end', 'timezone', 'graceDays'], tests: ['adds business days', 'formats due dates', 'handles daylight saving'] },
  { area: 'lib', name: 'money', entity: 'amount', nouns: ['Money', 'MinorUnits', 'Allocation'], fields: ['value', 'currency', 'scale', 'rounding'], tests: ['allocates remainders', 'rounds half to even', 'formats negative amounts'] },
  { area: 'lib', name: 'slug', entity: 'slug', nouns: ['Slug', 'Segment', 'Suffix'], fields: ['text', 'maxLength', 'separator', 'suffix'], tests: ['strips diacritics', 'keeps slugs unique', 'cuts at a word boundary'] },
  { area: 'search', name: 'query', entity: 'searchQuery', nouns: ['Query', 'Filter', 'Term'], fields: ['terms', 'filters', 'page', 'sort'], tests: ['parses quoted phrases', 'ignores stop words', 'applies the status filter'] },
  { area: 'notifications', name: 'digest', entity: 'digest', nouns: ['Digest', 'Batch', 'Schedule'], fields: ['userId', 'frequency', 'sentAt', 'items'], tests: ['batches daily notifications', 'skips empty digests', 'respects quiet hours'] },
  { area: 'payments', name: 'capture', entity: 'payment', nouns: ['Capture', 'Authorization', 'Fee'], fields: ['amount', 'provider', 'capturedAt', 'fee'], tests: ['captures the authorised amount', 'records the provider fee', 'refuses double capture'] },
  { area: 'payments', name: 'webhooks', entity: 'webhookEvent', nouns: ['Signature', 'Event', 'Retry'], fields: ['type', 'signature', 'receivedAt', 'attempts'], tests: ['verifies the signature', 'ignores duplicate events', 'backs off retries'] },
  { area: 'teams', name: 'seats', entity: 'seatPlan', nouns: ['Seats', 'Proration', 'Plan'], fields: ['plan', 'seats', 'renewsAt', 'ownerId'], tests: ['prorates added seats', 'refuses to drop below members', 'renews on the plan date'] },
  { area: 'cache', name: 'ttl', entity: 'cacheEntry', nouns: ['Ttl', 'Eviction', 'Key'], fields: ['key', 'expiresAt', 'hits', 'size'], tests: ['evicts expired entries', 'refreshes on hit', 'bounds the total size'] },
];

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (s: string) => s.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

// ---------------------------------------------------------------------------------------------
// source files

/** Blocks of code for a module; `*` marks a line that may hold the bug (a statement). */
function blocks(m: Module, random: () => number): string[][] {
  const Type = cap(m.entity);
  const table = `${snake(m.entity)}s`;
  const [f0, f1, f2, f3] = m.fields as [string, string, string, string];
  const noun = () => pick(random, m.nouns);
  const out: string[][] = [];
  const templates: (() => string[])[] = [
    () => {
      const N = noun();
      return [
        `/** Computes the ${N.toLowerCase()} of a ${m.entity}, in minor units. */`,
        `export function compute${N}(input: ${Type}Input, options: ${Type}Options = DEFAULT_OPTIONS): number {`,
        '*  const rows = input.items.filter((item) => item.quantity > 0);',
        '*  let sum = 0;',
        '  for (const row of rows) {',
        '*    const amount = roundMoney(row.unitPrice * row.quantity, input.currency);',
        '*    sum += amount;',
        '  }',
        `  if (options.${camel(f3)}Limit !== undefined) {`,
        `*    sum = Math.min(sum, options.${camel(f3)}Limit);`,
        '  }',
        `*  log.debug({ ${N.charAt(0).toLowerCase() + N.slice(1)}: sum, rows: rows.length }, 'computed ${N.toLowerCase()}');`,
        '*  return sum;',
        '}',
      ];
    },
    () => [
      `/** Loads one ${m.entity} by id; a 404 when it does not exist or was deleted. */`,
      `export async function load${Type}(db: Db, id: string): Promise<${Type}Row> {`,
      `*  const rows = await db.query<${Type}Row>(`,
      `*    'select * from ${table} where id = $1 and deleted_at is null',`,
      '    [id],',
      '  );',
      '*  const row = rows[0];',
      '  if (!row) {',
      `*    throw new HttpError(404, '${snake(m.entity)}_not_found', \`${Type} \${id} not found\`);`,
      '  }',
      '*  return row;',
      '}',
    ],
    () => [
      `export const ${m.entity}Schema = z.object({`,
      '  id: z.string().uuid(),',
      `*  ${f0}: z.string().min(1),`,
      `*  ${f1}: z.number().nonnegative(),`,
      `*  ${f2}: z.string().datetime().nullable(),`,
      `*  ${f3}: z.string().optional(),`,
      '});',
      '',
      `export type ${Type}Input = z.infer<typeof ${m.entity}Schema> & { items: LineItem[]; currency: string };`,
    ],
    () => [
      `/** The API shape of a ${m.entity}. */`,
      `export function to${Type}Dto(row: ${Type}Row): ${Type}Dto {`,
      '  return {',
      '*    id: row.id,',
      `*    ${f0}: row.${snake(f0)},`,
      `*    ${f1}: row.${snake(f1)},`,
      `*    ${f2}: row.${snake(f2)} ?? null,`,
      `*    ${f3}: row.${snake(f3)},`,
      '*    createdAt: row.created_at.toISOString(),',
      '*    updatedAt: row.updated_at.toISOString(),',
      '  };',
      '}',
    ],
    () => {
      const verb = pick(random, ['Update', 'Archive', 'Delete', 'Approve']);
      return [
        `export function assertCan${verb}(actor: Actor, ${m.entity}: ${Type}Row): void {`,
        "*  if (actor.role === 'admin') return;",
        `  if (${m.entity}.owner_id !== actor.id) {`,
        `*    throw new HttpError(403, 'forbidden', 'only the owner may ${verb.toLowerCase()} this ${m.entity}');`,
        '  }',
        `  if (${m.entity}.archived_at !== null) {`,
        `*    throw new HttpError(409, 'archived', '${m.entity} is archived');`,
        '  }',
        '}',
      ];
    },
    () => [
      `export async function list${Type}s(db: Db, query: ListQuery): Promise<Page<${Type}Row>> {`,
      '*  const limit = Math.min(query.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);',
      '*  const params: unknown[] = [limit + 1];',
      "*  let where = 'deleted_at is null';",
      '  if (query.cursor) {',
      '*    params.push(decodeCursor(query.cursor));',
      '*    where += ` and created_at < $${params.length}`;',
      '  }',
      `*  const rows = await db.query<${Type}Row>(`,
      `*    \`select * from ${table} where \${where} order by created_at desc limit $1\`,`,
      '    params,',
      '  );',
      '*  const page = rows.slice(0, limit);',
      '  return {',
      '*    items: page,',
      '*    nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.created_at) : null,',
      '  };',
      '}',
    ],
    () => {
      const N = noun();
      return [
        `/** Whether the ${m.entity} is past its ${snake(f2).replace(/_/g, ' ')}, after the grace period. */`,
        `export function is${N}Overdue(row: ${Type}Row, now = new Date()): boolean {`,
        `*  if (row.${snake(f2)} === null) return false;`,
        `*  const due = new Date(row.${snake(f2)});`,
        '*  const graceMs = GRACE_DAYS * 24 * 60 * 60 * 1000;',
        '*  return now.getTime() > due.getTime() + graceMs;',
        '}',
      ];
    },
    () => [
      `export function summarize${Type}s(rows: ${Type}Row[]): ${Type}Summary {`,
      '*  const byStatus = new Map<string, number>();',
      '  for (const row of rows) {',
      '*    byStatus.set(row.status, (byStatus.get(row.status) ?? 0) + 1);',
      '  }',
      `*  const total = rows.reduce((acc, row) => acc + row.${snake(f1)}, 0);`,
      '  return {',
      '*    count: rows.length,',
      "*    total: roundMoney(total, rows[0]?.currency ?? 'EUR'),",
      '*    byStatus: Object.fromEntries(byStatus),',
      '  };',
      '}',
    ],
    () => [
      `export async function save${Type}(db: Db, input: ${Type}Input, actor: Actor): Promise<${Type}Row> {`,
      `*  const parsed = ${m.entity}Schema.parse(input);`,
      '*  const now = new Date();',
      `*  const [row] = await db.query<${Type}Row>(`,
      `*    'insert into ${table} (id, ${snake(f0)}, ${snake(f1)}, created_by, created_at) values ($1, $2, $3, $4, $5) returning *',`,
      `*    [parsed.id, parsed.${f0}, parsed.${f1}, actor.id, now],`,
      '  );',
      `*  await cache.delete(\`${m.area}:${m.name}:\${parsed.id}\`);`,
      `*  log.info({ id: parsed.id, actor: actor.id }, 'saved ${m.entity}');`,
      '*  return row!;',
      '}',
    ],
    () => [
      `function compare${Type}s(a: ${Type}Row, b: ${Type}Row): number {`,
      `*  if (a.${snake(f1)} !== b.${snake(f1)}) return a.${snake(f1)} < b.${snake(f1)} ? -1 : 1;`,
      '*  return a.created_at.getTime() - b.created_at.getTime();',
      '}',
    ],
    () => [
      `// Keys of the ${m.entity} cache: one entry per id, invalidated on every write (see save${Type}).`,
      `const cacheKey = (id: string) => \`${m.area}:${m.name}:\${id}\`;`,
      '',
      `export async function cached${Type}(db: Db, id: string): Promise<${Type}Row> {`,
      `*  const hit = await cache.get<${Type}Row>(cacheKey(id));`,
      '*  if (hit) return hit;',
      `*  const row = await load${Type}(db, id);`,
      '*  await cache.set(cacheKey(id), row, { ttlSeconds: CACHE_TTL_SECONDS });',
      '*  return row;',
      '}',
    ],
  ];
  for (const template of shuffle(random, templates)) out.push(template());
  return out;
}

interface Source {
  lines: string[];
  /** 0-based indexes of lines that may hold the bug. */
  candidates: number[];
}

function sourceFile(m: Module, random: () => number, project: string): Source {
  const Type = cap(m.entity);
  const lines: string[] = [
    "import { z } from 'zod';",
    "import type { Db } from '../db';",
    "import { cache } from '../lib/cache';",
    "import { HttpError } from '../lib/http';",
    "import { logger } from '../lib/logger';",
    "import { roundMoney } from '../lib/money';",
    "import type { Actor, LineItem, ListQuery, Page } from '../types';",
    "import { decodeCursor, encodeCursor } from '../lib/cursor';",
    '',
    `const log = logger.child({ module: '${m.area}/${m.name}' });`,
    '',
    '/**',
    ` * ${cap(m.area)}: ${m.name.replace(/-/g, ' ')} of ${project}.`,
    ' *',
    ` * Used by the ${m.area} routes and the nightly jobs. Keep it free of I/O except through \`db\``,
    ' * and `cache`, so the unit tests can run it against the in-memory database.',
    ' */',
    '',
    `const DEFAULT_PAGE_SIZE = ${pick(random, [20, 25, 50])};`,
    'const MAX_PAGE_SIZE = 100;',
    `const GRACE_DAYS = ${int(random, 0, 14)};`,
    `const CACHE_TTL_SECONDS = ${pick(random, [30, 60, 300, 900])};`,
    '',
    `export interface ${Type}Row {`,
    '  id: string;',
    ...m.fields.map((f, i) => `  ${snake(f)}: ${i === 1 ? 'number' : i === 2 ? 'string | null' : 'string'};`),
    '  status: string;',
    '  currency: string;',
    '  owner_id: string;',
    '  archived_at: Date | null;',
    '  created_at: Date;',
    '  updated_at: Date;',
    '}',
    '',
    `export interface ${Type}Dto {`,
    '  id: string;',
    ...m.fields.map((f, i) => `  ${f}: ${i === 1 ? 'number' : i === 2 ? 'string | null' : 'string'};`),
    '  createdAt: string;',
    '  updatedAt: string;',
    '}',
    '',
    `export interface ${Type}Options {`,
    `  ${camel(m.fields[3]!)}Limit?: number;`,
    '  strict?: boolean;',
    '}',
    '',
    `export interface ${Type}Summary {`,
    '  count: number;',
    '  total: number;',
    '  byStatus: Record<string, number>;',
    '}',
    '',
    `const DEFAULT_OPTIONS: ${Type}Options = { strict: ${random() < 0.5} };`,
    '',
  ];
  const candidates: number[] = [];
  const target = int(random, 150, 260);
  let round = 0;
  while (lines.length < target) {
    for (const block of blocks(m, rng('blocks', project, m.name, round++))) {
      if (lines.length >= target) break;
      for (const line of block) {
        if (line.startsWith('*')) {
          candidates.push(lines.length);
          lines.push(line.slice(1));
        } else lines.push(line);
      }
      lines.push('');
    }
  }
  lines.push(`export default { load${Type}, to${Type}Dto };`);
  return { lines, candidates };
}

function testFile(m: Module, names: string[]): string[] {
  const Type = cap(m.entity);
  const lines = [
    "import { beforeEach, describe, expect, it } from 'vitest';",
    `import * as subject from '../../src/${m.area}/${m.name}';`,
    "import { createTestDb, type TestDb } from '../helpers/db';",
    "import { fixtures } from '../helpers/fixtures';",
    '',
    `describe('${m.name}', () => {`,
    '  let db: TestDb;',
    '',
    '  beforeEach(async () => {',
    '    db = await createTestDb();',
    `    await db.seed(fixtures.${m.entity}s);`,
    '  });',
    '',
  ];
  for (const name of names) {
    lines.push(
      `  it('${name}', async () => {`,
      `    const row = await subject.load${Type}(db, fixtures.${m.entity}s[0]!.id);`,
      `    const result = subject.to${Type}Dto(row);`,
      `    expect(result).toMatchSnapshot('${name}');`,
      '  });',
      '',
    );
  }
  lines.push('});');
  return lines;
}

// ---------------------------------------------------------------------------------------------
// the project

function errorFor(m: Module, random: () => number): string {
  const field = pick(random, m.fields);
  const n = int(random, 3, 480);
  const kinds = [
    () => `AssertionError: expected ${n} to be ${n + int(random, 1, 9)} // Object.is equality`,
    () => `TypeError: Cannot read properties of undefined (reading '${field}')`,
    () => `TypeError: Cannot read properties of null (reading '${snake(field)}')`,
    () => `AssertionError: expected '${pick(random, ['EUR', 'pending', 'member', 'draft'])}' to be '${pick(random, ['USD', 'paid', 'admin', 'final'])}' // Object.is equality`,
    () => 'RangeError: Invalid time value',
    () => `AssertionError: expected [ ${n}, ${n + 1} ] to deeply equal [ ${n}, ${n + 1}, ${n + 2} ]`,
    () => 'AssertionError: expected false to be true // Object.is equality',
    () => `Error: ${cap(m.entity)} ${hex(random, 8)} not found`,
    () => `AssertionError: expected ${pick(random, [403, 404, 409, 500])} to be 200 // Object.is equality`,
    () => `TypeError: subject.compute${pick(random, m.nouns)} is not a function`,
  ];
  return pick(random, kinds)();
}

const projects = new Map<string, FixerProject>();

export function getFixerProject(options: FixerProjectOptions = {}): FixerProject {
  const seed = options.seed ?? 1;
  const failing = Math.min(options.failing ?? 14, 24);
  const passing = options.passing ?? 6;
  if (failing + passing > MODULES.length) throw new Error(`a fixer project has at most ${MODULES.length} test files`);
  const key = `${seed}/${failing}/${passing}`;
  const hit = projects.get(key);
  if (hit) return hit;

  const random = rng('fixer-project', seed);
  const name = pick(random, ['acme-ledger', 'harbor-billing', 'tally-core', 'orbit-shop', 'fieldnote-api']);
  const version = `${int(random, 1, 4)}.${int(random, 0, 9)}.${int(random, 0, 12)}`;
  const modules = shuffle(random, MODULES).slice(0, failing + passing);
  const files = new Map<string, string[]>();
  const testNames = new Map<string, string[]>();
  const failures: FixerFailure[] = [];
  modules.forEach((m, index) => {
    const path = `src/${m.area}/${m.name}.ts`;
    const test = `test/${m.area}/${m.name}.test.ts`;
    const source = sourceFile(m, rng('source', seed, path), name);
    files.set(path, source.lines);
    const names = m.tests;
    testNames.set(test, names);
    files.set(test, testFile(m, names));
    if (index >= failing) return;
    const r = rng('failure', seed, path);
    // the bad line stands past the first 2,000 characters of read_file's output
    let offset = `${path} (${source.lines.length} lines)\n`.length;
    const starts = source.lines.map((line, i) => {
      const at = offset;
      offset += `${String(i + 1).padStart(4)} tok_000000 | ${line}\n`.length;
      return at;
    });
    const late = source.candidates.filter((i) => starts[i]! >= 2_000 && i < source.lines.length - 3);
    const line = pick(r, late) + 1;
    failures.push({ test, suite: m.name, name: pick(r, names), error: errorFor(m, r), file: path, line });
  });
  failures.sort((a, b) => (a.test < b.test ? -1 : 1));
  const project: FixerProject = { seed, name, version, files, tests: [...testNames.keys()].sort(), failures, testNames };
  projects.set(key, project);
  return project;
}

// ---------------------------------------------------------------------------------------------
// the tools

const FULL_RUN = /^(?:npm (?:run )?test|npx vitest(?: run)?|npx vitest --run)$/;
const ONE_RUN = /^npx vitest(?: run)? (\S+)$/;

export function createFixerTools(options: FixerProjectOptions = {}): FixerTools {
  const project = getFixerProject(options);
  const seed = project.seed;
  const used = new Set<string>();
  const newToken = (...labels: (string | number)[]) => {
    const random = rng('token', seed, ...labels);
    for (;;) {
      const token = `tok_${hex(random, 6)}`;
      if (!used.has(token)) {
        used.add(token);
        return token;
      }
    }
  };
  const tokens = new Map<string, string[]>();
  for (const [path, lines] of project.files) tokens.set(path, lines.map((_, i) => newToken(path, i + 1)));
  const fixed = new Set<string>();
  const edits = { accepted: 0, rejected: 0 };
  let editCount = 0;
  const failingNow = () => project.failures.filter((f) => !fixed.has(f.test));

  function fullRun(): string {
    const failing = new Set(failingNow().map((f) => f.test));
    const random = rng('full-run', seed, failing.size);
    const tests = project.tests.reduce((sum, t) => sum + project.testNames.get(t)!.length, 0);
    return [
      `> ${project.name}@${project.version} test`,
      '> vitest run --reporter=./scripts/ci-reporter.ts',
      '',
      ...project.tests.map((t) => `${failing.has(t) ? 'FAIL' : 'PASS'} ${t}`),
      '',
      `Tests: ${failing.size} failed, ${tests - failing.size} passed (${tests})`,
      `Suite: ${failing.size} failing, ${project.tests.length - failing.size} passing (${project.tests.length} test files)`,
      `Duration: ${(2 + random() * 3).toFixed(2)}s`,
    ].join('\n');
  }

  function oneRun(test: string): string {
    const names = project.testNames.get(test);
    if (!names) {
      return [`No test files found, exiting with code 1`, '', `filter: ${test}`, 'include: test/**/*.test.ts', 'exclude:  **/node_modules/**, **/dist/**'].join('\n');
    }
    const failure = project.failures.find((f) => f.test === test && !fixed.has(f.test));
    const random = rng('one-run', seed, test, failure ? 'fail' : 'pass');
    const ms = () => int(random, 1, 40);
    const header = [` RUN  v3.2.4 /home/dev/${project.name}`, ''];
    const start = `09:${String(int(random, 10, 59)).padStart(2, '0')}:${String(int(random, 10, 59)).padStart(2, '0')}`;
    if (!failure) {
      return [
        ...header,
        `PASS ${test} (${names.length} tests) ${ms() + 20}ms`,
        ...names.map((n) => `   ✓ ${test.split('/').pop()!.replace('.test.ts', '')} > ${n} ${ms()}ms`),
        '',
        ' Test Files  1 passed (1)',
        `      Tests  ${names.length} passed (${names.length})`,
        `   Start at  ${start}`,
        `   Duration  ${int(random, 400, 900)}ms (transform ${int(random, 60, 140)}ms, setup 0ms, collect ${int(random, 100, 300)}ms, tests ${int(random, 20, 90)}ms, environment 0ms, prepare ${int(random, 80, 160)}ms)`,
      ].join('\n');
    }
    const m = MODULES.find((x) => `test/${x.area}/${x.name}.test.ts` === test)!;
    const testLine = int(random, 14, 40);
    const diff = /^AssertionError: expected (.+?) to (?:be|deeply equal) (.+?)(?: \/\/ Object\.is equality)?$/.exec(failure.error);
    return [
      ...header,
      `stdout | ${test} > ${failure.suite} > ${failure.name}`,
      `[config] NODE_ENV=test, loading .env.test`,
      `[db] using pg-mem in-memory database (schema v${int(random, 30, 60)})`,
      `[db] seeded ${int(random, 2, 6)} fixtures: ${m.entity}s, customers, price_lists`,
      '',
      ` ❯ ${test} (${names.length} tests | 1 failed) ${ms() + 30}ms`,
      ...names.map((n) => (n === failure.name ? `   × ${failure.suite} > ${n} ${ms()}ms` : `   ✓ ${failure.suite} > ${n} ${ms()}ms`)),
      '',
      '⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯',
      '',
      `FAIL ${test} > ${failure.name}`,
      failure.error,
      `  at ${failure.file}:${failure.line}`,
      '',
      ...(diff ? ['- Expected', '+ Received', '', `- ${diff[2]}`, `+ ${diff[1]}`, ''] : []),
      ` ❯ ${pick(random, ['Proxy.<anonymous>', 'Proxy.methodWrapper', 'Assertion.assert'])} node_modules/@vitest/expect/dist/index.js:${int(random, 1000, 1900)}:${int(random, 5, 40)}`,
      ` ❯ Proxy.methodWrapper node_modules/chai/chai.js:${int(random, 1500, 1700)}:25`,
      ` ❯ ${test}:${testLine}:${int(random, 5, 30)}`,
      `     ${testLine - 2}|     const row = await subject.load${cap(m.entity)}(db, fixtures.${m.entity}s[0]!.id);`,
      `     ${testLine - 1}|     const result = subject.to${cap(m.entity)}Dto(row);`,
      `     ${testLine}|     expect(result).toMatchSnapshot('${failure.name}');`,
      '       |                    ^',
      `     ${testLine + 1}|   });`,
      ` ❯ node_modules/@vitest/runner/dist/chunk-hooks.js:${int(random, 100, 900)}:${int(random, 5, 20)}`,
      ` ❯ node_modules/@vitest/runner/dist/chunk-hooks.js:${int(random, 1000, 1600)}:${int(random, 5, 20)}`,
      ' ❯ runTest node_modules/@vitest/runner/dist/index.js:781:11',
      ' ❯ runSuite node_modules/@vitest/runner/dist/index.js:909:15',
      ' ❯ runFiles node_modules/@vitest/runner/dist/index.js:958:5',
      ' ❯ startTests node_modules/@vitest/runner/dist/index.js:967:3',
      ' ❯ node_modules/vitest/dist/chunks/runBaseTests.9Ij9_de-.js:126:11',
      ' ❯ withEnv node_modules/vitest/dist/chunks/runBaseTests.9Ij9_de-.js:90:5',
      ' ❯ run node_modules/vitest/dist/chunks/runBaseTests.9Ij9_de-.js:111:3',
      ' ❯ runBaseTests node_modules/vitest/dist/chunks/base.DMfOuRWD.js:31:3',
      '',
      'Serialized Error: { showDiff: ' + String(diff !== null) + ", actual: undefined, expected: undefined, operator: 'strictEqual' }",
      'This error originated in "' + test + '" test file. It doesn\'t mean the error was thrown inside the file itself, but while it was running.',
      `The latest test that might've caused the error is "${failure.name}". It might mean one of the following:`,
      '- The error was thrown, while Vitest was running this test.',
      '- If the error occurred after the test had been completed, this was the last documented test before it was thrown.',
      '',
      '⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯',
      '',
      ' Test Files  1 failed (1)',
      `      Tests  1 failed | ${names.length - 1} passed (${names.length})`,
      `   Start at  ${start}`,
      `   Duration  ${int(random, 600, 1400)}ms (transform ${int(random, 60, 140)}ms, setup 0ms, collect ${int(random, 100, 300)}ms, tests ${int(random, 20, 90)}ms, environment 0ms, prepare ${int(random, 80, 160)}ms)`,
    ].join('\n');
  }

  return {
    project,
    edits,
    failing: () => failingNow().map((f) => f.test),
    fixed: () => [...fixed].sort(),
    tokenAt: (path, line) => tokens.get(path)?.[line - 1],
    run_command({ command }) {
      const c = command.trim().replace(/\s+/g, ' ');
      if (FULL_RUN.test(c)) return fullRun();
      const one = ONE_RUN.exec(c);
      if (one) return oneRun(one[1]!.replace(/^\.\//, ''));
      if (c === 'git status') return `On branch main\nChanges not staged for commit:\n${[...new Set(project.failures.filter((f) => fixed.has(f.test)).map((f) => `\tmodified:   ${f.file}`))].join('\n') || '\t(none)'}`;
      return `sh: 1: ${c.split(' ')[0]}: not available in this sandbox (use npm test or npx vitest run <file>)`;
    },
    read_file({ path }) {
      const lines = project.files.get(path.replace(/^\.\//, ''));
      if (!lines) return `ENOENT: no such file or directory, open '${path}'`;
      const own = tokens.get(path.replace(/^\.\//, ''))!;
      return [`${path} (${lines.length} lines)`, ...lines.map((line, i) => `${String(i + 1).padStart(4)} ${own[i]} | ${line}`)].join('\n');
    },
    edit_file({ path, line, token }) {
      const clean = path.replace(/^\.\//, '');
      const lines = project.files.get(clean);
      const own = tokens.get(clean);
      if (!lines || !own) {
        edits.rejected++;
        return `edit rejected: ${path}:${line} is not a file of the repository`;
      }
      if (!Number.isInteger(line) || line < 1 || line > lines.length) {
        edits.rejected++;
        return `edit rejected: ${clean}:${line} is not a line of ${clean} (${lines.length} lines)`;
      }
      if (own[line - 1] !== token) {
        edits.rejected++;
        return `edit rejected: ${clean}:${line} does not carry ${token} (the line changed since it was read, or the token is from another line); read the file again`;
      }
      edits.accepted++;
      own[line - 1] = newToken('edit', clean, line, ++editCount);
      for (const f of project.failures) if (f.file === clean && f.line === line) fixed.add(f.test);
      return `edit applied: ${clean}:${line}`;
    },
  };
}
