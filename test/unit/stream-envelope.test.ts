import { createHash } from "node:crypto";
import {
  ERASURE_NOTICE_TRIGGER,
  parseStreamMessage,
  STREAM_SCHEMA_VERSION,
  UnknownStreamMessageError,
} from "@webhook-backend/stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NO_APP_MESSAGE_GROUP } from "../../shared/platform/constants";
import { deliveryEnvelope, streamMessage } from "../../shared/stream/envelope";
import { erasureNoticePublisher } from "../../shared/stream/erasure-notice";
import {
  billedChunks,
  messageBytes,
  PUBLISH_BATCH_MAX_ENTRIES,
  packPublishBatches,
  SNS_BILLED_CHUNK_BYTES,
  SNS_MAX_MESSAGE_BYTES,
  type StreamMessage,
} from "../../shared/stream/publish-batches";
import { fixture } from "../support/fixtures";

const RECEIVED_AT = 1_763_000_000_300;
const delivery = (body: string, receivedAt = RECEIVED_AT) => {
  const json = JSON.parse(body) as { trigger: string; appId?: string };
  return {
    eventId: createHash("sha256").update(body).digest("hex"),
    receivedAt,
    trigger: json.trigger,
    appId: json.appId,
    body,
  };
};

describe("the stream's envelope", () => {
  it("carries what the backend derives of a known event, and its body as sent", () => {
    // Prepare
    const body = JSON.stringify(fixture("message_sent"));
    const accepted = delivery(body);

    // Act
    const envelope = deliveryEnvelope(accepted, { outcome: "projected" });

    // Assess
    expect(envelope).toMatchObject({
      schemaVersion: STREAM_SCHEMA_VERSION,
      kind: "delivery",
      id: `${accepted.eventId}@${RECEIVED_AT}`,
      eventId: accepted.eventId,
      receivedAt: RECEIVED_AT,
      trigger: "message_sent",
      eventTimeSource: "data.message.sentAt",
      rank: 1,
      outcome: "projected",
      body,
    });
    expect(envelope.eventTime).toBe(fixture("message_sent").data.message.sentAt * 1000);
    expect(envelope.naturalKey).toMatch(/^[^|]+\|message_sent\|/);
    expect(envelope.version?.length).toBe(31);
  });

  it("times an unknown trigger by its receipt and keys it by its body", () => {
    const body = JSON.stringify({ trigger: "after_something_new", appId: "app1", data: { x: 1 } });
    const envelope = deliveryEnvelope(delivery(body));
    expect(envelope).toMatchObject({
      eventTime: RECEIVED_AT,
      eventTimeSource: "receivedAt",
      naturalKey: `app1|after_something_new|body:${delivery(body).eventId}`,
    });
    expect(envelope.outcome).toBeUndefined();
  });

  it("keeps the id of one delivery across its copies, and gives a platform retry an id of its own", () => {
    const body = JSON.stringify(fixture("group_created"));
    const first = deliveryEnvelope(delivery(body));
    expect(deliveryEnvelope(delivery(body), { outcome: "stale" }).id).toBe(first.id);
    expect(deliveryEnvelope(delivery(body, RECEIVED_AT + 10_000)).id).not.toBe(first.id);
  });

  it("files a message under its app, trigger and kind; an event of no app under (no-app), a notice under (erasure)", () => {
    const body = JSON.stringify({ trigger: "after_something_new", data: {} });
    expect(streamMessage(deliveryEnvelope(delivery(body))).attributes).toEqual({
      appId: NO_APP_MESSAGE_GROUP,
      trigger: "after_something_new",
      kind: "delivery",
    });
    const notice = {
      schemaVersion: 1 as const,
      kind: "erasure" as const,
      id: "er1",
      appId: "app1",
      scope: "user" as const,
      pseudonym: "p-1",
      finishedAt: 1,
    };
    expect(streamMessage(notice).attributes).toEqual({
      appId: "app1",
      trigger: ERASURE_NOTICE_TRIGGER,
      kind: "erasure",
    });
  });

  it("reads back what a subscriber receives, raw or inside SNS's notification, and refuses anything else", () => {
    const envelope = deliveryEnvelope(delivery(JSON.stringify(fixture("group_created"))));
    const raw = streamMessage(envelope).body;
    expect(parseStreamMessage(raw)).toEqual(envelope);
    expect(parseStreamMessage(JSON.stringify({ Type: "Notification", Message: raw }))).toEqual(envelope);
    // A later version-1 field a consumer does not know is no reason to refuse the message.
    expect(parseStreamMessage(JSON.stringify({ ...envelope, addedLater: 1 })).id).toBe(envelope.id);
    expect(() => parseStreamMessage("{")).toThrow("stream message is not JSON");
    // A later schemaVersion is a later contract's: skipped by its readers, not a broken message (#57).
    expect(() => parseStreamMessage(JSON.stringify({ ...envelope, schemaVersion: 2 }))).toThrow(
      UnknownStreamMessageError,
    );
    expect(() => parseStreamMessage(JSON.stringify({ ...envelope, schemaVersion: "1" }))).toThrow(
      "invalid stream message: schemaVersion",
    );
  });
});

