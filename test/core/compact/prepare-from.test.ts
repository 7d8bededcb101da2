import { describe, expect, it } from 'vitest';
import { leftAt, preparingFrom } from '../../../src/compact/prepare';
import { PrefixDigests } from '../../../src/prompt/hash';
import type { Message } from '../../../src/prompt/types';
import { FIXED_ESTIMATOR, estimateMessages } from '../../../src/sizing/estimate';
import type { StoredCheckpoint, Thread } from '../../../src/store/format';
import { type StepView, totalSize } from '../../../src/view';
import { assistant, user } from '../../support/harness';
import { tokens } from '../../support/prepare-fixtures';

// Where the compaction that made a conversation's checkpoint left the prompt (docs/design.md,
// "Preparing ahead"): from the step that first sent it when this conversation extends that step,
// else from the end of the live part the checkpoint was made for; never from a step of a branch.

/** 12 messages of 100 tokens each (a user message and its reply, 6 times). */
const opening = (): Message[] => Array.from({ length: 6 }, (_, index) => [user(`${index} ${tokens(99)}`), assistant(`${index} ${tokens(99, 'a')}`)]).flat();

async function viewOf(conversation: Message[], sent: { length: number; digest: string } | undefined, size: number): Promise<StepView> {
  const digests = new PrefixDigests('', conversation);
  const checkpoint = { digest: await digests.of(4), length: 4 } as StoredCheckpoint;
  const thread = { checkpoints: [{ length: 4, digest: checkpoint.digest, ...(sent === undefined ? {} : { sent }) }] } as unknown as Thread;
  return { conversation, digests, checkpoint, thread, estimator: FIXED_ESTIMATOR, size: { counted: 0, estimated: size } } as unknown as StepView;
}

/** Where the compaction left the prompt, from the step's own size (facts.ts measures it once). */
async function leftOf(made: Promise<StepView>): Promise<number | undefined> {
  const view = await made;
  return leftAt(view, totalSize(view));
}

describe('preparingFrom', () => {
  const band = 13_600;
  const limit = 17_000;

  it('should prepare from halfway when the step that first sent the checkpoint left the prompt in the band', async () => {
    const conversation = opening();
    const sent = { length: 8, digest: await new PrefixDigests('', conversation).of(8) };
    // 14,000 now; what came after the sending step (messages 8 to 12) is 398 tokens: it left 13,602
    expect(estimateMessages(conversation, 8, 12)).toBe(398);
    expect(preparingFrom(await leftOf(viewOf(conversation, sent, 14_000)), band, limit)).toBe((13_602 + 17_000) / 2);
  });

  it('should not take the sending step of another branch, but the end of the live part the checkpoint was made for', async () => {
    const main = opening();
    const sent = { length: 8, digest: await new PrefixDigests('', main).of(8) };
    // The branch shares the first 6 messages (the checkpoint's 4 and its live step), then parts.
    const branch = [...main.slice(0, 6), user(`b ${tokens(99)}`), assistant(`b ${tokens(99, 'a')}`), ...main.slice(8)];
    // Its live part ended at 5 (the user message after the 4 covered): 697 tokens after it, the prompt left at 13,303, under the band
    expect(estimateMessages(branch, 5, 12)).toBe(697);
    expect(preparingFrom(await leftOf(viewOf(branch, sent, 14_000)), band, limit)).toBe(band);
    // The main conversation itself is judged by its sending step: it left 13,602, so halfway
    expect(preparingFrom(await leftOf(viewOf(main, sent, 14_000)), band, limit)).toBe(15_301);
  });
});
