import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { dedupeKey } from "@webhook-backend/stream/events/dedupe";
import { eventTime } from "@webhook-backend/stream/events/event-time";
import { parseWebhookEvent } from "@webhook-backend/stream/events/schemas";
import { describe, expect, it } from "vitest";
import { edgeDaysOf } from "../../shared/analytics/edge-days";
import { parseRawArchiveObject } from "../../shared/contracts/bucket-layout";
import { PLATFORM_RETRY_HORIZON_MS } from "../../shared/platform/constants";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch, archiveLine } from "../../shared/projector/raw-archive";
import { fixture } from "../support/fixtures";
import { memoryStore } from "../support/ingest";

const RECEIVED = Date.UTC(2026, 0, 2, 23, 59, 59, 500);

function queued(body: string, trigger: string, appId = "app1", receivedAt = RECEIVED): QueuedEvent {
  const eventId = createHash("sha256").update(body).digest("hex");
  return { messageId: `m-${eventId.slice(0, 6)}`, eventId, receivedAt, trigger, appId, body };
}

/** A message sent at `sentAt` (ms), or a member joining (no payload time), of app1. */
function messageAt(sentAt: number, id = "m1"): string {
  const body = fixture("message_sent");
  body.appId = "app1";
  Object.assign(body.data.message, { id, sentAt: sentAt / 1000 });
  return JSON.stringify(body);
}
function memberJoined(uid = "u1"): string {
  const body = fixture("group_member_joined");
  body.appId = "app1";
  body.data.members = { [uid]: { uid, name: uid } };
  return JSON.stringify(body);
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
    expect(key).toMatch(/^raw\/date=2026-01-02\/hour=\d{2}\/[0-9a-f]{32}\.ndjson\.gz$/);
    const bytes = store.objects.get(key ?? "") ?? new Uint8Array();
    expect(gunzipSync(bytes).toString("utf8").trim().split("\n")).toHaveLength(3);
    const lines = parseRawArchiveObject(bytes, key ?? "");
    expect(lines.map((l) => l.eventId)).toEqual(events.map((e) => e.eventId));
    expect(lines.every((l) => typeof l.naturalKey === "string" && typeof l.eventTime === "number")).toBe(
      true,
    );
  });

  it("puts one object for a batch whatever apps it holds, each line naming its app", async () => {
    // Prepare: ten events of ten apps (one of them an id that needs URL-encoding), one hour.
    const store = memoryStore();
    const apps = Array.from({ length: 9 }, (_, i) => `tenant-${i}`).concat("ténant/ü 1?");
    const events = apps.map((appId, i) => {
      const body = fixture("message_sent");
      body.appId = appId;
      return queued(JSON.stringify({ ...body, id: i }), "message_sent", appId);
    });

    // Act
    const keys = await archiveBatch(events, store);

    // Assess
    const raw = keys.filter((k) => k.startsWith("raw/"));
    const edges = keys.filter((k) => k.startsWith("edge/")).map((k) => /date=([\d-]+)\//.exec(k)?.[1]);
    expect(raw).toHaveLength(1);
    // The fixture's events are late: their edge copies, one object per day that needs them.
    expect(new Set(edges).size).toBe(edges.length);
    const lines = parseRawArchiveObject(store.objects.get(raw[0] ?? "") ?? new Uint8Array(), raw[0] ?? "");
    expect(lines.map((l) => l.appId)).toEqual(apps);
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

describe("edge objects: the lines another day's recompute needs", () => {
  const at = (day: number, h: number, m = 0, sec = 0) => Date.UTC(2026, 0, day, h, m, sec);

  it("copies a late or early event to its event day, and nothing of an event on its receipt day", () => {
    const line = (sentAt: number, receivedAt: number) =>
      archiveLine(queued(messageAt(sentAt), "message_sent", "app1", receivedAt));
    expect(edgeDaysOf(line(at(2, 23, 59), at(3, 1)))).toEqual(["2026-01-02"]);
    expect(edgeDaysOf(line(at(3, 0, 0, 1), at(2, 12)))).toEqual(["2026-01-03"]);
    expect(edgeDaysOf(line(at(2, 12), at(2, 23, 50)))).toEqual([]);
  });

  it("copies a line received within the retry horizon before midnight to the next day, whatever times it", () => {
    const joinedAt = (receivedAt: number) =>
      archiveLine(queued(memberJoined(), "group_member_joined", "app1", receivedAt));
    const midnight = at(3, 0);
    expect(edgeDaysOf(joinedAt(midnight - 1))).toEqual(["2026-01-03"]);
    expect(edgeDaysOf(joinedAt(midnight - PLATFORM_RETRY_HORIZON_MS))).toEqual(["2026-01-03"]);
    expect(edgeDaysOf(joinedAt(midnight - PLATFORM_RETRY_HORIZON_MS - 1))).toEqual([]);
    expect(edgeDaysOf(joinedAt(midnight))).toEqual([]);
    // A payload-timed line too: another copy of its fact with a later time may follow after midnight.
    const message = (sentAt: number, receivedAt: number) =>
      archiveLine(queued(messageAt(sentAt), "message_sent", "app1", receivedAt));
    expect(edgeDaysOf(message(at(2, 23, 58), midnight - 1000))).toEqual(["2026-01-03"]);
    // Sent the day before, received just before midnight: both neighbours need it.
    expect(edgeDaysOf(message(at(1, 23), midnight - 1000)).sort()).toEqual(["2026-01-01", "2026-01-03"]);
    const invalid = archiveLine(queued("{}", "message_sent", "app1", midnight - 1));
    expect(edgeDaysOf(invalid)).toEqual([]);
  });

  it("gives no edge to a line whose time no date can hold (instead of failing the batch)", () => {
    const line = archiveLine(queued(memberJoined(), "group_member_joined", "app1", at(2, 23, 59)));
    expect(edgeDaysOf({ ...line, eventTime: 9e15 })).toEqual([]);
  });

  it("puts one more object only for a batch that holds such lines, with copies of those lines only", async () => {
    // Prepare
    const store = memoryStore();
    const noon = [
      queued(messageAt(at(2, 11, 59), "a"), "message_sent", "app1", at(2, 12)),
      queued(memberJoined("u1"), "group_member_joined", "app1", at(2, 12)),
    ];
    const nearMidnight = [
      queued(messageAt(at(2, 23, 59), "b"), "message_sent", "app1", at(2, 23, 59, 30)),
      queued(memberJoined("u2"), "group_member_joined", "app1", at(2, 23, 58)),
      queued(messageAt(at(1, 22), "late"), "message_sent", "app1", at(2, 23, 59, 40)),
    ];

    // Act
    const quiet = await archiveBatch(noon, store);
    const keys = await archiveBatch(nearMidnight, store);

    // Assess
    expect(quiet).toHaveLength(1);
    expect(keys).toHaveLength(3);
    const [raw, ...edges] = keys;
    expect(raw).toMatch(/^raw\/date=2026-01-02\/hour=23\//);
    const linesOf = (key: string | undefined) =>
      parseRawArchiveObject(store.objects.get(key ?? "") ?? new Uint8Array(), key ?? "");
    expect(linesOf(raw)).toHaveLength(3);
    const byDay = Object.fromEntries(
      edges.map((k) => [/^edge\/date=([\d-]+)\/[0-9a-f]{32}\.ndjson\.gz$/.exec(k)?.[1], linesOf(k)]),
    );
    expect(Object.keys(byDay).sort()).toEqual(["2026-01-01", "2026-01-03"]);
    // Received in the last minutes of the day: all three, for the next day's dedupe.
    expect(byDay["2026-01-03"]).toEqual(nearMidnight.map((e) => archiveLine(e)));
    expect(byDay["2026-01-01"]).toEqual([archiveLine(nearMidnight[2] as QueuedEvent)]);
    // A retried batch rewrites the same keys; a platform retry (a later receipt) keeps its own.
    expect(await archiveBatch(nearMidnight, store)).toEqual(keys);
    const retry = { ...(nearMidnight[1] as QueuedEvent), receivedAt: at(2, 23, 58, 30) };
    const [retryKey] = await archiveBatch([retry], store);
    const [firstKey] = await archiveBatch([nearMidnight[1] as QueuedEvent], store);
    expect(retryKey).not.toBe(firstKey);
  });
});
