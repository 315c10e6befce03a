import { CreateTopicCommand, PublishBatchCommand, SNSClient, SubscribeCommand } from "@aws-sdk/client-sns";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type FilterPolicy, parseFilterPolicy, policyAdmits } from "../../shared/stream/filter-policy";
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

/** The stream's attribute values a message may carry, and a key no message carries. */
const DOMAIN = {
  appId: ["app1", "app2", "APP1"],
  trigger: ["group_created", "group_member_added", "message_sent", "(erasure)"],
  kind: ["delivery", "erasure"],
  other: ["x"],
} as const;
type Key = keyof typeof DOMAIN;

/** A condition on one key's values: every string operator SNS has, near the values messages carry. */
const condition = (key: Key) => {
  const value = fc.constantFrom(...DOMAIN[key], "x");
  const part = fc
    .tuple(value, fc.nat(), fc.nat())
    .map(([v, i, j]) => v.slice(Math.min(i, j) % (v.length + 1), Math.max(i, j) % (v.length + 1)));
  return fc.oneof(
    value,
    part.map((prefix) => ({ prefix })),
    part.map((suffix) => ({ suffix })),
    fc.tuple(value, fc.boolean()).map(([v, up]) => ({ "equals-ignore-case": up ? v.toUpperCase() : v })),
    fc.tuple(value, fc.nat()).map(([v, i]) => ({ wildcard: `${v.slice(0, i % (v.length + 1))}*` })),
    fc
      .oneof(
        value,
        fc.uniqueArray(value, { minLength: 1, maxLength: 3 }),
        part.map((prefix) => ({ prefix })),
        part.map((suffix) => ({ suffix })),
      )
      .map((but) => ({ "anything-but": but })),
    fc.boolean().map((exists) => ({ exists })),
  );
};
const keyConditions = fc
  .uniqueArray(fc.constantFrom<Key>("appId", "trigger", "kind", "other"), {
    minLength: 1,
    maxLength: 2,
  })
  .chain((keys) =>
    fc
      .tuple(...keys.map((k) => fc.array(condition(k), { minLength: 1, maxLength: 3 })))
      .map((lists) => Object.fromEntries(keys.map((k, i) => [k, lists[i]]))),
  );
/** A policy: a key or two, and maybe a top-level `$or` of two branches (what fauxqs evaluates). */
const policy = fc
  .tuple(keyConditions, fc.option(fc.tuple(keyConditions, keyConditions), { nil: undefined }))
  .map(([keys, or]) => (or ? { ...keys, $or: or } : keys));
const attributes = fc.record({
  appId: fc.constantFrom(...DOMAIN.appId),
  trigger: fc.constantFrom(...DOMAIN.trigger),
  kind: fc.constantFrom(...DOMAIN.kind),
});

describe("a subscription's filter policy as a replay evaluates it, against fauxqs's SNS (#51 item 3)", () => {
  it("admits exactly what the topic delivers through the subscription, for policies of every string operator", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(policy, { minLength: 6, maxLength: 6 }),
        fc.array(attributes, { minLength: 20, maxLength: 20 }),
        async (policies, messages) => {
          // Prepare: a topic, a raw queue per policy.
          const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: uniqueName("policies") }));
          const queues = await Promise.all(
            policies.map(async (p) => {
              const url = await createQueue(sqs, uniqueName("policy"));
              const { Attributes } = await sqs.send(
                new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }),
              );
              await sns.send(
                new SubscribeCommand({
                  TopicArn,
                  Protocol: "sqs",
                  Endpoint: Attributes?.QueueArn,
                  Attributes: { RawMessageDelivery: "true", FilterPolicy: JSON.stringify(p) },
                }),
              );
              return url;
            }),
          );

          // Act: each message published with its attributes, its index as its body.
          for (let i = 0; i < messages.length; i += 10)
            await sns.send(
              new PublishBatchCommand({
                TopicArn,
                PublishBatchRequestEntries: messages.slice(i, i + 10).map((m, j) => ({
                  Id: String(j),
                  Message: String(i + j),
                  MessageAttributes: Object.fromEntries(
                    Object.entries(m).map(([k, v]) => [k, { DataType: "String", StringValue: v }]),
                  ),
                })),
              }),
            );

          // Assess: per policy, the messages delivered are those the evaluator admits.
          for (const [n, url] of queues.entries()) {
            const parsed: FilterPolicy = parseFilterPolicy(JSON.stringify(policies[n]));
            const delivered = (await drainBodies(sqs, url)).map(Number).sort((a, b) => a - b);
            const admitted = messages.flatMap((m, i) => (policyAdmits(parsed, m) ? [i] : []));
            expect(delivered, JSON.stringify(policies[n])).toEqual(admitted);
          }
        },
      ),
      { numRuns: 6 },
    );
  }, 120_000);
});
