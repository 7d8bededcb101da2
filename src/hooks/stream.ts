import { recover, recoverable } from '../compact/recover';
import type { Engine } from '../engine';
import { isAbort } from '../errors';
import { withCompactionMetadata } from '../metadata';
import { overflowFromStreamPart } from '../overflow/recognize';
import type { Model, StreamPart, StreamResult, Usage } from '../prompt/types';
import { type StepView, paramsFor } from '../view';
import { type ShownCompaction, shownBy, streamPartsInserter } from './part';
import { learnFromUsage } from './usage';

/** Parts a stream may send before its first content part; held while a retry can still follow. */
const NON_CONTENT_PARTS = new Set(['stream-start', 'response-metadata', 'raw', 'ping', 'custom']);

/**
 * `doStream` with overflow recovery (docs/design.md, "Overflow recovery"): a rejection of the call,
 * or an overflow `error` part before any content part, is compacted and sent once more. The stream
 * is read ahead only to its first content part, and only where a retry can follow; nothing is held
 * after it.
 */
export async function streamWithRecovery(
  engine: Engine,
  step: StepView | undefined,
  model: Model,
  start: () => PromiseLike<StreamResult>,
  recovered = false,
): Promise<StreamResult> {
  let result: StreamResult;
  try {
    result = await start();
  } catch (error) {
    if (recovered || !recoverable(step, error)) throw error;
    return retry(engine, await recover(engine, step, error, model), model);
  }
  if (step === undefined || recovered) return { ...result, stream: observe(engine, result.stream, step, shownBy(step, engine.settings.streamPart)) };
  const reader = result.stream.getReader();
  const held: StreamPart[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (NON_CONTENT_PARTS.has(value.type)) {
      held.push(value);
      continue;
    }
    if (value.type === 'error' && !isAbort(value.error, step.params.abortSignal) && overflowFromStreamPart(value)) {
      await reader.cancel().catch(() => undefined);
      return retry(engine, await recover(engine, step, value.error, model), model);
    }
    held.push(value);
    break;
  }
  return { ...result, stream: observe(engine, replay(held, reader), step, shownBy(step, engine.settings.streamPart)) };
}

function retry(engine: Engine, next: StepView, model: Model): Promise<StreamResult> {
  return streamWithRecovery(engine, next, model, () => model.doStream(paramsFor(next)), true);
}

/**
 * Passes every part through at once. The compaction the step made is shown after `stream-start`
 * (`streamPart`, hooks/part.ts) and in the `finish` part's metadata, whose usage is learned from at the end.
 */
function observe(engine: Engine, stream: ReadableStream<StreamPart>, step: StepView | undefined, shown: ShownCompaction | undefined): ReadableStream<StreamPart> {
  if (step === undefined) return stream;
  let usage: Usage | undefined;
  const withParts = streamPartsInserter(shown);
  return stream.pipeThrough(
    new TransformStream<StreamPart, StreamPart>({
      transform(received, controller) {
        for (const part of withParts(received)) {
          if (part.type !== 'finish') {
            controller.enqueue(part);
            continue;
          }
          usage = part.usage as Usage | undefined;
          controller.enqueue(withCompactionMetadata(part, step.compaction));
        }
      },
      async flush() {
        await learnFromUsage(engine, step, usage);
      },
    }),
  );
}

/** Replays held parts, then pulls from the reader; cancelling cancels the inner stream. */
function replay(held: StreamPart[], reader: ReadableStreamDefaultReader<StreamPart>): ReadableStream<StreamPart> {
  let index = 0;
  return new ReadableStream<StreamPart>({
    async pull(controller) {
      if (index < held.length) {
        controller.enqueue(held[index++]!);
        return;
      }
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
