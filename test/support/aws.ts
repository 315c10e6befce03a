import { randomUUID } from "node:crypto";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { inject } from "vitest";
import { emulatorClients } from "../../tools/local/clients";

/** SDK clients pointed at the emulators started by the global setup (or at another fauxqs). */
export function testClients(endpoint = inject("fauxqsEndpoint")) {
  return emulatorClients({ aws: endpoint, dynamodb: inject("dynamoEndpoint") });
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
