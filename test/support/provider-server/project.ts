// A seeded fake TypeScript project (an Express + Postgres API with a failing Vitest suite) and
// the three tools a coding agent uses on it. Everything is a pure function of the seed:
// the same seed gives byte-identical files, test output and search results.
//
//   const tools = createProjectTools(1);
//   tools.read_file({ path: 'src/server/routes/users.ts' });   // the source, ~8,000 characters
//   tools.run_command({ command: 'npm test' });                // failing Vitest run with stack traces
//   tools.search({ query: 'requireAuth' });                    // grep-like `path:line: text` matches

import { hex, int, pick, rng, shuffle } from './random';

export interface Failure {
  id: string;
  testFile: string;
  suite: string;
  test: string;
  /** First line of the error, e.g. `TypeError: Cannot read properties of undefined (reading 'id')`. */
  error: string;
  /** Stack frames, innermost first. */
  frames: { fn?: string; file: string; line: number; col: number }[];
  /** The file holding the bug. */
  sourceFile: string;
  /** Where the bug is. */
  location: { file: string; line: number; col: number };
  /** An identifier worth searching for. */
  symbol: string;
  /** Why the agent reads the source file (used in its short texts). */
  hint: string;
  /** The fix, one line. */
  fix: string;
  /** Extra lines after the error (assertion diff, captured stderr). */
  details: string[];
}

export interface Project {
  seed: number;
  name: string;
  version: string;
  files: Map<string, string>;
  paths: string[];
  sourcePaths: string[];
  testFiles: string[];
  failures: Failure[];
  /** Tests per test file. */
  testCounts: Map<string, number>;
  branch: string;
  commits: string[];
  modified: string[];
  searchTerms: string[];
}

export interface ProjectTools {
  read_file(input: { path: string }): string;
  run_command(input: { command: string }): string;
  search(input: { query: string }): string;
}

// ---------------------------------------------------------------------------------------------
// entities

type Field = [name: string, ts: string, zod: string, sample: string];

interface Entity {
  singular: string;
  plural: string;
  Type: string;
  fields: Field[];
  money: boolean;
}

const ENTITY_POOL: Omit<Entity, 'Type'>[] = [
  {
    singular: 'user',
    plural: 'users',
    money: false,
    fields: [
      ['email', 'string', 'z.string().email()', "'ada@example.com'"],
      ['name', 'string', 'z.string().min(1).max(120)', "'Ada Lovelace'"],
      ['role', "'admin' | 'member' | 'viewer'", "z.enum(['admin', 'member', 'viewer'])", "'member'"],
      ['teamId', 'string', 'z.string().uuid()', "'5b1f0c1e-8d0a-4c3e-9a57-0c9a1f2b7d11'"],
      ['lastLoginAt', 'string | null', 'z.string().datetime().nullable()', 'null'],
    ],
  },
  {
    singular: 'order',
    plural: 'orders',
    money: true,
    fields: [
      ['userId', 'string', 'z.string().uuid()', "'2c7d9e4a-1b3f-4d5e-8a9b-7c6d5e4f3a2b'"],
      ['status', "'pending' | 'paid' | 'shipped' | 'cancelled'", "z.enum(['pending', 'paid', 'shipped', 'cancelled'])", "'pending'"],
      ['total', 'number', 'z.number().nonnegative()', '1234.5'],
      ['currency', 'string', 'z.string().length(3)', "'EUR'"],
      ['shippedAt', 'string | null', 'z.string().datetime().nullable()', 'null'],
    ],
  },
  {
    singular: 'invoice',
    plural: 'invoices',
    money: true,
    fields: [
      ['orderId', 'string', 'z.string().uuid()', "'9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a'"],
      ['amount', 'number', 'z.number().positive()', '99.9'],
      ['currency', 'string', 'z.string().length(3)', "'USD'"],
      ['dueDate', 'string', 'z.string().date()', "'2024-07-31'"],
      ['paidAt', 'string | null', 'z.string().datetime().nullable()', 'null'],
    ],
  },
  {
    singular: 'payment',
    plural: 'payments',
    money: true,
    fields: [
      ['invoiceId', 'string', 'z.string().uuid()', "'0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'"],
      ['amount', 'number', 'z.number().positive()', '42'],
      ['currency', 'string', 'z.string().length(3)', "'GBP'"],
      ['provider', "'stripe' | 'adyen' | 'manual'", "z.enum(['stripe', 'adyen', 'manual'])", "'stripe'"],
      ['capturedAt', 'string | null', 'z.string().datetime().nullable()', 'null'],
    ],
  },
  {
    singular: 'product',
    plural: 'products',
    money: false,
    fields: [
      ['sku', 'string', "z.string().regex(/^[A-Z0-9-]{4,32}$/)", "'SKU-1042'"],
      ['title', 'string', 'z.string().min(1).max(200)', "'Walnut desk organiser'"],
      ['price', 'number', 'z.number().nonnegative()', '49'],
      ['stock', 'number', 'z.number().int().nonnegative()', '12'],
      ['archived', 'boolean', 'z.boolean()', 'false'],
    ],
  },
  {
    singular: 'team',
    plural: 'teams',
    money: false,
    fields: [
      ['name', 'string', 'z.string().min(2).max(80)', "'Platform'"],
      ['ownerId', 'string', 'z.string().uuid()', "'7e6d5c4b-3a29-4180-9f7e-6d5c4b3a2918'"],
      ['plan', "'free' | 'pro' | 'enterprise'", "z.enum(['free', 'pro', 'enterprise'])", "'pro'"],
      ['seats', 'number', 'z.number().int().min(1)', '5'],
    ],
  },
  {
    singular: 'comment',
    plural: 'comments',
    money: false,
    fields: [
      ['authorId', 'string', 'z.string().uuid()', "'3d2c1b0a-9f8e-47d6-a5b4-c3d2e1f0a9b8'"],
      ['body', 'string', 'z.string().min(1).max(10_000)', "'Looks good to me.'"],
      ['parentId', 'string | null', 'z.string().uuid().nullable()', 'null'],
      ['editedAt', 'string | null', 'z.string().datetime().nullable()', 'null'],
    ],
  },
  {
    singular: 'notification',
    plural: 'notifications',
    money: false,
    fields: [
      ['userId', 'string', 'z.string().uuid()', "'2c7d9e4a-1b3f-4d5e-8a9b-7c6d5e4f3a2b'"],
      ['kind', "'mention' | 'invite' | 'billing'", "z.enum(['mention', 'invite', 'billing'])", "'mention'"],
      ['payload', 'Record<string, unknown>', 'z.record(z.string(), z.unknown())', '{}'],
      ['readAt', 'string | null', 'z.string().datetime().nullable()', 'null'],
    ],
  },
  {
    singular: 'project',
    plural: 'projects',
    money: false,
    fields: [
      ['teamId', 'string', 'z.string().uuid()', "'5b1f0c1e-8d0a-4c3e-9a57-0c9a1f2b7d11'"],
      ['name', 'string', 'z.string().min(1).max(120)', "'Billing revamp'"],
      ['slug', 'string', "z.string().regex(/^[a-z0-9-]+$/)", "'billing-revamp'"],
      ['archivedAt', 'string | null', 'z.string().datetime().nullable()', 'null'],
    ],
  },
];

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

class Lines {
  readonly lines: string[] = [];
  readonly marks = new Map<string, { line: number; col: number }>();

  push(...lines: string[]): this {
    for (const l of lines) this.lines.push(...l.split('\n'));
    return this;
  }

  /** Marks the next pushed line; `col` is the 1-based column of `needle` in it (+ offset). */
  markNext(name: string, line: string, needle: string, offset = 0): this {
    const col = line.indexOf(needle) + 1 + offset;
    this.marks.set(name, { line: this.lines.length + 1, col });
    return this.push(line);
  }

