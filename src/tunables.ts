/**
 * Every tunable number of the package, named once (docs/design.md, "Tunable numbers": each with
 * its reason). A module that needs one imports it from here; none is written twice. This module
 * imports nothing from src/ (it is the bottom layer, scripts/check-cycles.mjs), and
 * test/core/tunables.test.ts fails when a number is named anywhere else, or when one named here
 * is missing from the docs' table.
 *
 * A share (`_SHARE`) multiplies; a divisor (`_DIVISOR`) divides, as the rule reads ("a quarter of
 * the room": `room / 4`), so that naming it changed no result.
 */

// ---- Sizing: how large a prompt is (docs/design.md, "The size of a prompt", "The ceiling") ----

/** The cheap estimate until a model's counts say otherwise: 4 characters a token (prose runs near 4). */
export const CHARS_PER_TOKEN = 4;
/**
 * Before a model has any count, where a prompt could go out over the window, its text is taken as
 * dense as it looks: letters and whitespace at 4 characters a token, every other character (digits,
 * punctuation, symbols, other scripts) at 2. Prose stays near 4; code and JSON, a third or more of
 * whose characters are such, come to 3 or fewer, as providers count them (2.6 to 3), where 4 for
 * all would let a first prompt of code out past the window (`test/core/sizing/first-step.test.ts`).
 */
export const UNTAUGHT_CHARS_PER_TOKEN = { plain: 4, other: 2 } as const;
/** Tokens an attached image counts for in the estimate, whatever its bytes. */
export const IMAGE_TOKENS = 1_500;
/** Tokens a PDF or any other attached file counts for in the estimate, whatever its bytes. */
export const DOCUMENT_TOKENS = 2_000;
/** The learned characters a token stay within these (code and JSON run near 3, prose near 4). */
export const CHARS_PER_TOKEN_BOUNDS = { min: 1.5, max: 5 } as const;
/**
 * With the `estimate` option, the factor its figures are multiplied by stays within these: a
 * tokenizer is taken as a floor (a provider counts its own framing on top of the text), and one of
 * another model family reads up to about a third fewer tokens than that model's provider.
 */
export const TOKENIZER_FACTOR_BOUNDS = { min: 1, max: 2 } as const;
/** A model's ratio rests on this many of its most recent counts. */
export const SAMPLE_LIMIT = 8;
/**
 * A count more than this many times beyond the bounds measures something other than the text (a
 * cached prompt reported as a few tokens, a one-word prompt that is all framing): not learned from.
 */
export const PLAUSIBLE_SPREAD = 3;
/**
 * A provider count under the prompt's text at `CHARS_PER_TOKEN_BOUNDS.max` characters a token (the
 * fewest tokens any text is taken to be) over this, a fifth, cannot be right (a proxy that reports
 * only what it did not cache, a broken gateway): it is not the baseline, the estimate stays.
 */
export const IMPLAUSIBLE_COUNT_DIVISOR = 5;
/** A model's sizing is read from the store again after this long: another instance may have learned since. */
export const REFRESH_MS = 30_000;
/** Models an instance keeps the sizing of, least recently used out. */
export const MODEL_LIMIT = 32;
/**
 * Room kept free when no buffer is set: `share` of the window, rounded, and at least `minTokens`
 * from a window of `minFromWindow` up (room for the reply, and for the provider counting a prompt
 * a little over this package's measure).
 */
export const DEFAULT_BUFFER = { share: 0.15, minTokens: 16_000, minFromWindow: 32_000 } as const;

// ---- The budget: what a compaction keeps (docs/design.md, "One budget") ----

/** The most of the room a compaction may keep: half, so the next one is at least half the room away. */
export const MAX_BUDGET_SHARE = 0.5;
/**
 * The share of the room a compaction keeps by default, chosen by measurement: the cheapest share on
 * the continuity scoreboard whose runs all finish with no rule broken (`npm run bench -- budget`,
 * docs/benchmarking.md, "The budget's share").
 */
export const DEFAULT_BUDGET_SHARE = 0.25;
/** The newest step of a tool loop, live after the checkpoint, takes at most the room over this: a quarter. */
export const LIVE_STEP_ROOM_DIVISOR = 4;
/** The summary's output limit is at most the room over this: a quarter. */
export const SUMMARY_ROOM_DIVISOR = 4;
/** The identifiers take at most the ceiling over this (a twentieth), and at most `IDENTIFIERS_MAX_TOKENS`. */
export const IDENTIFIERS_CEILING_DIVISOR = 20;
/** The user's earlier messages take at most the total over this (an eighth), and at most `USER_WORDS_MAX_TOKENS`. */
export const USER_WORDS_TOTAL_DIVISOR = 8;
/** A turn's user message longer than `min(keep, total)` over this (a quarter) opens the record with its first and last parts only. */
export const USER_MESSAGE_DIVISOR = 4;

// ---- The summary request (docs/design.md, "The summary request", "When the summary request is too big") ----

