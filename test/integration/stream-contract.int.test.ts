import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { CreateTopicCommand } from "@aws-sdk/client-sns";
import { describe, expect, it } from "vitest";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { parseEventBody } from "../../shared/events/parse-body";
import { parseWebhookEvent } from "../../shared/events/schemas";
import { projectSqsBatch } from "../../shared/projector/batch";
import type { ProjectorDependencies } from "../../shared/projector/core";
import { switchedFactStream } from "../../shared/projector/fact-stream";
import { projectionStores } from "../../shared/projector/stores";
import { isPublishable, parseStreamMessage } from "../../shared/stream/envelope";
import { erasureNoticePublisher } from "../../shared/stream/erasure-notice";
import { projectorStream } from "../../shared/stream/projector-stream";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { subscribeQueue } from "../../shared/stream/subscriptions";
import { ingestRecordFor, sqsEvent } from "../../tools/local/sqs-event";
import { templateTriggers } from "../../tools/simulate/templates";
import { createQueue, drainQueue, testClients, uniqueName } from "../support/aws";
import { contractValidator } from "../support/contract";
import { projectorOnEmulators } from "../support/emulator-projector";
import { allFixtures, fixture } from "../support/fixtures";

/**
 * The published contract against real messages (#51 item 2): every template and fixture of a
 * known trigger, an unknown trigger and a body past SNS's limit, projected by the projector's own
 * batch and published to fauxqs's SNS; each message a subscriber's queue received, its attributes
 * and (for a known trigger) its body checked against the committed JSON Schemas with ajv, as a
 * team in another language would; and an erasure notice as `forget` publishes it.
 */
const env = projectorOnEmulators("stream-contract");
const { sns, sqs } = testClients();

describe("the committed JSON Schemas and what the stream really carries (#51 item 2)", () => {
  it("validate every envelope, attribute set and known trigger's body a subscriber receives, a pointer's body and an erasure notice included", async () => {
    // Prepare: a projector publishing to a topic with one raw subscriber.
    const topicArn =
      (await sns.send(new CreateTopicCommand({ Name: uniqueName("contract") }))).TopicArn ?? "";
    const subscriber = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("sub"),
      rawDelivery: true,
    });
    const base = env.depsFor(projectionStores(env.dynamo, await env.tableSet()));
    const publisher = snsStreamPublisher(sns, topicArn);
    const deps: ProjectorDependencies = {
      ...base,
      stream: switchedFactStream(
        async () => true,
        async () =>
          projectorStream({
            publisher,
            unpublished: sqsMessageQueue(sqs, await createQueue(sqs, uniqueName("unpublished"))),
            dataStore: base.dataStore,
            maxReceiveCount: 5,
            logger: new Logger({ serviceName: "stream", logLevel: "SILENT" }),
            metrics: new Metrics({ namespace: "Test", serviceName: "stream" }),
          }),
      ),
    };
    const appId = uniqueName("app");
    const large = fixture("message_sent");
    large.data.message.data.text = "x".repeat(300_000);
    const bodies = [
      ...templateTriggers().map((t) => fixture(t)),
      ...allFixtures()
        .filter((f) => f.name.includes("."))
        .map((f) => fixture(f.name)),
      { trigger: "poll_created", data: { poll: { id: "p1" } } },
      large,
    ]
      .map((body) => JSON.stringify({ ...body, appId }))
      // What the stream carries: every accepted delivery (a refused one is quarantined, never published).
      .filter((body) => isPublishable(parseEventBody(body)));
    const records = bodies.map((body, i) => ingestRecordFor(body, 1_763_000_000_000 + i));

    // Act: the batch projected and published, in batches of ten as the event source gives them;
    // then an erasure notice of the app.
    for (let i = 0; i < records.length; i += 10)
      await projectSqsBatch(sqsEvent(records.slice(i, i + 10)), undefined, deps, env.silent());
    await erasureNoticePublisher(publisher)({
      erasureId: "e1",
      appId,
      scope: "user",
      pseudonym: "erased-1",
      subject: "ab".repeat(32),
      days: ["2025-11-13"],
      finishedAt: 1_763_000_100_000,
    });
    const received = await drainQueue(sqs, subscriber.queueUrl);

    // Assess: each message, its attributes and its body valid; every delivery and the notice came.
    const check = contractValidator();
    const errors: string[] = [];
    let pointers = 0;
    for (const { body, attributes } of received) {
      errors.push(...check.message(JSON.parse(body)), ...check.attributes(attributes));
      const envelope = parseStreamMessage(body);
      if (envelope.kind !== "delivery") continue;
      let text = envelope.body ?? "";
      if (envelope.bodyObject) {
        pointers++;
        const object = await env.s3.send(
          new GetObjectCommand({ Bucket: envelope.bodyObject.bucket, Key: envelope.bodyObject.key }),
        );
        text = (await object.Body?.transformToString()) ?? "";
      }
      const parsed = parseWebhookEvent(JSON.parse(text));
      if (parsed.kind === "known") errors.push(...check.body(parsed.event.trigger, JSON.parse(text)));
    }
    expect(errors).toEqual([]);
    expect(pointers).toBe(1);
    expect(received.filter((m) => m.attributes.kind === "delivery").length).toBeGreaterThanOrEqual(
      bodies.length - 3,
    );
    expect(received.filter((m) => m.attributes.kind === "erasure")).toHaveLength(1);
  }, 120_000);
});