  get length(): number {
    return this.lines.length;
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

// ---------------------------------------------------------------------------------------------
// generators

interface Bugs {
  totals?: Entity;
  dates: boolean;
  money: boolean;
  notFound?: Entity;
}

function routeFile(entity: Entity, bugs: Bugs, random: () => number): Lines {
  const { singular, plural, Type, fields } = entity;
  const svc = `${plural}Service`;
  const L = new Lines();
  L.push(
    "import { Router, type Request, type Response, type NextFunction } from 'express';",
    "import { z } from 'zod';",
    `import { ${svc} } from '../services/${singular}Service';`,
    "import { requireAuth, requireRole } from '../middleware/auth';",
    "import { validateBody, validateQuery } from '../middleware/validate';",
    "import { HttpError, notFound } from '../../lib/http';",
    "import { logger } from '../../lib/logger';",
    '',
    'const router = Router();',
    `const log = logger.child({ module: 'routes/${plural}' });`,
    '',
    `export interface ${Type}Dto {`,
    '  id: string;',
    ...fields.map(([n, t]) => `  ${n}: ${t};`),
    '  createdAt: string;',
    '  updatedAt: string;',
    '}',
    '',
  );

  if (singular === 'user') {
    // The signature failure: `TypeError: Cannot read properties of undefined (reading 'id')`
    // at src/server/routes/users.ts:42:17 (the line is padded to 42 whatever the fields).
    const doc = [
      ' * Loads the profile of the signed-in user.',
      ' *',
      ' * `requireAuth` accepts two kinds of credentials:',
      ' *   - a session cookie, which populates `req.session.user`;',
      ' *   - a bearer token (API clients, tests), which populates `req.auth`.',
      ' *',
      ' * The profile is cached for PROFILE_CACHE_TTL_MS per user; see',
      ' * `usersService.findProfile` for the cache key.',
      ' *',
      ' * @param req the incoming request, after `requireAuth`',
      ' * @returns the profile row, or `undefined` when the user was deleted',
      ' * @throws HttpError(401) never: `requireAuth` has rejected anonymous calls',
      ' *',
      ' * History: moved here from `src/server/app.ts` when the /me route was',
      ' * split out of the legacy `/account` router (see CHANGELOG 1.3.0).',
      ' *',
      ' * TODO(team-identity): drop the cookie path once the web app uses tokens.',
    ];
    const before = L.length + 3; // const, blank, `/**`
    const k = Math.max(1, Math.min(doc.length, 42 - before - 5));
    L.push('const PROFILE_CACHE_TTL_MS = 30_000;', '', '/**', ...doc.slice(0, k - 1), doc[doc.length - 1]!, ' */');
    L.push('export async function loadCurrentUser(req: Request) {', '  const me = req.session.user;', '  const profileQuery = {');
    L.markNext('me', '    ownerId: me.id,', 'id');
    L.push(
      "    includeTeams: req.query.includeTeams === 'true',",
      '    maxAgeMs: PROFILE_CACHE_TTL_MS,',
      '  };',
      `  return ${svc}.findProfile(profileQuery);`,
      '}',
      '',
      "router.get('/me', requireAuth, async (req: Request, res: Response, next: NextFunction) => {",
      '  try {',
    );
    L.markNext('meHandler', '    const profile = await loadCurrentUser(req);', 'loadCurrentUser');
    L.push(
      "    if (!profile) throw notFound('User', 'me');",
      "    res.setHeader('Cache-Control', 'private, max-age=30');",
      '    res.json(toDto(profile));',
      '  } catch (err) {',
      '    next(err);',
      '  }',
      '});',
      '',
    );
  }

  const pageSize = pick(random, [20, 25, 50]);
  L.push(
    `const create${Type}Schema = z.object({`,
    ...fields.map(([n, , zod]) => `  ${n}: ${zod},`),
    '});',
    '',
    `const update${Type}Schema = create${Type}Schema.partial();`,
    '',
    `const list${Type}QuerySchema = z.object({`,
    '  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),',
    '  cursor: z.string().optional(),',
    `  sort: z.enum([${['createdAt', ...fields.slice(0, 2).map((f) => f[0])].map((s) => `'${s}'`).join(', ')}]).default('createdAt'),`,
    "  order: z.enum(['asc', 'desc']).default('desc'),",
    '});',
    '',
    `const DEFAULT_PAGE_SIZE = ${pageSize};`,
    'const MAX_PAGE_SIZE = 100;',
    '',
    `type ${Type}Row = Awaited<ReturnType<typeof ${svc}.findById>> & {};`,
    '',
    `function toDto(row: ${Type}Row): ${Type}Dto {`,
    '  return {',
    '    id: row.id,',
    ...fields.map(([n]) => `    ${n}: row.${snake(n)},`),
    '    createdAt: row.created_at.toISOString(),',
    '    updatedAt: row.updated_at.toISOString(),',
    '  };',
    '}',
    '',
    'function parsePagination(query: z.infer<typeof list' + Type + 'QuerySchema>) {',
    '  const limit = Math.min(query.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);',
    '  const cursor = query.cursor ? decodeCursor(query.cursor) : undefined;',
    '  return { limit, cursor, sort: query.sort, order: query.order };',
    '}',
    '',
    'function decodeCursor(raw: string): { id: string; at: string } {',
    '  try {',
    "    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));",
    "    if (typeof parsed?.id !== 'string' || typeof parsed?.at !== 'string') throw new Error('shape');",
    '    return parsed;',
    '  } catch {',
    "    throw new HttpError(400, 'invalid_cursor', 'The pagination cursor is malformed.');",
    '  }',
    '}',
    '',
    `function encodeCursor(row: ${Type}Row): string {`,
    "  return Buffer.from(JSON.stringify({ id: row.id, at: row.created_at.toISOString() })).toString('base64url');",
    '}',
    '',
    `router.get('/', requireAuth, validateQuery(list${Type}QuerySchema), async (req, res, next) => {`,
    '  try {',
    `    const page = parsePagination(req.query as z.infer<typeof list${Type}QuerySchema>);`,
    `    const rows = await ${svc}.list({ ...page, limit: page.limit + 1 });`,
    '    const hasMore = rows.length > page.limit;',
    '    const items = rows.slice(0, page.limit);',
    '    res.json({',
    '      items: items.map(toDto),',
    '      nextCursor: hasMore ? encodeCursor(items[items.length - 1]!) : null,',
    '    });',
    '  } catch (err) {',
    '    next(err);',
    '  }',
    '});',
    '',
  );

  if (bugs.totals === entity) {
    L.push(
      "router.get('/summary', requireAuth, async (req, res, next) => {",
      '  try {',
      '    const ownerId = req.auth?.userId ?? req.session.user?.id;',
      "    if (!ownerId) throw new HttpError(401, 'unauthenticated', 'Sign in first.');",
    );
    L.markNext('totalsHandler', `    const totals = await ${svc}.computeTotals(ownerId);`, 'computeTotals');
    L.push('    res.json(totals);', '  } catch (err) {', '    next(err);', '  }', '});', '');
  }

  L.push(`router.get('/:id', requireAuth, async (req, res, next) => {`, '  try {', `    const row = await ${svc}.findById(req.params.id);`);
  if (bugs.notFound === entity) {
    L.markNext('notFound', `    if (!row) throw new Error('${Type} not found');`, 'new Error');
  } else {
    L.push(`    if (!row) throw notFound('${Type}', req.params.id);`);
  }
  L.push(
    '    res.json(toDto(row));',
    '  } catch (err) {',
    '    next(err);',
    '  }',
    '});',
    '',
    `router.post('/', requireAuth, validateBody(create${Type}Schema), async (req, res, next) => {`,
    '  try {',
    `    const input = req.body as z.infer<typeof create${Type}Schema>;`,
    `    const row = await ${svc}.create(input);`,
    `    log.info({ ${singular}Id: row.id }, '${singular} created');`,
    `    res.status(201).location(\`/${plural}/\${row.id}\`).json(toDto(row));`,
    '  } catch (err) {',
    '    next(err);',
    '  }',
    '});',
    '',
    `router.patch('/:id', requireAuth, validateBody(update${Type}Schema), async (req, res, next) => {`,
    '  try {',
    `    const patch = req.body as z.infer<typeof update${Type}Schema>;`,
    '    if (Object.keys(patch).length === 0) {',
    "      throw new HttpError(400, 'empty_patch', 'Nothing to update.');",
    '    }',
    `    const row = await ${svc}.update(req.params.id, patch);`,
    `    if (!row) throw notFound('${Type}', req.params.id);`,
    `    log.info({ ${singular}Id: row.id, fields: Object.keys(patch) }, '${singular} updated');`,
    '    res.json(toDto(row));',
    '  } catch (err) {',
    '    next(err);',
    '  }',
    '});',
    '',
    `router.delete('/:id', requireAuth, requireRole('admin'), async (req, res, next) => {`,
    '  try {',
    `    const removed = await ${svc}.remove(req.params.id);`,
    `    if (!removed) throw notFound('${Type}', req.params.id);`,
    `    log.warn({ ${singular}Id: req.params.id, by: req.auth?.userId }, '${singular} deleted');`,
    '    res.status(204).end();',
    '  } catch (err) {',
    '    next(err);',
    '  }',
    '});',
    '',
  );

  if (random() < 0.7) {
    const cols = ['id', ...fields.map((f) => f[0]), 'createdAt'];
    L.push(
      '/** CSV export for the admin dashboard. Streams rows so large accounts do not buffer. */',
      `router.get('/export.csv', requireAuth, requireRole('admin'), async (req, res, next) => {`,
      '  try {',
      "    res.setHeader('Content-Type', 'text/csv; charset=utf-8');",
      `    res.setHeader('Content-Disposition', 'attachment; filename="${plural}.csv"');`,
      `    res.write('${cols.join(',')}\\n');`,
      `    for await (const row of ${svc}.iterateAll({ batchSize: 500 })) {`,
      '      const dto = toDto(row);',
      '      const line = [',
      ...cols.map((c) => `        csvCell(dto.${c}),`),
      "      ].join(',');",
      "      res.write(line + '\\n');",
      '    }',
      '    res.end();',
      '  } catch (err) {',
      '    next(err);',
      '  }',
      '});',
      '',
      'function csvCell(value: unknown): string {',
      "  if (value === null || value === undefined) return '';",
      "  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);",
      '  return /[",\\n]/.test(text) ? `"${text.replace(/"/g, \'""\')}"` : text;',
      '}',
      '',
    );
  }

  L.push('export default router;');
  return L;
}

function serviceFile(entity: Entity, bugs: Bugs): Lines {
  const { singular, plural, Type, fields } = entity;
  const table = plural;
  const cols = ['id', ...fields.map((f) => snake(f[0])), 'created_at', 'updated_at'];
  const L = new Lines();
  L.push(
    "import { db, type Sql } from '../db/client';",
    "import { cache } from '../../lib/cache';",
    "import { logger } from '../../lib/logger';",
    ...(entity.money ? ["import { roundMoney } from '../../lib/money';"] : []),
    '',
    `const log = logger.child({ module: 'services/${singular}Service' });`,
    '',
    `export interface ${Type}Row {`,
    '  id: string;',
    ...fields.map(([n, t]) => `  ${snake(n)}: ${t.includes('string | null') && n.endsWith('At') ? 'Date | null' : t};`),
    '  created_at: Date;',
    '  updated_at: Date;',
    '}',
    '',
    `const COLUMNS = ${JSON.stringify(cols.join(', '))};`,
    '',
    `const SQL_FIND_BY_ID = \`SELECT \${COLUMNS} FROM ${table} WHERE id = $1 AND deleted_at IS NULL\`;`,
    `const SQL_LIST = \`SELECT \${COLUMNS} FROM ${table} WHERE deleted_at IS NULL AND ($1::timestamptz IS NULL OR created_at < $1) ORDER BY created_at DESC, id DESC LIMIT $2\`;`,
    `const SQL_INSERT = \`INSERT INTO ${table} (${cols.slice(1, -2).join(', ')}) VALUES (${cols.slice(1, -2).map((_, i) => `$${i + 1}`).join(', ')}) RETURNING \${COLUMNS}\`;`,
    `const SQL_SOFT_DELETE = \`UPDATE ${table} SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL\`;`,
    ...(entity.money
      ? [
          `const SQL_TOTALS = \`SELECT count(*)::int AS count, sum(${fields.find((f) => f[0] === 'total' || f[0] === 'amount')?.[0] ?? 'amount'})::float AS total, max(currency) AS currency FROM ${table} WHERE ${snake(fields[0]![0])} = $1 GROUP BY ${snake(fields[0]![0])}\`;`,
        ]
      : []),
    '',
    'export interface ListOptions {',
    '  limit: number;',
    '  cursor?: { id: string; at: string };',
    "  sort?: string;",
    "  order?: 'asc' | 'desc';",
    '}',
    '',
    `export const ${plural}Service = {`,
    `  async findById(id: string): Promise<${Type}Row | undefined> {`,
    `    const cached = cache.get<${Type}Row>(\`${singular}:\${id}\`);`,
    '    if (cached) return cached;',
    `    const row = await db.maybeOne<${Type}Row>(SQL_FIND_BY_ID, [id]);`,
    `    if (row) cache.set(\`${singular}:\${id}\`, row, { ttlMs: 60_000 });`,
    '    return row ?? undefined;',
    '  },',
    '',
    `  async list(options: ListOptions): Promise<${Type}Row[]> {`,
    '    const at = options.cursor?.at ?? null;',
    `    return db.many<${Type}Row>(SQL_LIST, [at, options.limit]);`,
    '  },',
    '',
    `  async *iterateAll({ batchSize }: { batchSize: number }): AsyncGenerator<${Type}Row> {`,
    '    let cursor: ListOptions[\'cursor\'];',
    '    for (;;) {',
    '      const rows = await this.list({ limit: batchSize, cursor });',
    '      yield* rows;',
    '      if (rows.length < batchSize) return;',
    '      const last = rows[rows.length - 1]!;',
    '      cursor = { id: last.id, at: last.created_at.toISOString() };',
    '    }',
    '  },',
    '',
  );
  if (singular === 'user') {
    L.push(
      '  async findProfile(query: { ownerId: string; includeTeams: boolean; maxAgeMs: number }) {',
      '    const key = `profile:${query.ownerId}:${query.includeTeams ? 1 : 0}`;',
      '    const cached = cache.get<UserRow & { teams?: string[] }>(key);',
      '    if (cached) return cached;',
      '    const row = await this.findById(query.ownerId);',
      '    if (!row) return undefined;',
      '    const teams = query.includeTeams',
      "      ? (await db.many<{ team_id: string }>('SELECT team_id FROM memberships WHERE user_id = $1', [row.id])).map((m) => m.team_id)",
      '      : undefined;',
      '    const profile = { ...row, teams };',
      '    cache.set(key, profile, { ttlMs: query.maxAgeMs });',
      '    return profile;',
      '  },',
      '',
    );
  }
  L.push(
    `  async create(input: Omit<${Type}Row, 'id' | 'created_at' | 'updated_at'> | Record<string, unknown>): Promise<${Type}Row> {`,
    '    const values = [',
    ...fields.map(([n]) => `      (input as Record<string, unknown>)['${n}'] ?? (input as Record<string, unknown>)['${snake(n)}'],`),
    '    ];',
    `    const row = await db.one<${Type}Row>(SQL_INSERT, values);`,
    `    log.debug({ id: row.id }, 'inserted ${singular}');`,
    '    return row;',
    '  },',
    '',
    `  async update(id: string, patch: Record<string, unknown>): Promise<${Type}Row | undefined> {`,
    '    const entries = Object.entries(patch).filter(([, v]) => v !== undefined);',
    '    if (entries.length === 0) return this.findById(id);',
    "    const sets = entries.map(([k], i) => `${k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())} = $${i + 2}`);",
    `    const sql: Sql = \`UPDATE ${table} SET \${sets.join(', ')}, updated_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING \${COLUMNS}\`;`,
    `    const row = await db.maybeOne<${Type}Row>(sql, [id, ...entries.map(([, v]) => v)]);`,
    `    cache.delete(\`${singular}:\${id}\`);`,
    '    return row ?? undefined;',
    '  },',
    '',
    '  async remove(id: string): Promise<boolean> {',
    '    const result = await db.execute(SQL_SOFT_DELETE, [id]);',
    `    cache.delete(\`${singular}:\${id}\`);`,
    '    return result.rowCount === 1;',
    '  },',
  );
  if (entity.money) {
    L.push(
      '',
      '  /** Totals for the account summary card. Returns zeros for an account without rows. */',
      '  async computeTotals(ownerId: string): Promise<{ count: number; total: number; currency: string }> {',
      '    const aggregate = await db.maybeOne<{ count: number; total: number; currency: string }>(SQL_TOTALS, [ownerId]);',
      '    return {',
    );
    if (bugs.totals === entity) {
      L.markNext('totals', '      total: roundMoney(aggregate.total),', 'total', 0);
      // V8 points at the property after the dot
      const m = L.marks.get('totals')!;
      m.col = '      total: roundMoney(aggregate.total),'.indexOf('aggregate.') + 'aggregate.'.length + 1;
      L.push('      count: aggregate.count,', "      currency: aggregate.currency ?? 'EUR',");
    } else {
      L.push(
        '      total: roundMoney(aggregate?.total ?? 0),',
        '      count: aggregate?.count ?? 0,',
        "      currency: aggregate?.currency ?? 'EUR',",
      );
    }
    L.push('    };', '  },');
  }
  L.push('};', '', `export type ${Type}Service = typeof ${plural}Service;`);
  return L;
}

function routeTestFile(entity: Entity, bugs: Bugs, random: () => number): { lines: Lines; tests: { suite: string; name: string; mark?: string }[] } {
  const { singular, plural, Type, fields } = entity;
  const L = new Lines();
  const tests: { suite: string; name: string; mark?: string }[] = [];
  const body = `{ ${fields
    .filter((f) => !f[1].includes('null'))
    .map(([n, , , s]) => `${n}: ${s}`)
    .join(', ')} }`;
  L.push(
    "import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';",
    "import request from 'supertest';",
    "import { createApp } from '../../../src/server/app';",
    "import { resetDatabase, seed } from '../../helpers/db';",
    "import { tokenFor } from '../../helpers/auth';",
    ...(singular === 'user'
      ? ["import type { Request } from 'express';", "import { loadCurrentUser } from '../../../src/server/routes/users';", '', "const ADMIN_ID = '2c7d9e4a-1b3f-4d5e-8a9b-7c6d5e4f3a2b';"]
      : []),
    '',
    'const app = createApp({ logLevel: \'silent\' });',
    'let token: string;',
    '',
    'beforeAll(async () => {',
    '  await resetDatabase();',
    "  token = await tokenFor({ role: 'admin' });",
    '});',
    '',
    'afterAll(async () => {',
    '  await resetDatabase();',
    '});',
    '',
    `describe('GET /${plural}', () => {`,
    '  beforeEach(async () => {',
    `    await seed.${plural}(${int(random, 3, 12)});`,
    '  });',
    '',
    "  it('lists the first page with a cursor', async () => {",
    `    const res = await request(app).get('/${plural}?limit=2').set('Authorization', \`Bearer \${token}\`);`,
    '    expect(res.status).toBe(200);',
    '    expect(res.body.items).toHaveLength(2);',
    '    expect(res.body.nextCursor).toEqual(expect.any(String));',
    '  });',
    '',
    "  it('rejects a malformed cursor', async () => {",
    `    const res = await request(app).get('/${plural}?cursor=%%%').set('Authorization', \`Bearer \${token}\`);`,
    '    expect(res.status).toBe(400);',
    "    expect(res.body.code).toBe('invalid_cursor');",
    '  });',
    '',
    "  it('requires authentication', async () => {",
    `    const res = await request(app).get('/${plural}');`,
    '    expect(res.status).toBe(401);',
    '  });',
    '});',
    '',
  );
  tests.push(
    { suite: `GET /${plural}`, name: 'lists the first page with a cursor' },
    { suite: `GET /${plural}`, name: 'rejects a malformed cursor' },
    { suite: `GET /${plural}`, name: 'requires authentication' },
  );
  if (singular === 'user') {
    L.push(
      "describe('loadCurrentUser', () => {",
      "  it('resolves the user from a bearer token', async () => {",
      "    const req = { auth: { userId: ADMIN_ID, role: 'admin', via: 'token' }, session: {}, query: {} } as unknown as Request;",
    );
    L.markNext('meTest', '    const profile = await loadCurrentUser(req);', 'loadCurrentUser');
    L.push(
      '    expect(profile?.id).toBe(ADMIN_ID);',
      '  });',
      '});',
      '',
      "describe('GET /users/me', () => {",
      "  it('returns 401 without credentials', async () => {",
      "    const res = await request(app).get('/users/me');",
      '    expect(res.status).toBe(401);',
      '  });',
      '});',
      '',
    );
    tests.push({ suite: 'loadCurrentUser', name: 'resolves the user from a bearer token', mark: 'meTest' }, { suite: 'GET /users/me', name: 'returns 401 without credentials' });
  }
  if (bugs.totals === entity) {
    L.push(`describe('GET /${plural}/summary', () => {`, "  it('returns zero totals for a new account', async () => {", "    const fresh = await tokenFor({ role: 'member', fresh: true });");
    L.push(`    const res = await request(app).get('/${plural}/summary').set('Authorization', \`Bearer \${fresh}\`);`);
    L.markNext('totalsTest', '    expect(res.status).toBe(200);', 'toBe');
    L.push("    expect(res.body).toEqual({ count: 0, total: 0, currency: 'EUR' });", '  });', '});', '');
    tests.push({ suite: `GET /${plural}/summary`, name: 'returns zero totals for a new account', mark: 'totalsTest' });
  }
  L.push(
    `describe('GET /${plural}/:id', () => {`,
    `  it('returns the ${singular}', async () => {`,
    `    const [created] = await seed.${plural}(1);`,
    `    const res = await request(app).get(\`/${plural}/\${created.id}\`).set('Authorization', \`Bearer \${token}\`);`,
    '    expect(res.status).toBe(200);',
    '    expect(res.body.id).toBe(created.id);',
    '  });',
    '',
    `  it('returns 404 for a missing ${singular}', async () => {`,
    `    const res = await request(app).get('/${plural}/00000000-0000-4000-8000-000000000000').set('Authorization', \`Bearer \${token}\`);`,
  );
  if (bugs.notFound === entity) L.markNext('notFoundTest', '    expect(res.status).toBe(404);', 'toBe', 0);
  else L.push('    expect(res.status).toBe(404);');
  L.push("    expect(res.body.code).toBe('not_found');", '  });', '});', '');
  tests.push({ suite: `GET /${plural}/:id`, name: `returns the ${singular}` }, { suite: `GET /${plural}/:id`, name: `returns 404 for a missing ${singular}`, mark: bugs.notFound === entity ? 'notFoundTest' : undefined });
  L.push(
    `describe('POST /${plural}', () => {`,
    `  it('creates a ${singular}', async () => {`,
    `    const res = await request(app).post('/${plural}').set('Authorization', \`Bearer \${token}\`).send(${body});`,
    '    expect(res.status).toBe(201);',
    `    expect(res.headers.location).toMatch(/^\\/${plural}\\//);`,
    '  });',
    '',
    "  it('validates the body', async () => {",
    `    const res = await request(app).post('/${plural}').set('Authorization', \`Bearer \${token}\`).send({});`,
    '    expect(res.status).toBe(422);',
    `    expect(res.body.issues.map((i: { path: string[] }) => i.path[0])).toContain('${fields[0]![0]}');`,
    '  });',
    '});',
    '',
    `describe('DELETE /${plural}/:id', () => {`,
    "  it('soft-deletes and hides the row', async () => {",
    `    const [created] = await seed.${plural}(1);`,
    `    const del = await request(app).delete(\`/${plural}/\${created.id}\`).set('Authorization', \`Bearer \${token}\`);`,
    '    expect(del.status).toBe(204);',
    `    const res = await request(app).get(\`/${plural}/\${created.id}\`).set('Authorization', \`Bearer \${token}\`);`,
    '    expect(res.status).toBe(404);',
    '  });',
    '});',
  );
  tests.push({ suite: `POST /${plural}`, name: `creates a ${singular}` }, { suite: `POST /${plural}`, name: 'validates the body' }, { suite: `DELETE /${plural}/:id`, name: 'soft-deletes and hides the row' });
  return { lines: L, tests };
}

function datesFile(bugs: Bugs): Lines {
  const L = new Lines();
  L.push(
    "import { HttpError } from './http';",
    '',
    'const MS_PER_DAY = 86_400_000;',
    "const ISO_DATE = /^\\d{4}-\\d{2}-\\d{2}$/;",
    '',
    '/** Parses an ISO date or date-time; throws a 422 for anything else. */',
    'export function parseDate(input: string): Date {',
    '  const value = new Date(input);',
    '  if (Number.isNaN(value.getTime())) {',
    "    throw new HttpError(422, 'invalid_date', `Invalid date: ${JSON.stringify(input)}`);",
    '  }',
    '  return value;',
    '}',
    '',
    'export function addDays(date: Date, days: number): Date {',
    '  return new Date(date.getTime() + days * MS_PER_DAY);',
    '}',
    '',
    'export function startOfDayUtc(date: Date): Date {',
    '  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));',
    '}',
    '',
    'export function daysBetween(a: Date, b: Date): number {',
    '  return Math.round((startOfDayUtc(b).getTime() - startOfDayUtc(a).getTime()) / MS_PER_DAY);',
    '}',
    '',
    '/**',
    ' * Formats an invoice due date as `YYYY-MM-DD` in UTC.',
    ' * Accepts a date, a date-time with offset, or a Date.',
    ' */',
    'export function formatDueDate(input: string | Date): string {',
  );
  if (bugs.dates) {
    L.push("  const date = typeof input === 'string' && ISO_DATE.test(input) ? new Date(`${input}T00:00:00Z`) : new Date(input);");
    L.markNext('dates', '  return date.toISOString().slice(0, 10);', 'toISOString');
  } else {
    L.push("  const date = input instanceof Date ? input : parseDate(ISO_DATE.test(input) ? `${input}T00:00:00Z` : input);", '  return date.toISOString().slice(0, 10);');
  }
  L.push(
    '}',
    '',
    'export function isOverdue(dueDate: string, now = new Date()): boolean {',
    '  return daysBetween(parseDate(dueDate), now) > 0;',
    '}',
    '',
    "export function humanizeDuration(ms: number): string {",
    "  if (ms < 1_000) return `${ms}ms`;",
    "  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;",
    "  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m`;",
    "  return `${Math.round(ms / 3_600_000)}h`;",
    '}',
    '',
    'export function toUnixSeconds(date: Date): number {',
    '  return Math.floor(date.getTime() / 1_000);',
    '}',
  );
  return L;
}

function moneyFile(bugs: Bugs): Lines {
  const L = new Lines();
  L.push(
    'const MINOR_UNITS: Record<string, number> = { EUR: 2, USD: 2, GBP: 2, JPY: 0, CHF: 2, SEK: 2 };',
    '',
    'export function roundMoney(amount: number, currency = \'EUR\'): number {',
    '  const digits = MINOR_UNITS[currency.toUpperCase()] ?? 2;',
    '  const factor = 10 ** digits;',
    '  return Math.round((amount + Number.EPSILON) * factor) / factor;',
    '}',
    '',
    'export function toMinorUnits(amount: number, currency = \'EUR\'): number {',
    '  const digits = MINOR_UNITS[currency.toUpperCase()] ?? 2;',
    '  return Math.round(amount * 10 ** digits);',
    '}',
    '',
    'export function fromMinorUnits(minor: number, currency = \'EUR\'): number {',
    '  const digits = MINOR_UNITS[currency.toUpperCase()] ?? 2;',
    '  return minor / 10 ** digits;',
    '}',
    '',
    '/** Formats an amount for display, e.g. formatMoney(1234.5, \'EUR\', \'de-DE\') === \'1.234,50 €\'. */',
    "export function formatMoney(amount: number, currency: string, locale = 'en-US'): string {",
  );
  if (bugs.money) {
    L.markNext('money', "  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);", "'en-US'");
  } else {
    L.push("  return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount);");
  }
  L.push(
    '}',
    '',
    'export function sumMoney(amounts: number[], currency = \'EUR\'): number {',
    '  return fromMinorUnits(amounts.reduce((acc, a) => acc + toMinorUnits(a, currency), 0), currency);',
    '}',
    '',
    'export function allocate(total: number, ratios: number[], currency = \'EUR\'): number[] {',
    '  const minor = toMinorUnits(total, currency);',
    '  const sum = ratios.reduce((a, b) => a + b, 0);',
    '  const shares = ratios.map((r) => Math.floor((minor * r) / sum));',
    '  let remainder = minor - shares.reduce((a, b) => a + b, 0);',
    '  for (let i = 0; remainder > 0; i = (i + 1) % shares.length, remainder--) shares[i]! += 1;',
    '  return shares.map((s) => fromMinorUnits(s, currency));',
    '}',
  );
  return L;
}

function libTestFile(kind: 'dates' | 'money', bugs: Bugs): { lines: Lines; tests: { suite: string; name: string; mark?: string }[] } {
  const L = new Lines();
  const tests: { suite: string; name: string; mark?: string }[] = [];
  if (kind === 'dates') {
    L.push(
      "import { describe, it, expect } from 'vitest';",
      "import { addDays, daysBetween, formatDueDate, humanizeDuration, isOverdue } from '../../src/lib/dates';",
      '',
      "describe('formatDueDate', () => {",
      "  it('formats a plain date', () => {",
      "    expect(formatDueDate('2024-07-31')).toBe('2024-07-31');",
      '  });',
      '',
      "  it('accepts a date-time with an offset', () => {",
    );
    if (bugs.dates) L.markNext('datesTest', "    expect(formatDueDate('2024-03-01T23:30:00+0530')).toBe('2024-03-01');", 'formatDueDate');
    else L.push("    expect(formatDueDate('2024-03-01T23:30:00+05:30')).toBe('2024-03-01');");
    L.push(
      '  });',
      '',
      "  it('accepts a Date', () => {",
      "    expect(formatDueDate(new Date(Date.UTC(2024, 0, 2)))).toBe('2024-01-02');",
      '  });',
      '});',
      '',
      "describe('date helpers', () => {",
      "  it('adds days across a DST change', () => {",
      "    expect(addDays(new Date('2024-03-30T12:00:00Z'), 2).toISOString()).toBe('2024-04-01T12:00:00.000Z');",
      '  });',
      '',
      "  it('counts days between dates', () => {",
      "    expect(daysBetween(new Date('2024-01-01'), new Date('2024-03-01'))).toBe(60);",
      '  });',
      '',
      "  it('detects overdue invoices', () => {",
      "    expect(isOverdue('2024-01-01', new Date('2024-01-02'))).toBe(true);",
      '  });',
      '',
      "  it('humanizes durations', () => {",
      "    expect(humanizeDuration(1_500)).toBe('1.5s');",
      '  });',
      '});',
    );
    tests.push(
      { suite: 'formatDueDate', name: 'formats a plain date' },
      { suite: 'formatDueDate', name: 'accepts a date-time with an offset', mark: bugs.dates ? 'datesTest' : undefined },
      { suite: 'formatDueDate', name: 'accepts a Date' },
      { suite: 'date helpers', name: 'adds days across a DST change' },
      { suite: 'date helpers', name: 'counts days between dates' },
      { suite: 'date helpers', name: 'detects overdue invoices' },
      { suite: 'date helpers', name: 'humanizes durations' },
    );
  } else {
    L.push(
      "import { describe, it, expect } from 'vitest';",
      "import { allocate, formatMoney, roundMoney, sumMoney } from '../../src/lib/money';",
      '',
      "describe('formatMoney', () => {",
      "  it('formats US dollars', () => {",
      "    expect(formatMoney(1234.5, 'USD')).toBe('$1,234.50');",
      '  });',
      '',
      "  it('uses the requested locale', () => {",
    );
    if (bugs.money) L.markNext('moneyTest', "    expect(formatMoney(1234.5, 'EUR', 'de-DE')).toBe('1.234,50\u00a0€');", 'toBe');
    else L.push("    expect(formatMoney(1234.5, 'EUR', 'de-DE')).toBe('1.234,50\u00a0€');");
    L.push(
      '  });',
      '});',
      '',
      "describe('money arithmetic', () => {",
      "  it('rounds half away from zero', () => {",
      '    expect(roundMoney(1.005)).toBe(1.01);',
      '  });',
      '',
      "  it('sums without float drift', () => {",
      '    expect(sumMoney([0.1, 0.2])).toBe(0.3);',
      '  });',
      '',
      "  it('allocates remainders to the first shares', () => {",
      '    expect(allocate(100, [1, 1, 1])).toEqual([33.34, 33.33, 33.33]);',
      '  });',
      '});',
    );
    tests.push(
      { suite: 'formatMoney', name: 'formats US dollars' },
      { suite: 'formatMoney', name: 'uses the requested locale', mark: bugs.money ? 'moneyTest' : undefined },
      { suite: 'money arithmetic', name: 'rounds half away from zero' },
      { suite: 'money arithmetic', name: 'sums without float drift' },
      { suite: 'money arithmetic', name: 'allocates remainders to the first shares' },
    );
  }
  return { lines: L, tests };
}

function staticFiles(name: string, version: string, entities: Entity[], random: () => number): Record<string, string> {
  const files: Record<string, string> = {};
  files['package.json'] = `${JSON.stringify(
    {
      name,
      version,
      private: true,
      type: 'module',
      scripts: {
        dev: 'tsx watch src/index.ts',
        build: 'tsc -p tsconfig.json',
        start: 'node dist/index.js',
        test: 'vitest run',
        lint: 'eslint . --max-warnings 0',
        typecheck: 'tsc --noEmit',
        'db:migrate': 'tsx src/server/db/migrate.ts',
      },
      dependencies: { express: '^4.19.2', pg: '^8.12.0', pino: '^9.3.2', zod: '^3.23.8', 'lru-cache': '^10.4.3' },
      devDependencies: {
        '@types/express': '^4.17.21',
        '@types/node': '^20.14.10',
        '@types/supertest': '^6.0.2',
        eslint: '^9.7.0',
        supertest: '^7.0.0',
        tsx: '^4.16.2',
        typescript: '^5.5.3',
        vitest: '^1.6.0',
      },
    },
    null,
    2,
  )}\n`;
  files['tsconfig.json'] = `${JSON.stringify(
    {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        outDir: 'dist',
        rootDir: '.',
        esModuleInterop: true,
        skipLibCheck: true,
        types: ['node'],
      },
      include: ['src', 'test'],
    },
    null,
    2,
  )}\n`;
  files['vitest.config.ts'] = [
    "import { defineConfig } from 'vitest/config';",
    '',
    'export default defineConfig({',
    '  test: {',
    "    environment: 'node',",
    "    setupFiles: ['test/helpers/setup.ts'],",
    '    testTimeout: 5_000,',
    '    pool: \'forks\',',
    "    coverage: { provider: 'v8', include: ['src/**'] },",
    '  },',
    '});',
    '',
  ].join('\n');
  files['README.md'] = [
    `# ${name}`,
    '',
    `The HTTP API behind the dashboard: ${entities.map((e) => e.plural).join(', ')}.`,
    '',
    '## Development',
    '',
    '```sh',
    'cp .env.example .env',
    'docker compose up -d postgres',
    'npm install',
    'npm run db:migrate',
    'npm run dev',
    '```',
    '',
    '## Tests',
    '',
    'Tests run against a throwaway Postgres database (`DATABASE_URL_TEST`). Every suite resets it',
    'in `beforeAll`. Route tests authenticate with bearer tokens from `test/helpers/auth.ts`;',
    'the web app still uses session cookies.',
    '',
    '```sh',
    'npm test                                  # everything',
    'npx vitest run test/server/routes/users.test.ts  # one file',
    '```',
    '',
    '## Layout',
    '',
    '- `src/server/routes/*` — Express routers, one per resource',
    '- `src/server/services/*` — data access (SQL lives here)',
    '- `src/server/middleware/*` — auth, validation, rate limiting, error mapping',
    '- `src/lib/*` — framework-free helpers (dates, money, cache, logging)',
    '',
    '## Conventions',
    '',
    '- Throw `HttpError` (or `notFound()`) from handlers; `errorHandler` maps anything else to 500.',
    '- Money is stored as numeric and rounded with `roundMoney` at the edges.',
    `- Pagination is cursor based; the default page size is ${pick(random, [20, 25, 50])}.`,
    '',
  ].join('\n');
  files['src/index.ts'] = [
    "import { createApp } from './server/app';",
    "import { config } from './lib/config';",
    "import { logger } from './lib/logger';",
    "import { db } from './server/db/client';",
    '',
    'const app = createApp({ logLevel: config.logLevel });',
    '',
    'const server = app.listen(config.port, () => {',
    "  logger.info({ port: config.port, env: config.env }, 'api listening');",
    '});',
    '',
    'async function shutdown(signal: string) {',
    "  logger.info({ signal }, 'shutting down');",
    '  server.close();',
    '  await db.end();',
    '  process.exit(0);',
    '}',
    '',
    "process.on('SIGTERM', () => void shutdown('SIGTERM'));",
    "process.on('SIGINT', () => void shutdown('SIGINT'));",
    '',
  ].join('\n');
  files['src/server/app.ts'] = [
    "import express from 'express';",
    "import session from 'express-session';",
    "import { errorHandler } from './middleware/errorHandler';",
    "import { rateLimit } from './middleware/rateLimit';",
    "import { logger, type LogLevel } from '../lib/logger';",
    "import { config } from '../lib/config';",
    ...entities.map((e) => `import ${e.plural}Router from './routes/${e.plural}';`),
    '',
    'export interface AppOptions {',
    '  logLevel?: LogLevel;',
    '}',
    '',
    'export function createApp(options: AppOptions = {}) {',
    '  const app = express();',
    "  app.disable('x-powered-by');",
    "  app.set('trust proxy', 1);",
    "  app.use(express.json({ limit: '1mb' }));",
    '  app.use(',
    '    session({',
    '      secret: config.sessionSecret,',
    '      resave: false,',
    '      saveUninitialized: false,',
    "      cookie: { httpOnly: true, sameSite: 'lax', secure: config.env === 'production' },",
    '    }),',
    '  );',
    '  app.use(rateLimit({ windowMs: 60_000, max: config.rateLimitPerMinute }));',
    '',
    "  app.get('/healthz', (_req, res) => res.json({ ok: true }));",
    ...entities.map((e) => `  app.use('/${e.plural}', ${e.plural}Router);`),
    '',
    '  app.use(errorHandler);',
    "  if (options.logLevel) logger.level = options.logLevel;",
    '  return app;',
    '}',
    '',
  ].join('\n');
  files['src/server/db/client.ts'] = [
    "import pg from 'pg';",
    "import { config } from '../../lib/config';",
    "import { logger } from '../../lib/logger';",
    '',
    'export type Sql = string;',
    '',
    'const pool = new pg.Pool({',
    "  connectionString: config.env === 'test' ? config.databaseUrlTest : config.databaseUrl,",
    '  max: config.dbPoolSize,',
    '  idleTimeoutMillis: 30_000,',
    '});',
    '',
    "pool.on('error', (err) => logger.error({ err }, 'idle postgres client errored'));",
    '',
    'async function query<T>(sql: Sql, params: unknown[] = []) {',
    '  const started = performance.now();',
    '  try {',
    '    return await pool.query<T & pg.QueryResultRow>(sql, params);',
    '  } finally {',
    '    const ms = Math.round(performance.now() - started);',
    "    if (ms > 200) logger.warn({ ms, sql: sql.slice(0, 120) }, 'slow query');",
    '  }',
    '}',
    '',
    'export const db = {',
    '  async one<T>(sql: Sql, params?: unknown[]): Promise<T> {',
    '    const { rows } = await query<T>(sql, params);',
    "    if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`);",
    '    return rows[0] as T;',
    '  },',
    '  async maybeOne<T>(sql: Sql, params?: unknown[]): Promise<T | null> {',
    '    const { rows } = await query<T>(sql, params);',
    '    return (rows[0] as T | undefined) ?? null;',
    '  },',
    '  async many<T>(sql: Sql, params?: unknown[]): Promise<T[]> {',
    '    const { rows } = await query<T>(sql, params);',
    '    return rows as T[];',
    '  },',
    '  async execute(sql: Sql, params?: unknown[]) {',
    '    const { rowCount } = await query(sql, params);',
    '    return { rowCount: rowCount ?? 0 };',
    '  },',
    '  end: () => pool.end(),',
    '};',
    '',
  ].join('\n');
  files['src/server/db/schema.sql'] = [
    '-- Applied by src/server/db/migrate.ts; keep in sync with the services.',
    'CREATE EXTENSION IF NOT EXISTS pgcrypto;',
    '',
    ...entities.flatMap((e) => [
      `CREATE TABLE IF NOT EXISTS ${e.plural} (`,
      '  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),',
      ...e.fields.map(([n, t]) => {
        const sqlType = t.includes('number') ? 'numeric' : t.includes('boolean') ? 'boolean' : n.endsWith('At') ? 'timestamptz' : t.includes('Record') ? 'jsonb' : n === 'dueDate' ? 'date' : n.endsWith('Id') ? 'uuid' : 'text';
        return `  ${snake(n)} ${sqlType}${t.includes('null') ? '' : ' NOT NULL'},`;
      }),
      '  created_at timestamptz NOT NULL DEFAULT now(),',
      '  updated_at timestamptz NOT NULL DEFAULT now(),',
      '  deleted_at timestamptz',
      ');',
      `CREATE INDEX IF NOT EXISTS ${e.plural}_created_at_idx ON ${e.plural} (created_at DESC, id DESC) WHERE deleted_at IS NULL;`,
      '',
    ]),
  ].join('\n');
  files['src/server/middleware/auth.ts'] = [
    "import type { Request, Response, NextFunction } from 'express';",
    "import { createHmac, timingSafeEqual } from 'node:crypto';",
    "import { HttpError } from '../../lib/http';",
    "import { config } from '../../lib/config';",
    '',
    "declare module 'express-session' {",
    '  interface SessionData {',
    "    user?: { id: string; role: 'admin' | 'member' | 'viewer' };",
    '  }',
    '}',
    '',
    "declare module 'express-serve-static-core' {",
    '  interface Request {',
    "    auth?: { userId: string; role: 'admin' | 'member' | 'viewer'; via: 'session' | 'token' };",
    '  }',
    '}',
    '',
    'function verifyToken(token: string): { sub: string; role: string; exp: number } | undefined {',
    "  const [payload, signature] = token.split('.');",
    '  if (!payload || !signature) return undefined;',
    "  const expected = createHmac('sha256', config.tokenSecret).update(payload).digest('base64url');",
    '  const a = Buffer.from(signature);',
    '  const b = Buffer.from(expected);',
    '  if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;',
    "  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));",
    '  if (typeof claims.exp !== \'number\' || claims.exp * 1000 < Date.now()) return undefined;',
    '  return claims;',
    '}',
    '',
    '/**',
    ' * Accepts a session cookie (web app) or a bearer token (API clients, tests).',
    ' * Sets `req.auth` in both cases; only the cookie path sets `req.session.user`.',
    ' */',
    'export function requireAuth(req: Request, _res: Response, next: NextFunction) {',
    '  const header = req.headers.authorization;',
    "  if (header?.startsWith('Bearer ')) {",
    '    const claims = verifyToken(header.slice(7));',
    "    if (!claims) return next(new HttpError(401, 'invalid_token', 'The bearer token is invalid or expired.'));",
    "    req.auth = { userId: claims.sub, role: claims.role as 'admin', via: 'token' };",
    '    return next();',
    '  }',
    '  const user = req.session?.user;',
    "  if (!user) return next(new HttpError(401, 'unauthenticated', 'Sign in first.'));",
    "  req.auth = { userId: user.id, role: user.role, via: 'session' };",
    '  next();',
    '}',
    '',
    "export function requireRole(role: 'admin' | 'member') {",
    '  return (req: Request, _res: Response, next: NextFunction) => {',
    "    if (req.auth?.role !== role && req.auth?.role !== 'admin') {",
    "      return next(new HttpError(403, 'forbidden', `Requires the ${role} role.`));",
    '    }',
    '    next();',
    '  };',
    '}',
    '',
  ].join('\n');
  files['src/server/middleware/errorHandler.ts'] = [
    "import type { ErrorRequestHandler } from 'express';",
    "import { ZodError } from 'zod';",
    "import { HttpError } from '../../lib/http';",
    "import { logger } from '../../lib/logger';",
    '',
    'export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {',
    '  if (err instanceof HttpError) {',
    '    return res.status(err.status).json({ code: err.code, message: err.message });',
    '  }',
    '  if (err instanceof ZodError) {',
    "    return res.status(422).json({ code: 'validation_failed', issues: err.issues });",
    '  }',
    "  logger.error({ err, method: req.method, url: req.originalUrl }, 'unhandled error');",
    "  res.status(500).json({ code: 'internal', message: 'Something went wrong.' });",
    '};',
    '',
  ].join('\n');
  files['src/server/middleware/rateLimit.ts'] = [
    "import type { Request, Response, NextFunction } from 'express';",
    '',
    'interface Bucket {',
    '  count: number;',
    '  resetAt: number;',
    '}',
    '',
    'export interface RateLimitOptions {',
    '  windowMs: number;',
    '  max: number;',
    '  key?: (req: Request) => string;',
    '}',
    '',
    'export function rateLimit({ windowMs, max, key = (req) => req.ip ?? \'unknown\' }: RateLimitOptions) {',
    '  const buckets = new Map<string, Bucket>();',
    '  const sweep = setInterval(() => {',
    '    const now = Date.now();',
    '    for (const [k, b] of buckets) if (b.resetAt <= now) buckets.delete(k);',
    '  }, windowMs);',
    '  sweep.unref();',
    '',
    '  return (req: Request, res: Response, next: NextFunction) => {',
    '    const now = Date.now();',
    '    const k = key(req);',
    '    let bucket = buckets.get(k);',
    '    if (!bucket || bucket.resetAt <= now) {',
    '      bucket = { count: 0, resetAt: now + windowMs };',
    '      buckets.set(k, bucket);',
    '    }',
    '    bucket.count += 1;',
    "    res.setHeader('X-RateLimit-Limit', String(max));",
    "    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, max - bucket.count)));",
    '    if (bucket.count > max) {',
    "      res.setHeader('Retry-After', String(Math.ceil((bucket.resetAt - now) / 1000)));",
    "      return res.status(429).json({ code: 'rate_limited', message: 'Too many requests.' });",
    '    }',
    '    next();',
    '  };',
    '}',
    '',
  ].join('\n');
  files['src/server/middleware/validate.ts'] = [
    "import type { Request, Response, NextFunction } from 'express';",
    "import type { ZodTypeAny } from 'zod';",
    '',
    'export function validateBody(schema: ZodTypeAny) {',
    '  return (req: Request, _res: Response, next: NextFunction) => {',
    '    const result = schema.safeParse(req.body);',
    '    if (!result.success) return next(result.error);',
    '    req.body = result.data;',
    '    next();',
    '  };',
    '}',
    '',
    'export function validateQuery(schema: ZodTypeAny) {',
    '  return (req: Request, _res: Response, next: NextFunction) => {',
    '    const result = schema.safeParse(req.query);',
    '    if (!result.success) return next(result.error);',
    '    Object.assign(req.query, result.data);',
    '    next();',
    '  };',
    '}',
    '',
  ].join('\n');
  files['src/lib/http.ts'] = [
    'export class HttpError extends Error {',
    '  constructor(',
    '    readonly status: number,',
    '    readonly code: string,',
    '    message: string,',
    '  ) {',
    '    super(message);',
    "    this.name = 'HttpError';",
    '  }',
    '}',
    '',
    'export function notFound(resource: string, id: string): HttpError {',
    "  return new HttpError(404, 'not_found', `${resource} ${id} was not found.`);",
    '}',
    '',
    'export function badRequest(code: string, message: string): HttpError {',
    '  return new HttpError(400, code, message);',
    '}',
    '',
  ].join('\n');
  files['src/lib/logger.ts'] = [
    "import pino from 'pino';",
    "import { config } from './config';",
    '',
    "export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';",
    '',
    'export const logger = pino({',
    '  level: config.logLevel,',
    "  redact: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'],",
    "  base: { service: '" + name + "' },",
    '  timestamp: pino.stdTimeFunctions.isoTime,',
    '});',
    '',
  ].join('\n');
  files['src/lib/config.ts'] = [
    "import { z } from 'zod';",
    '',
    'const schema = z.object({',
    "  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),",
    '  PORT: z.coerce.number().default(3000),',
    '  DATABASE_URL: z.string().url(),',
    '  DATABASE_URL_TEST: z.string().url().optional(),',
    '  DB_POOL_SIZE: z.coerce.number().int().min(1).default(10),',
    '  SESSION_SECRET: z.string().min(32),',
    '  TOKEN_SECRET: z.string().min(32),',
    "  LOG_LEVEL: z.enum(['silent', 'error', 'warn', 'info', 'debug']).default('info'),",
    '  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().default(600),',
    '});',
    '',
    'const env = schema.parse(process.env);',
    '',
    'export const config = {',
    '  env: env.NODE_ENV,',
    '  port: env.PORT,',
    '  databaseUrl: env.DATABASE_URL,',
    '  databaseUrlTest: env.DATABASE_URL_TEST ?? env.DATABASE_URL,',
    '  dbPoolSize: env.DB_POOL_SIZE,',
    '  sessionSecret: env.SESSION_SECRET,',
    '  tokenSecret: env.TOKEN_SECRET,',
    '  logLevel: env.LOG_LEVEL,',
    '  rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,',
    '} as const;',
    '',
  ].join('\n');
  files['src/lib/cache.ts'] = [
    "import { LRUCache } from 'lru-cache';",
    '',
    'const store = new LRUCache<string, object>({ max: 5_000, ttl: 60_000 });',
    '',
    'export const cache = {',
    '  get<T>(key: string): T | undefined {',
    '    return store.get(key) as T | undefined;',
    '  },',
    '  set(key: string, value: object, options: { ttlMs?: number } = {}) {',
    '    store.set(key, value, { ttl: options.ttlMs });',
    '  },',
    '  delete(key: string) {',
    '    store.delete(key);',
    '  },',
    '  clear() {',
    '    store.clear();',
    '  },',
    '};',
    '',
  ].join('\n');
  files['test/helpers/auth.ts'] = [
    "import { createHmac, randomUUID } from 'node:crypto';",
    "import { config } from '../../src/lib/config';",
    '',
    "export async function tokenFor({ role, fresh = false }: { role: 'admin' | 'member'; fresh?: boolean }) {",
    "  const sub = fresh ? randomUUID() : '2c7d9e4a-1b3f-4d5e-8a9b-7c6d5e4f3a2b';",
    "  const payload = Buffer.from(JSON.stringify({ sub, role, exp: Math.floor(Date.now() / 1000) + 3600 })).toString('base64url');",
    "  const signature = createHmac('sha256', config.tokenSecret).update(payload).digest('base64url');",
    '  return `${payload}.${signature}`;',
    '}',
    '',
  ].join('\n');
  return files;
}

// ---------------------------------------------------------------------------------------------
// the project

const projects = new Map<number, Project>();

export function getProject(seed = 1): Project {
  const hit = projects.get(seed);
  if (hit) return hit;
  const project = buildProject(seed);
  projects.set(seed, project);
  return project;
}

function buildProject(seed: number): Project {
  const random = rng('project', seed);
  const name = pick(random, ['acme-api', 'ledgerline-api', 'orbit-server', 'harbor-api', 'fieldnote-api', 'tally-backend']);
  const version = `1.${int(random, 2, 9)}.${int(random, 0, 12)}`;
  const users = { ...ENTITY_POOL[0]!, Type: 'User' };
  const moneyPool = ENTITY_POOL.filter((e) => e.money);
  const money = pick(random, moneyPool);
  const rest = shuffle(
    random,
    ENTITY_POOL.filter((e) => e !== ENTITY_POOL[0] && e !== money),
  ).slice(0, 3);
  const entities: Entity[] = [users, { ...money, Type: cap(money.singular) }, ...rest.map((e) => ({ ...e, Type: cap(e.singular) }))];

  // the signature bug always; two of the others
  const others = shuffle(random, ['totals', 'dates', 'money', 'notFound'] as const).slice(0, 2);
  const bugs: Bugs = {
    totals: others.includes('totals') ? entities[1] : undefined,
    dates: others.includes('dates'),
    money: others.includes('money'),
    notFound: others.includes('notFound') ? entities[2] : undefined,
  };

  const files = new Map<string, string>();
  const marks = new Map<string, { file: string; line: number; col: number }>();
  const testCounts = new Map<string, number>();
  const testFiles: string[] = [];
  const collect = (path: string, lines: Lines) => {
    files.set(path, lines.text());
    for (const [k, v] of lines.marks) marks.set(k, { file: path, ...v });
  };

  for (const [path, text] of Object.entries(staticFiles(name, version, entities, random))) files.set(path, text);
  for (const entity of entities) {
    collect(`src/server/routes/${entity.plural}.ts`, routeFile(entity, bugs, rng('route', seed, entity.plural)));
    collect(`src/server/services/${entity.singular}Service.ts`, serviceFile(entity, bugs));
    const t = routeTestFile(entity, bugs, rng('test', seed, entity.plural));
    const testPath = `test/server/routes/${entity.plural}.test.ts`;
    collect(testPath, t.lines);
    testFiles.push(testPath);
    testCounts.set(testPath, t.tests.length);
  }
  collect('src/lib/dates.ts', datesFile(bugs));
  collect('src/lib/money.ts', moneyFile(bugs));
  for (const kind of ['dates', 'money'] as const) {
    const t = libTestFile(kind, bugs);
    const testPath = `test/lib/${kind}.test.ts`;
    collect(testPath, t.lines);
    testFiles.push(testPath);
    testCounts.set(testPath, t.tests.length);
  }

  const at = (key: string) => marks.get(key) ?? { file: 'src/index.ts', line: 1, col: 1 };
  const failures: Failure[] = [];
  {
    const me = at('me');
    const test = at('meTest');
    failures.push({
      id: 'me',
      testFile: 'test/server/routes/users.test.ts',
      suite: 'loadCurrentUser',
      test: 'resolves the user from a bearer token',
      error: "TypeError: Cannot read properties of undefined (reading 'id')",
      frames: [
        { fn: 'loadCurrentUser', file: me.file, line: me.line, col: me.col },
        { file: test.file, line: test.line, col: test.col },
      ],
      sourceFile: 'src/server/routes/users.ts',
      location: me,
      symbol: 'req.session.user',
      hint: 'where `id` is read off the session user',
      fix: 'read the user id from `req.auth?.userId` (set for bearer tokens) instead of `req.session.user.id` in `loadCurrentUser`',
      details: [],
    });
  }
  if (bugs.totals) {
    const e = bugs.totals;
    const loc = at('totals');
    const handler = at('totalsHandler');
    const test = at('totalsTest');
    failures.push({
      id: 'totals',
      testFile: `test/server/routes/${e.plural}.test.ts`,
      suite: `GET /${e.plural}/summary`,
      test: 'returns zero totals for a new account',
      error: 'AssertionError: expected 500 to be 200 // Object.is equality',
      frames: [{ file: test.file, line: test.line, col: test.col }],
      sourceFile: `src/server/services/${e.singular}Service.ts`,
      location: loc,
      symbol: 'computeTotals',
      hint: '`computeTotals` dereferences the aggregate row, which is null for an account without rows',
      fix: `return zeros from \`computeTotals\` when \`db.maybeOne\` yields null (\`aggregate?.total ?? 0\`) in \`src/server/services/${e.singular}Service.ts\``,
      details: [
        '',
        '- Expected',
        '+ Received',
        '',
        '- 200',
        '+ 500',
        '',
        `stderr | ${test.file} > GET /${e.plural}/summary > returns zero totals for a new account`,
        `{"level":50,"time":"2024-06-11T09:14:04.087Z","service":"${name}","err":{"type":"TypeError","message":"Cannot read properties of null (reading 'total')","stack":"TypeError: Cannot read properties of null (reading 'total')\\n    at Object.computeTotals (${loc.file}:${loc.line}:${loc.col})\\n    at ${handler.file}:${handler.line}:${handler.col}"},"method":"GET","url":"/${e.plural}/summary","msg":"unhandled error"}`,
      ],
    });
  }
  if (bugs.dates) {
    const loc = at('dates');
    const test = at('datesTest');
    failures.push({
      id: 'dates',
      testFile: 'test/lib/dates.test.ts',
      suite: 'formatDueDate',
      test: 'accepts a date-time with an offset',
      error: 'RangeError: Invalid time value',
      frames: [
        { fn: 'Date.toISOString', file: '<anonymous>', line: 0, col: 0 },
        { fn: 'formatDueDate', file: loc.file, line: loc.line, col: loc.col },
        { file: test.file, line: test.line, col: test.col },
      ],
      sourceFile: 'src/lib/dates.ts',
      location: loc,
      symbol: 'formatDueDate',
      hint: '`formatDueDate` calls `toISOString()` on an unvalidated Date',
      fix: 'parse with `parseDate()` in `formatDueDate` (`src/lib/dates.ts`) so offsets without a colon (`+0530`) are rejected with a 422 or normalised first',
      details: [],
    });
  }
  if (bugs.money) {
    const test = at('moneyTest');
    const loc = at('money');
    failures.push({
      id: 'money',
      testFile: 'test/lib/money.test.ts',
      suite: 'formatMoney',
      test: 'uses the requested locale',
      error: "AssertionError: expected '€1,234.50' to be '1.234,50 €' // Object.is equality",
      frames: [{ file: test.file, line: test.line, col: test.col }],
      sourceFile: 'src/lib/money.ts',
      location: loc,
      symbol: 'formatMoney',
      hint: `\`formatMoney\` hardcodes 'en-US' at line ${loc.line}`,
      fix: "pass `locale` to `Intl.NumberFormat` in `formatMoney` (`src/lib/money.ts`) instead of the hardcoded 'en-US'",
      details: ['', '- Expected', '+ Received', '', '- 1.234,50 €', '+ €1,234.50'],
    });
  }
  if (bugs.notFound) {
    const e = bugs.notFound;
    const test = at('notFoundTest');
    const loc = at('notFound');
    failures.push({
      id: 'notFound',
      testFile: `test/server/routes/${e.plural}.test.ts`,
      suite: `GET /${e.plural}/:id`,
      test: `returns 404 for a missing ${e.singular}`,
      error: 'AssertionError: expected 500 to be 404 // Object.is equality',
      frames: [{ file: test.file, line: test.line, col: test.col }],
      sourceFile: `src/server/routes/${e.plural}.ts`,
      location: loc,
      symbol: `${e.Type} not found`,
      hint: `the handler throws a plain \`Error('${e.Type} not found')\`, which \`errorHandler\` maps to 500`,
      fix: `throw \`notFound('${e.Type}', req.params.id)\` instead of \`new Error('${e.Type} not found')\` in \`src/server/routes/${e.plural}.ts:${loc.line}\``,
      details: [
        '',
        '- Expected',
        '+ Received',
        '',
        '- 404',
        '+ 500',
        '',
        `stderr | ${test.file} > GET /${e.plural}/:id > returns 404 for a missing ${e.singular}`,
        `{"level":50,"time":"2024-06-11T09:14:04.311Z","service":"${name}","err":{"type":"Error","message":"${e.Type} not found","stack":"Error: ${e.Type} not found\\n    at ${loc.file}:${loc.line}:${loc.col}"},"method":"GET","url":"/${e.plural}/00000000-0000-4000-8000-000000000000","msg":"unhandled error"}`,
      ],
    });
  }

  const paths = [...files.keys()].sort();
  const sourcePaths = paths.filter((p) => p.startsWith('src/') && p.endsWith('.ts'));
  const commitRandom = rng('commits', seed);
  const subjects = [
    'Add cursor pagination to list endpoints',
    'Move /me out of the account router',
    'Cache user profiles for 30s',
    'Bearer token auth for API clients',
    'Soft-delete rows instead of DELETE',
    'CSV export for admins',
    'Round money at the edges',
    'Bump pg to 8.12',
    'Rate limit per IP',
    'Structured logging with pino',
    'Validate query strings with zod',
    'Initial commit',
  ];
  const commits = subjects.map((s) => `${hex(commitRandom, 7)} ${s}`);
  const modified = [failures[0]!.sourceFile, ...(random() < 0.5 ? ['src/server/middleware/auth.ts'] : []), 'README.md'];
  const searchTerms = [
    'requireAuth',
    'req.session.user',
    'req.auth',
    'notFound(',
    'HttpError',
    'toDto',
    'parsePagination',
    'cache.set',
    'logger',
    'db.maybeOne',
    'computeTotals',
    'formatDueDate',
    'formatMoney',
    'validateBody',
    'deleted_at',
    'tokenFor',
    'errorHandler',
    'roundMoney',
  ];
  const partial = { files, paths } as Project;
  const usefulTerms = searchTerms.filter((t) => search(partial, t).split('\n').length >= 8);
  return {
    seed,
    name,
    version,
    files,
    paths,
    sourcePaths,
    testFiles,
    failures,
    testCounts,
    branch: pick(random, ['fix/me-endpoint', 'feat/api-tokens', 'main', 'fix/flaky-tests']),
    commits,
    modified,
    searchTerms: usefulTerms,
  };
}

// ---------------------------------------------------------------------------------------------
// tools

function normalizePath(path: string): string {
  return path.trim().replace(/^\.\//, '').replace(/^\/+/, '').replace(/\/+$/, '');
}

function readFile(project: Project, path: string): string {
  const p = normalizePath(path);
  const text = project.files.get(p);
  if (text !== undefined) return text;
  if (p === '' || p === '.' || project.paths.some((f) => f.startsWith(`${p}/`))) {
    return `Error: EISDIR: illegal operation on a directory, read '${p || '.'}'`;
  }
  return `Error: ENOENT: no such file or directory, open '${p}'`;
}

function search(project: Project, query: string): string {
  const q = query.trim();
  if (q.length === 0) return 'Error: empty query';
  const needle = q.toLowerCase();
  const matches: string[] = [];
  const filesHit = new Set<string>();
  let total = 0;
  for (const path of project.paths) {
    const lines = project.files.get(path)!.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (!line.toLowerCase().includes(needle)) continue;
      total++;
      filesHit.add(path);
      if (matches.length < 80) {
        const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
        matches.push(`${path}:${i + 1}:${shown}`);
      }
    }
  }
  if (total === 0) return `No matches found for "${q}".`;
  const head = `Found ${total} match${total === 1 ? '' : 'es'} for "${q}" in ${filesHit.size} file${filesHit.size === 1 ? '' : 's'}:`;
  const tail = total > matches.length ? [`… ${total - matches.length} more matches not shown; narrow the query.`] : [];
  return [head, '', ...matches, ...tail].join('\n');
}

function codeFrame(project: Project, file: string, line: number, col: number): string[] {
  const text = project.files.get(file);
  if (!text) return [];
  const lines = text.split('\n');
  const out: string[] = [];
  for (let n = Math.max(1, line - 2); n <= Math.min(lines.length, line + 2); n++) {
    out.push(`    ${String(n).padStart(3)}| ${lines[n - 1]}`);
    if (n === line) out.push(`       | ${' '.repeat(Math.max(0, col - 1))}^`);
  }
  return out;
}

function vitestRun(project: Project, only?: string[]): { text: string; code: number } {
  const random = rng('vitest', project.seed, (only ?? []).join(','));
  const files = only ?? project.testFiles;
  const failing = project.failures.filter((f) => files.includes(f.testFile));
  const out: string[] = ['', ` RUN  v1.6.0 /home/dev/${project.name}`, ''];
  let passedTests = 0;
  let failedTests = 0;
  let failedFiles = 0;
  for (const file of files) {
    const count = project.testCounts.get(file) ?? 0;
    const fails = failing.filter((f) => f.testFile === file);
    const ms = int(random, 8, 420);
    failedTests += fails.length;
    passedTests += count - fails.length;
    if (fails.length === 0) {
      out.push(` ✓ ${file} (${count} tests) ${ms}ms`);
    } else {
      failedFiles++;
      out.push(` ❯ ${file} (${count} tests | ${fails.length} failed) ${ms}ms`);
      for (const f of fails) out.push(`   × ${f.suite} > ${f.test}`);
    }
  }
  if (failing.length > 0) {
    out.push('', `⎯⎯⎯⎯⎯⎯⎯ Failed Tests ${failing.length} ⎯⎯⎯⎯⎯⎯⎯`, '');
    failing.forEach((f, i) => {
      out.push(` FAIL  ${f.testFile} > ${f.suite} > ${f.test}`);
      const isAssertionOnly = f.error.startsWith('AssertionError');
      out.push(isAssertionOnly ? f.error : f.error);
      for (const frame of f.frames) {
        if (frame.file === '<anonymous>') {
          out.push(` ❯ ${frame.fn} <anonymous>`);
          continue;
        }
        out.push(` ❯ ${frame.fn ? `${frame.fn} ` : ''}${frame.file}:${frame.line}:${frame.col}`);
        if (frame === f.frames.find((x) => x.file !== '<anonymous>')) out.push(...codeFrame(project, frame.file, frame.line, frame.col));
      }
      if (f.details.length > 0) out.push(...f.details);
      out.push('', `⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[${i + 1}/${failing.length}]⎯`, '');
    });
  }
  const totalFiles = files.length;
  out.push(
    '',
    ` Test Files  ${failedFiles > 0 ? `${failedFiles} failed | ` : ''}${totalFiles - failedFiles} passed (${totalFiles})`,
    `      Tests  ${failedTests > 0 ? `${failedTests} failed | ` : ''}${passedTests} passed (${passedTests + failedTests})`,
    `   Start at  09:14:0${int(random, 0, 9)}`,
    `   Duration  ${(int(random, 900, 4200) / 1000).toFixed(2)}s (transform ${int(random, 200, 700)}ms, setup ${int(random, 10, 90)}ms, collect ${int(random, 500, 1900)}ms, tests ${int(random, 300, 1500)}ms, environment 0ms, prepare ${int(random, 300, 1200)}ms)`,
    '',
  );
  return { text: out.join('\n'), code: failing.length > 0 ? 1 : 0 };
}

function tsc(project: Project): { text: string; code: number } {
  const me = project.failures[0]!.location;
  const lines = [`${me.file}(${me.line},${me.col - 3}): error TS18048: 'me' is possibly 'undefined'.`, ''];
  const totals = project.failures.find((f) => f.id === 'totals');
  if (totals) {
    const t = totals.location;
    lines.push(`${t.file}(${t.line},${t.col - 10}): error TS18047: 'aggregate' is possibly 'null'.`, '');
  }
  const errors = lines.filter((l) => l.includes('error TS')).length;
  const fileCount = new Set(lines.filter((l) => l.includes('error TS')).map((l) => l.split('(')[0])).size;
  lines.push(`Found ${errors} error${errors === 1 ? '' : 's'} in ${fileCount} file${fileCount === 1 ? '' : 's'}.`, '');
  return { text: lines.join('\n'), code: 2 };
}

function runCommand(project: Project, command: string): string {
  const cmd = command.trim().replace(/\s+/g, ' ');
  const result = (text: string, code: number) => `$ ${cmd}\n${text.replace(/\n+$/, '')}\n\n[exit code ${code}]`;
  if (cmd === '') return result('bash: syntax error: empty command', 2);

  const testMatch = /^(?:npm (?:run )?test|npx vitest(?: run)?|vitest(?: run)?|yarn test|pnpm test)(?:\s+(?:--\s+)?(.*))?$/.exec(cmd);
  if (testMatch) {
    const args = (testMatch[1] ?? '').split(' ').filter((a) => a && !a.startsWith('-'));
    const only = args.length > 0 ? project.testFiles.filter((f) => args.some((a) => f.includes(normalizePath(a)))) : undefined;
    if (only && only.length === 0) return result(`\n RUN  v1.6.0 /home/dev/${project.name}\n\nNo test files found, exiting with code 1\n\nfilter: ${args.join(' ')}\ninclude: **/*.{test,spec}.?(c|m)[jt]s?(x)`, 1);
    const header = cmd.startsWith('npm') ? `\n> ${project.name}@${project.version} test\n> vitest run${only ? ` ${args.join(' ')}` : ''}\n` : '';
    const run = vitestRun(project, only);
    return result(header + run.text, run.code);
  }
  if (/^(?:npx tsc|tsc|npm run (?:typecheck|build))\b/.test(cmd)) {
    const run = tsc(project);
    const header = cmd.startsWith('npm') ? `\n> ${project.name}@${project.version} ${cmd.split(' ')[2]}\n> tsc --noEmit\n\n` : '';
    return result(header + run.text, run.code);
  }
  if (/^(?:npm run lint|npx eslint)\b/.test(cmd)) {
    const files = project.sourcePaths.slice(0, 3);
    const text = [
      `\n> ${project.name}@${project.version} lint\n> eslint . --max-warnings 0\n`,
      ...files.flatMap((f, i) => [`/home/dev/${project.name}/${f}`, `  ${12 + i * 7}:${5 + i}  warning  Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any`, '']),
      `✖ ${files.length} problems (0 errors, ${files.length} warnings)`,
      '',
      `ESLint found too many warnings (maximum: 0).`,
    ].join('\n');
    return result(text, 1);
  }
  if (/^git status\b/.test(cmd)) {
    return result(
      [
        `On branch ${project.branch}`,
        "Your branch is up to date with 'origin/" + project.branch + "'.",
        '',
        'Changes not staged for commit:',
        '  (use "git add <file>..." to update what will be committed)',
        '  (use "git restore <file>..." to discard changes in working directory)',
        ...project.modified.map((f) => `\tmodified:   ${f}`),
        '',
        'no changes added to commit (use "git add" and/or "git commit -a")',
      ].join('\n'),
      0,
    );
  }
  if (/^git log\b/.test(cmd)) return result(project.commits.join('\n'), 0);
  if (/^git diff\b/.test(cmd)) {
    const file = project.modified[0]!;
    return result(
      [
        `diff --git a/${file} b/${file}`,
        `index ${hex(rng('diff', project.seed), 7)}..${hex(rng('diff2', project.seed), 7)} 100644`,
        `--- a/${file}`,
        `+++ b/${file}`,
        '@@ -36,7 +36,7 @@ const PROFILE_CACHE_TTL_MS = 30_000;',
        ' async function loadCurrentUser(req: Request) {',
        '-  const me = req.auth && { id: req.auth.userId };',
        '+  const me = req.session.user;',
        '   const profileQuery = {',
        '     ownerId: me.id,',
        "     includeTeams: req.query.includeTeams === 'true',",
        'diff --git a/README.md b/README.md',
        '@@ -18,3 +18,4 @@ Tests run against a throwaway Postgres database',
        ' the web app still uses session cookies.',
        '+',
      ].join('\n'),
      0,
    );
  }
  const ls = /^ls(?:\s+-\w+)*(?:\s+(.+))?$/.exec(cmd);
  if (ls) {
    const dir = normalizePath(ls[1] ?? '');
    const prefix = dir === '' || dir === '.' ? '' : `${dir}/`;
    const entries = new Set<string>();
    for (const p of project.paths) {
      if (!p.startsWith(prefix)) continue;
      const rest = p.slice(prefix.length);
      const slash = rest.indexOf('/');
      entries.add(slash === -1 ? rest : `${rest.slice(0, slash)}/`);
    }
    if (entries.size === 0) return result(`ls: cannot access '${dir}': No such file or directory`, 2);
    return result([...entries].sort().join('\n'), 0);
  }
  const cat = /^(?:cat|head(?: -n \d+)?|less|bat)\s+(\S+)$/.exec(cmd);
  if (cat) return result(readFile(project, cat[1]!), project.files.has(normalizePath(cat[1]!)) ? 0 : 1);
  const grep = /^(?:grep|rg)(?:\s+-\w+)*\s+["']?([^"']+?)["']?(?:\s+\S+)?$/.exec(cmd);
  if (grep) return result(search(project, grep[1]!), 0);
  if (/^(?:npm|npx|node|pnpm|yarn)\b/.test(cmd)) return result(`npm ERR! Missing script: "${cmd.split(' ')[2] ?? cmd}"\n\nnpm ERR! To see a list of scripts, run:\nnpm ERR!   npm run`, 1);
  return result(`bash: ${cmd.split(' ')[0]}: command not found`, 127);
}

/** The tool logic for tests and the demo; wrap each with `tool({ inputSchema, execute })`. */
export function createProjectTools(seed = 1): ProjectTools {
  const project = getProject(seed);
  return {
    read_file: (input) => readFile(project, String(input?.path ?? '')),
    run_command: (input) => runCommand(project, String(input?.command ?? '')),
    search: (input) => search(project, String(input?.query ?? '')),
  };
}

/** Tool descriptions and JSON schemas matching `createProjectTools` (for callers without zod). */
export const projectToolDescriptions = {
  read_file: 'Read a file of the repository. Returns its full text.',
  run_command: 'Run a shell command in the repository root (tests, type checks, git). Returns stdout/stderr and the exit code.',
  search: 'Search the repository for a literal string (case-insensitive). Returns matching lines as path:line:text.',
} as const;