/** The default of `summaryOutputTokens`: the most a summary takes, before the budget and the window lower it. */
export const DEFAULT_SUMMARY_OUTPUT_TOKENS = 32_000;
/** Below this much room for its reply, a summary request is not sent with the whole conversation. */
export const MIN_SUMMARY_ROOM = 1_024;
/** The margin applied to the estimated (not provider-counted) part of a request's size: 15 %. */
export const ESTIMATE_MARGIN = 1.15;
/** A summary request rejected as too long is retried as a transcript aimed at these shares of the size first rejected. */
export const RETRY_SHARES = [0.85, 0.7, 0.5, 0.35] as const;
/** With a tokenizer, a transcript that comes out over its target is cut again at most this many times. */
export const TRANSCRIPT_RECUTS = 3;
/** Shortening level 1 of a transcript: tool outputs cut to their first and last this many characters. */
export const TRANSCRIPT_TOOL_OUTPUT_ENDS = 1_000;
/** Shortening level 2: tool outputs left out and tool inputs cut at this many characters. */
export const TRANSCRIPT_TOOL_INPUT_LIMIT = 200;
/** Shortening level 4: only the user's words, each message cut to its first and last this many characters. */
export const TRANSCRIPT_WORDS_ENDS = 500;
/** Before a summary is written, the record is sized for one this many times the conversation's last summary... */
export const EXPECTED_SUMMARY_GROWTH = 1.25;
/** ...or, with none before it, for the output limit over this: half. */
export const EXPECTED_SUMMARY_DIVISOR = 2;

// ---- The record and what goes with it (docs/design.md, "The record", "The user's words", "Identifiers", "What stays live") ----

/** The default of `keep`: the most the record takes, in tokens. */
export const DEFAULT_KEEP = 15_000;
/** Each tool output in a record is cut at this many characters, with a `[truncated]` note. */
export const RECORD_TOOL_OUTPUT_LIMIT = 1_250;
/** The record takes at most the ceiling over this (a quarter), or every step would compact again. */
export const RECORD_CEILING_DIVISOR = 4;
/** When all a checkpoint covers would fit, the record keeps only its newest part, this over: half, so that every compaction makes progress. */
export const RECORD_PROGRESS_DIVISOR = 2;
/** The user's earlier messages take at most this many tokens of a record. */
export const USER_WORDS_MAX_TOKENS = 2_000;
/** Each of the user's earlier messages keeps this part of their allowance at each end (an eighth: a quarter in all) when it is longer. */
export const USER_WORDS_ENDS_DIVISOR = 8;
/** An error line, or a command, among the identifiers is cut at this many characters. */
export const IDENTIFIER_LINE_LIMIT = 200;
/** The identifier list takes at most this many tokens, and at most a twentieth of the ceiling. */
export const IDENTIFIERS_MAX_TOKENS = 2_000;
/** Characters kept for the note of a live tool output cut to its ends (`\n[123456 characters cut]\n`). */
export const NOTE_ROOM = 32;

// ---- Clearing old tool results (docs/design.md, "Clearing old tool results") ----

/** Whether old tool outputs are cleared before a summary is asked for, by default: off, decided by the benchmarks (docs/benchmarks.md, "clearing"). */
export const DEFAULT_CLEAR_TOOL_RESULTS = false;
/** A clearing is used only when it frees at least the ceiling over this (a quarter), unless `atLeast` is given... */
export const CLEAR_AT_LEAST_DIVISOR = 4;
/** ...and brings the prompt to at most the ceiling over this: half. */
export const CLEAR_AT_MOST_DIVISOR = 2;

// ---- The policy: when a step prepares, waits, catches up (docs/design.md, "The policy", "Preparing ahead") ----

/**
 * The default of `prepare`: the share of the ceiling at which the next checkpoint is prepared in
 * the background; the "prepare" benchmark compares it with 0.6 and 0.9 (docs/benchmarks.md, "prepare").
 */
export const DEFAULT_PREPARE = 0.8;
/**
 * A model's summaries count as measured once the longest recent one took at least this long: a
 * summary written faster (a test double, a cache) leaves preparing to the band of `prepare`.
 */
export const MEASURED_SUMMARY_MS = 250;
/** A catch-up starts when the prompt right after a prepared checkpoint is over the budget by this share of it, with at least as much to cover. */
export const CATCH_UP_SHARE = 0.25;
/** A catch-up starts only from a summarizer whose latest request read at least this share of its input from the prompt cache. */
export const CATCH_UP_CACHED_SHARE = 0.5;
/**
 * How far back the policy looks: the recent steps a conversation's pace rests on (their growths and
 * intervals), and the recent summary durations kept per conversation (in its thread) and per model
 * (the lease's bound).
 */
export const RECENT_MEASURES = 8;

// ---- Compaction timed by what it costs (docs/design.md, "Compaction timed by what it costs") ----

/**
 * How many times the cost trigger counts a compaction's measured cost: once for its summary
 * requests and the step written to the cache afresh, once more for what the conversation redoes
 * after it (what its checkpoint did not keep, asked for again: measured on the continuity
 * scoreboard, benchmarks.md "cost").
 */
export const COMPACTION_COST_COUNTED = 2;

// ---- Summaries in flight (docs/design.md, "No summary holds a step without bound") ----

