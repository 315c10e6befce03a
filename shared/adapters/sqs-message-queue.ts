import { type MessageAttributeValue, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { MessageQueue, QueueMessage } from "../ports/message-queue";

function toAttributes(attributes: QueueMessage["attributes"]): Record<string, MessageAttributeValue> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => [
      name,
      typeof value === "number"
        ? { DataType: "Number", StringValue: String(value) }
        : { DataType: "String", StringValue: value },
    ]),
  );
}

/**
 * An SQS queue as a `MessageQueue`. Takes its client, so tests and the local stack pass one
 * pointed at fauxqs. A message's `groupId` is sent as its `MessageGroupId` (fair queues; fauxqs
 * accepts it and ignores it on a standard queue).
 *
 * @example await sqsMessageQueue(sqsClient(settings), url).send({ body: "{}", attributes: { trigger: "x" } })
 */
export function sqsMessageQueue(client: SQSClient, queueUrl: string): MessageQueue {
  return {
    async send(message) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: message.body,
          MessageAttributes: toAttributes(message.attributes),
          MessageGroupId: message.groupId,
        }),
      );
    },
  };
}
