import { createHash } from "node:crypto";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { CreateTopicCommand, type PublishBatchCommandOutput, type SNSClient } from "@aws-sdk/client-sns";
import {
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { projectSqsBatch } from "../../shared/projector/batch";
import type { ProjectorDependencies } from "../../shared/projector/core";
import { switchedFactStream } from "../../shared/projector/fact-stream";
import { projectionStores } from "../../shared/projector/stores";
import { streamCopy } from "../../shared/stream/consumer";
import {
  deliveryEnvelope,
  parseStreamMessage,
  type StreamEnvelope,
  streamMessage,
} from "../../shared/stream/envelope";
import { consumeStream } from "../../shared/stream/example-consumer";
import {
  dynamoListenerUntil,
  LISTENER_LEASE_MS,
  listenerSwitch,
  turnListenersOn,
} from "../../shared/stream/listener-switch";
import { projectorStream } from "../../shared/stream/projector-stream";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { filterPolicyOf } from "../../shared/stream/subscribers";
import {
  LISTENER_QUEUE_PREFIX,
  removeExpiredListeners,
  renewListenerQueue,
  subscribeQueue,
  subscriptionCount,
} from "../../shared/stream/subscriptions";
import { SqsPoller } from "../../tools/local/poller";
import { createAppsTable, localAppsTableName } from "../../tools/local/provision";
import { ingestRecordFor, sqsEvent } from "../../tools/local/sqs-event";
import { receiveUntilAborted } from "../../tools/ops/listen";
import { redriveUnpublished } from "../../tools/ops/stream";
import { createQueue, testClients, uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { fixture } from "../support/fixtures";

const emulators = projectorOnEmulators("stream-test");
const { sqs, sns, dynamo, s3 } = testClients();

const silentStream = () => ({
  logger: new Logger({ serviceName: "stream", logLevel: "SILENT" }),
  metrics: new Metrics({ namespace: "Test", serviceName: "stream" }),
});

async function topic(): Promise<string> {
  return (await sns.send(new CreateTopicCommand({ Name: uniqueName("stream") }))).TopicArn ?? "";
}

/** Every message a queue holds now, parsed as the stream's, and deleted by the visibility (received once). */
async function drain(
  client: SQSClient,
  queueUrl: string,
): Promise<Array<{ envelope: StreamEnvelope; attributes: Record<string, string | undefined> }>> {
  const all = [];
  for (;;) {
    const out = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 600,
        MessageAttributeNames: ["All"],
      }),
    );
    if (!out.Messages?.length) return all;
    for (const m of out.Messages)
      all.push({
        envelope: parseStreamMessage(m.Body ?? ""),
        attributes: Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue]),
        ),
      });
  }
}

/**
 * Injects a fault fauxqs cannot produce (this mocks nothing else: fauxqs answers every other
 * entry): SNS failing entries of a `PublishBatch` on its side. `failing(id)` says, per envelope id
 * and per call, whether SNS fails it; the entries it fails are taken out of the request and
 * reported `Failed` as SNS reports them (`SenderFault` as given).
 */
function injectPublishFaults(
  client: SNSClient,
  failing: (envelopeId: string) => boolean,
  senderFault = false,
) {
  const calls = { publishBatch: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "PublishBatchCommand") return next(args);
      calls.publishBatch++;
      const input = args.input as { PublishBatchRequestEntries: Array<{ Id: string; Message: string }> };
      const failed = input.PublishBatchRequestEntries.filter((e) => failing(JSON.parse(e.Message).id));
      const passed = input.PublishBatchRequestEntries.filter((e) => !failed.includes(e));
      const answer = passed.length
        ? await next({ ...args, input: { ...input, PublishBatchRequestEntries: passed } })
        : { output: { Successful: [], Failed: [], $metadata: {} }, response: {} };
      const output = answer.output as PublishBatchCommandOutput;
      output.Failed = [
        ...(output.Failed ?? []),
        ...failed.map((e) => ({
          Id: e.Id,
          Code: "InternalError",
          Message: "injected",
          SenderFault: senderFault,
        })),
      ];
      return answer;
    },
    { step: "initialize", name: "injectPublishFaults" },
  );
  return calls;
}

/** A fresh SNS client on fauxqs (faults are injected into a client of their own). */
function freshSns(): SNSClient {
  return testClients().sns;
}

const body = (name: string, appId: string, guid: string) => {
  const event = fixture(name);
  event.appId = appId;
  if (event.data?.group) event.data.group.guid = guid;
  return JSON.stringify(event);
};

