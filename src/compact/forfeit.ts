import { LRUCache } from 'lru-cache';
import { type Engine, ownState, warnOnce } from '../engine';
import { PARSED_LIMIT } from '../tunables';
import { type StepView, anchorLength } from '../view';

/**
 * A checkpoint forfeited to a system prompt that changed (docs/design.md, "Many conversations"):
 * without a conversation name, a checkpoint is found only under the system messages it was written
 * with. Per opening (the scope and the messages a thread is indexed under, whatever the system
 * messages), the thread under which a checkpoint was last found or made: a step of that opening
 * under another one, with no checkpoint of its own, forfeited it, and the log says so once. As
 * many openings are remembered as parsed checkpoints are kept.
 */
const openings = ownState(() => new LRUCache<string, string>({ max: PARSED_LIMIT }));

const FORFEITED =
  "ai-compaction: a conversation came with other system messages than its checkpoint was written with: a checkpoint is found only under the system messages it was written with (a summary may hold what they hold), so it was not sent; name the conversation (providerOptions.compaction.conversation, for example useChat's id) to keep its checkpoint when its system prompt changes";

/** Notes a step's checkpoint (`sent`: the view that went out), or says once that an unnamed conversation forfeited one (`arrived`: what it found). */
export function noteForfeit(engine: Engine, arrived: StepView, sent: StepView, named: boolean): void {
  const { digests, threadDigest } = arrived;
  if (named || digests === undefined || threadDigest === undefined) return;
  const seen = openings(engine);
  const has = sent.checkpoint !== undefined;
  if (!has && seen.size === 0) return;
  const opening = digests.opening(anchorLength(arrived.conversation) ?? 1);
  if (has) seen.set(opening, threadDigest);
  else if (arrived.checkpoint === undefined && (seen.get(opening) ?? threadDigest) !== threadDigest) warnOnce(engine, 'forfeited-checkpoint', FORFEITED);
}
