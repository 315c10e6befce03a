/**
 * The baseline of `bench:ingest`'s cold start: the least a webhook receiver must load, an SQS
 * client that sends the body. Bundled as the functions are (infra/bundling.ts), never deployed.
 */
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";

const client = new SQSClient({});

export const handler = async (event: { body?: string }) => {
  await client.send(
    new SendMessageCommand({ QueueUrl: process.env.EVENTS_QUEUE_URL, MessageBody: event.body }),
  );
  return { statusCode: 200, body: "{}" };
};
