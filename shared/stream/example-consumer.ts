import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { StreamCopy } from "@webhook-backend/stream";
import {
  type ErasureNotice,
  parseStreamMessage,
  type StreamEnvelope,
  UnknownStreamMessageError,
} from "@webhook-backend/stream";

/**
 * The worked consumer of docs/stream.md: a service of your own that keeps a copy of the four
 * tables for the apps its subscriber queue follows (cdk.json `streamSubscribers`), exact whatever
 * the order and the duplicates. Copy it and put your own reactions in `onDelivery`; keep the
 * order of the steps: a message is deleted only once it is folded and acted on (at least once,
 * never lost).
 */

export interface ExampleConsumerOptions {
  sqs: SQSClient;
  /** The subscriber's queue (a stack output deployed; `stack.json`'s `stream.subscribers` locally). */
  queueUrl: string;
  copy: StreamCopy;
  /** Your reaction to each delivery, after the copy holds it (a welcome message, a CRM sync…). */
  onDelivery?: (envelope: Extract<StreamEnvelope, { kind: "delivery" }>) => Promise<void>;
  /**
   * Your erasure of what you derived yourself (the copy has forgotten the app's items: `erase`).
   * For one user, rebuild the app's copy from `npx webhook replay --to-stream --app <id>`.
   */
  onErasure?: (notice: ErasureNotice) => Promise<void>;
  /**
   * A message of a kind (or `schemaVersion`) this package does not know, a later contract's: it is
   * deleted unhandled, never left to reach the dead-letter queue. @default a console warning
   */
  onSkipped?: (error: UnknownStreamMessageError) => void;
  /** Stop when this aborts, or when a receive finds the queue empty (`untilEmpty`). */
  signal?: AbortSignal;
  untilEmpty?: boolean;
  /** Long polling, seconds. @default 10 */
  waitSeconds?: number;
}

/**
 * Receives batches from the subscriber queue, folds their deliveries into the copy, acts on
 * erasure notices, then deletes what it handled. A whole app's erasure is acted on first, so that
 * a delivery of the app received before the erasure ended (published before it: nothing is
 * ordered) reaches neither the copy nor `onDelivery`, in the notice's batch or any later one. A
 * message that is not a stream envelope is left in the queue: after its receives it goes to the
 * subscriber's dead-letter queue (and its alarm); one of a kind it does not know is skipped,
 * reported and deleted. Reconcile facts are folded as deliveries. Returns how many messages it
 * handled.
 *
 * @example await consumeStream({ sqs, queueUrl, copy: streamCopy(s3BodyReader(s3)), signal })
 */
export async function consumeStream(options: ExampleConsumerOptions): Promise<number> {
  const { sqs, queueUrl, copy } = options;
  let handled = 0;
  while (!options.signal?.aborted) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: options.untilEmpty ? 1 : (options.waitSeconds ?? 10),
      }),
      { abortSignal: options.signal },
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      if (options.untilEmpty) break;
      continue;
    }
    const skipped: Array<string | undefined> = [];
    const received = messages.flatMap((m) => {
      try {
        return [{ receipt: m.ReceiptHandle, envelope: parseStreamMessage(m.Body ?? "") }];
      } catch (error) {
        if (error instanceof UnknownStreamMessageError) {
          (options.onSkipped ?? ((e) => console.warn(`stream message skipped: ${e.message}`)))(error);
          skipped.push(m.ReceiptHandle);
        }
        return [];
      }
    });
    const envelopes = received.map((r) => r.envelope);
    const notices = envelopes.filter((e): e is ErasureNotice => e.kind === "erasure");
    for (const notice of notices) if (notice.scope === "app") copy.erase(notice);
    await copy.apply(envelopes);
    for (const envelope of envelopes)
      if (envelope.kind === "delivery" && !copy.drops(envelope)) await options.onDelivery?.(envelope);
    // One user's erasure after the batch's deliveries: those published before it are erased with
    // the rest (the app's copy is dropped, to be rebuilt from a replay once what was in flight has
    // drained).
    for (const notice of notices) {
      if (notice.scope !== "app") copy.erase(notice);
      await options.onErasure?.(notice);
    }
    // A batch of only messages that are no envelope has nothing to delete (SQS refuses an empty batch).
    const done = [...received.map((r) => r.receipt), ...skipped];
    if (done.length > 0)
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: done.map((receipt, i) => ({ Id: String(i), ReceiptHandle: receipt })),
        }),
      );
    handled += done.length;
  }
  return handled;
}
