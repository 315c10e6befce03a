import { type MessageAttributeValue, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";

/** A message for the events queue: the body and its string/number attributes. */
export interface QueueMessage {
  body: string;
  attributes: Record<string, string | number>;
}

/** Durable hand-off of a message. Resolves only once the queue has accepted it. */
export interface MessageQueue {
  send(message: QueueMessage): Promise<void>;
}

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
 * An SQS queue. Takes its client, so tests and the local stack pass one pointed at fauxqs.
 *
 * @example await sqsMessageQueue(new SQSClient({}), url).send({ body: "{}", attributes: { trigger: "x" } })
 */
export function sqsMessageQueue(client: SQSClient, queueUrl: string): MessageQueue {
  return {
    async send(message) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: message.body,
          MessageAttributes: toAttributes(message.attributes),
        }),
      );
    },
  };
}
