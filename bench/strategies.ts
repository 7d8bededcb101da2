/**
 * Ways of handling a long context, for the benchmarks that run them side by side (session.ts,
 * continuity.ts): this middleware with some options (from this checkout or from another build of
 * the package), no middleware, keeping the last N messages, and summarizing all but the newest
 * messages over a share of the window. Plus the table printer they share.
 *
 *   const strategies = [compacting('ai-compaction', {}), compacting('prepare off', { prepare: false }), noMiddleware, keepingLast(30)];
 *   const run = await strategy.start(window); // a fresh instance per run
 */
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { LanguageModel, LanguageModelMiddleware } from 'ai';
import { countText, type RecordedRequest } from '../test/support/provider-server';
import { type CompactionOptions, compaction } from '../src';
import { clearToolOutputs, clearingEnd } from '../src/checkpoint/clear';
import { SUMMARY_PROMPT } from '../src/checkpoint/prompts';
import { recordBudget } from '../src/checkpoint/record';
import { serialize } from '../src/checkpoint/serialize';
import type { Clock } from '../src/clock';
import { CLOCK, DEFAULT_KEEP } from '../src/options';
import { liveStart } from '../src/prompt/conversation';
import type { Message } from '../src/prompt/types';
import { ceiling } from '../src/sizing/ceiling';
import { estimatePrompt } from '../src/sizing/estimate';

/** One run's middleware, and how many times it compacted (trimmed, summarized) so far. */
export interface StrategyRun {
  middleware: LanguageModelMiddleware[];
  compactions: () => number | undefined;
  /** Of those, how many cleared old tool results and how many summarized (this middleware, clearing alone). */
  kinds?: () => { clear: number; summary: number };
  /** This middleware's compactions by the rule that decided each (`ceiling`, `cost`, `cold-cache`, ...: docs/design.md, "The policy"). */
  rules?: () => Record<string, number>;
  /** This middleware's background compactions (docs/design.md, "Preparing ahead"): those handed to `waitUntil`, those a step sent, and all of them settled. */
  preparing?: () => { made: number; sent: number; settled: Promise<void> };
}

export interface Strategy {
  name: string;
  /** Whether it ever asks the model for a summary (a summarizer's way of writing then changes its run); true unless said. */
  summarizes?: boolean;
  /**
   * A fresh instance for one run against a model with this window (tokens). `summarizer`: a model
   * of the run's own for summary requests, taken by this middleware (its option of that name);
   * `clock`: the run's virtual clock (clock.ts), which this middleware reads its time from.
   */
  start: (window: number, run?: { summarizer?: LanguageModel; clock?: Clock }) => Promise<StrategyRun>;
}

/** `compaction` of some build of this package. */
export type CompactionFactory = (options: CompactionOptions) => LanguageModelMiddleware;

/**
 * Options for `compacting`: the package's options, and any option a build takes that this
 * checkout's types do not know yet (a baseline build, or one being developed).
 */
export type StrategyOptions = Omit<Partial<CompactionOptions>, 'onCompaction' | 'contextWindow'> & Record<string, unknown>;

/** This checkout's `compaction` (`../src`). */
export const thisCheckout = async (): Promise<CompactionFactory> => compaction as CompactionFactory;

/**
 * This middleware with `options` (the window is the run's; options may depend on it), counting its
 * compactions. `factory` gives the build: this checkout by default, or another one (see baseline.ts).
 */
export function compacting(name: string, options: StrategyOptions | ((window: number) => StrategyOptions) = {}, factory: () => Promise<CompactionFactory> = thisCheckout): Strategy {
  return {
    name,
    start: async (window, run = {}) => {
      const make = await factory();
      const own = typeof options === 'function' ? options(window) : options;
      const kinds = { clear: 0, summary: 0 };
      const rules: Record<string, number> = {};
      const background: Promise<unknown>[] = [];
      let sent = 0;
      // A build from before `kind` existed summarized every time.
      const onCompaction = (record: { kind?: string; prepared?: boolean; rule?: string }) => {
        if (record.rule !== undefined) rules[record.rule] = (rules[record.rule] ?? 0) + 1;
        if (record.kind === 'clear') kinds.clear++;
        else kinds.summary++;
        if (record.prepared === true) sent++;
      };
      // This checkout's background work is handed over as a serverless host would take it (a build
      // from before `waitUntil` existed refuses the option).
      const waitUntil = factory === thisCheckout ? { waitUntil: (promise: Promise<unknown>) => void background.push(promise) } : {};
      const summarizer = run.summarizer === undefined ? {} : { summarizer: run.summarizer };
      // the run's clock, under its symbol (a build from before it ignores it and reads real time)
      const clock = run.clock === undefined ? {} : { [CLOCK]: run.clock };
      const middleware = make({ contextWindow: window, ...waitUntil, ...summarizer, ...own, ...clock, onCompaction } as CompactionOptions);
      return {
        middleware: [middleware],
        compactions: () => kinds.clear + kinds.summary,
        kinds: () => ({ ...kinds }),
        rules: () => ({ ...rules }),
        // Counted for this checkout only: another build prepares detached, out of sight.
        ...(factory === thisCheckout ? { preparing: () => ({ made: background.length, sent, settled: Promise.allSettled(background).then(() => undefined) }) } : {}),
      };
    },
  };
}

