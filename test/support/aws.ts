import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, SQSClient } from "@aws-sdk/client-sqs";
import { inject } from "vitest";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../tools/local/emulators";

/** SDK clients pointed at the emulators started by the global setup. */
export function emulatorClients(endpoint = inject("fauxqsEndpoint")) {
  const common = { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  return {
    sqs: new SQSClient(common),
    s3: new S3Client({ ...common, forcePathStyle: true }),
    dynamo: new DynamoDBClient({ ...common, endpoint: inject("dynamoEndpoint") }),
  };
}

/** A name no other test uses, so tests can share one emulator. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string> = {}) {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!out.QueueUrl) throw new Error(`queue ${name} has no URL`);
  return out.QueueUrl;
}

export async function createBucket(s3: S3Client, name: string): Promise<string> {
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}
