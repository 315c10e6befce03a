import { execFile } from "node:child_process";
import { join } from "node:path";
import { CreateTopicCommand, type SNSClient } from "@aws-sdk/client-sns";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { projectSqsBatch } from "../../shared/projector/batch";
import { projectionStores } from "../../shared/projector/stores";
import { parseStreamMessage, type StreamEnvelope } from "../../shared/stream/envelope";
import type { StreamMessage } from "../../shared/stream/publish-batches";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { filterPolicyOf, type StreamSubscriber } from "../../shared/stream/subscribers";
import { LISTENER_QUEUE_PREFIX, subscribeQueue } from "../../shared/stream/subscriptions";
import { UsageError, UserFacingError } from "../../tools/cli/program";
import { createActivityTable } from "../../tools/local/provision";
import { ingestRecordFor, sqsEvent } from "../../tools/local/sqs-event";
import { recentEvents } from "../../tools/ops/recent";
import { findSubscriber, replayToStream, replayToSubscriber } from "../../tools/ops/stream-replay";
import { drainBodies, drainQueue, emulatorStackDir, testClients, uniqueName } from "../support/aws";
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
const ROOT = new URL("../../", import.meta.url).pathname;

/** A message of `appId` whose text makes its envelope pass SNS's 256 KiB (but not SQS's 1 MiB). */
function large(appId: string): string {
  const e = fixture("message_sent");
  e.appId = appId;
  e.data.message.data.text = "x".repeat(300_000);
  return JSON.stringify(e);
}

/** A body of `trigger`'s template in `appId`. */
function bodyOf(trigger: string, appId: string): string {
  return JSON.stringify({ ...fixture(trigger), appId });
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

/** A topic with three subscribers: crm (app A's group triggers), all (no filter), wrapped (no raw delivery). */
async function subscribers(crmApp = "app-a") {
  const topicArn = (await sns.send(new CreateTopicCommand({ Name: uniqueName("stream") }))).TopicArn ?? "";
  const subscribe = (name: string, subscriber: StreamSubscriber) =>
    subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName(name),
      filterPolicy: filterPolicyOf(subscriber),
      rawDelivery: subscriber.rawDelivery ?? true,
    });
  return {
    topicArn,
    crm: await subscribe("crm", { name: "crm", apps: [crmApp], triggers: ["group:*"] }),
    all: await subscribe("all", { name: "all" }),
    wrapped: await subscribe("wrapped", { name: "wrapped", rawDelivery: false }),
  };
}

/** Messages as a consumer compares them: body and attributes, in a stable order. */
const sorted = (messages: Array<{ body: string; attributes: Record<string, string | undefined> }>) =>
  messages.map((m) => JSON.stringify(m)).sort();