/** The default of `summaryTimeout`: a summary request is aborted after this long. */
export const DEFAULT_SUMMARY_TIMEOUT_MS = 120_000;
/** A lease lasts `LEASE_SUMMARY_FACTOR` times the longest summary measured, within these bounds; `LEASE_UNMEASURED_MS` before any was. */
export const LEASE_BOUNDS_MS = { min: 5_000, max: 120_000 } as const;
/** How long a lease lasts, and another instance waits for its checkpoint, before a summary of the model was measured. */
export const LEASE_UNMEASURED_MS = 60_000;
/** A lease lasts this many times the longest summary measured: room for a summary slower than any seen yet. */
export const LEASE_SUMMARY_FACTOR = 2;
/** Threads whose background compactions an instance remembers (least recently used forgotten first). */
export const PREPARING_THREADS = 512;
/** Background compactions remembered per thread (conversations sharing an opening share one). */
export const PREPARING_PER_THREAD = 8;

// ---- Holds: no loop of summary requests without progress (docs/design.md, "No progress") ----

/** A hold ends once the prompt has grown by the ceiling over this (a tenth), doubled per failure in a row after the first. */
export const HOLD_GROWTH_DIVISOR = 10;
/** Failures in a row counted at most (the stored hold's schema bound, `store/format.ts`): the growth doubles no further. */
export const MAX_FAILURES = 64;

// ---- Stores (docs/stores.md) ----

/** The most one step waits for the store, over all the calls it makes (the outage rule). */
export const STORE_TIMEOUT_MS = 5_000;
/** The first probe of a store that is down, after this long; each next one after twice as long, up to `PROBE_MAX_MS`. */
export const PROBE_FIRST_MS = 1_000;
/** The longest wait between two probes of a store that is down. */
export const PROBE_MAX_MS = 30_000;
/** How often the client's own state is looked at while calls are pending (a store with `connected()`). */
export const WATCH_MS = 250;
/** Keys written while the store was down, remembered to be written to it once it is back (the first written go first). */
export const BACKLOG_LIMIT = 10_000;
/** Writes of a checkpoint or hold to a thread, each read back to see it was not lost to a concurrent write. */
export const VERIFIED_WRITES = 3;
/**
 * How many checkpoints, prepared checkpoints, counts and holds a thread keeps (the stored thread's
 * schema bound too), the least recently used out: conversations sharing an opening (a fixed task
 * and its first reply) share a thread, and each keeps its entries while this many are in use.
 */
export const THREAD_LIMIT = 256;
/** How many leases a thread keeps, newest first (the stored thread's schema bound too). */
export const LEASE_LIMIT = 16;
/** Waits between two reads of a thread while another instance writes the checkpoint it needs: `first`, doubled up to `max`. */
export const LEASE_POLL_MS = { first: 200, max: 1_000 } as const;
/** Parsed checkpoints kept in memory, so a step does not re-read and re-parse its checkpoint (and as many openings whose checkpoint was last seen, compact/forfeit.ts). */
export const PARSED_LIMIT = 64;
/** How many threads and checkpoints `state()` holds: the latest this instance wrote or read. */
export const RECENT_LIMIT = 8;
/** The most `memoryStore()` holds by default, in bytes (2 per UTF-16 code unit of key and value): 50 MiB. */
export const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;
/** Seconds a value lives in `redisStore()` when `set` is not given `ttlSeconds`: 7 days. */
export const DEFAULT_TTL_SECONDS = 7 * 24 * 60 * 60;
/** The shortest secret accepted: 32 characters. */
export const SECRET_MIN_LENGTH = 32;
/** The most often a warning about values that do not open is given, per kind: once a minute. */
export const UNOPENED_WARNING_INTERVAL_MS = 60_000;

// ---- State (docs/design.md, "What the host can read") ----

/**
 * The most a state may hold, checked before anything of it is read further or written to the
 * store: an instance's `state()` holds its 8 most recent threads and checkpoints and what it
 * learned of each model, far less.
 */
export const STATE_LIMITS = { entries: 1_000, characters: 16 * 2 ** 20 } as const;

// ---- Overflow: reading a provider's error (docs/design.md, "Overflow recovery") ----

/** The retry after an overflow is compacted aimed at this share of the rejected size (or the window, if smaller). */
export const OVERFLOW_TARGET_SHARE = 0.85;
/** How deep the recognizer walks an error's `cause`, `errors` and wrappers. */
export const MAX_DEPTH = 8;
/** How many errors of one chain the recognizer reads at most. */
export const MAX_NODES = 32;
/** How deep the recognizer reads a parsed body or raw object for its strings. */
export const MAX_OBJECT_DEPTH = 6;
/** How many strings of an error's objects the recognizer reads at most. */
export const MAX_STRINGS = 200;
/** Error texts are short; a huge body is cut to this many characters so no pattern scans megabytes. */
export const MAX_TEXT_LENGTH = 16_000;
/** How many levels of JSON nested in an error's strings are parsed (OpenRouter's `metadata.raw` holds the provider's body). */
export const MAX_NESTED_JSON = 2;
