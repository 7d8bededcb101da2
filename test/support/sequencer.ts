// The order of the test files: vitest's own (files that failed last time first, then the slowest),
// except that the files listed here start before all others. They spend most of their time waiting
// for processes of their own (`next build`, `next start`, Chromium), so started first they overlap
// the rest of the suite on the other worker; started last (a fresh checkout has no timings, so
// vitest keeps the order it found them in) they would add their whole time to the run's.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const FIRST = ['test/e2e/next-chat.test.ts'];

export class WaitingFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (spec: TestSpecification) => FIRST.some((file) => spec.moduleId.endsWith(`/${file}`));
    return [...sorted.filter(first), ...sorted.filter((spec) => !first(spec))];
  }
}
