import {
  DEFAULT_BUDGET_SHARE,
  LIVE_STEP_ROOM_DIVISOR,
  MAX_BUDGET_SHARE,
  SUMMARY_ROOM_DIVISOR,
  USER_MESSAGE_DIVISOR,
  USER_WORDS_MAX_TOKENS,
  USER_WORDS_TOTAL_DIVISOR,
} from '../tunables';
import { identifierBudget } from './identifiers';

/**
 * One budget for what a compaction keeps (docs/design.md, "One budget"). The room is the ceiling
 * less the frame (the leading system messages and the tool definitions, which go out whatever is
 * compacted). The checkpoint and everything that goes out live after it take at most a share of
 * the room (the total), and never more than half of it (the most): the next compaction is then at
 * least half the room away, and a small window with a large system prompt does not compact on every
 * step.
 *
 * Within the budget, in this order: the live part (the newest step at most a quarter of the room,
 * its tool outputs shortened past that; a new user turn whole), the summary (its output limit at
 * most a quarter of the room), the identifiers (at most a twentieth of the ceiling and 2,000
 * tokens), the user's earlier messages the record does not hold (an eighth of the total, at most
 * 2,000 tokens), and the record gets the rest, at most `keep`; the record always keeps the turn's
 * user message (its ends when it is longer than a quarter of what the record may take at most).
 *
 * What is never cut to make room (the live part, the checkpoint's fixed text, the summary, the
 * user's earlier messages and the turn's user message) goes out whatever the total leaves: beside a
 * large live step it takes the checkpoint past the total, the identifiers and the record's steps
 * then get nothing, and the summary's limit keeps the whole within the most.
 */

// The most of the room a compaction may keep, and the share it keeps by default (tunables.ts),
// exported here for the tests and the benchmarks.
export { DEFAULT_BUDGET_SHARE, MAX_BUDGET_SHARE } from '../tunables';

/** What a compaction may keep, in tokens. */
export interface KeepBudget {
  /** The ceiling less the frame. */
  room: number;
  /** The most the checkpoint and the live part after it take together: a share of the room. */
  total: number;
  /**
   * The most they take whatever the live part (counted at most its `step`): half the room. What is
   * never cut to make room (the live step, the summary, the user's earlier messages, the turn's
   * user message, the checkpoint's fixed text) may take them past `total`, never past this.
   */
  most: number;
  /** The most the newest step of a tool loop takes when it stays live (its tool outputs shortened past it). */
  step: number;
  /** The summary's output limit. */
  summary: number;
  /** The most the identifier list takes. */
  identifiers: number;
  /** The most the user's messages before the record take. */
  userWords: number;
  /** The most the record takes: `keep`. */
  record: number;
  /** A turn's user message longer than this opens the record with its first and last parts only. */
  userMessage: number;
}

export interface BudgetInput {
  /** The ceiling (the largest prompt let out without compacting). */
  ceiling: number;
  /** Tokens of the system messages and tool definitions. */
  frame: number;
  /** The `keep` option: the most the record takes. */
  keep: number;
  /** The `summaryOutputTokens` option: the most a summary takes. */
  summaryOutputTokens: number;
  /** Share of the room for the whole budget; at most {@link MAX_BUDGET_SHARE}. */
  share?: number;
}

/** The budget of a compaction at this ceiling and frame. */
export function keepBudget({ ceiling, frame, keep, summaryOutputTokens, share = DEFAULT_BUDGET_SHARE }: BudgetInput): KeepBudget {
  const room = Math.max(0, Math.floor(ceiling - frame));
  const total = Math.floor(room * Math.min(Math.max(share, 0), MAX_BUDGET_SHARE));
  return {
    room,
    total,
    most: Math.floor(room * MAX_BUDGET_SHARE),
    step: Math.floor(room / LIVE_STEP_ROOM_DIVISOR),
    // A summary needs a few tokens whatever the room: one cut at its limit fails the compaction (and is held).
    summary: Math.max(1, Math.min(summaryOutputTokens, Math.floor(room / SUMMARY_ROOM_DIVISOR))),
    identifiers: identifierBudget(ceiling),
    userWords: Math.min(USER_WORDS_MAX_TOKENS, Math.floor(total / USER_WORDS_TOTAL_DIVISOR)),
    record: Math.max(0, keep),
    userMessage: Math.floor(Math.min(Math.max(0, keep), total) / USER_MESSAGE_DIVISOR),
  };
}

/**
 * The summary's output limit beside a live step of `live` tokens (a new user turn, never shortened,
 * counted at most the budget's `step`), a checkpoint whose fixed text takes `wrapper` and a record
 * that holds at least `record` tokens (the turn's user message it opens with, at most the budget's
 * `userMessage`, or the record first chosen): its quarter of the room (and `summaryOutputTokens`),
 * within what the most leaves beside them. A summary needs a few tokens whatever the room: one cut
 * at its limit fails the compaction (and is held).
 */
export function summaryRoom(budget: KeepBudget, used: { live: number; wrapper: number; record: number }): number {
  return Math.max(1, Math.min(budget.summary, budget.most - used.live - used.wrapper - used.record));
}

/**
 * What the budget leaves the identifiers once the live part and the summary are known: what the
 * total leaves, within what the most leaves beside the checkpoint's fixed text and the least the
 * record holds (`record`, as in {@link summaryRoom}).
 */
export function identifiersRoom(budget: KeepBudget, used: { live: number; summary: number; wrapper: number; record: number }): number {
  const total = budget.total - used.live - used.summary;
  return Math.max(0, Math.min(budget.identifiers, total, budget.most - used.live - used.summary - used.wrapper - used.record));
}

/**
 * What the budget leaves the user's earlier messages once the live part, the summary, the
 * identifiers, the checkpoint's fixed text and the least the record holds (`record`, as in
 * {@link summaryRoom}) are known: their share whatever the total leaves, within the most (half the
 * room), so that a large live step does not cost the user's rules.
 */
export function userWordsRoom(budget: KeepBudget, used: { live: number; summary: number; identifiers: number; wrapper: number; record: number }): number {
  return Math.max(0, Math.min(budget.userWords, budget.most - used.live - used.summary - used.identifiers - used.wrapper - used.record));
}

/** What the budget leaves the record once the live part, the summary, the identifiers, the user's messages and the checkpoint's wrapper are known: at most `keep`. */
export function recordRoom(budget: KeepBudget, used: { live: number; summary: number; identifiers: number; userWords?: number; wrapper: number }): number {
  return Math.max(0, Math.min(budget.record, budget.total - used.live - used.summary - used.identifiers - (used.userWords ?? 0) - used.wrapper));
}
