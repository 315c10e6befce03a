import { CreateTopicCommand, type SNSClient } from "@aws-sdk/client-sns";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { projectSqsBatch } from "../../shared/projector/batch";
import { projectionStores } from "../../shared/projector/stores";
import { parseStreamMessage, type StreamEnvelope } from "../../shared/stream/envelope";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { subscribeQueue } from "../../shared/stream/subscriptions";
import { createActivityTable } from "../../tools/local/provision";
import { ingestRecordFor, sqsEvent } from "../../tools/local/sqs-event";
import { replayToStream } from "../../tools/ops/stream-replay";
import { drainBodies, testClients, uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { fixture, memberAddedBody } from "../support/fixtures";

/**
 * `replay --to-stream` against what the projector really did (#51 item 4), on DynamoDB Local and
 * fauxqs: the archive written by the projector's own batch, the topic and a raw subscriber queue
 * on fauxqs's SNS.
 */
const env = projectorOnEmulators("stream-replay");
const { sns, sqs } = testClients();
const RECEIVED = Date.UTC(2026, 3, 2, 9);
const DAY = "2026-04-02";

/** A message of `appId` whose text makes its envelope pass SNS's 256 KiB (but not SQS's 1 MiB). */
function large(appId: string): string {
  const e = fixture("message_sent");
  e.appId = appId;
  e.data.message.data.text = "x".repeat(300_000);
  return JSON.stringify(e);
}

/** Projects `bodies` as one batch received at `RECEIVED`, through the projector's own batch (archive, quarantine, tables). */
async function projected(bodies: readonly string[]) {
  const stores = projectionStores(env.dynamo, await env.tableSet());
  const deps = env.depsFor(stores);
  const records = bodies.map((body, i) => ingestRecordFor(body, RECEIVED + i));
  const response = await projectSqsBatch(sqsEvent(records), undefined, deps, env.silent());
  expect(response.batchItemFailures).toEqual([]);
  const activityTable = uniqueName("activity");
  await createActivityTable(env.dynamo, activityTable);
  const lease = archiveLease({ doc: documentClient(env.dynamo), tableName: activityTable }, Date.now);
  return { deps, lease };
}

/** A topic with one raw subscriber queue (no filter). */
async function subscribed(client: SNSClient, queues: SQSClient) {
  const topicArn = (await client.send(new CreateTopicCommand({ Name: uniqueName("stream") }))).TopicArn ?? "";
  const queue = await subscribeQueue(client, queues, {
    topicArn,
    queueName: uniqueName("subscriber"),
    rawDelivery: true,
  });
  return { topicArn, queue };
}

/** Every envelope the queue holds now (received and deleted). */
const drain = async (queueUrl: string): Promise<StreamEnvelope[]> =>
  (await drainBodies(sqs, queueUrl)).map(parseStreamMessage);

describe("replay --to-stream and what the projector did (#51 item 4)", () => {
  it("skips a delivery the projector quarantined for a key DynamoDB cannot hold (a valid archive line with a quarantine record), and counts it refused", async () => {
    // Prepare: alice and bob join; a third member's uid is 1,100 characters (the memberships sort key).
    const appId = uniqueName("app");
    const long = "u".repeat(1100);
    const { deps, lease } = await projected(
      ["alice", "bob", long].map((uid) => memberAddedBody(appId, "g-1", uid)),
    );
    const { topicArn, queue } = await subscribed(sns, sqs);

    // Act
    const report = await replayToStream(env.s3, deps.dataStore, snsStreamPublisher(sns, topicArn), lease, {
      appId,
      from: DAY,
      to: DAY,
    });

    // Assess: the two accepted deliveries on the stream; the quarantined one refused, as the projector refused it.
    const received = await drain(queue.queueUrl);
    expect(received).toHaveLength(2);
    for (const e of received) expect(e.kind === "delivery" && e.body?.includes(long)).toBe(false);
    expect(report).toMatchObject({ deliveries: 2, refused: 1, failed: [] });
  }, 60_000);

  it("a dry run counts the requests and chunks the run bills, a body past SNS's 256 KiB (sent as a pointer) included", async () => {
    // Prepare: a delivery whose envelope passes SNS's limit.
    const appId = uniqueName("app");
    const { deps, lease } = await projected([large(appId)]);
    const { topicArn, queue } = await subscribed(sns, sqs);
    const window = { appId, from: DAY, to: DAY };

    // Act
    const dry = await replayToStream(env.s3, deps.dataStore, snsStreamPublisher(sns, topicArn), lease, {
      ...window,
      dryRun: true,
    });
    const run = await replayToStream(
      env.s3,
      deps.dataStore,
      snsStreamPublisher(sns, topicArn),
      lease,
      window,
    );

    // Assess: the run sent it as a pointer; the dry run said so, request for request.
    const received = await drain(queue.queueUrl);
    expect(received.filter((e) => e.kind === "delivery" && e.bodyObject !== undefined)).toHaveLength(1);
    expect(run).toMatchObject({ deliveries: 1, failed: [] });
    expect({ deliveries: dry.deliveries, requests: dry.requests, chunks: dry.chunks }).toEqual({
      deliveries: run.deliveries,
      requests: run.requests,
      chunks: run.chunks,
    });
    expect(run.requests).toBeGreaterThan(0);
  }, 60_000);
});
