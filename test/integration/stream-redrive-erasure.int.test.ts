import { CreateTopicCommand } from "@aws-sdk/client-sns";
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { parseStreamMessage } from "@webhook-backend/stream";
import { describe, expect, it } from "vitest";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { erasedInFlight, erasedMark } from "../../shared/erasure/in-flight";
import { mentionsUid } from "../../shared/erasure/redact";
import { deliveryEnvelope, streamMessage } from "../../shared/stream/envelope";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { subscribeQueue } from "../../shared/stream/subscriptions";
import { ingestRecordFor } from "../../tools/local/sqs-event";
import { redriveUnpublished } from "../../tools/ops/stream";
import { createQueue, testClients, uniqueName } from "../support/aws";
import { fixtureText } from "../support/fixtures";

/**
 * `redrive --stream` after an erasure (#50, found by the writers model): a fact kept in the
 * stream's unpublished queue that names a user erased since is published redacted, as the
 * projector would have published it then (an SQS message cannot be rewritten: what is sent from
 * it later is redacted). Before the fix it was published as kept, uid and name, after the notice.
 */

const { sqs, sns } = testClients();
const U1 = "cometchat-uid-1";
const RECEIVED = 1_772_366_400_000;

describe("redrive --stream after an erasure", () => {
  it("publishes a kept fact that names an erased user redacted (the pseudonym, the erasure's mark, the same id); one naming nobody erased as kept", async () => {
    // Prepare: a subscriber; two facts kept unpublished (a DM by U1, one in another app); U1's mark.
    const topicArn = (await sns.send(new CreateTopicCommand({ Name: uniqueName("stream") }))).TopicArn ?? "";
    const subscriber = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: uniqueName("sub"),
      rawDelivery: true,
    });
    const unpublishedUrl = await createQueue(sqs, uniqueName("unpublished"));
    const body = (appId: string) =>
      fixtureText("message_sent").replace('"appId": "2598234fa1e3b9c"', `"appId": "${appId}"`);
    const record = (appId: string) => ingestRecordFor(body(appId), RECEIVED);
    const kept = ["app-r", "app-other"].map((appId) => {
      const a = record(appId).messageAttributes;
      return deliveryEnvelope({
        eventId: a.eventId?.stringValue ?? "",
        receivedAt: RECEIVED,
        trigger: "message_sent",
        appId,
        body: body(appId),
      });
    });
    for (const envelope of kept) {
      const message = streamMessage(envelope);
      await sqsMessageQueue(sqs, unpublishedUrl).send({ body: message.body, attributes: message.attributes });
    }
    const mark = erasedMark(
      { appId: "app-r", uid: U1, erasureId: "e-50", pseudonym: "erased-00000000000000aa" },
      RECEIVED + 60_000,
      RECEIVED + 120_000,
    );
    const redact = erasedInFlight(async () => [mark], { cacheMs: 0, now: () => RECEIVED + 180_000 });

    // Act
    const report = await redriveUnpublished(sqs, unpublishedUrl, snsStreamPublisher(sns, topicArn), redact);

    // Assess
    expect(report).toEqual({ moved: 2, failed: 0 });
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: subscriber.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
      }),
    );
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: subscriber.queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
      }),
    );
    const byApp = new Map(
      Messages.map((m) => parseStreamMessage(m.Body ?? "")).map((e) => [
        e.kind === "delivery" ? e.appId : "",
        e,
      ]),
    );
    const redacted = byApp.get("app-r");
    expect(redacted?.kind === "delivery" && redacted.erasure).toBe("e-50");
    expect(redacted?.id).toBe(kept[0]?.id);
    expect(mentionsUid(JSON.stringify(redacted), U1)).toBe(false);
    expect(JSON.stringify(redacted)).toContain("erased-00000000000000aa");
    expect(byApp.get("app-other")).toEqual(kept[1]);
  });
});