describe("publishing to the stream (SNS on fauxqs)", () => {
  it("delivers each envelope to the subscribers whose filter it passes, with its app, trigger and kind; an erasure notice of an app passes whatever the triggers", async () => {
    // Prepare
    const topicArn = await topic();
    const onlyA = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("only-a"),
      filterPolicy: filterPolicyOf({ name: "only-a", apps: ["app-a"], triggers: ["group:*"] }),
      rawDelivery: true,
    });
    const everything = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("all"),
      rawDelivery: false,
    });
    const deliveries = ["app-a", "app-b"].flatMap((appId) =>
      ["group_created", "message_sent"].map((trigger) => {
        const text = body(trigger, appId, `g-${appId}`);
        return deliveryEnvelope({
          eventId: createHash("sha256").update(text).digest("hex"),
          receivedAt: 1_763_000_000_000,
          trigger,
          appId,
          body: text,
        });
      }),
    );
    const notice = streamMessage({
      schemaVersion: 1,
      kind: "erasure",
      id: "er-1",
      appId: "app-a",
      scope: "user",
      pseudonym: "p1",
      finishedAt: 1,
    });

    // Act
    const outcome = await snsStreamPublisher(sns, topicArn).publish([
      ...deliveries.map(streamMessage),
      notice,
    ]);

    // Assess
    expect(outcome.failed.size).toBe(0);
    expect(outcome).toMatchObject({ requests: 1, chunks: 1 });
    const a = await drain(sqs, onlyA.queueUrl);
    expect(a.map((m) => m.envelope.id).sort()).toEqual([deliveries[0]?.id, "er-1"].sort());
    expect(a.find((m) => m.envelope.kind === "delivery")?.attributes).toEqual({
      appId: "app-a",
      trigger: "group_created",
      kind: "delivery",
    });
    expect((await drain(sqs, everything.queueUrl)).map((m) => m.envelope.id).sort()).toEqual(
      [...deliveries.map((d) => d.id), "er-1"].sort(),
    );
    expect(await subscriptionCount(sns, topicArn)).toBe(2);
  });

  it("retries the entries SNS failed on its side, and reports those it refused as sent without retrying them", async () => {
    // Prepare
    const topicArn = await topic();
    const queue = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("retry"),
      rawDelivery: true,
    });
    const messages = Array.from({ length: 12 }, (_, i) =>
      streamMessage({
        schemaVersion: 1,
        kind: "erasure",
        id: `n${i}`,
        appId: "a",
        scope: "app",
        finishedAt: i,
      }),
    );
    const once = new Set(["n1", "n5"]);
    const flaky = freshSns();
    const calls = injectPublishFaults(flaky, (id) => once.delete(id));
    const refusing = freshSns();
    injectPublishFaults(refusing, (id) => id === "n3", true);

    // Act
    const retried = await snsStreamPublisher(flaky, topicArn, { sleep: async () => undefined }).publish(
      messages,
    );
    const refused = await snsStreamPublisher(refusing, topicArn, { sleep: async () => undefined }).publish([
      messages[3] as never,
    ]);

    // Assess: n1 and n5 failed once, went again in a request of their own, and arrived once.
    expect(retried.failed.size).toBe(0);
    expect(calls.publishBatch).toBe(3);
    expect(retried.requests).toBe(3);
    // Each once: the refused n3 of the second publish never arrived (the first publish's did).
    const ids = (await drain(sqs, queue.queueUrl)).map((m) => m.envelope.id);
    expect(ids.sort()).toEqual(messages.map((m) => m.id).sort());
    expect([...refused.failed.keys()]).toEqual(["n3"]);
    expect(refused.requests).toBe(1);
  });
});