describe("replay --to-subscriber (#51 item 3)", () => {
  /** Two apps' histories of a group, a membership and a message. */
  const history = (apps: readonly string[]) =>
    apps.flatMap((appId) =>
      ["group_created", "group_member_added", "message_sent"].map((trigger) => bodyOf(trigger, appId)),
    );

  it("sends one subscriber what the topic would have delivered to it (same envelopes, ids and attributes, its filter policy applied) and nothing to any other; the dry run counts it exactly", async () => {
    // Prepare: two apps' history, projected; the topic's subscribers, crm following app A's groups.
    const [appA, appB] = [uniqueName("app-a"), uniqueName("app-b")];
    const { deps, lease } = await projected(history([appA, appB]));
    const { topicArn, crm, all } = await subscribers(appA);
    const declared = { crm: crm.queueUrl, all: all.queueUrl };
    const subscriber = await findSubscriber({ sns, sqs }, topicArn, "crm", declared);
    const window = { from: DAY, to: DAY };

    // Act: the dry run, the replay to crm alone, then (for comparison) the replay to the topic.
    const dry = await replayToSubscriber(env.s3, sqs, deps.dataStore, subscriber, lease, {
      ...window,
      dryRun: true,
    });
    const run = await replayToSubscriber(env.s3, sqs, deps.dataStore, subscriber, lease, window);
    const toCrm = await drainQueue(sqs, crm.queueUrl);
    const toOthers = await drainQueue(sqs, all.queueUrl);
    await replayToStream(env.s3, deps.dataStore, snsStreamPublisher(sns, topicArn), lease, window);
    const viaTopic = await drainQueue(sqs, crm.queueUrl);

    // Assess: app A's two group deliveries, as the topic delivers them to crm; nothing to "all".
    expect(
      toCrm
        .map((m) => parseStreamMessage(m.body))
        .map((e) => e.kind === "delivery" && e.trigger)
        .sort(),
    ).toEqual(["group_created", "group_member_added"]);
    expect(sorted(toCrm)).toEqual(sorted(viaTopic));
    expect(toOthers).toEqual([]);
    // (The file's bucket holds other tests' apps of the day too: its filter kept them from crm.)
    expect(run).toMatchObject({ deliveries: 2, refused: 0, failed: [] });
    expect(run.filtered).toBeGreaterThanOrEqual(4);
    expect(dry).toEqual({ ...run, dryRun: true });
  }, 60_000);

  it("finds a running listener's queue by its name; refuses a subscriber without raw delivery (SNS's signed wrapper) and a name no subscriber has", async () => {
    // Prepare
    const { topicArn, crm, wrapped } = await subscribers();
    const listener = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName(`${LISTENER_QUEUE_PREFIX}x`),
      rawDelivery: true,
      filterPolicy: filterPolicyOf({ name: "listen", apps: ["app-b"] }),
    });
    const declared = { crm: crm.queueUrl, wrapped: wrapped.queueUrl };
    const name = listener.queueUrl.split("/").pop() ?? "";

    // Act
    const found = await findSubscriber({ sns, sqs }, topicArn, name, declared);
    const refusals = await Promise.all(
      ["wrapped", "crn", `${LISTENER_QUEUE_PREFIX}gone`].map((n) =>
        findSubscriber({ sns, sqs }, topicArn, n, declared).catch((error: unknown) => error),
      ),
    );

    // Assess
    expect(found).toEqual({ name, queueUrl: listener.queueUrl, policy: { appId: ["app-b"] } });
    expect(refusals[0]).toBeInstanceOf(UserFacingError);
    expect(String(refusals[0])).toMatch(
      /signs with its own key: a replay cannot write one its consumer would verify/,
    );
    expect(refusals[1]).toBeInstanceOf(UsageError);
    expect(String(refusals[1])).toMatch(/no subscriber "crn" \(did you mean "crm"\?/);
    expect(String(refusals[2])).toMatch(
      /no listener queue webhook-listen-gone: is its `webhook listen` still running\?/,
    );
  }, 60_000);

  it("as a command: refuses a replay to the stream or a subscriber without a window (exit 2, the window to give); a dry run to one subscriber counts what it would send", async () => {
    // Prepare: the local stack's state naming the emulators, the bucket and the topic.
    await projected(history([uniqueName("app-a")]));
    const { topicArn, crm } = await subscribers();
    const dir = emulatorStackDir({
      bucket: env.bucket,
      stream: {
        topicArn,
        unpublished: { url: "" },
        subscribers: { crm: { url: crm.queueUrl, deadLetterUrl: "" } },
      },
    });

    // Act
    const unbounded = await webhook(dir, "replay", "--to-stream");
    const dry = await webhook(
      dir,
      "replay",
      "--to-subscriber",
      "crm",
      "--from",
      DAY,
      "--to",
      DAY,
      "--dry-run",
    );

    // Assess
    expect(unbounded.code, unbounded.stderr).toBe(2);
    expect(unbounded.stderr.trim()).toMatch(
      /^error: --to-stream sends every archived delivery of its window: give both --from and --to \(the archive holds receipt days \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\)$/,
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(
      /^would send \d+ deliver(y|ies) from \d+ archive objects? to subscriber crm's queue only$/m,
    );
    expect(await drainQueue(sqs, crm.queueUrl)).toEqual([]);
  }, 60_000);
});

/** `npx webhook …` in its own process against the state directory `dir`. */
function webhook(
  dir: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, "node_modules/.bin/node"),
      [join(ROOT, "bin/webhook.mjs"), ...args, "--state-dir", dir],
      { cwd: ROOT, encoding: "utf8", timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

describe("trigger forms wherever triggers are filtered (#51 item 5)", () => {
  it("events and a replay to the stream take a family and a prefix, as a subscriber's triggers do", async () => {
    // Prepare
    const appId = uniqueName("app");
    const { deps, lease } = await projected(
      ["group_created", "group_member_added", "message_sent"].map((t) => bodyOf(t, appId)),
    );
    const kept: string[] = [];
    const publisher = {
      publish: async (messages: readonly StreamMessage[]) => {
        kept.push(...messages.map((m) => m.attributes.trigger));
        return { failed: new Map(), requests: 1, chunks: 1 };
      },
    };

    // Act
    const recent = await recentEvents(env.s3, env.bucket, deps.stores, {
      appId,
      triggers: ["group:*"],
      limit: 10,
    });
    await replayToStream(env.s3, deps.dataStore, publisher, lease, {
      appId,
      from: DAY,
      to: DAY,
      triggers: ["group_member_*"],
    });

    // Assess
    expect(recent.map((e) => e.trigger).sort()).toEqual(["group_created", "group_member_added"]);
    expect(kept).toEqual(["group_member_added"]);
  }, 60_000);
});
