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
// Facts an agent must keep for long (what only a summary carries across a compaction, once the
// newest steps no longer show them):
// - Rules the user gives in later turns of the session (`fixerTurns`): `do not edit files under
//   src/legacy/` (some failures throw inside src/legacy/ and are fixed in their caller, the next
//   frame of the stack) and `every fix adds a line to CHANGELOG.md naming its test` (edit_file's
//   `changelog`). Once a rule is in force (`impose`), an edit that breaks it is refused and
//   counted as a violation; the refusal quotes the rule.
// - Settings read once: the first failing test, and about one in five of the others, fail
//   because a line hard-codes what `config/settings.json` sets; their fix passes that setting's
//   value as edit_file's `value`, so the agent reads the settings file once, and again whenever it
//   lost the value.
// - Which tests are already fixed: `npm test` and a test's own run say so, and nothing else does.
// - The test signing key: about one failure in ten (from the second on) needs it as edit_file's
//   `value`. `npm run issue-key` prints it once; asked again it refuses (the key is shown once);
//   `npm run issue-key -- --rotate` issues a new key, revokes the old, and undoes every fix set to
//   the old one (its test fails again until its line is set to the new key). Nothing prints a key
//   twice: across a compaction only the prompt, or a lookup in the caller's messages, brings it back.
//
// Output formats (the agent of fixer.ts reads them; nothing else in them is special):
// - `npm test`: a line `FAIL test/<x>.test.ts` or `PASS test/<x>.test.ts` per test file, then
//   `Suite: N failing, M passing (T test files)`.
// - `npx vitest run test/<x>.test.ts` on a failing test: vitest-like output (log lines, the test
//   list, a diff, stack frames) around the lines
//   `FAIL test/<x>.test.ts > <test name>` / `<Error>: <message>` / `  at src/<path>.ts:<line>`
//   (and `  at src/<caller>.ts:<line>` when it throws in src/legacy/), which stand within the first
//   1,250 characters, or past them with `lateFailure` (more log lines before them); on a fixed
//   test, `PASS test/<x>.test.ts` and counts.
// - `read_file`: `<path> (<n> lines)`, then `<number> <token> | <code>` per line. Every token is
//   unique in the project. The failing line stands past the first 2,000 characters of the output.
// - `edit_file`: `edit applied: <path>:<line>` when `token` is the token on that line (the line is
//   rewritten and gets a new token), a result starting `edit rejected: ` when it is not (or the
//   setting's value is wrong), and `edit refused: ` when the edit breaks a rule in force.
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
  /** The source file holding the bad line (under src/legacy/ when `caller` is set). */
  file: string;
  /** 1-based line number of the bad line. */
  line: number;
  /** For a failure that throws in src/legacy/: the next frame of its stack, where it is fixed once src/legacy/ is frozen. An edit of either line fixes the test. */
  caller?: { file: string; line: number };
  /** For a failure of a hard-coded setting: the key in config/settings.json whose value the fix passes. */
  setting?: string;
  /** For a failure of a missing signing key: the fix passes the key `npm run issue-key` issued (shown once). */
  signed?: true;
}

export interface FixerProject {
  seed: number;
  name: string;
  version: string;
  /** Every file's lines (code only, no numbers or tokens): sources under `src/`, tests under `test/`, `config/settings.json`, `CHANGELOG.md`. */
  files: Map<string, string[]>;
  /** Every test file, sorted. */
  tests: string[];
  /** The failing tests, sorted by test file. */
  failures: FixerFailure[];
  /** Tests per test file. */
  testNames: Map<string, string[]>;
  /** config/settings.json, key by key. */
  settings: Map<string, string>;
  /** The failure block of a test's own run stands past its first 1,250 characters. */
  lateFailure: boolean;
}

export interface FixerProjectOptions {
  /** @default 1 */
  seed?: number;
  /** Failing test files (at most `MAX_TEST_FILES` with the passing ones). @default 14 */
  failing?: number;
  /** Test files that pass from the start. @default 6 */
  passing?: number;
  /**
   * The failure block of `npx vitest run <test>` (its `FAIL`, error and `at` lines) stands past
   * the first 1,250 characters of the output, behind more log lines, where a record that cuts
   * tool outputs at 1,250 characters no longer shows it. @default false
   */
  lateFailure?: boolean;
}

