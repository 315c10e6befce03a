import {
  type DeliveryEnvelope,
  deliveryId,
  type ErasureNotice,
  memoryDeliveryIdStore,
  parseStreamMessage,
  STREAM_SCHEMA_VERSION,
  streamBatchProcessor,
} from "@webhook-backend/stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";

/** A delivery envelope of an app, received at `receivedAt`. */
const delivery = (eventId: string, receivedAt: number, appId = "app1"): DeliveryEnvelope => ({
  schemaVersion: STREAM_SCHEMA_VERSION,
  kind: "delivery",
  id: deliveryId(eventId, receivedAt),
  eventId,
  receivedAt,
  appId,
  trigger: "group_created",
  body: "{}",
});
const erasure = (appId: string, finishedAt: number, scope: "app" | "user" = "app"): ErasureNotice => ({
  schemaVersion: STREAM_SCHEMA_VERSION,
  kind: "erasure",
  id: `erasure-${appId}-${finishedAt}`,
  appId,
  scope,
  finishedAt,
});
let n = 0;
const record = (message: object | string, wrapped = false) => {
  const raw = typeof message === "string" ? message : JSON.stringify(message);
  return {
    messageId: `m${++n}`,
    body: wrapped ? JSON.stringify({ Type: "Notification", Message: raw }) : raw,
  };
};

describe("the stream package's SQS batch helper", () => {
  it("reports only the records that failed, and the ones that are no stream message", async () => {
    // Prepare
    const handler = streamBatchProcessor({
      onDelivery: async (d) => {
        if (d.eventId === "bad") throw new Error("downstream refused");
      },
    });
    const ok = record(delivery("good", 1));
    const bad = record(delivery("bad", 2), true);
    const junk = record("not json");

    // Act
    const out = await handler({ Records: [ok, bad, junk] });

    // Assess
    expect(out.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(
      [bad.messageId, junk.messageId].sort(),
    );
  });

  it("handles each delivery id once, within a batch and across batches, whatever the copies and batches", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 8 }), { maxLength: 6 }),
        fc.boolean(),
        async (batches, wrapped) => {
          // Prepare
          const calls: string[] = [];
          const handler = streamBatchProcessor({ onDelivery: async (d) => void calls.push(d.id) });

          // Act
          for (const batch of batches)
            await handler({ Records: batch.map((i) => record(delivery(`e${i}`, 100 + i), wrapped)) });

          // Assess
          const ids = new Set(batches.flat().map((i) => deliveryId(`e${i}`, 100 + i)));
          expect(calls.sort()).toEqual([...ids].sort());
        },
      ),
    );
  });

  it("fails every copy of a failed delivery in the batch, and handles it when it comes back", async () => {
    // Prepare
    let fail = true;
    const calls: string[] = [];
    const handler = streamBatchProcessor({
      onDelivery: async (d) => {
        calls.push(d.id);
        if (fail) throw new Error("down");
      },
    });
    const first = record(delivery("e1", 1));
    const copy = record(delivery("e1", 1));

    // Act
    const out = await handler({ Records: [first, copy] });
    fail = false;
    const again = await handler({ Records: [record(delivery("e1", 1))] });

    // Assess
    expect(out.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([first.messageId, copy.messageId]);
    expect(again.batchItemFailures).toEqual([]);
    expect(calls).toEqual([deliveryId("e1", 1), deliveryId("e1", 1)]);
  });

  it("drops a whole app's deliveries received before its erasure ended, in the notice's batch and later ones", async () => {
    // Prepare
    const delivered: string[] = [];
    const notices: string[] = [];
    const handler = streamBatchProcessor({
      onDelivery: async (d) => void delivered.push(d.id),
      onErasure: async (e) => void notices.push(e.id),
    });

    // Act: the notice arrives after a delivery published before it (nothing is ordered)
    await handler({ Records: [record(delivery("before", 10)), record(erasure("app1", 50))] });
    await handler({
      Records: [
        record(delivery("late-copy", 40)),
        record(delivery("after", 60)),
        record(delivery("other", 5, "app2")),
      ],
    });

    // Assess
    expect(delivered).toEqual([deliveryId("after", 60), deliveryId("other", 5)]);
    expect(notices).toEqual(["erasure-app1-50"]);
  });

  it("keeps the most recent ids when its store is full", () => {
    // Prepare
    const store = memoryDeliveryIdStore(2);

    // Act
    for (const id of ["a", "b", "a", "c"]) store.add(id);

    // Assess
    expect([store.has("a"), store.has("b"), store.has("c")]).toEqual([true, false, true]);
  });
});

describe("the stream package at import", () => {
  it("leaves the host's zod as it was: English messages per parse, none configured globally", () => {
    // Prepare: a schema of the host's, parsed after the package loaded
    const hostSchema = z.object({ name: z.string() });

    // Act
    const host = hostSchema.safeParse({});
    let parsed = "";
    try {
      parseStreamMessage(JSON.stringify({ kind: "delivery" }));
    } catch (error) {
      parsed = (error as Error).message;
    }

    // Assess: zod/mini's own message for the host, the English one in the package's error
    expect(host.success ? "" : (host.error.issues[0]?.message ?? "")).toBe("Invalid input");
    expect(parsed).toContain("Invalid input: expected");
  });
});