describe("the projector's publish, after the tables", () => {
  /** A projector over the emulators with a stream on a fresh topic and its own subscriber and unpublished queue. */
  async function streamedProjector(
    options: {
      sns?: SNSClient;
      isOn?: () => Promise<boolean>;
      unpublishedUrl?: string;
      maxReceiveCount?: number;
    } = {},
  ) {
    const topicArn = await topic();
    const subscriber = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("sub"),
      rawDelivery: true,
    });
    const unpublishedUrl = options.unpublishedUrl ?? (await createQueue(sqs, uniqueName("unpublished")));
    const tables = await emulators.tableSet();
    const base = emulators.depsFor(projectionStores(dynamo, tables));
    const deps: ProjectorDependencies = {
      ...base,
      stream: switchedFactStream(options.isOn ?? (async () => true), async () =>
        projectorStream({
          publisher: snsStreamPublisher(options.sns ?? sns, topicArn, { sleep: async () => undefined }),
          unpublished: sqsMessageQueue(sqs, unpublishedUrl),
          dataStore: base.dataStore,
          maxReceiveCount: options.maxReceiveCount ?? 5,
          ...silentStream(),
        }),
      ),
    };
    return { topicArn, subscriber, unpublishedUrl, tables, deps };
  }

  it("publishes every accepted record of a batch (projected, stale, archived-only), with its outcome, and never a quarantined one", async () => {
    // Prepare
    const { subscriber, deps } = await streamedProjector();
    const created = ingestRecordFor(body("group_created", "app-p", "g1"), 1_763_000_000_000);
    const again = { ...created, messageId: "copy" };
    const unknown = ingestRecordFor(
      JSON.stringify({ trigger: "after_new_thing", appId: "app-p", data: {} }),
      1_763_000_000_001,
    );
    const invalid = ingestRecordFor(
      JSON.stringify({ trigger: "group_created", appId: "app-p", data: {} }),
      1_763_000_000_002,
    );

    // Act
    const first = await projectSqsBatch(
      sqsEvent([created, unknown, invalid]),
      undefined,
      deps,
      emulators.silent(),
    );
    const second = await projectSqsBatch(sqsEvent([again]), undefined, deps, emulators.silent());

    // Assess
    expect([...first.batchItemFailures, ...second.batchItemFailures]).toEqual([]);
    const received = await drain(sqs, subscriber.queueUrl);
    expect(
      received.map((m) => [m.envelope.kind === "delivery" && m.envelope.outcome, m.envelope.id]).sort(),
    ).toEqual(
      [
        ["archived-only", deliveryEnvelope(deliveryOf(unknown)).id],
        ["projected", deliveryEnvelope(deliveryOf(created)).id],
        ["stale", deliveryEnvelope(deliveryOf(created)).id],
      ].sort(),
    );
  });

  it("publishes nothing, and loads no publisher, while nothing listens; a listener's switch turns it on", async () => {
    // Prepare
    const appsTable = localAppsTableName(uniqueName("switch"));
    await createAppsTable(dynamo, appsTable);
    let now = 1_763_000_000_000;
    const isOn = listenerSwitch(dynamoListenerUntil(dynamo, appsTable), { cacheMs: 60_000, now: () => now });
    const counting = freshSns();
    const calls = injectPublishFaults(counting, () => false);
    const { subscriber, deps } = await streamedProjector({ sns: counting, isOn });
    const record = (i: number) => ingestRecordFor(body("group_created", "app-s", `g${i}`), now + i);

    // Act: off; on (seen after the cache's minute); lapsed.
    await projectSqsBatch(sqsEvent([record(1)]), undefined, deps, emulators.silent());
    await turnListenersOn(dynamo, appsTable, now + LISTENER_LEASE_MS);
    await projectSqsBatch(sqsEvent([record(2)]), undefined, deps, emulators.silent());
    const beforeCacheExpired = calls.publishBatch;
    now += 60_000;
    await projectSqsBatch(sqsEvent([record(3)]), undefined, deps, emulators.silent());
    now += LISTENER_LEASE_MS;
    await projectSqsBatch(sqsEvent([record(4)]), undefined, deps, emulators.silent());

    // Assess
    expect(beforeCacheExpired).toBe(0);
    expect(calls.publishBatch).toBe(1);
    const received = await drain(sqs, subscriber.queueUrl);
    expect(
      received.map(
        (m) => m.envelope.kind === "delivery" && JSON.parse(m.envelope.body ?? "{}").data.group.guid,
      ),
    ).toEqual(["g3"]);
  });

  it("fails a record whose publish failed (its tables are written), then on its last receive keeps it in the unpublished queue, never the events DLQ", async () => {
    // Prepare: the events queue as deployed (max receives 2 here), the poller as Lambda's event source.
    const failing = freshSns();
    let snsDown = true;
    injectPublishFaults(failing, () => snsDown);
    const { subscriber, unpublishedUrl, tables, deps } = await streamedProjector({
      sns: failing,
      maxReceiveCount: 2,
    });
    const dlqUrl = await createQueue(sqs, uniqueName("events-dlq"));
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }))
    ).Attributes?.QueueArn;
    const eventsUrl = await createQueue(sqs, uniqueName("events"), {
      VisibilityTimeout: "1",
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: "2" }),
    });
    const created = ingestRecordFor(body("group_created", "app-f", "g-f"), 1_763_000_000_000);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: eventsUrl,
        MessageBody: created.body,
        MessageAttributes: Object.fromEntries(
          Object.entries(created.messageAttributes).map(([k, v]) => [
            k,
            { DataType: v.dataType, StringValue: v.stringValue },
          ]),
        ),
      }),
    );
    const outcomes: string[][] = [];
    const poller = new SqsPoller({
      sqs,
      queueUrl: eventsUrl,
      queueArn: "arn:aws:sqs:us-east-1:000000000000:events",
      region: "us-east-1",
      functionName: "projector",
      batchSize: 10,
      batchingWindowMs: 0,
      concurrency: 1,
      handler: async (event, context) => {
        const response = await projectSqsBatch(event, context, deps, emulators.silent());
        outcomes.push(
          event.Records.map(
            (r) =>
              `${r.attributes.ApproximateReceiveCount}:${response.batchItemFailures.length ? "failed" : "ok"}`,
          ),
        );
        return response;
      },
    });

    // Act
    poller.start();
    for (let i = 0; i < 100 && outcomes.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    await poller.stop();
    snsDown = false;
    const unpublished = await drain(sqs, unpublishedUrl);

    // Assess
    expect(outcomes).toEqual([["1:failed"], ["2:ok"]]);
    const dlq = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["ApproximateNumberOfMessages"] }),
    );
    expect(dlq.Attributes?.ApproximateNumberOfMessages).toBe("0");
    const group = await documentClient(dynamo).send(
      new GetCommand({ TableName: tables.groups, Key: { pk: "app-f#g-f" } }),
    );
    expect(group.Item).toBeDefined();
    expect(unpublished.map((m) => [m.envelope.id, m.attributes.appId])).toEqual([
      [deliveryEnvelope(deliveryOf(created)).id, "app-f"],
    ]);
    expect(await drain(sqs, subscriber.queueUrl)).toEqual([]);
  });

  it("brings the unpublished queue back with redrive --stream: each fact published with the id it had, deleted once published", async () => {
    // Prepare
    const topicArn = await topic();
    const subscriber = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("sub"),
      rawDelivery: true,
    });
    const unpublishedUrl = await createQueue(sqs, uniqueName("unpublished"));
    const envelope = deliveryEnvelope(
      deliveryOf(ingestRecordFor(body("group_created", "app-r", "g-r"), 1_763_000_000_000)),
    );
    const message = streamMessage(envelope);
    await sqsMessageQueue(sqs, unpublishedUrl).send({ body: message.body, attributes: message.attributes });

    // Act
    const report = await redriveUnpublished(sqs, unpublishedUrl, snsStreamPublisher(sns, topicArn));

    // Assess
    expect(report).toEqual({ moved: 1, failed: 0 });
    expect((await drain(sqs, subscriber.queueUrl)).map((m) => m.envelope)).toEqual([envelope]);
  });

  it("fails the record when even the unpublished queue cannot take it", async () => {
    const failing = freshSns();
    injectPublishFaults(failing, () => true);
    const { deps } = await streamedProjector({
      sns: failing,
      maxReceiveCount: 1,
      unpublishedUrl: "http://127.0.0.1:1/000000000000/no-such-queue",
    });
    const record = ingestRecordFor(body("group_created", "app-u", "g-u"), 1_763_000_000_000);
    const response = await projectSqsBatch(sqsEvent([record]), undefined, deps, emulators.silent());
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
  });

  it("publishes a body too large for SNS as a pointer to an object holding it", async () => {
    // Prepare
    const { subscriber, deps } = await streamedProjector();
    const event = fixture("message_sent");
    event.appId = "app-big";
    event.data.message.data.text = "x".repeat(300_000);
    const record = ingestRecordFor(JSON.stringify(event), 1_763_000_000_000);

    // Act
    const response = await projectSqsBatch(sqsEvent([record]), undefined, deps, emulators.silent());

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    const [received] = await drain(sqs, subscriber.queueUrl);
    const envelope = received?.envelope;
    if (envelope?.kind !== "delivery" || !envelope.bodyObject) throw new Error("no pointer");
    expect(envelope.body).toBeUndefined();
    const object = await s3.send(
      new GetObjectCommand({ Bucket: envelope.bodyObject.bucket, Key: envelope.bodyObject.key }),
    );
    expect(await object.Body?.transformToString()).toBe(record.body);
    expect(envelope.bodyObject.size).toBe(Buffer.byteLength(record.body));
  });
});

