/**
 * Every tunable number of the package, named once (docs/design.md, "Tunable numbers": each with
 * its reason). A module that needs one imports it from here; none is written twice.
 */

// ---- The policy: when a step prepares, waits, catches up (docs/design.md, "The policy") ----

/**
 * A model's summaries count as measured once the longest recent one took at least this long: a
 * summary written faster (a test double, a cache) leaves preparing to the band of `prepare`.
 */
export const MEASURED_SUMMARY_MS = 250;
/** With measured summaries, preparing starts when the time left to the ceiling is within this many times the longest recent summary. */
export const SUMMARY_MARGIN = 1;
/** A catch-up starts when the prompt right after a prepared checkpoint is over the budget by this share of it, with at least as much to cover. */
export const CATCH_UP_SHARE = 0.25;
/** A catch-up starts only from a summarizer whose latest request read at least this share of its input from the prompt cache. */
export const CATCH_UP_CACHED_SHARE = 0.5;
/** The growths and intervals of a conversation's recent steps kept for its pace. */
export const PACE_STEPS = 8;
/** Summary durations kept per model. */
export const SUMMARY_TIMES_KEPT = 8;

// ---- Summaries in flight (docs/design.md, "No summary holds a step without bound") ----

/** The default of `summaryTimeout`: a summary request is aborted after this long. */
export const DEFAULT_SUMMARY_TIMEOUT_MS = 120_000;
/** A lease lasts twice the longest summary measured, within these bounds; `LEASE_UNMEASURED_MS` before any was. */
export const LEASE_BOUNDS_MS = { min: 5_000, max: 120_000 } as const;
export const LEASE_UNMEASURED_MS = 60_000;
/** Threads whose background compactions an instance remembers (least recently used forgotten first). */
export const PREPARING_THREADS = 512;
/** Background compactions remembered per thread (conversations sharing an opening share one). */
export const PREPARING_PER_THREAD = 8;