/** A rule the user gives, in force from the turn that states it. */
export type FixerRule = { kind: 'frozen'; dir: string } | { kind: 'changelog' };

/** A later user message of the session: sent once `afterFixed` tests are fixed, between two steps. */
export interface FixerTurn {
  afterFixed: number;
  text: string;
  /** The rule it puts in force, if any. */
  rule?: FixerRule;
}

export interface FixerTools {
  project: FixerProject;
  run_command(input: { command: string }): string;
  read_file(input: { path: string }): string;
  edit_file(input: { path: string; line: number; token: string; value?: string; changelog?: string }): string;
  /** Puts a rule in force (the user stated it). */
  impose(rule: FixerRule): void;
  /** Failing tests not fixed yet, sorted. */
  failing(): string[];
  /** Tests fixed by an accepted edit. */
  fixed(): string[];
  /** Edits accepted, rejected (a wrong token, line, file or value) and refused for breaking a rule in force (violations). */
  edits: { accepted: number; rejected: number; violations: number };
  /** Signing keys issued (the first, then one a rotation), and the fixes a rotation undid (their lines carried the revoked key). */
  keys: { issued: number; refused: number; undone: number };
  /** The token on a line now (1-based), or undefined. */
  tokenAt(path: string, line: number): string | undefined;
}

export const fixerToolDescriptions = {
  run_command: 'Run a shell command in the repository (for example `npm test`, or `npx vitest run <test file>` for one test file with its errors) and return its output.',
  read_file: 'Read a whole file of the repository. Each line comes as `<number> <token> | <code>`.',
  edit_file:
    'Fix one line of a file. `line` is its number and `token` the token read_file showed on it; an edit whose token is not the one on that line is rejected. `value`: the value the line must take, when the fix is a setting. `changelog`: a line to add to CHANGELOG.md with the fix.',
} as const;

/** The settings file and the changelog. */
export const SETTINGS_FILE = 'config/settings.json';
export const CHANGELOG_FILE = 'CHANGELOG.md';
/** The command that issues the test signing key, once; with `-- --rotate`, a new one that revokes the old. */
export const KEY_COMMAND = 'npm run issue-key';
/** The folder the first rule freezes. */
export const LEGACY_DIR = 'src/legacy/';

/** The rules' sentences, as the user states them and as an edit refused for breaking one quotes them. */
export const RULE_TEXT = {
  frozen: (dir: string) => `do not edit files under \`${dir}\``,
  changelog: 'every fix adds a line to CHANGELOG.md naming its test',
} as const;

/**
 * The session's later user messages for a project of `failing` failing tests: the two rules (after
 * the second and the fourth fix), then a word of encouragement every fourth fix, so that the
 * newest user message of the session states no rule.
 */
export function fixerTurns(failing: number): FixerTurn[] {
  const turns: FixerTurn[] = [
    {
      afterFixed: 2,
      text: `One rule from now on: ${RULE_TEXT.frozen(LEGACY_DIR)}, it is frozen for the release. When a failure throws inside it, fix its caller instead: the next frame of the stack.`,
      rule: { kind: 'frozen', dir: LEGACY_DIR },
    },
    { afterFixed: 4, text: `Another rule from now on: ${RULE_TEXT.changelog} (the \`changelog\` input of edit_file).`, rule: { kind: 'changelog' } },
  ];
  for (let fixed = 8; fixed < failing; fixed += 4) turns.push({ afterFixed: fixed, text: 'Thanks, that is progress. Carry on, and tell me when `npm test` passes.' });
  return turns.filter((turn) => turn.afterFixed < failing);
}

/**
 * The fewest steps a run of `project` takes with every fact kept (the rules stated in time): one
 * `npm test`, four calls a failing test (its run, the read, the edit, its run again), one read of
 * the settings file when a fix needs a setting, a last `npm test`, and the final answer.
 */
export function fewestSteps(project: FixerProject): number {
  const once = (kind: (failure: FixerFailure) => boolean) => (project.failures.some(kind) ? 1 : 0);
  return 1 + 4 * project.failures.length + once((failure) => failure.setting !== undefined) + once((failure) => failure.signed === true) + 2;
}

/** The calls of that shortest run made again with the same input: each test's run after its fix, and the last `npm test`. */
export function fewestRepeats(project: FixerProject): number {
  return project.failures.length + 1;
}

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

