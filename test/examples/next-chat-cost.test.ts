// examples/next-chat shows what a compaction's model calls cost on its notice (lib/cost.ts), from
// the `usage` of `providerMetadata.compaction`: the tokens as the provider reported them, what it
// did not report left out, and no model call for a clearing. Exact lines for each case here; the
// browser test (test/e2e/next-chat.test.ts) checks the numbers on the page against what the local
// provider server counted for its summary requests.
import { describe, expect, it } from 'vitest';
import { costLine, duration } from '../../examples/next-chat/lib/cost';

const usage = { requests: 1, inputTokens: 2_310, cachedInputTokens: 2_048, outputTokens: 412, durationMs: 3_080 };

describe('examples/next-chat: the cost line of a compaction notice', () => {
  it('should name the requests, the tokens written, read and read from cache, and the time', () => {
    expect(costLine({ kind: 'summary', usage })).toBe('Summary: 1 request, 412 tokens written (2,310 read, 2,048 from cache), 3.1 s');
    expect(costLine({ kind: 'summary', usage: { ...usage, requests: 3, outputTokens: 1 } })).toBe('Summary: 3 requests, 1 token written (2,310 read, 2,048 from cache), 3.1 s');
    expect(costLine({ kind: 'native', usage })).toBe("The provider's compaction: 1 request, 412 tokens written (2,310 read, 2,048 from cache), 3.1 s");
  });

  it('should leave out what the provider did not report', () => {
    const { cachedInputTokens: _cached, ...noCache } = usage;
    expect(costLine({ kind: 'summary', usage: noCache })).toBe('Summary: 1 request, 412 tokens written (2,310 read), 3.1 s');
    const { inputTokens: _input, ...noInput } = usage;
    expect(costLine({ kind: 'summary', usage: noInput })).toBe('Summary: 1 request, 412 tokens written (2,048 read from cache), 3.1 s');
    const { outputTokens: _output, ...noOutput } = usage;
    expect(costLine({ kind: 'summary', usage: noOutput })).toBe('Summary: 1 request, 2,310 tokens read (2,048 from cache), 3.1 s');
    expect(costLine({ kind: 'summary', usage: { requests: 1, inputTokens: 1, durationMs: 3_080 } })).toBe('Summary: 1 request, 1 token read, 3.1 s');
    expect(costLine({ kind: 'summary', usage: { requests: 1, cachedInputTokens: 2_048, durationMs: 3_080 } })).toBe('Summary: 1 request, 2,048 tokens read from cache, 3.1 s');
    // a rejected request reports no tokens, and an OpenAI-compatible server may report none at all
    expect(costLine({ kind: 'summary', usage: { requests: 2, durationMs: 3_080 } })).toBe('Summary: 2 requests, 3.1 s');
    // a count of zero is a count
    expect(costLine({ kind: 'summary', usage: { ...usage, cachedInputTokens: 0 } })).toBe('Summary: 1 request, 412 tokens written (2,310 read, 0 from cache), 3.1 s');
  });

  it('should say that a checkpoint prepared ahead took its time in the background', () => {
    expect(costLine({ kind: 'summary', usage, prepared: true })).toBe('Summary: 1 request, 412 tokens written (2,310 read, 2,048 from cache), 3.1 s in the background');
  });

  it('should say a clearing made no model call, and show nothing where the metadata has no usage', () => {
    expect(costLine({ kind: 'clear', usage: { requests: 0, durationMs: 0 } })).toBe('No model call: old tool outputs cleared');
    // kept in the browser from an older version of the package
    expect(costLine({ kind: 'summary' })).toBeUndefined();
    // a checkpoint prepared ahead by an older version of the package, which kept no count
    expect(costLine({ kind: 'summary', usage: { requests: 0, durationMs: 0 }, prepared: true })).toBe('Summary: its cost was not recorded');
  });

  it('should write a time under a second in milliseconds, longer ones in tenths of a second', () => {
    expect([0, 12, 949, 950, 1_000, 3_049, 3_050, 61_000].map(duration)).toEqual(['0 ms', '12 ms', '949 ms', '1.0 s', '1.0 s', '3.0 s', '3.1 s', '61.0 s']);
  });
});
