import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { baselineAt, baselineFromEnv, fromGitRef, fromTarball } from '../../bench/baseline';
import type { LanguageModelMiddleware } from 'ai';
import { absentPieces, clearlyWorse, markRepeats, runContinuity, type ContinuityRun } from '../../bench/continuity';
import { type Strategy, compacting, keepingLast, noMiddleware } from '../../bench/strategies';
import { compaction } from '../../src';
import { createFixerTools, FIXER_TASK, SETTINGS_FILE } from '../support/provider-server';

// A short version of `npm run bench -- continuity`: 3 to 10 failing tests, a small cap.
const SHORT = { failing: 3, passing: 1, cap: 40 } as const;
/** The fewest steps for n failing tests, one of them a setting: `npm test`, four calls a test, one read of the settings, a last `npm test`, the answer. */
const fewest = (n: number) => 1 + 4 * n + 1 + 2;

/** A strategy of one middleware that changes the prompt and never summarizes. */
const rewriting = (name: string, transform: NonNullable<LanguageModelMiddleware['transformParams']>): Strategy => ({
  name,
  summarizes: false,
  start: async () => ({ middleware: [{ specificationVersion: 'v3', transformParams: transform }], compactions: () => undefined }),
});
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const temp: string[] = [];
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

describe('the continuity benchmark, short', () => {
  it('finishes in the fewest steps, repeating only what the shortest run repeats, with no middleware and a large window', async () => {
    const run = await runContinuity(noMiddleware, 'honest', { ...SHORT, window: 200_000 });
    expect(run).toMatchObject({
      strategy: 'no middleware',
      summarizes: false,
      finished: true,
      outcome: 'finished',
      steps: fewest(3),
      fewest: fewest(3),
      overShortest: 0,
      toolCalls: fewest(3) - 1,
      // each test's run after its fix, and the last npm test
      repeatedCalls: 4,
      fewestRepeats: 4,
      rejectedEdits: 0,
      violations: 0,
      acceptedEdits: 3,
      testsFixed: 3,
      // the rule of src/legacy/ after the second fix
      turns: 1,
      summaryRequests: 0,
      overflows: 0,
      errors: 0,
      compactions: undefined,
    });
    // the first test is a setting: its fix reads config/settings.json once
    expect(run.calls.map((call) => call.name)).toEqual([
      'run_command',
      ...['run_command', 'read_file', 'read_file', 'edit_file', 'run_command'],
      ...Array(2).fill(['run_command', 'read_file', 'edit_file', 'run_command']).flat(),
      'run_command',
    ]);
    expect(run.calls[2]!.input).toEqual({ path: SETTINGS_FILE });
    expect(run.calls.filter((call) => call.repeat).map((call) => call.step)).toEqual([6, 10, 14, 15]);
    expect(run.usage.input).toBe(run.inputTokens);
    expect(run.usage.cached).toBeGreaterThan(run.usage.input / 2);
    expect(run.cost.input).toBeCloseTo(run.usage.input - 0.9 * run.usage.cached, 6);
    expect(run.cost.full).toBeCloseTo(run.cost.input + 5 * run.usage.output, 6);
    expect(run.finalText).toMatch(/^Done: every test passes/);
    // the last prompt holds the whole conversation: three source files of at least 2,500 tokens each, and more
    expect(run.maxPrompt).toBeGreaterThan(3 * 2_500);
    expect(run.inputTokens).toBeGreaterThan(run.maxPrompt * 5);
  });

  it('counts a rejected edit when the agent was told a wrong token, and the agent recovers by reading the file', async () => {
    const first = createFixerTools({ seed: 1, failing: 3, passing: 1 }).project.failures[0]!;
    const task = `${FIXER_TASK} I think \`${first.file}:${first.line}\` reads \`tok_000000\`.`;
    const run = await runContinuity(noMiddleware, 'honest', { ...SHORT, window: 200_000, task });
    expect(run).toMatchObject({ finished: true, steps: fewest(3) + 1, overShortest: 1, rejectedEdits: 1, violations: 0, acceptedEdits: 3, repeatedCalls: 4 });
    expect(run.calls.slice(3, 6).map((call) => [call.name, call.result.split(' ').slice(0, 2).join(' ')])).toEqual([
      ['edit_file', 'edit rejected:'],
      ['read_file', `${first.file} (${createFixerTools({ seed: 1, failing: 3, passing: 1 }).project.files.get(first.file)!.length}`],
      ['edit_file', 'edit applied:'],
    ]);
  });

  it('stops at the first overflow with no middleware and a small window: the error reaches the caller', async () => {
    const run = await runContinuity(noMiddleware, 'honest', { ...SHORT, window: 12_000 });
    expect(run).toMatchObject({ finished: false, outcome: 'error', errors: 1, overflows: 1, summaryRequests: 0 });
    expect(run.error).toMatch(/^This model's maximum context length is 12000 tokens/);
    expect(run.testsFixed).toBeLessThan(3);
  });

  it('loses the task when only the last messages are kept: the agent asks what to do', async () => {
    const run = await runContinuity(keepingLast(10), 'honest', { ...SHORT, window: 200_000 });
    // the user's message leaves the prompt at the sixth step (1 + 2 x 5 messages)
    expect(run).toMatchObject({ finished: false, outcome: 'asked what to do', steps: 6, errors: 0, testsFixed: 1 });
    expect(run.finalText).toBe("I don't see a task in this conversation. What would you like me to do?");
  });

  let honest: ContinuityRun;
  it("compacts with this checkout's middleware, and the agent still finishes with honest summaries", async () => {
    honest = await runContinuity(compacting('ai-compaction', {}), 'honest', { ...SHORT, failing: 5, window: 32_000, cap: 60 });
    expect(honest).toMatchObject({ finished: true, overflows: 0, errors: 0, testsFixed: 5, rejectedEdits: 0 });
    expect(honest.compactions).toBeGreaterThanOrEqual(1);
    expect(honest.summaryRequests).toBeGreaterThanOrEqual(honest.compactions!);
    expect(honest.maxPrompt).toBeLessThanOrEqual(32_000);
    expect(honest.steps).toBeGreaterThanOrEqual(fewest(5));
    // Each compacting step is timed; each summary request was prepared in the background or made by a step that compacted.
    expect(honest.compactingMs).toHaveLength(honest.compactions!);
    expect(honest.beforeMs).toHaveLength(honest.compactions!);
    // without a speed the provider takes no time to write a summary
    expect(honest.summaryMs).toEqual([]);
    expect(honest.prepared!.made).toBeGreaterThanOrEqual(1);
    expect(honest.prepared!.sent).toBeLessThanOrEqual(honest.prepared!.made);
    expect(honest.summaryRequests).toBe(honest.prepared!.made + honest.compactions! - honest.prepared!.sent);
  });

  it('sends summary requests to a summarizer of their own with summarizerSpeed, and counts them', async () => {
    const options = { ...SHORT, failing: 5, window: 32_000, cap: 60 };
    const alone = await runContinuity(compacting('ai-compaction, prepare: false', { prepare: false }), 'honest', options);
    // a speed that takes no noticeable time: only the summarizer's server has one
    const fast = { promptTokensPerSecond: 1e9, outputTokensPerSecond: 1e9 };
    const apart = await runContinuity(compacting('ai-compaction, prepare: false', { prepare: false }), 'honest', { ...options, summarizerSpeed: fast });
    expect(apart.compactions).toBeGreaterThanOrEqual(1);
    // every summary request reached the summarizer (the only paced server), none the step's
    expect(apart.summaryMs).toHaveLength(apart.summaryRequests);
    expect(apart.stepMs).toEqual([]);
    // the same scripted agent behind both: the same run, the same requests, the same tokens billed
    expect(apart).toMatchObject({ steps: alone.steps, summaryRequests: alone.summaryRequests, inputTokens: alone.inputTokens, compactions: alone.compactions, finished: true });
  });

  it('can fail: with amnesiac summaries this middleware takes clearly more steps than with honest ones', async () => {
    const options = { failing: 10, passing: 1, window: 32_000 };
    const [kept, lost] = await Promise.all([runContinuity(compacting('ai-compaction', {}), 'honest', options), runContinuity(compacting('ai-compaction', {}), 'amnesiac', options)]);
    expect(kept).toMatchObject({ finished: true, overShortest: 0, violations: 0, rejectedEdits: 0 });
    expect(kept.repeatedCalls).toBe(kept.fewestRepeats);
    expect(lost.steps).toBeGreaterThan(kept.steps);
    expect(lost).toMatchObject({ finished: true, errors: 0 });
    expect(lost.repeatedCalls).toBeGreaterThan(lost.fewestRepeats);
    expect(clearlyWorse(lost, kept)).toBe(true);
    expect(clearlyWorse(kept, lost)).toBe(false);
  });

  it('runs a build of the package from a git ref as a strategy of its own', async () => {
    const factory = await fromGitRef('HEAD');
    expect(factory).not.toBe(compaction);
    const run = await runContinuity(compacting('ai-compaction @ HEAD', {}, async () => factory), 'honest', { ...SHORT, failing: 5, window: 32_000, cap: 60 });
    expect(run).toMatchObject({ strategy: 'ai-compaction @ HEAD', finished: true, errors: 0 });
    expect(run.compactions).toBeGreaterThanOrEqual(1);
    // Another build is given no waitUntil (one from before it existed refuses the option): its background work is not counted.
    expect(run.prepared).toBeUndefined();
  });

  it('runs a packed build from a tarball', async () => {
    // a stand-in for `npm pack`: package/dist/index.js, bundled from this checkout
    const dir = mkdtempSync(join(tmpdir(), 'continuity-test-'));
    temp.push(dir);
    mkdirSync(join(dir, 'package', 'dist'), { recursive: true });
    await build({ entryPoints: [join(ROOT, 'src', 'index.ts')], outfile: join(dir, 'package', 'dist', 'index.js'), bundle: true, format: 'esm', platform: 'node', external: ['ai', 'zod', 'lru-cache', '@noble/hashes', '@noble/hashes/*'], logLevel: 'silent' });
    const tarball = join(dir, 'ai-compaction-0.0.0.tgz');
    execFileSync('tar', ['-czf', tarball, '-C', dir, 'package']);
    const factory = await fromTarball(tarball);
    const run = await runContinuity(compacting('tarball', {}, async () => factory), 'honest', { ...SHORT, failing: 5, window: 32_000, cap: 60 });
    expect(run).toMatchObject({ finished: true, errors: 0 });
    expect(run.compactions).toBeGreaterThanOrEqual(1);
  });

  it('names the baseline from the environment: main by default, with the commit it names', () => {
    const main = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'main^{commit}'], { encoding: 'utf8' }).trim();
    expect(baselineFromEnv({}).label).toBe(`ai-compaction @ main (${main})`);
    expect(baselineFromEnv({ BENCH_BASELINE_REF: 'HEAD~1' }).label).toMatch(/^ai-compaction @ HEAD~1 \([0-9a-f]{7,}\)$/);
    // a ref this clone does not have: named as given (the strategy then fails to start, and is reported)
    expect(baselineFromEnv({ BENCH_BASELINE_REF: 'v0.1.0' }).label).toBe('ai-compaction @ v0.1.0');
    expect(baselineFromEnv({ BENCH_BASELINE_REF: 'v0.1.0' }).commit).toBeUndefined();
    // the commit is pinned when the baseline is made: a branch that moves later does not move it
    const head = execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(baselineFromEnv({ BENCH_BASELINE_REF: 'HEAD' }).commit).toBe(head);
  });

  it("knows a baseline whose src/ is this checkout's", () => {
    const clean = execFileSync('git', ['-C', ROOT, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }) === '';
    expect(baselineAt('HEAD', 'this').sameAsCheckout).toBe(clean);
    // the build before the continuity work
    expect(baselineAt('7dc9f7e', 'before').sameAsCheckout).toBe(false);
    expect(baselineAt('no-such-ref', 'none')).toMatchObject({ label: 'none', sameAsCheckout: false });
    expect(baselineFromEnv({ BENCH_BASELINE_REF: 'v0.1.0', BENCH_BASELINE_TARBALL: '/tmp/x/ai-compaction-0.1.0.tgz' }).label).toBe('ai-compaction @ ai-compaction-0.1.0.tgz');
  });
});

