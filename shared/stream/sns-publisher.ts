import { PublishBatchCommand, type SNSClient } from "@aws-sdk/client-sns";
import {
  type BatchPublisherOptions,
  batchPublisher,
  entryAnswers,
  stringAttributes,
} from "./batch-publisher";
import type { StreamPublisher } from "./publish-batches";

export type SnsPublisherOptions = BatchPublisherOptions;

/**
 * The stream on an SNS topic: messages packed into `PublishBatch` requests
 * (`packPublishBatches`), sent in parallel; the entries SNS failed on its side (`SenderFault`
 * false: throttling, an internal error) and the requests that failed whole are retried, up to
 * `attempts` rounds with a doubling wait (`batchPublisher`). An entry SNS refuses as sent
 * (`SenderFault`), or one over 256 KiB, fails at once. Takes its client (tests and the local
 * stack pass one for fauxqs).
 *
 * @example const outcome = await snsStreamPublisher(snsClient(config.aws), topicArn).publish(messages)
 */
export function snsStreamPublisher(
  client: SNSClient,
  topicArn: string,
  options: SnsPublisherOptions = {},
): StreamPublisher {
  return batchPublisher(
    "PublishBatch",
    async (messages) => {
      const out = await client.send(
        new PublishBatchCommand({
          TopicArn: topicArn,
          PublishBatchRequestEntries: messages.map((m, i) => ({
            Id: String(i),
            Message: m.body,
            MessageAttributes: stringAttributes(m),
          })),
        }),
      );
      return entryAnswers(messages.length, out.Successful, out.Failed, "SNS");
    },
    options,
  );
}