export const noMiddleware: Strategy = { name: 'no middleware', summarizes: false, start: async () => ({ middleware: [], compactions: () => undefined }) };

/** Keeps the last `count` messages (see `keepLast`); "compactions" counts the steps it trimmed. */
export function keepingLast(count: number, name = `keep the last ${count} messages`): Strategy {
  return {
    name,
    summarizes: false,
    start: async () => {
      let trims = 0;
      return { middleware: [keepLast(count, () => void trims++)], compactions: () => trims };
    },
  };
}

/**
 * Clearing alone, never a summary: the tool-result masking of the published study (SWE-agent on
 * SWE-bench Verified), with this package's rule (src/checkpoint/clear.ts). At the ceiling (4
 * characters a token) every tool output older than the newest `keep` tokens of the conversation,
 * and not in its newest step, is cleared; from then on always up to that point, so later steps
 * extend what was sent. Nothing else is done: past the window the provider rejects the step.
 */
export function clearingAlone(name = 'clearing alone'): Strategy {
  return {
    name,
    summarizes: false,
    start: async (window) => {
      const limit = ceiling(window, undefined);
      const keep = recordBudget(DEFAULT_KEEP, limit);
      let clears = 0;
      let clearedUpTo = 0;
      const middleware: LanguageModelMiddleware = {
        specificationVersion: 'v3',
        transformParams: async ({ params }) => {
          const system = params.prompt.filter((message) => message.role === 'system') as unknown as Message[];
          const rest = params.prompt.filter((message) => message.role !== 'system') as unknown as Message[];
          const sent = (upTo: number) => [...system, ...clearToolOutputs(rest, 0, Math.min(upTo, rest.length)).messages];
          let prompt = sent(clearedUpTo);
          if (estimatePrompt(prompt, params.tools as never) >= limit) {
            const upTo = clearingEnd(rest, 0, liveStart(rest), keep);
            if (upTo > clearedUpTo) {
              clearedUpTo = upTo;
              clears++;
              prompt = sent(clearedUpTo);
            }
          }
          return clearedUpTo === 0 ? params : { ...params, prompt: prompt as unknown as LanguageModelV3Prompt };
        },
      };
      return { middleware: [middleware], compactions: () => clears, kinds: () => ({ clear: clears, summary: 0 }) };
    },
  };
}

/**
 * A run with its `transformParams` timed on `now` (the run's virtual clock) on the steps that
 * compact (the count of compactions changes during the call): the time those steps wait, the
 * summary request included, and the time the agent ran before each of them since the previous one
 * (or since the first step): the most time any compaction started ahead could have had to finish.
 * Every other step's time too.
 */
export function timed(run: StrategyRun, now: () => number): StrategyRun & { compactingMs: () => number[]; otherMs: () => number[]; beforeMs: () => number[] } {
  const ms: number[] = [];
  const other: number[] = [];
  const before: number[] = [];
  let since: number | undefined;
  const middleware = run.middleware.map((each): LanguageModelMiddleware => {
    const transform = each.transformParams;
    if (transform === undefined) return each;
    return {
      ...each,
      transformParams: async (options) => {
        const start = now();
        since ??= start;
        const count = run.compactions();
        try {
          return await transform(options);
        } finally {
          if (run.compactions() !== count) {
            const end = now();
            ms.push(end - start);
            before.push(start - since);
            since = end;
          } else other.push(now() - start);
        }
      },
    };
  });
  return { ...run, middleware, compactingMs: () => [...ms], otherMs: () => [...other], beforeMs: () => [...before] };
}