describe('waste, exactly', () => {
  // seed 6, 6 failing tests: settings at the 1st and 4th, src/legacy/ at the 3rd and 5th; the rules after the 2nd and 4th fix
  const options = { seed: 6, failing: 6, passing: 1, window: 200_000 } as const;

  it('counts the violations of rules the prompt no longer shows, and the steps they cost', async () => {
    // the user's later messages never reach the model: it learns each rule from the first refusal
    const deaf = rewriting('drops the later user messages', async ({ params }) => {
      let first = true;
      return { ...params, prompt: params.prompt.filter((message) => message.role !== 'user' || (first ? !(first = false) : false)) };
    });
    const run = await runContinuity(deaf, 'honest', options);
    expect(run).toMatchObject({ finished: true, turns: 2, steps: 31, fewest: 28, violations: 2, rejectedEdits: 0, repeatedCalls: 7, fewestRepeats: 7 });
    // src/legacy/: its file read and the refused edit, two steps; the changelog: the refused edit, one step
    expect(run.overShortest).toBe(3);
    const refused = run.calls.filter((call) => call.result.startsWith('edit refused: '));
    expect(refused.map((call) => [call.step, call.result.split(': ').slice(2).join(': ')])).toEqual([
      [13, 'do not edit files under `src/legacy/`. Nothing was changed.'],
      [23, 'every fix adds a line to CHANGELOG.md naming its test (this edit adds none). Nothing was changed.'],
    ]);
    expect(run.calls.slice(11, 15).map((call) => [call.name, (call.input as { path: string }).path])).toEqual([
      ['read_file', 'src/legacy/formatting.ts'],
      ['edit_file', 'src/legacy/formatting.ts'],
      ['read_file', 'src/lib/money.ts'],
      ['edit_file', 'src/lib/money.ts'],
    ]);
  });

  it('counts a call made again with the same input as a repeat, whatever its result', async () => {
    // the settings listing shows only while it is the newest tool result: a fix reads it, then its
    // file, then the settings again (the file's read hid them), then edits
    const forgetful = rewriting('shows the settings only in the newest step', async ({ params }) => {
      const last = params.prompt.map((message) => message.role).lastIndexOf('tool');
      const hide = (part: { type: string; toolName?: string; output?: { type: string; value?: unknown } }) =>
        part.type === 'tool-result' && part.toolName === 'read_file' && typeof part.output?.value === 'string' && part.output.value.startsWith(SETTINGS_FILE);
      return {
        ...params,
        prompt: params.prompt.map((message, index) =>
          message.role !== 'tool' || index === last ? message : { ...message, content: message.content.map((part) => (hide(part) ? { ...part, output: { type: 'text' as const, value: '[cleared]' } } : part)) },
        ),
      };
    });
    const run = await runContinuity(forgetful, 'honest', options);
    // two setting fixes, two reads each, where the shortest run reads once for both
    expect(run).toMatchObject({ finished: true, steps: 31, overShortest: 3, violations: 0, rejectedEdits: 0, repeatedCalls: 7 + 3 });
    expect(run.calls.filter((call) => call.name === 'read_file' && (call.input as { path: string }).path === SETTINGS_FILE).map((call) => [call.step, call.repeat])).toEqual([
      [3, false],
      [5, true],
      [17, true],
      [19, true],
    ]);
  });
});