describe("the worked consumer (example-consumer.ts)", () => {
  it("folds what its queue holds into its copy, reacts to each delivery, acts on an erasure notice and deletes what it handled", async () => {
    // Prepare: two apps' deliveries, each published twice (SNS delivers at least once), then an
    // erasure of one of the apps.
    const topicArn = await topic();
    const queue = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("consumer"),
      rawDelivery: true,
    });
    const deliveries = ["app-x", "app-y"].map((appId, i) =>
      deliveryOf(ingestRecordFor(body("group_created", appId, `g-${appId}`), 1_763_000_000_000 + i)),
    );
    const publisher = snsStreamPublisher(sns, topicArn);
    const messages = deliveries.map((d) => streamMessage(deliveryEnvelope(d)));
    await publisher.publish(messages);
    await publisher.publish(messages);
    await publisher.publish([
      streamMessage({
        schemaVersion: 1,
        kind: "erasure",
        id: "er-y",
        appId: "app-y",
        scope: "app",
        // After the deliveries' receipts: whichever batch brings them, they are erased.
        finishedAt: 1_763_000_001_000,
      }),
    ]);
    const copy = streamCopy();
    const reacted: string[] = [];
    const erased: string[] = [];

    // Act
    const handled = await consumeStream({
      sqs,
      queueUrl: queue.queueUrl,
      copy,
      onDelivery: async (envelope) => void reacted.push(envelope.id),
      onErasure: async (notice) => void erased.push(notice.id),
      untilEmpty: true,
    });

    // Assess: app-y's deliveries, received before its erasure ended, reach no reaction (#51).
    expect(handled).toBe(5);
    expect(reacted.sort()).toEqual([messages[0]?.id, messages[0]?.id]);
    expect(erased).toEqual(["er-y"]);
    expect([...copy.facts("groups").keys()]).toEqual(["app-x#g-app-x|"]);
    expect(await drain(sqs, queue.queueUrl)).toEqual([]);
  });
});