/** How a hand-written strategy sizes a prompt, in tokens. */
export type PromptMeasure = (prompt: LanguageModelV3Prompt, tools: unknown) => number;

/** 4 characters a token, as this package estimates before it has counts. */
export const estimateMeasure: PromptMeasure = (prompt, tools) => estimatePrompt(prompt as Message[], tools as never);

/**
 * A prompt counted the way the local provider server counts it (gpt-tokenizer, 4 tokens a
 * message): what a hand-written strategy measures with a real tokenizer.
 */
export const tokenizerMeasure: PromptMeasure = (prompt, tools) => {
  let count = tools === undefined ? 0 : countText(JSON.stringify(tools));
  for (const message of prompt) {
    count += 4;
    if (typeof message.content === 'string') {
      count += countText(message.content);
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning') count += countText(part.text);
      else if (part.type === 'tool-call') count += countText(part.toolName) + countText(JSON.stringify(part.input));
      else if (part.type === 'tool-result') count += countText(part.output.type === 'text' || part.output.type === 'error-text' ? part.output.value : JSON.stringify(part.output));
      else count += 1_000;
    }
  }
  return count;
};

/** Summarizes all but the last `keep` messages over `share` of the window (see `summarizeOlder`). */
export function summarizingOlder(keep: number, share: number, name = `summarize all but ${keep} at ${Math.round(share * 100)} %`, measure: PromptMeasure = estimateMeasure): Strategy {
  return {
    name,
    start: async (window) => {
      let summaries = 0;
      return { middleware: [summarizeOlder(keep, share * window, () => void summaries++, measure)], compactions: () => summaries };
    },
  };
}

/**
 * Summarizes all but the newest messages when the prompt, counted with a real tokenizer, reaches
 * this middleware's ceiling for the window (see `summarizeOlder`): the hand-written approach,
 * compacting where this middleware does. `keep`: a number of messages, or the newest messages
 * within a share of the ceiling (`{ share: 0.25 }`: what this middleware's record may take).
 */
export function summarizingAtCeiling(keep: Keep, name = typeof keep === 'number' ? `summarize all but ${keep} (tokenizer)` : `summarize all but ${Math.round(keep.share * 100)} % of the ceiling (tokenizer)`): Strategy {
  return {
    name,
    start: async (window) => {
      let summaries = 0;
      return { middleware: [summarizeOlder(keep, ceiling(window, undefined), () => void summaries++, tokenizerMeasure)], compactions: () => summaries };
    },
  };
}

/**
 * A sliding window that keeps the task (the first user message) and the last `count` messages,
 * trimmed when the prompt, counted with a real tokenizer, reaches this middleware's ceiling for
 * the window (see `keepTaskAndLast`); "compactions" counts the trims.
 */
export function slidingWindow(count: number, name = `the task and the last ${count} messages (tokenizer)`): Strategy {
  return {
    name,
    summarizes: false,
    start: async (window) => {
      let trims = 0;
      return { middleware: [keepTaskAndLast(count, ceiling(window, undefined), () => void trims++, tokenizerMeasure)], compactions: () => trims };
    },
  };
}

/**
 * Keeps the system messages, the first user message and the last `count` messages, starting where
 * no tool result is orphaned, once the prompt reaches `limit` by `measure`; the cut stays where it
 * is (so later steps extend what was sent) until the prompt reaches `limit` again.
 */
export function keepTaskAndLast(count: number, limit: number, onTrim: () => void, measure: PromptMeasure): LanguageModelMiddleware {
  let cut = 0;
  return {
    specificationVersion: 'v3',
    transformParams: async ({ params }) => {
      const system = params.prompt.filter((message) => message.role === 'system');
      const rest = params.prompt.filter((message) => message.role !== 'system');
      const task = rest[0]?.role === 'user' ? 1 : 0;
      const build = () => (cut <= task ? params.prompt : [...system, ...rest.slice(0, task), ...rest.slice(cut)]);
      let prompt = build();
      if (measure(prompt, params.tools) >= limit) {
        let start = Math.max(task, rest.length - count);
        while (start < rest.length && rest[start]!.role === 'tool') start++;
        if (start > cut) {
          cut = start;
          onTrim();
          prompt = build();
        }
      }
      return prompt === params.prompt ? params : { ...params, prompt };
    },
  };
}

