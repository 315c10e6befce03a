import { CreateTopicCommand, PublishBatchCommand, SNSClient, SubscribeCommand } from "@aws-sdk/client-sns";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { filterPolicyOf, type StreamSubscriber } from "../../shared/stream/subscribers";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../tools/local/emulators";
import { createQueue, drainBodies, testClients, uniqueName } from "../support/aws";

/**
 * The policies `filterPolicyOf` builds, on the engine the laptop runs (fauxqs's SNS): it takes
 * them (a top-level `$or`, `prefix`), and routes each message as the policy says. The unit test
 * proves the policies against SNS's documented semantics; this one that the emulator agrees.
 */
let sns: SNSClient;
let sqs: SQSClient;
let destroy: () => void;

beforeAll(() => {
  const clients = testClients();
  sqs = clients.sqs;
  destroy = clients.destroy;
  sns = new SNSClient({
    endpoint: inject("fauxqsEndpoint"),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
});
afterAll(() => {
  sns.destroy();
  destroy();
});

const SUBSCRIBERS: StreamSubscriber[] = [
  { name: "groups-of-app1", apps: ["app1"], triggers: ["group:*", "message_sent"] },
  { name: "members", triggers: ["group_member_*"] },
  { name: "app2", apps: ["app2"] },
  { name: "everything" },
];

/** Deliveries of two apps over a few triggers, and an erasure notice per app. */
const MESSAGES = [
  ...["app1", "app2", "app3"].flatMap((appId) =>
    ["group_created", "group_member_joined", "message_sent", "call_started", "poll_created"].map(
      (trigger) => ({
        appId,
        trigger,
        kind: "delivery",
      }),
    ),
  ),
  ...["app1", "app2", "app3"].map((appId) => ({ appId, trigger: "erasure", kind: "erasure" })),
];

const label = (m: { appId: string; trigger: string; kind: string }) => `${m.kind}:${m.appId}:${m.trigger}`;

describe("subscribers' filter policies on fauxqs (#41 item 4)", () => {
  it("are accepted, and deliver each subscriber its apps' triggers and every erasure notice of its apps", async () => {
    // Prepare: a topic and, per subscriber, a queue subscribed with its policy and raw delivery.
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: uniqueName("stream") }));
    const queues = new Map<string, string>();
    for (const subscriber of SUBSCRIBERS) {
      const url = await createQueue(sqs, uniqueName(subscriber.name));
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }),
      );
      const policy = filterPolicyOf(subscriber);
      await sns.send(
        new SubscribeCommand({
          TopicArn,
          Protocol: "sqs",
          Endpoint: Attributes?.QueueArn,
          Attributes: {
            RawMessageDelivery: "true",
            ...(policy ? { FilterPolicy: JSON.stringify(policy) } : {}),
          },
        }),
      );
      queues.set(subscriber.name, url);
    }

    // Act: publish every message, ten per request, with the stream's attributes.
    for (let i = 0; i < MESSAGES.length; i += 10)
      await sns.send(
        new PublishBatchCommand({
          TopicArn,
          PublishBatchRequestEntries: MESSAGES.slice(i, i + 10).map((m, j) => ({
            Id: String(j),
            Message: label(m),
            MessageAttributes: {
              appId: { DataType: "String", StringValue: m.appId },
              trigger: { DataType: "String", StringValue: m.trigger },
              kind: { DataType: "String", StringValue: m.kind },
            },
          })),
        }),
      );

    // Assess: each queue holds exactly what its subscriber asked for.
    const received = Object.fromEntries(
      await Promise.all(
        SUBSCRIBERS.map(
          async (s) => [s.name, (await drainBodies(sqs, queues.get(s.name) ?? "")).sort()] as const,
        ),
      ),
    );
    expect(received["groups-of-app1"]).toEqual(
      [
        "delivery:app1:group_created",
        "delivery:app1:group_member_joined",
        "delivery:app1:message_sent",
        "erasure:app1:erasure",
      ].sort(),
    );
    expect(received.members).toEqual(
      [
        "delivery:app1:group_member_joined",
        "delivery:app2:group_member_joined",
        "delivery:app3:group_member_joined",
        "erasure:app1:erasure",
        "erasure:app2:erasure",
        "erasure:app3:erasure",
      ].sort(),
    );
    expect(received.app2).toEqual(
      MESSAGES.filter((m) => m.appId === "app2")
        .map(label)
        .sort(),
    );
    expect(received.everything).toEqual(MESSAGES.map(label).sort());
  });
});