describe("temporary listeners", () => {
  it("prints with `listen --json` each message as published, one line, keeping a field this version does not know", async () => {
    // Prepare: a notice from a newer minor version (an added field), raw and inside SNS's notification JSON.
    const queueUrl = await createQueue(sqs, uniqueName("listen-json"));
    const notice = {
      schemaVersion: 1,
      kind: "erasure",
      id: "erasure-1",
      appId: "app-1",
      scope: "user",
      finishedAt: 1_763_000_000_000,
      addedLater: { x: 1 },
    };
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(notice) }));
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({ Type: "Notification", Message: JSON.stringify(notice, null, 2) }),
      }),
    );
    const lines: string[] = [];
    const controller = new AbortController();

    // Act
    await receiveUntilAborted(
      sqs,
      { queueUrl, renew: async () => {} },
      {
        json: true,
        waitSeconds: 1,
        signal: controller.signal,
        err: () => {},
        out: (line) => {
          lines.push(line);
          if (lines.length === 2) controller.abort();
        },
      },
    );

    // Assess
    expect(lines.map((line) => JSON.parse(line))).toEqual([notice, notice]);
    expect(lines.every((line) => !line.includes("\n"))).toBe(true);
  });

  it("removes a crashed listener's queue and subscription once its expiry passed, and keeps a live one", async () => {
    // Prepare
    const topicArn = await topic();
    const now = 1_763_000_000_000;
    const crashed = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName(`${LISTENER_QUEUE_PREFIX}x`),
      rawDelivery: true,
    });
    await renewListenerQueue(sqs, crashed.queueUrl, now - 3_600_000);
    const live = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName(`${LISTENER_QUEUE_PREFIX}y`),
      rawDelivery: true,
    });
    await renewListenerQueue(sqs, live.queueUrl, now);
    const subscriber = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("team"),
      rawDelivery: true,
    });

    // Act
    const removed = await removeExpiredListeners(sns, sqs, topicArn, now);

    // Assess
    expect(removed).toBeGreaterThanOrEqual(2);
    const queues =
      (await sqs.send(new ListQueuesCommand({ QueueNamePrefix: LISTENER_QUEUE_PREFIX }))).QueueUrls ?? [];
    expect(queues).toContain(live.queueUrl);
    expect(queues).not.toContain(crashed.queueUrl);
    expect(await subscriptionCount(sns, topicArn)).toBe(2);
    expect(subscriber.subscriptionArn).toBeTruthy();
  });
});

/** The delivery an ingest record carries. */
function deliveryOf(record: ReturnType<typeof ingestRecordFor>) {
  const a = record.messageAttributes;
  return {
    eventId: a.eventId?.stringValue ?? "",
    receivedAt: Number(a.receivedAt?.stringValue),
    trigger: a.trigger?.stringValue ?? "",
    appId: a.appId?.stringValue,
    body: record.body,
  };
}