/** Keeps the system messages and the last `count` messages, starting where no tool result is orphaned. */
export function keepLast(count: number, onTrim: () => void): LanguageModelMiddleware {
  return {
    specificationVersion: 'v3',
    transformParams: async ({ params }) => {
      const system = params.prompt.filter((message) => message.role === 'system');
      const rest = params.prompt.filter((message) => message.role !== 'system');
      if (rest.length <= count) return params;
      let start = rest.length - count;
      while (start < rest.length && rest[start]!.role === 'tool') start++;
      onTrim();
      return { ...params, prompt: [...system, ...rest.slice(start)] };
    },
  };
}

/** What a hand-written summarizer keeps verbatim: the last N messages, or the newest within a share of its limit. */
export type Keep = number | { share: number };

/**
 * The common hand-written approach: at `limit` tokens, summarize everything but the newest
 * messages (`keep`) in a fresh request (this package's summary prompt, the older messages as a
 * transcript) and send the summary in their place. `measure` sizes the prompt (default: 4
 * characters a token).
 */
export function summarizeOlder(keep: Keep, limit: number, onSummary: () => void, measure: PromptMeasure = estimateMeasure): LanguageModelMiddleware {
  let summary: { covered: number; text: string } | undefined;
  return {
    specificationVersion: 'v3',
    transformParams: async ({ params, model }) => {
      const system = params.prompt.filter((message) => message.role === 'system');
      const rest = params.prompt.filter((message) => message.role !== 'system');
      const build = () =>
        summary === undefined
          ? params.prompt
          : [...system, { role: 'user' as const, content: [{ type: 'text' as const, text: `Summary of the earlier conversation:\n${summary.text}` }] }, ...rest.slice(summary.covered)];
      let prompt = build();
      if (measure(prompt, params.tools) >= limit) {
        let kept = typeof keep === 'number' ? keep : 0;
        if (typeof keep !== 'number') {
          // the newest messages within the share, by the same measure
          for (let size = 0; kept < rest.length; kept++) {
            size += measure([rest[rest.length - 1 - kept]!], undefined);
            if (size > keep.share * limit) break;
          }
        }
        let cut = Math.max(summary?.covered ?? 0, rest.length - kept);
        while (cut < rest.length && rest[cut]!.role === 'tool') cut++;
        const older = (summary ? [{ role: 'user', content: [{ type: 'text', text: summary.text }] }] : []).concat(rest.slice(summary?.covered ?? 0, cut) as never[]);
        const transcript = serialize(older as Message[], { toolOutput: { mode: 'full' } });
        const result = await model.doGenerate({
          prompt: [...system, { role: 'user', content: [{ type: 'text', text: transcript }] }, { role: 'user', content: [{ type: 'text', text: SUMMARY_PROMPT }] }],
          maxOutputTokens: 4_000,
        });
        const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
        summary = { covered: cut, text };
        onSummary();
        prompt = build();
      }
      return prompt === params.prompt ? params : { ...params, prompt };
    },
  };
}

/** A share as a whole percentage ("61 %"); "-" for none. */
export const percent = (value: number | undefined) => (value === undefined ? '-' : `${Math.round(value * 100)} %`);
/** Tokens rounded, with thousands separators ("33,409,902"); "-" for none. */
export const tokens = (value: number | undefined) => (value === undefined ? '-' : Math.round(value).toLocaleString('en-US'));

/** The `share` quantile of `values` by nearest rank (p50 of 4 values is the 2nd), or undefined for none. */
export function quantile(values: readonly number[], share: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))];
}

/** A duration: "14.2 s" from a second, else "12.0 ms"; "-" for none. */
export const milliseconds = (value: number | undefined) => (value === undefined ? '-' : value >= 1_000 ? `${(value / 1_000).toFixed(1)} s` : `${value.toFixed(1)} ms`);


/** The time the provider took to answer each summary request (or each step), where it paced its replies (`speed`), in milliseconds. */
export const pacedMs = (requests: readonly RecordedRequest[], summaries: boolean): number[] =>
  requests.flatMap((request) => (request.isSummaryRequest === summaries && !request.rejected && request.pacedMs !== undefined ? [request.pacedMs] : []));

/** Prints a table: the first column left-aligned, the others right-aligned. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, index) => Math.max(title.length, ...rows.map((cells) => cells[index]!.length)));
  const line = (cells: string[]) => cells.map((cell, index) => (index === 0 ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!))).join('  ');
  console.log(line(header));
  for (const cells of rows) console.log(line(cells));
}