const message = (id: number, bytes: number): StreamMessage => ({
  id: String(id),
  body: "x".repeat(bytes),
  attributes: { appId: "a", trigger: "t", kind: "delivery" },
});

/** What a packer that fills requests in the given order would bill: the baseline packing must not lose to. */
function sequentialChunks(messages: readonly StreamMessage[]): number {
  let chunks = 0;
  let request = { n: 0, bytes: 0 };
  for (const m of messages) {
    const bytes = messageBytes(m);
    if (request.n === PUBLISH_BATCH_MAX_ENTRIES || request.bytes + bytes > SNS_MAX_MESSAGE_BYTES) {
      chunks += billedChunks(request.bytes);
      request = { n: 0, bytes: 0 };
    }
    request = { n: request.n + 1, bytes: request.bytes + bytes };
  }
  return request.n ? chunks + billedChunks(request.bytes) : chunks;
}

describe("packing envelopes into PublishBatch requests", () => {
  it("puts small envelopes ten to a request, one 64 KiB chunk each", () => {
    const requests = packPublishBatches(Array.from({ length: 23 }, (_, i) => message(i, 2_000)));
    expect(requests.map((r) => r.messages.length)).toEqual([10, 10, 3]);
    expect(requests.map((r) => billedChunks(r.bytes))).toEqual([1, 1, 1]);
  });

  it("bills large envelopes no more 64 KiB chunks than their bytes need", () => {
    // Arriving 40, 20, 40, 20, 40, 20 KB, filled in order: 40+20+40+20+40+20 = 180 KB in one
    // request is 3 chunks; whatever the grouping, 3 chunks is the least these bytes can bill.
    const sizes = [40_000, 20_000, 40_000, 20_000, 40_000, 20_000];
    const requests = packPublishBatches(sizes.map((s, i) => message(i, s)));
    const bytes = requests.reduce((sum, r) => sum + r.bytes, 0);
    expect(requests.reduce((sum, r) => sum + billedChunks(r.bytes), 0)).toBe(
      Math.ceil(bytes / SNS_BILLED_CHUNK_BYTES),
    );
  });

  it("places every envelope once, within SNS's limits, and bills no more chunks than filling in order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 200, max: 4_000 }), fc.integer({ min: 4_000, max: 262_000 })), {
          maxLength: 60,
        }),
        (sizes) => {
          const messages = sizes.map((s, i) => message(i, s));
          const requests = packPublishBatches(messages);
          const placed = requests.flatMap((r) => r.messages.map((m) => m.id)).sort();
          expect(placed).toEqual(
            messages
              .filter((m) => messageBytes(m) <= SNS_MAX_MESSAGE_BYTES)
              .map((m) => m.id)
              .sort(),
          );
          for (const r of requests) {
            expect(r.messages.length).toBeLessThanOrEqual(PUBLISH_BATCH_MAX_ENTRIES);
            expect(r.bytes).toBeLessThanOrEqual(SNS_MAX_MESSAGE_BYTES);
            expect(r.bytes).toBe(r.messages.reduce((sum, m) => sum + messageBytes(m), 0));
          }
          const chunks = requests.reduce((sum, r) => sum + billedChunks(r.bytes), 0);
          const fitting = messages.filter((m) => messageBytes(m) <= SNS_MAX_MESSAGE_BYTES);
          expect(chunks).toBeLessThanOrEqual(sequentialChunks(fitting));
        },
      ),
    );
  });

  it("leaves out an envelope SNS cannot take", () => {
    expect(packPublishBatches([message(1, SNS_MAX_MESSAGE_BYTES)])).toEqual([]);
  });
});

describe("the erasure notice (forget's onErased hook)", () => {
  const done = {
    appId: "app1",
    erasureId: "e-1",
    pseudonym: "erased-7",
    subject: "a".repeat(64),
    scope: "user" as const,
    days: ["2026-04-10", "2026-04-11"],
    finishedAt: 5,
  };

  it("publishes a notice with the erasure's id, app, scope, pseudonym, subject and days, filed as an erasure", async () => {
    const sent: StreamMessage[] = [];
    await erasureNoticePublisher({
      publish: async (messages) => {
        sent.push(...messages);
        return { failed: new Map(), requests: 1, chunks: 1 };
      },
    })(done);
    expect(sent.map((m) => [JSON.parse(m.body), m.attributes])).toEqual([
      [
        {
          schemaVersion: 1,
          kind: "erasure",
          id: "e-1",
          appId: "app1",
          scope: "user",
          pseudonym: "erased-7",
          subject: "a".repeat(64),
          days: ["2026-04-10", "2026-04-11"],
          finishedAt: 5,
        },
        { appId: "app1", trigger: ERASURE_NOTICE_TRIGGER, kind: "erasure" },
      ],
    ]);
  });

  it("fails the run when SNS did not take it, so that a re-run publishes it", async () => {
    const hook = erasureNoticePublisher({
      publish: async (messages) => ({
        failed: new Map(messages.map((m) => [m.id, new Error("throttled")])),
        requests: 1,
        chunks: 1,
      }),
    });
    await expect(hook(done)).rejects.toThrow("the erasure notice e-1 was not published: run forget again");
  });
});