/** The frozen code: failures that throw inside it are fixed in their caller once the user freezes it. */
const LEGACY: Module[] = [
  { area: 'legacy', name: 'pricing', entity: 'priceRule', nouns: ['Price', 'Markup', 'Tier'], fields: ['sku', 'amount', 'validFrom', 'tier'], tests: [] },
  { area: 'legacy', name: 'calendar', entity: 'holiday', nouns: ['Holiday', 'Workday', 'Offset'], fields: ['date', 'region', 'observedOn', 'name'], tests: [] },
  { area: 'legacy', name: 'formatting', entity: 'template', nouns: ['Template', 'Padding', 'Symbol'], fields: ['pattern', 'width', 'updatedAt', 'locale'], tests: [] },
];

/** Keys of config/settings.json and the values a seed picks from. */
const SETTINGS: [string, readonly string[]][] = [
  ['pageSize', ['20', '25', '40', '50']],
  ['currency', ['EUR', 'USD', 'GBP', 'CHF']],
  ['timezone', ['Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'UTC']],
  ['graceDays', ['3', '5', '7', '10']],
  ['cacheTtlSeconds', ['30', '60', '300', '900']],
  ['locale', ['fr-FR', 'en-US', 'de-DE', 'ja-JP']],
  ['maxRetries', ['2', '3', '5', '7']],
  ['roundingMode', ['half-even', 'half-up', 'floor', 'ceil']],
  ['invoicePrefix', ['INV', 'AC', 'HB', 'TL']],
  ['taxRegion', ['EU', 'US-CA', 'UK', 'CH']],
  ['sessionHours', ['8', '12', '24', '72']],
  ['exportChunkRows', ['500', '1000', '2000', '5000']],
];

/** Second and later source files of a module, when a project has more test files than modules. */
const LAYERS = ['store', 'rules', 'format', 'jobs'];

/** The most test files (failing and passing) a project can have. */
export const MAX_TEST_FILES = MODULES.length * (LAYERS.length + 1);

/** The module `m` as its `layer`-th source file: `totals`, then `totals-store`, `totals-rules`... */
const unit = (m: Module, layer: number): Module => (layer === 0 ? m : { ...m, name: `${m.name}-${LAYERS[layer - 1]}` });

/** Where in a read_file listing of `lines` each line starts, in characters. */
function listingStarts(path: string, lines: string[]): number[] {
  let offset = `${path} (${lines.length} lines)\n`.length;
  return lines.map((line, i) => {
    const at = offset;
    offset += `${String(i + 1).padStart(4)} tok_000000 | ${line}\n`.length;
    return at;
  });
}

/** A candidate line (1-based) of a source that stands past the first 2,000 characters of its listing. */
function lateLine(random: () => number, path: string, source: Source): number {
  const starts = listingStarts(path, source.lines);
  return pick(random, source.candidates.filter((i) => starts[i]! >= 2_000 && i < source.lines.length - 3)) + 1;
}

const projects = new Map<string, FixerProject>();
/** The module behind each test file of a project. */
const modulesOf = new WeakMap<FixerProject, Map<string, Module>>();

export function getFixerProject(options: FixerProjectOptions = {}): FixerProject {
  const seed = options.seed ?? 1;
  const failing = options.failing ?? 14;
  const passing = options.passing ?? 6;
  const lateFailure = options.lateFailure ?? false;
  if (failing + passing > MAX_TEST_FILES) throw new Error(`a fixer project has at most ${MAX_TEST_FILES} test files`);
  const key = `${seed}/${failing}/${passing}/${lateFailure}`;
  const hit = projects.get(key);
  if (hit) return hit;

  const random = rng('fixer-project', seed);
  const name = pick(random, ['acme-ledger', 'harbor-billing', 'tally-core', 'orbit-shop', 'fieldnote-api']);
  const version = `${int(random, 1, 4)}.${int(random, 0, 9)}.${int(random, 0, 12)}`;
  // every module's first source file, then their second ones, and so on
  const layers = shuffle(rng('fixer-layers', seed), LAYERS.flatMap((_, index) => MODULES.map((m) => unit(m, index + 1))));
  const modules = [...shuffle(random, MODULES), ...layers].slice(0, failing + passing);
  const files = new Map<string, string[]>();
  const testNames = new Map<string, string[]>();
  const failures: FixerFailure[] = [];

  const settings = new Map(SETTINGS.map(([key, values]) => [key, pick(rng('setting', seed, key), values)]));
  files.set(SETTINGS_FILE, ['{', ...[...settings].map(([key, value], index) => `  "${key}": ${/^\d+$/.test(value) ? value : `"${value}"`}${index < settings.size - 1 ? ',' : ''}`), '}']);
  files.set(CHANGELOG_FILE, ['# Changelog', '', '## Unreleased', '']);
  const legacy = LEGACY.map((m) => {
    const path = `src/${m.area}/${m.name}.ts`;
    const source = sourceFile(m, rng('source', seed, path), name);
    files.set(path, source.lines);
    return { path, source };
  });
  const legacyLines = new Set<string>();

  const sources = new Map<string, { path: string; source: Source }>();
  modules.forEach((m) => {
    const path = `src/${m.area}/${m.name}.ts`;
    const test = `test/${m.area}/${m.name}.test.ts`;
    const source = sourceFile(m, rng('source', seed, path), name);
    files.set(path, source.lines);
    testNames.set(test, m.tests);
    files.set(test, testFile(m, m.tests));
    sources.set(test, { path, source });
  });
  // the failing tests are the first `failing` modules; their kinds go by their order in the suite
  const failingTests = modules.slice(0, failing).map((m) => `test/${m.area}/${m.name}.test.ts`).sort();
  failingTests.forEach((test, index) => {
    const m = modules.find((x) => `test/${x.area}/${x.name}.test.ts` === test)!;
    const { path, source } = sources.get(test)!;
    const r = rng('failure', seed, path);
    const line = lateLine(r, path, source);
    const failure: FixerFailure = { test, suite: m.name, name: pick(r, m.tests), error: errorFor(m, r), file: path, line };
    const kind = rng('failure-kind', seed, test)();
    // The first rule comes after the second fix: only the third failing test on throws in src/legacy/.
    // The first failing test, and about one in five of the others, hard-code a setting; about one in
    // ten lack the test signing key (issued once by `npm run issue-key`).
    if (index >= 2 && kind < 0.3) {
      const frozen = pick(r, legacy);
      // each its own line: one edit never fixes two of them
      let at = lateLine(r, frozen.path, frozen.source);
      while (legacyLines.has(`${frozen.path}:${at}`)) at = lateLine(r, frozen.path, frozen.source);
      legacyLines.add(`${frozen.path}:${at}`);
      failures.push({ ...failure, file: frozen.path, line: at, caller: { file: path, line } });
    } else if (index === 0 || kind >= 0.8) {
      const [key, values] = pick(r, SETTINGS);
      const wrong = pick(r, values.filter((value) => value !== settings.get(key)));
      failures.push({ ...failure, error: `SettingError: expected ${key} from ${SETTINGS_FILE}, found a hard-coded ${wrong}`, setting: key });
    } else if (kind >= 0.7) {
      failures.push({ ...failure, error: `KeyError: expected the test signing key from \`${KEY_COMMAND}\`, found the placeholder key_00000000`, signed: true });
    } else failures.push(failure);
  });
  const project: FixerProject = { seed, name, version, files, tests: [...testNames.keys()].sort(), failures, testNames, settings, lateFailure };
  projects.set(key, project);
  modulesOf.set(project, new Map(modules.map((m) => [`test/${m.area}/${m.name}.test.ts`, m])));
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
  const changelog = [...project.files.get(CHANGELOG_FILE)!];
  const fixed = new Set<string>();
  const edits = { accepted: 0, rejected: 0, violations: 0 };
  const rules: { frozen: string[]; changelog: boolean } = { frozen: [], changelog: false };
  // the signing key: issued once (shown once), a rotation revokes it; the key each signed fix set
  const keys = { issued: 0, refused: 0, undone: 0 };
  let signingKey: string | undefined;
  const signedWith = new Map<string, string>();
  let editCount = 0;
  const failingNow = () => project.failures.filter((f) => !fixed.has(f.test));
  const fileOf = (path: string) => (path === CHANGELOG_FILE ? changelog : project.files.get(path));

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
    const { entity } = modulesOf.get(project)!.get(test)!;
    const Entity = cap(entity);
    const testLine = int(random, 14, 40);
    const diff = /^AssertionError: expected (.+?) to (?:be|deeply equal) (.+?)(?: \/\/ Object\.is equality)?$/.exec(failure.error);
    // with lateFailure, the run logs its fixtures and queries first (about 1,600 characters)
    const queries = project.lateFailure
      ? Array.from({ length: 16 }, (_, i) => `[db] query ${i + 1}: select * from ${snake(entity)}s where id = $1 (${int(random, 1, 9)} ms, ${int(random, 0, 3)} rows)`)
      : [];
    return [
      ...header,
      `stdout | ${test} > ${failure.suite} > ${failure.name}`,
      `[config] NODE_ENV=test, loading .env.test`,
      `[db] using pg-mem in-memory database (schema v${int(random, 30, 60)})`,
      `[db] seeded ${int(random, 2, 6)} fixtures: ${entity}s, customers, price_lists`,
      ...queries,
      '',
      ` ❯ ${test} (${names.length} tests | 1 failed) ${ms() + 30}ms`,
      ...names.map((n) => (n === failure.name ? `   × ${failure.suite} > ${n} ${ms()}ms` : `   ✓ ${failure.suite} > ${n} ${ms()}ms`)),
      '',
      '⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯',
      '',
      `FAIL ${test} > ${failure.name}`,
      failure.error,
      `  at ${failure.file}:${failure.line}`,
      ...(failure.caller ? [`  at ${failure.caller.file}:${failure.caller.line}`] : []),
      '',
      ...(diff ? ['- Expected', '+ Received', '', `- ${diff[2]}`, `+ ${diff[1]}`, ''] : []),
      ` ❯ ${pick(random, ['Proxy.<anonymous>', 'Proxy.methodWrapper', 'Assertion.assert'])} node_modules/@vitest/expect/dist/index.js:${int(random, 1000, 1900)}:${int(random, 5, 40)}`,
      ` ❯ Proxy.methodWrapper node_modules/chai/chai.js:${int(random, 1500, 1700)}:25`,
      ` ❯ ${test}:${testLine}:${int(random, 5, 30)}`,
      `     ${testLine - 2}|     const row = await subject.load${Entity}(db, fixtures.${entity}s[0]!.id);`,
      `     ${testLine - 1}|     const result = subject.to${Entity}Dto(row);`,
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

  /** `npm run issue-key`: the key, shown once; again, a refusal; with `--rotate`, a new key, and every fix that set the old one undone. */
  function issueKey(rotate: boolean): string {
    const header = [`> ${project.name}@${project.version} issue-key${rotate ? ' --rotate' : ''}`, ''];
    if (signingKey !== undefined && !rotate) {
      keys.refused++;
      return [
        ...header,
        'A test signing key was already issued for this checkout. It is shown once and cannot be shown again.',
        `\`${KEY_COMMAND} -- --rotate\` issues a new one and revokes it: every line set to the revoked key fails again until set to the new one.`,
      ].join('\n');
    }
    const previous = signingKey;
    signingKey = `key_${hex(rng('signing-key', seed, ++keys.issued), 8)}`;
    const undone = project.failures.filter((f) => signedWith.has(f.test) && signedWith.get(f.test) !== signingKey);
    for (const f of undone) {
      fixed.delete(f.test);
      signedWith.delete(f.test);
    }
    keys.undone += undone.length;
    return [
      ...header,
      `Issued the test signing key ${signingKey} for this checkout.`,
      'It is shown once and cannot be shown again: keep it.',
      ...(previous === undefined
        ? [`\`${KEY_COMMAND} -- --rotate\` issues a new one and revokes this one.`]
        : [`The previous key ${previous} is revoked. Lines set to it fail again until set to the new one: ${undone.length === 0 ? 'none' : undone.map((f) => `${fixLine(f)} (${f.test})`).join(', ')}.`]),
    ].join('\n');
  }
  /** The line a fix set: the failure's own, or its caller's. */
  const fixLine = (f: FixerFailure) => fixedAt.get(f.test) ?? `${f.file}:${f.line}`;
  const fixedAt = new Map<string, string>();

  const reject = (text: string) => {
    edits.rejected++;
    return `edit rejected: ${text}`;
  };
  const refuse = (loc: string, rule: string, detail: string) => {
    edits.violations++;
    return `edit refused: ${loc} breaks a rule the user gave: ${rule}${detail}. Nothing was changed.`;
  };

  return {
    project,
    edits,
    keys,
    failing: () => failingNow().map((f) => f.test),
    fixed: () => [...fixed].sort(),
    tokenAt: (path, line) => tokens.get(path)?.[line - 1],
    impose(rule) {
      if (rule.kind === 'frozen') rules.frozen.push(rule.dir);
      else rules.changelog = true;
    },
    run_command({ command }) {
      const c = command.trim().replace(/\s+/g, ' ');
      if (FULL_RUN.test(c)) return fullRun();
      if (c === KEY_COMMAND || c === `${KEY_COMMAND} -- --rotate`) return issueKey(c !== KEY_COMMAND);
      const one = ONE_RUN.exec(c);
      if (one) return oneRun(one[1]!.replace(/^\.\//, ''));
      if (c === 'git status') {
        const changed = [...new Set(project.failures.filter((f) => fixed.has(f.test)).map((f) => `\tmodified:   ${f.file}`)), ...(changelog.length > 4 ? [`\tmodified:   ${CHANGELOG_FILE}`] : [])];
        return `On branch main\nChanges not staged for commit:\n${changed.join('\n') || '\t(none)'}`;
      }
      return `sh: 1: ${c.split(' ')[0]}: not available in this sandbox (use npm test or npx vitest run <file>)`;
    },
    read_file({ path }) {
      const clean = path.replace(/^\.\//, '');
      const lines = fileOf(clean);
      if (!lines) return `ENOENT: no such file or directory, open '${path}'`;
      const own = tokens.get(clean) ?? [];
      while (own.length < lines.length) own.push(newToken(clean, own.length + 1, 'appended'));
      tokens.set(clean, own);
      return [`${clean} (${lines.length} lines)`, ...lines.map((line, i) => `${String(i + 1).padStart(4)} ${own[i]} | ${line}`)].join('\n');
    },
    edit_file({ path, line, token, value, changelog: entry }) {
      const clean = path.replace(/^\.\//, '');
      const lines = project.files.get(clean);
      const own = tokens.get(clean);
      if (!lines || !own || clean === CHANGELOG_FILE) return reject(`${path}:${line} is not a source file of the repository`);
      if (!Number.isInteger(line) || line < 1 || line > lines.length) return reject(`${clean}:${line} is not a line of ${clean} (${lines.length} lines)`);
      const loc = `${clean}:${line}`;
      if (own[line - 1] !== token) return reject(`${loc} does not carry ${token} (the line changed since it was read, or the token is from another line); read the file again`);
      const frozen = rules.frozen.find((dir) => clean.startsWith(dir));
      if (frozen !== undefined) return refuse(loc, RULE_TEXT.frozen(frozen), '');
      const fixes = failingNow().filter((f) => (f.file === clean && f.line === line) || (f.caller?.file === clean && f.caller.line === line));
      if (rules.changelog) {
        const unnamed = fixes.find((f) => !(entry ?? '').includes(f.test));
        if (unnamed) return refuse(loc, RULE_TEXT.changelog, entry ? ` (this edit's changelog line does not name ${unnamed.test})` : ' (this edit adds none)');
      }
      const setting = fixes.find((f) => f.setting !== undefined && project.settings.get(f.setting) !== value);
      if (setting) return reject(`${loc} must take the value of ${setting.setting} from ${SETTINGS_FILE}${value === undefined ? ' (the edit gives no value)' : `, and ${value} is not it`}`);
      const signed = fixes.find((f) => f.signed === true);
      if (signed && (signingKey === undefined || value !== signingKey)) {
        return reject(
          `${loc} must take the test signing key from \`${KEY_COMMAND}\`${value === undefined ? ' (the edit gives no value)' : `, and ${value} is not it${signingKey !== undefined && /^key_[0-9a-f]{8}$/.test(value) ? ' (a revoked or unknown key)' : ''}`}`,
        );
      }
      edits.accepted++;
      own[line - 1] = newToken('edit', clean, line, ++editCount);
      for (const f of fixes) {
        fixed.add(f.test);
        fixedAt.set(f.test, loc);
        if (f.signed === true) signedWith.set(f.test, value!);
      }
      if (entry !== undefined && entry.trim() !== '') changelog.push(`- ${entry.trim().split('\n')[0]}`);
      return `edit applied: ${loc}${entry !== undefined && entry.trim() !== '' ? ` (and a line added to ${CHANGELOG_FILE})` : ''}`;
    },
  };
}
