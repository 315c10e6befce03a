import { createHash } from "node:crypto";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import type { OversizePointer } from "../../shared/contracts/queue-messages";
import { type IngestDependencies, ingestWebhook } from "../../shared/ingest/core";
import { staticCredentialSource } from "../../shared/ingest/credentials";
import { startFauxqsEmulator } from "../../tools/local/emulators";
import { createBucket, createQueue, testClients, uniqueName } from "../support/aws";
import { fixtureText } from "../support/fixtures";
import { DEFAULT_CREDENTIALS, RECEIVED_AT, request } from "../support/ingest";

const fixture = fixtureText("group_created");
const limits = { maxBodyBytes: 6_000_000, inlineBodyLimitBytes: 1_044_480, maxJsonDepth: 64 };

async function receiveOne(sqs: SQSClient, queueUrl: string) {
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MessageAttributeNames: ["All"], WaitTimeSeconds: 1 }),
  );
  return out.Messages ?? [];
}

describe("ingest against fauxqs (SQS and S3)", () => {
  const { sqs, s3 } = testClients();
  let queueUrl: string;
  let bucket: string;
  let deps: IngestDependencies;

  beforeAll(async () => {
    queueUrl = await createQueue(sqs, uniqueName("events"));
    bucket = await createBucket(s3, uniqueName("data"));
    deps = {
      credentials: staticCredentialSource(DEFAULT_CREDENTIALS),
      queue: sqsMessageQueue(sqs, queueUrl),
      oversizeStore: s3BlobStore(s3, bucket),
      limits,
    };
  });

  it("delivers the body byte-identical, with trigger, appId, receivedAt and eventId attributes", async () => {
    const result = await ingestWebhook(request({ body: fixture }), deps);
    expect(result.response.statusCode).toBe(200);
    const [message, ...rest] = await receiveOne(sqs, queueUrl);
    expect(rest).toHaveLength(0);
    expect(message?.Body).toBe(fixture);
    expect(message?.MessageAttributes).toEqual({
      trigger: { DataType: "String", StringValue: "group_created" },
      appId: { DataType: "String", StringValue: "2598234fa1e3b9c" },
      receivedAt: { DataType: "Number", StringValue: String(RECEIVED_AT) },
      eventId: { DataType: "String", StringValue: createHash("sha256").update(fixture).digest("hex") },
    });
  });

  it("stores a body above the SQS limit in S3 and enqueues a pointer", async () => {
    const body = JSON.stringify({
      trigger: "message_sent",
      appId: "app1",
      data: { text: "é".repeat(700_000) },
    });
    const result = await ingestWebhook(request({ body }), deps);
    expect(result.response.statusCode).toBe(200);
    const [message] = await receiveOne(sqs, queueUrl);
    expect(message?.MessageAttributes?.bodyLocation?.StringValue).toBe("s3");
    const pointer = JSON.parse(message?.Body ?? "{}") as OversizePointer;
    expect(pointer.bucket).toBe(bucket);
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: pointer.key }));
    expect(await object.Body?.transformToString("utf8")).toBe(body);
  });

  it("answers 503 when the queue does not exist", async () => {
    const missing = { ...deps, queue: sqsMessageQueue(sqs, `${queueUrl}-missing`) };
    const result = await ingestWebhook(request(), missing);
    expect(result.response.statusCode).toBe(503);
  });

  it("answers 503, and never 200, while the emulator is down", async () => {
    const doomed = await startFauxqsEmulator();
    const clients = testClients(doomed.endpoint);
    const url = await createQueue(clients.sqs, "events");
    await createBucket(clients.s3, "data");
    const local: IngestDependencies = {
      ...deps,
      queue: sqsMessageQueue(clients.sqs, url),
      oversizeStore: s3BlobStore(clients.s3, "data"),
    };
    expect((await ingestWebhook(request(), local)).response.statusCode).toBe(200);
    await doomed.stop();
    const big = JSON.stringify({
      trigger: "message_sent",
      appId: "app1",
      data: { text: "x".repeat(1_100_000) },
    });
    const statuses = [
      (await ingestWebhook(request(), local)).response.statusCode,
      (await ingestWebhook(request({ body: big }), local)).response.statusCode,
    ];
    expect(statuses).toEqual([503, 503]);
  });
});
