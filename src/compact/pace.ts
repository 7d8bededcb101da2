import type { PaceRecord } from '../store/format';
import { RECENT_MEASURES } from '../tunables';
import type { Pace } from './policy';

/**
 * How fast a conversation grows (docs/design.md, "The policy"), from the record of its last step
 * that its thread keeps in the store (so that every instance reads the same pace). Pure: the
 * clock's reading is an argument.
 */

/** What a step brings: when it arrived at the middleware, its conversation's length, its prompt's size then (and whether it rests on a provider's count), and the checkpoint it arrived with. */
export interface Arrival {
  at: number;
  length: number;
  size: number;
  /** Whether its size rests on a provider's count, and what was estimated on top of that count. */
  counted: boolean;
  sinceCount: number;
  checkpoint: string | undefined;
}

/** Whether `arrival` extends the step recorded as `before` (a longer conversation). */
function extendsStep(before: PaceRecord | undefined, arrival: Arrival): before is PaceRecord {
  return before !== undefined && before.length < arrival.length;
}

/**
 * What a step grew by since the step before: the difference of their sizes when both are of the
 * same kind; when this one rests on a first count after estimates (which says how large the prompt
 * was all along, not how much it grew), what was estimated on top of that count.
 */
function growthOf(before: PaceRecord, arrival: Arrival): number {
  return arrival.counted && before.counted !== true ? arrival.sinceCount : arrival.size - before.size;
}

/**
 * The pace as of a step that arrived as `arrival`, after the step recorded as `before`: the most
 * it grew in one recent step, the mean growth (what each step brought as it arrived: what a step
 * compacts is no growth), the mean time between two (from one step going out to the next
 * arriving: the model's reply, its tools and the person, not a wait in the middleware) and the
 * time since its checkpoint last changed (by this instance or another), and the pause before this
 * step (`idle`: from the step before going out to this one arriving). `undefined` when this
 * conversation does not extend the step before (a branch, a retry).
 */
export function paceOf(before: PaceRecord | undefined, arrival: Arrival, now: number): Pace | undefined {
  if (!extendsStep(before, arrival)) return undefined;
  const { growths, intervals } = extended(before, arrival);
  const shrunkAt = arrival.checkpoint !== before.checkpoint ? now : before.shrunkAt;
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
  return {
    growth: Math.max(...growths),
    // A checkpoint another instance made between two steps shrinks the prompt: that is no growth.
    meanGrowth: Math.max(1, mean(growths.filter((growth) => growth > 0))),
    meanInterval: mean(intervals),
    idle: intervals[0]!,
    ...(shrunkAt === undefined ? {} : { sinceShrunk: now - shrunkAt }),
  };
}

/**
 * The record of a step as it goes out at `now` (its conversation `length` long, its prompt `size`,
 * with `checkpoint`; `changed`: it compacted or sent a prepared checkpoint): kept for the next.
 */
export function paceRecord(before: PaceRecord | undefined, arrival: Arrival, now: number, out: { size: number; counted: boolean; checkpoint: string | undefined; changed: boolean }): PaceRecord {
  const { growths, intervals } = extendsStep(before, arrival) ? extended(before, arrival) : { growths: [], intervals: [] };
  const changed = out.changed || (before !== undefined && out.checkpoint !== before.checkpoint);
  const shrunkAt = changed ? now : before?.shrunkAt;
  return {
    at: now,
    length: arrival.length,
    size: Math.max(0, Math.round(out.size)),
    ...(out.counted ? { counted: true } : {}),
    growths,
    intervals,
    ...(out.checkpoint === undefined ? {} : { checkpoint: out.checkpoint }),
    ...(shrunkAt === undefined ? {} : { shrunkAt }),
  };
}

function extended(before: PaceRecord, arrival: Arrival): { growths: number[]; intervals: number[] } {
  return {
    growths: [growthOf(before, arrival), ...before.growths].slice(0, RECENT_MEASURES),
    intervals: [Math.max(0, arrival.at - before.at), ...before.intervals].slice(0, RECENT_MEASURES),
  };
}