describe('clearly worse', () => {
  const run = (overShortest: number | undefined, violations: number) => ({ finished: overShortest !== undefined, overShortest, violations }) as ContinuityRun;

  it('is 5 more steps over the shortest, 2 more violations, or unfinished where the other finished', () => {
    expect(clearlyWorse(run(5, 0), run(0, 0))).toBe(true);
    expect(clearlyWorse(run(4, 1), run(0, 0))).toBe(false);
    expect(clearlyWorse(run(0, 2), run(0, 0))).toBe(true);
    expect(clearlyWorse(run(7, 3), run(3, 2))).toBe(false);
    expect(clearlyWorse(run(undefined, 0), run(9, 9))).toBe(true);
    expect(clearlyWorse(run(undefined, 5), run(undefined, 0))).toBe(false);
    expect(clearlyWorse(run(20, 5), run(undefined, 0))).toBe(false);
  });
});

describe('repeated tool calls', () => {
  it('are calls of a tool with the same input as an earlier call, keys in any order, whatever the result', () => {
    const marked = markRepeats([
      { step: 1, name: 'run_command', input: { command: 'npx vitest run test/a.test.ts' }, result: 'FAIL test/a.test.ts > x' },
      { step: 2, name: 'read_file', input: { path: 'src/a.ts' }, result: 'src/a.ts (3 lines)' },
      { step: 3, name: 'run_command', input: { command: 'npx vitest run test/a.test.ts' }, result: 'FAIL test/a.test.ts > x' },
      { step: 4, name: 'edit_file', input: { path: 'src/a.ts', line: 2, token: 'tok_abcdef' }, result: 'edit applied: src/a.ts:2' },
      // after the fix the same command prints something else: still a repeat
      { step: 5, name: 'run_command', input: { command: 'npx vitest run test/a.test.ts' }, result: 'PASS test/a.test.ts' },
      { step: 6, name: 'edit_file', input: { token: 'tok_abcdef', line: 2, path: 'src/a.ts' }, result: 'edit rejected: src/a.ts:2 does not carry tok_abcdef' },
      // another tool with the same input, and the same tool with another input: not repeats
      { step: 7, name: 'run_command', input: { path: 'src/a.ts' }, result: 'src/a.ts (3 lines)' },
      { step: 8, name: 'edit_file', input: { path: 'src/a.ts', line: 2, token: 'tok_abcdef', changelog: 'test/a.test.ts' }, result: 'edit applied: src/a.ts:2' },
    ]);
    expect(marked.map((call) => call.repeat)).toEqual([false, false, true, false, true, true, false, false]);
  });
});

describe("the recall guard (absentPieces)", () => {
  const handed = [
    { role: 'user', content: 'Fix the tests.' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'run_command', input: { command: 'npm run issue-key' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'run_command', output: { type: 'text', value: 'Issued the test signing key key_0123abcd for this checkout.\nIt is shown once.' } }] },
  ];
  const answer = (text: string) => ({ matches: [{ position: 1, role: 'tool' as const, text }], page: 1, pages: 1, messages: 3 });

  it('finds every paragraph of an exact answer, an excerpt or a tool call, in the handed messages', () => {
    expect(absentPieces(answer('Issued the test signing key key_0123abcd for this checkout.\nIt is shown once.'), handed)).toBe(0);
    expect(absentPieces(answer('signing key key_0123abcd for'), handed)).toBe(0);
    expect(absentPieces(answer('run_command({"command":"npm run issue-key"})\n\nIt is shown once.'), handed)).toBe(0);
  });

  it('counts a paragraph no handed message holds', () => {
    expect(absentPieces(answer('Issued the test signing key key_ffffffff for this checkout.'), handed)).toBe(1);
    expect(absentPieces(answer('Fix the tests.\n\nAnd the docs.'), handed)).toBe(1);
  });
});
