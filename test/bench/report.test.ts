import { describe, expect, it } from 'vitest';
import { type ReportSection, parseReport, renderReport, renderSection } from '../../bench/report';

const ORDER = ['overhead', 'session', 'continuity'];
const section = (name: string, output: string, extra: Partial<ReportSection> = {}): ReportSection => ({
  name,
  commit: 'abc1234',
  dirty: false,
  date: '2026-03-01T09:15:42.123Z',
  seconds: 12.34,
  machine: 'Node v20.19.0, linux x64, 2 CPUs',
  output,
  ...extra,
});

describe('the generated benchmarks file', () => {
  it('writes a section with the command, the commit, the date, the time and the machine, and the output verbatim', () => {
    expect(renderSection(section('session', 'strategy  steps\nai-compaction  500\n'))).toBe(
      [
        '<!-- bench:session -->',
        '## session',
        '',
        '`npm run bench -- session`: commit abc1234, 2026-03-01 09:15 UTC, 12.3 s, Node v20.19.0, linux x64, 2 CPUs.',
        '',
        '```text',
        'strategy  steps',
        'ai-compaction  500',
        '```',
        '<!-- /bench:session -->',
      ].join('\n'),
    );
  });

  it('says so when the tree had uncommitted changes or the benchmark failed, and fences output that holds backticks', () => {
    const text = renderSection(section('load', 'a ```b``` c', { dirty: true, failed: 'boom' }));
    expect(text).toContain('commit abc1234 with uncommitted changes, ');
    expect(text).toContain(' **It failed:** boom');
    expect(text).toContain('\n````text\na ```b``` c\n````\n');
  });

  it('puts the sections in the order of the benchmarks after the preamble, the same bytes every time', () => {
    const file = renderReport(undefined, [section('continuity', 'C'), section('overhead', 'O')], ORDER);
    expect(file.startsWith('# Benchmarks\n')).toBe(true);
    expect(file).toContain('input cost =\nuncached input + 0.1 x cached input; full cost = input cost + 5 x output tokens');
    expect(file.indexOf('<!-- bench:overhead -->')).toBeLessThan(file.indexOf('<!-- bench:continuity -->'));
    expect(file).not.toContain('bench:session');
    expect(file.endsWith('<!-- /bench:continuity -->\n')).toBe(true);
    expect(renderReport(file, [], ORDER)).toBe(file);
    expect([...parseReport(file).keys()]).toEqual(['overhead', 'continuity']);
  });

  it("rewrites the sections of a run and keeps the others' byte for byte, each with its own commit", () => {
    const first = renderReport(undefined, [section('overhead', 'O1'), section('session', 'S1'), section('continuity', 'C1')], ORDER);
    const second = renderReport(first, [section('continuity', 'C2', { commit: 'def5678' })], ORDER);
    const before = parseReport(first);
    const after = parseReport(second);
    expect(after.get('overhead')).toBe(before.get('overhead'));
    expect(after.get('session')).toBe(before.get('session'));
    expect(after.get('continuity')).toBe(renderSection(section('continuity', 'C2', { commit: 'def5678' })));
    expect(second).toContain('commit abc1234');
    expect(second).toContain('commit def5678');
    expect(second).not.toContain('C1');
  });

  it('drops the section of a benchmark that is no longer listed', () => {
    const first = renderReport(undefined, [section('overhead', 'O'), section('session', 'S')], ORDER);
    expect([...parseReport(renderReport(first, [], ['overhead'])).keys()]).toEqual(['overhead']);
  });
});
