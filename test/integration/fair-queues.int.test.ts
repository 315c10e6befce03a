import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { ingestWebhook } from "../../shared/ingest/core";
import { NO_APP_MESSAGE_GROUP } from "../../shared/platform/constants";
import { projectionStores } from "../../shared/projector/stores";
import { resendEvent } from "../../tools/ops/inspect";
import { redrive } from "../../tools/ops/operations";
import { createBucket, createQueue, recordMessageGroups, testClients, uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { fixture } from "../support/fixtures";
import { ingestDeps, request } from "../support/ingest";
import { projectAll } from "../support/projection";

// Every queue that carries an app's events or jobs sends them in the app's message group: on a
// standard SQS queue that is a fair queue. fauxqs does not model fairness (nor keep the group of a
// standard queue): these tests read the group off the request the SDK sends to it.
const emulators = projectorOnEmulators("fair-queues-test");

describe("fair queues: each message in its app's group", () => {
  it("the ingest sends an event in its app's group, inline and as an S3 pointer", async () => {
    // Prepare
    const { sqs, s3 } = testClients();
    const groups = recordMessageGroups(sqs);
    const queueUrl = await createQueue(sqs, uniqueName("events"));
    const { deps } = ingestDeps({
      queue: sqsMessageQueue(sqs, queueUrl),
      oversizeStore: s3BlobStore(s3, await createBucket(s3, uniqueName("data"))),
    });
    const big = JSON.stringify({
      trigger: "message_sent",
      appId: "tenant-b",
      data: { t: "x".repeat(1_100_000) },
    });
    // Act
    const statuses = [
      (await ingestWebhook(request({ body: '{"trigger":"group_created","appId":"tenant-a"}' }), deps))
        .response,
      (await ingestWebhook(request({ body: big }), deps)).response,
      (await ingestWebhook(request({ body: '{"trigger":"group_created"}' }), deps)).response,
    ].map((r) => r.statusCode);
    // Assess
    expect(statuses).toEqual([200, 200, 200]);
    expect(groups).toEqual(["tenant-a", "tenant-b", NO_APP_MESSAGE_GROUP]);
  });

  it("resend puts an event back in its app's group", async () => {
    const { sqs, s3 } = testClients();
    const groups = recordMessageGroups(sqs);
    const queueUrl = await createQueue(sqs, uniqueName("events"));
    const body = '{"trigger":"group_created","appId":"tenant-c"}';
    await resendEvent(sqs, s3, await createBucket(s3, uniqueName("data")), queueUrl, {
      body,
      trigger: "group_created",
      appId: "tenant-c",
      receivedAt: 1_700_000_000_000,
      eventId: "a".repeat(64),
    });
    expect(groups).toEqual(["tenant-c"]);
  });

  it("the projector sends a recording job in its app's group", async () => {
    const { sqs } = testClients();
    const groups = recordMessageGroups(sqs);
    const jobsUrl = await createQueue(sqs, uniqueName("recordings"));
    const stores = projectionStores(emulators.dynamo, await emulators.tableSet());
    const deps = { ...emulators.depsFor(stores), recordingJobs: sqsMessageQueue(sqs, jobsUrl) };
    const body = JSON.stringify(fixture("recording_generated"));
    await projectAll([{ body, receivedAt: 1_696_940_000_000, eventId: "r1" }], deps);
    expect(groups).toEqual([fixture("recording_generated").appId]);
  });

  it("redrive sends each dead letter back in the group of its appId attribute", async () => {
    // Prepare: dead letters as the ingest and the projector stamp them, and one sent by hand.
    const { sqs } = testClients();
    const deadLetterUrl = await createQueue(sqs, uniqueName("events-dlq"));
    const queueUrl = await createQueue(sqs, uniqueName("events"));
    for (const appId of ["tenant-a", "tenant-b", undefined]) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: deadLetterUrl,
          MessageBody: "{}",
          MessageAttributes: appId ? { appId: { DataType: "String", StringValue: appId } } : {},
        }),
      );
    }
    const groups = recordMessageGroups(sqs);
    // Act
    const moved = await redrive(sqs, deadLetterUrl, queueUrl);
    // Assess
    expect(moved).toBe(3);
    expect(groups.toSorted()).toEqual([NO_APP_MESSAGE_GROUP, "tenant-a", "tenant-b"].toSorted());
    const back = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ["All"],
      }),
    );
    expect(back.Messages?.map((m) => m.MessageAttributes?.appId?.StringValue).toSorted()).toEqual(
      ["tenant-a", "tenant-b", undefined].toSorted(),
    );
  });
});
