import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import type { ErasureNotice } from "@webhook-backend/stream";
import { streamCopy } from "@webhook-backend/stream";
import { describe, expect, it } from "vitest";
import { deliveryEnvelope, streamMessage } from "../../shared/stream/envelope";
import { consumeStream } from "../../shared/stream/example-consumer";
import { createQueue, testClients, uniqueName } from "../support/aws";
import { fixture } from "../support/fixtures";

/**
 * The worked consumer's edges (#51 item 4), on fauxqs: a batch with no envelope in it, a message
 * of a kind it does not know (#57), and a delivery of an erased app that arrives after the app's
 * erasure notice.
 */
const { sqs } = testClients();
const T0 = 1_763_000_000_000;

/** A delivery envelope of `group_created` in `appId`, received at `receivedAt`. */
function delivery(appId: string, receivedAt: number) {
  const body = JSON.stringify({ ...fixture("group_created"), appId });
  return streamMessage(
    deliveryEnvelope({
      eventId: uniqueName("e").padEnd(64, "0"),
      receivedAt,
      trigger: "group_created",
      appId,
      body,
    }),
  ).body;
}

const send = (queueUrl: string, body: string) =>
  sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));

describe("the worked consumer's edges (#51 item 4)", () => {
  it("leaves a batch of only non-envelope messages in the queue and goes on (no empty DeleteMessageBatch)", async () => {
    // Prepare: two messages that are no stream envelope, then (after the first receive) a delivery.
    const queueUrl = await createQueue(sqs, uniqueName("consumer-junk"), { VisibilityTimeout: "30" });
    await send(queueUrl, "not json");
    await send(queueUrl, '{"kind":"something else"}');
    const reacted: string[] = [];

    // Act
    const first = await consumeStream({ sqs, queueUrl, copy: streamCopy(), untilEmpty: true });
    await send(queueUrl, delivery("app-a", T0));
    const second = await consumeStream({
      sqs,
      queueUrl,
      copy: streamCopy(),
      untilEmpty: true,
      onDelivery: async (e) => void reacted.push(e.appId ?? ""),
    });

    // Assess: nothing handled from the junk, which is still there (invisible: it reaches the
    // queue's dead-letter queue after its receives); the delivery after it was handled.
    expect(first).toBe(0);
    expect(second).toBe(1);
    expect(reacted).toEqual(["app-a"]);
    const visible = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, VisibilityTimeout: 0 }));
    expect(visible.Messages ?? []).toEqual([]);
  });

  it("skips, reports and deletes a message of a kind it does not know (a later contract's), never leaving it for the dead-letter queue (#57)", async () => {
    // Prepare
    const queueUrl = await createQueue(sqs, uniqueName("consumer-future"), { VisibilityTimeout: "0" });
    await send(queueUrl, JSON.stringify({ schemaVersion: 1, kind: "forecast", id: "f1" }));
    const skipped: string[] = [];

    // Act
    const handled = await consumeStream({
      sqs,
      queueUrl,
      copy: streamCopy(),
      untilEmpty: true,
      onSkipped: (e) => void skipped.push(`${e.kind}:${e.id}`),
    });

    // Assess
    expect(handled).toBe(1);
    expect(skipped).toEqual(["forecast:f1"]);
    const left = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }));
    expect(left.Messages ?? []).toEqual([]);
  });

  it("after an app's erasure notice, never calls onDelivery for a delivery of the app received before the erasure ended, in a later batch or in the notice's own", async () => {
    // Prepare: the notice of app-e's erasure (ended at T0 + 1000) alone in a first batch; then
    // app-e's deliveries received before (and one after) the erasure ended, and one of app-k.
    const queueUrl = await createQueue(sqs, uniqueName("consumer-erased"));
    const notice: ErasureNotice = {
      schemaVersion: 1,
      kind: "erasure",
      id: "er-e",
      appId: "app-e",
      scope: "app",
      finishedAt: T0 + 1_000,
    };
    const copy = streamCopy();
    const reacted: string[] = [];
    const onDelivery = async (e: { appId?: string; receivedAt: number }) =>
      void reacted.push(`${e.appId}@${e.receivedAt - T0}`);

    // Act: the notice's batch, then the deliveries' (with a second notice of the same erasure:
    // a re-run of forget publishes it again).
    await send(queueUrl, streamMessage(notice).body);
    await consumeStream({ sqs, queueUrl, copy, untilEmpty: true, onDelivery });
    for (const message of [
      delivery("app-e", T0),
      delivery("app-e", T0 + 2_000),
      delivery("app-k", T0),
      streamMessage(notice).body,
      delivery("app-e", T0 + 500),
    ])
      await send(queueUrl, message);
    await consumeStream({ sqs, queueUrl, copy, untilEmpty: true, onDelivery });

    // Assess: app-e's deliveries received before the erasure ended reached no reaction and no copy.
    expect(reacted.sort()).toEqual(["app-e@2000", "app-k@0"]);
    expect([...copy.facts("groups").values()].map((g) => g.appId).sort()).toEqual(["app-e", "app-k"]);
  });
});
