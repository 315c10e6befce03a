import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { BodyReader, StreamCopy } from "./consumer";
import { type ErasureNotice, parseStreamMessage, type StreamEnvelope } from "./envelope";

/**
 * The worked consumer of docs/stream.md: a service of your own that keeps a copy of the four
 * tables for the apps its subscriber queue follows (cdk.json `streamSubscribers`), exact whatever
 * the order and the duplicates. Copy it and put your own reactions in `onDelivery`; keep the
 * order of the steps: a message is deleted only once it is folded and acted on (at least once,
 * never lost).
 */

/**
 * Reads a body the envelope points to, from the data bucket (needs `s3:GetObject` on `oversize/*`).
 *
 * @example const copy = streamCopy(s3BodyReader(new S3Client({})))
 */
export function s3BodyReader(s3: S3Client): BodyReader {
  return async ({ bucket, key }) => {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return (await out.Body?.transformToString("utf8")) ?? "";
  };
}

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
 * subscriber's dead-letter queue (and its alarm). Returns how many messages it handled.
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
    const received = messages.flatMap((m) => {
      try {
        return [{ receipt: m.ReceiptHandle, envelope: parseStreamMessage(m.Body ?? "") }];
      } catch {
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
    if (received.length > 0)
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: received.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receipt })),
        }),
      );
    handled += received.length;
  }
  return handled;
}
