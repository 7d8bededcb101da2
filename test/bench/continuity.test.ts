import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { baselineFromEnv, fromGitRef, fromTarball } from '../../bench/baseline';
import { markRepeats, runContinuity, type ContinuityRun } from '../../bench/continuity';
import { compacting, keepingLast, noMiddleware } from '../../bench/strategies';
import { compaction } from '../../src';
import { createFixerTools, FIXER_TASK } from '../support/provider-server';

// A short version of `npm run bench -- continuity`: 3 to 5 failing tests, a small cap.
const SHORT = { failing: 3, passing: 1, cap: 40 } as const;
/** The fewest steps for n failing tests: `npm test`, four calls a test, a last `npm test`, the answer. */
const fewest = (n: number) => 1 + 4 * n + 2;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const temp: string[] = [];
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

describe('the continuity benchmark, short', () => {
  it('finishes in the fewest steps, with nothing repeated, with no middleware and a large window', async () => {
    const run = await runContinuity(noMiddleware, 'honest', { ...SHORT, window: 200_000 });
    expect(run).toMatchObject({
      strategy: 'no middleware',
      finished: true,
      outcome: 'finished',
      steps: fewest(3),
      toolCalls: fewest(3) - 1,
      repeatedCalls: 0,
      rejectedEdits: 0,
      acceptedEdits: 3,
      testsFixed: 3,
      summaryRequests: 0,
      overflows: 0,
      errors: 0,
      compactions: undefined,
    });
    expect(run.calls.map((call) => call.name)).toEqual(['run_command', ...Array(3).fill(['run_command', 'read_file', 'edit_file', 'run_command']).flat(), 'run_command']);
    expect(run.finalText).toMatch(/^Done: every test passes/);
    // the last prompt holds the whole conversation: three source files of at least 2,500 tokens each, and more
    expect(run.maxPrompt).toBeGreaterThan(3 * 2_500);
    expect(run.inputTokens).toBeGreaterThan(run.maxPrompt * 5);
  });

  it('counts a rejected edit when the agent was told a wrong token, and the agent recovers by reading the file', async () => {
    const first = createFixerTools({ seed: 1, failing: 3, passing: 1 }).project.failures[0]!;
    const task = `${FIXER_TASK} I think \`${first.file}:${first.line}\` reads \`tok_000000\`.`;
    const run = await runContinuity(noMiddleware, 'honest', { ...SHORT, window: 200_000, task });
    expect(run).toMatchObject({ finished: true, steps: fewest(3) + 1, rejectedEdits: 1, acceptedEdits: 3, repeatedCalls: 0 });
    expect(run.calls.slice(2, 5).map((call) => [call.name, call.result.split(' ').slice(0, 2).join(' ')])).toEqual([
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

  it('costs at least as many steps and repeats with lossy summaries as with honest ones', async () => {
    const lossy = await runContinuity(compacting('ai-compaction', {}), 'lossy', { ...SHORT, failing: 5, window: 32_000, cap: 60 });
    expect(lossy.errors).toBe(0);
    expect(lossy.compactions).toBeGreaterThanOrEqual(1);
    expect(lossy.steps).toBeGreaterThanOrEqual(honest.steps);
    expect(lossy.repeatedCalls).toBeGreaterThanOrEqual(honest.repeatedCalls);
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

  it('names the baseline from the environment', () => {
    expect(baselineFromEnv({}).label).toBe('ai-compaction @ 7dc9f7e');
    expect(baselineFromEnv({ BENCH_BASELINE_REF: 'v0.1.0' }).label).toBe('ai-compaction @ v0.1.0');
    expect(baselineFromEnv({ BENCH_BASELINE_REF: 'v0.1.0', BENCH_BASELINE_TARBALL: '/tmp/x/ai-compaction-0.1.0.tgz' }).label).toBe('ai-compaction @ ai-compaction-0.1.0.tgz');
  });
});

describe('repeated tool calls', () => {
  it('are calls whose name, input and result all equal an earlier call', () => {
    const marked = markRepeats([
      { step: 1, name: 'run_command', input: { command: 'npx vitest run test/a.test.ts' }, result: 'FAIL test/a.test.ts > x' },
      { step: 2, name: 'read_file', input: { path: 'src/a.ts' }, result: 'src/a.ts (3 lines)' },
      { step: 3, name: 'run_command', input: { command: 'npx vitest run test/a.test.ts' }, result: 'FAIL test/a.test.ts > x' },
      { step: 4, name: 'edit_file', input: { path: 'src/a.ts', line: 2, token: 'tok_abcdef' }, result: 'edit applied: src/a.ts:2' },
      // after the fix the same command prints something else: not a repeat
      { step: 5, name: 'run_command', input: { command: 'npx vitest run test/a.test.ts' }, result: 'PASS test/a.test.ts' },
      { step: 6, name: 'edit_file', input: { token: 'tok_abcdef', line: 2, path: 'src/a.ts' }, result: 'edit applied: src/a.ts:2' },
      { step: 7, name: 'run_command', input: { command: 'cat src/a.ts' }, result: 'src/a.ts (3 lines)' },
    ]);
    expect(marked.map((call) => call.repeat)).toEqual([false, false, true, false, false, true, false]);
  });
});
