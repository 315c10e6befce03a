import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { queueStreamPublisher } from "../../shared/stream/queue-publisher";
import { replayFailureLine } from "../../tools/ops/stream";
import { createQueue, testClients, uniqueName } from "../support/aws";

/**
 * The local queue takes what SQS takes (#61, item 9): a message body with an emoji (U+1F600,
 * outside the Basic Multilingual Plane) through fauxqs, as `SendMessage` and as
 * `SendMessageBatch` (`replay --to-subscriber`'s path), received byte-exact. fauxqs 2.4.1 refused
 * it (patches/fauxqs+2.4.1.patch, applied on install). And what a replay says of a delivery a
 * queue refuses for itself: not "run it again".
 */
const { sqs } = testClients();

describe("fauxqs, patched: astral characters in a message body", () => {
  it("takes an emoji through SendMessage and SendMessageBatch, and gives it back unchanged", async () => {
    // Prepare: a queue, and a body with characters outside the BMP (and a CJK one inside it).
    const queueUrl = await createQueue(sqs, uniqueName("astral"));
    const body = JSON.stringify({ text: "climbing 🧗 today 😀 — 山" });

    // Act: one message sent alone, one through the stream's queue publisher (a batch).
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    const outcome = await queueStreamPublisher(sqs, queueUrl).publish([
      { id: "d1", body, attributes: { appId: "app1", trigger: "message_sent", kind: "delivery" } },
    ]);
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );

    // Assess: both accepted, both bodies as sent.
    expect([...outcome.failed.values()].map(String)).toEqual([]);
    expect(received.Messages?.map((m) => m.Body)).toEqual([body, body]);
  });

  it("says a delivery the destination refused for itself would be refused again, and a passing failure is worth a second run", () => {
    expect(
      replayFailureLine({
        failed: ["a", "b"],
        refusedForGood: 2,
        firstFailure: "SQS failed the entry: InvalidMessageContents: invalid characters",
      }),
    ).toBe(
      "2 deliveries refused by the destination (SQS failed the entry: InvalidMessageContents: invalid characters): sent again, they would be refused again",
    );
    expect(replayFailureLine({ failed: ["a"], firstFailure: "SQS did not answer for the entry" })).toBe(
      "1 delivery could not be sent (SQS did not answer for the entry): run it again (ids are stable: a consumer deduplicating by id takes each once)",
    );
  });
});
