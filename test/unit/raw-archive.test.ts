import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseRawArchiveObject } from "../../shared/contracts/bucket-layout";
import { dedupeKey } from "../../shared/events/dedupe";
import { eventTime } from "../../shared/events/event-time";
import { parseWebhookEvent } from "../../shared/events/schemas";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch, archiveLine } from "../../shared/projector/raw-archive";
import { fixture } from "../support/fixtures";
import { memoryStore } from "../support/ingest";

const RECEIVED = Date.UTC(2026, 0, 2, 23, 59, 59, 500);

function queued(body: string, trigger: string, appId = "app1"): QueuedEvent {
  const eventId = createHash("sha256").update(body).digest("hex");
  return { messageId: `m-${eventId.slice(0, 6)}`, eventId, receivedAt: RECEIVED, trigger, appId, body };
}

describe("archive lines carry the facts the analytics need, computed once", () => {
  it("stores the event time, natural key and lifecycle rank of a known event, as the projector derives them", () => {
    // Prepare
    const body = fixture("group_deleted");
    body.appId = "app1";
    const event = queued(JSON.stringify(body), "group_deleted");
    const parsed = parseWebhookEvent(body);
    if (parsed.kind !== "known") throw new Error("fixture must parse");

    // Act
    const line = archiveLine(event);

    // Assess
    expect(line.eventTime).toBe(eventTime(parsed.event, RECEIVED).ms);
    expect(line.eventTime).not.toBe(RECEIVED);
    expect(line.naturalKey).toBe(dedupeKey(parsed.event, event.eventId));
    expect(line.rank).toBe(2);
    expect(line.body).toBe(event.body);
  });

  it("gives an event without a payload time its receipt, and a membership event its body hash as key", () => {
    const body = fixture("group_member_joined");
    body.appId = "app1";
    const line = archiveLine(queued(JSON.stringify(body), "group_member_joined"));
    expect(line.eventTime).toBe(RECEIVED);
    expect(line.naturalKey).toMatch(/^app1\|group_member_joined\|body:[0-9a-f]{64}$/);
    expect(line.rank).toBe(1);
  });

  it("keys an unknown trigger by its body hash at its receipt, and gives an invalid body no facts", () => {
    const unknown = archiveLine(
      queued(JSON.stringify({ trigger: "after_feed_item_read", appId: "app1" }), "x"),
    );
    expect(unknown).toMatchObject({ eventTime: RECEIVED, rank: 1 });
    expect(unknown.naturalKey).toContain("|body:");
    const invalid = archiveLine(
      queued(JSON.stringify({ trigger: "message_sent", data: {} }), "message_sent"),
    );
    expect(invalid).not.toHaveProperty("eventTime");
    expect(invalid).not.toHaveProperty("naturalKey");
    expect(invalid).not.toHaveProperty("rank");
  });
});

describe("raw archive objects", () => {
  it("are gzip-compressed NDJSON under the receipt day, read back line for line", async () => {
    // Prepare
    const store = memoryStore();
    const events = ["message_sent", "group_created", "call_started"].map((t) => {
      const body = fixture(t);
      body.appId = "app1";
      return queued(JSON.stringify(body), t);
    });

    // Act
    const [key] = await archiveBatch(events, store);

    // Assess
    expect(key).toMatch(/^raw\/app=app1\/date=2026-01-02\/[0-9a-f]{32}\.ndjson\.gz$/);
    const bytes = store.objects.get(key ?? "") ?? new Uint8Array();
    expect(gunzipSync(bytes).toString("utf8").trim().split("\n")).toHaveLength(3);
    const lines = parseRawArchiveObject(bytes, key ?? "");
    expect(lines.map((l) => l.eventId)).toEqual(events.map((e) => e.eventId));
    expect(lines.every((l) => typeof l.naturalKey === "string" && typeof l.eventTime === "number")).toBe(
      true,
    );
  });

  it("reads objects written before (plain NDJSON, lines without the facts)", () => {
    const old = `${JSON.stringify({ eventId: "e1", receivedAt: 1, trigger: "message_sent", appId: "a", body: "{}" })}\n\n`;
    const lines = parseRawArchiveObject(Buffer.from(old), "raw/app=a/date=1970-01-01/x.ndjson");
    expect(lines).toEqual([
      { eventId: "e1", receivedAt: 1, trigger: "message_sent", appId: "a", body: "{}" },
    ]);
  });

  it("names the object when a line breaks the contract", () => {
    expect(() => parseRawArchiveObject(Buffer.from('{"eventId":""}\n'), "raw/bad.ndjson")).toThrow(
      /raw archive line in raw\/bad\.ndjson/,
    );
  });
});
