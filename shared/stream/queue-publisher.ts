import { SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import {
  type BatchPublisherOptions,
  batchPublisher,
  entryAnswers,
  stringAttributes,
} from "./batch-publisher";
import type { StreamPublisher } from "./publish-batches";

/**
 * The stream's messages sent straight to one subscriber's queue, as SNS delivers them with raw
 * message delivery: the envelope as the body, the `appId`, `trigger` and `kind` attributes as SQS
 * String message attributes. What `replay --to-subscriber` sends through, so that a backfill of
 * one consumer reaches no other; packed, billed and retried as the topic's publisher is
 * (`batchPublisher`: `SendMessageBatch`, at most 10 entries and 256 KiB a request, 64 KiB chunks).
 *
 * @example await queueStreamPublisher(sqs, subscriberQueueUrl).publish(messages)
 */
export function queueStreamPublisher(
  client: SQSClient,
  queueUrl: string,
  options: BatchPublisherOptions = {},
): StreamPublisher {
  return batchPublisher(
    "SendMessageBatch",
    async (messages) => {
      const out = await client.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.map((m, i) => ({
            Id: String(i),
            MessageBody: m.body,
            MessageAttributes: stringAttributes(m),
          })),
        }),
      );
      return entryAnswers(messages.length, out.Successful, out.Failed, "SQS");
    },
    options,
  );
}
