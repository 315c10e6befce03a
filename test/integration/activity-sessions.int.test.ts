import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { dayActivity } from "../../shared/analytics/rollup";
import type { BlobStore } from "../../shared/ports/blob-store";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { expectedActivity } from "../../tools/simulate/expected-activity";
import type { GeneratedEvent } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { fixture, type Loose } from "../support/fixtures";

const { s3 } = testClients();
let bucket: string;
let archive: BlobStore;

beforeAll(async () => {
  bucket = await createBucket(s3, uniqueName("sessions"));
  archive = s3BlobStore(s3, bucket);
});

/** The templates' call and meeting: 2023-10-10, from 10:41:41 UTC (1696934501). */
const DAY = "2023-10-10";

/** A session event of `appId` from its template, changed by `edit`, as the platform would send it. */
function sessionEvent(appId: string, trigger: string, edit: (data: Loose) => void, text = (t: string) => t) {
  const event = fixture(trigger);
  event.appId = appId;
  edit(event.data);
  return { trigger, appId, body: text(JSON.stringify(event)), at: 0 } satisfies GeneratedEvent;
}

/** Archives the events, each received a second after its position, and computes the day both ways. */
async function bothWays(appId: string, events: GeneratedEvent[]) {
  const receivedAt = (e: GeneratedEvent) => Date.UTC(2023, 9, 10, 12) + events.indexOf(e) * 1000;
  await archiveBatch(
    events.map((e) => {
      const eventId = createHash("sha256").update(e.body).digest("hex");
      return {
        messageId: eventId,
        eventId,
        receivedAt: receivedAt(e),
        trigger: e.trigger,
        appId,
        body: e.body,
      };
    }),
    archive,
  );
  const sql = (await dayActivity(duckDbEngine({ s3, bucket }), appId, DAY)).activity;
  const expected = expectedActivity(events, receivedAt).get(appId)?.get(DAY);
  return { sql, expected };
}

describe("call and meeting figures from the archive, on DuckDB and in the independent computation", () => {
  it("reads integer times written with a fraction (1696934553.0) as integers, the same cast Athena takes", async () => {
    // Prepare: the template's call (52 s) with every time written as a float.
    const appId = uniqueName("app");
    const floats = (t: string) =>
      t.replace(/("(?:created_at|destroyed_at|joined_at|left_at)":)(\d+)/g, "$1$2.0");
    const ended = sessionEvent(appId, "call_ended", () => undefined, floats);
    expect(ended.body).toContain('"destroyed_at":1696934553.0');

    // Act
    const { sql, expected } = await bothWays(appId, [ended]);

    // Assess
    expect(sql.figures.call_seconds).toBe(52);
    expect(sql.figures).toEqual(expected?.figures);
  });

  it("counts the participant-seconds of a day whose call and meeting ended with their rosters and no participant-left event", async () => {
    // Prepare: the call's roster: 52 s and 50 s; the meeting's (another session): 38 s.
    const appId = uniqueName("app");
    const call = sessionEvent(appId, "call_ended", () => undefined);
    const meeting = sessionEvent(appId, "meeting_ended", (data) => {
      data.sessionId = `${data.sessionId}-meet`;
    });

    // Act
    const { sql, expected } = await bothWays(appId, [call, meeting]);

    // Assess
    expect(sql.figures.participant_seconds).toBe(52 + 50 + 38);
    expect(sql.hours[10]?.figures.participant_seconds).toBe(52 + 50 + 38);
    expect(sql.figures).toEqual(expected?.figures);
    expect(sql.hours).toEqual(expected?.hours);
  });

  it("counts a stint once, by session, name and join time, whether its leaving is reported by a participant-left event, the roster or both", async () => {
    // Prepare: George's stint left twice (a left event, then the roster, later by 2 s: the
    // latest leaving counts), Andrew's in the roster only, Ann's in a left event only (she
    // joined and left before the end: not in this roster), and George again in another session.
    const appId = uniqueName("app");
    const occupant = { name: "George Alan", joined_at: 1696934501, left_at: 1696934551, audio_call: "true" };
    const georgeLeft = sessionEvent(appId, "call_participant_left", (data) => {
      data.occupant = occupant;
      data.sessionId = "s1";
    });
    const annLeft = sessionEvent(appId, "call_participant_left", (data) => {
      data.occupant = { ...occupant, name: "Ann", left_at: 1696934511 };
      data.sessionId = "s1";
    });
    const ended = sessionEvent(appId, "call_ended", (data) => {
      data.sessionId = "s1";
    });
    const otherSession = sessionEvent(appId, "call_ended", (data) => {
      data.sessionId = "s2";
      data.all_occupants = [{ ...occupant, left_at: 1696934521 }];
    });

    // Act
    const { sql, expected } = await bothWays(appId, [georgeLeft, annLeft, ended, otherSession]);

    // Assess: George 52 (the roster's later leaving), Andrew 50, Ann 10; George in s2 20.
    expect(sql.figures.participant_seconds).toBe(52 + 50 + 10 + 20);
    expect(sql.figures).toEqual(expected?.figures);
  });

  it("sorts the sessions that ended into duration buckets and counts each one's distinct participants (#33)", async () => {
    // Prepare: five calls of 30 s, 2 min, 10 min, 30 min and 2 h; a meeting of 40 s whose roster
    // names George twice (he rejoined) and Ann once.
    const appId = uniqueName("app");
    const start = 1696934501;
    const calls = [30, 120, 600, 1800, 7200].map((seconds, i) =>
      sessionEvent(appId, "call_ended", (data) => {
        data.sessionId = `c${i}`;
        data.created_at = start;
        data.destroyed_at = start + seconds;
      }),
    );
    const stint = (name: string, joined: number) => ({
      name,
      joined_at: joined,
      left_at: joined + 5,
      audio_call: "false",
    });
    const meeting = sessionEvent(appId, "meeting_ended", (data) => {
      data.sessionId = "m1";
      data.created_at = start;
      data.destroyed_at = start + 40;
      data.all_occupants = [
        stint("George Alan", start),
        stint("George Alan", start + 10),
        stint("Ann", start),
      ];
    });

    // Act
    const { sql, expected } = await bothWays(appId, [...calls, meeting]);

    // Assess: one call a bucket, the meeting under a minute too; each template call's roster
    // names two people, the meeting's two (George once).
    const f = sql.figures;
    expect([
      f.sessions_under_1m,
      f.sessions_1_5m,
      f.sessions_5_15m,
      f.sessions_15_60m,
      f.sessions_over_60m,
    ]).toEqual([2, 1, 1, 1, 1]);
    expect([f.calls_ended, f.meetings_ended, f.sessions_ended]).toEqual([5, 1, 6]);
    expect([f.call_participants, f.meeting_participants]).toEqual([10, 2]);
    expect(sql.figures).toEqual(expected?.figures);
    expect(sql.hours).toEqual(expected?.hours);
  });
});

describe("messaging latencies from the archive, on DuckDB and in the independent computation (#33)", () => {
  /** A 1:1 message of `appId` from `from` to `to` at `second` (epoch s) with id `id`. */
  const message = (appId: string, id: string, from: string, to: string, second: number) =>
    sessionEvent(appId, "message_sent", (data) => {
      const m = data.message as Loose;
      Object.assign(m, {
        id,
        sender: from,
        receiver: to,
        receiverType: "user",
        sentAt: second,
        updatedAt: second,
      });
    });
  const receipt = (appId: string, trigger: string, id: string, reader: string, second: number) =>
    sessionEvent(appId, trigger, (data) => {
      const body = data.body as Loose;
      Object.assign(body, { messageId: id, timestamp: second });
      (body.user as Loose).uid = reader;
      data.sender = reader;
    });

  it("times first responses and each recipient's delivery and read, as exact nearest-rank percentiles", async () => {
    // Prepare: A→B at t, B→A at t+5 (a response: 5 s), B→A at t+6 (not one: B again), A→B at
    // t+20 (a response: 14 s); B delivers m1 at t+2 and reads it at t+30; A's receipt of her own
    // message, and a receipt of a message not sent that day, count nothing.
    const appId = uniqueName("app");
    const t = 1696934501;
    const events = [
      message(appId, "m1", "A", "B", t),
      message(appId, "m2", "B", "A", t + 5),
      message(appId, "m3", "B", "A", t + 6),
      message(appId, "m4", "A", "B", t + 20),
      receipt(appId, "message_delivery_receipt", "m1", "B", t + 2),
      receipt(appId, "message_read_receipt", "m1", "B", t + 30),
      receipt(appId, "message_read_receipt", "m4", "A", t + 40),
      receipt(appId, "message_delivery_receipt", "yesterday", "B", t + 50),
    ];

    // Act
    const { sql, expected } = await bothWays(appId, events);

    // Assess: two responses (5 s, 14 s): the median is the first (nearest rank 1 of 2), p90 the second.
    const f = sql.figures;
    expect([f.first_responses, f.first_response_p50_ms, f.first_response_p90_ms]).toEqual([2, 5000, 14_000]);
    expect([f.delivery_latencies, f.delivery_latency_p50_ms, f.delivery_latency_p99_ms]).toEqual([
      1, 2000, 2000,
    ]);
    expect([f.read_latencies, f.read_latency_p50_ms]).toEqual([1, 30_000]);
    expect(sql.hours[10]?.figures.first_responses).toBe(2);
    expect(sql.figures).toEqual(expected?.figures);
    expect(sql.hours).toEqual(expected?.hours);
  });

  it("counts chat-to-call: a caller who wrote to the callee earlier in the day", async () => {
    // Prepare: A writes to B, then calls B (counted); B calls A without having written (not);
    // C calls D, then writes to D (not: the message came after the call).
    const appId = uniqueName("app");
    const t = 1696934501;
    const call = (id: string, from: string, to: string, second: number) =>
      sessionEvent(appId, "call_initiated", (data) => {
        Object.assign(data.call as Loose, {
          id,
          sender: from,
          receiver: to,
          sentAt: second,
          updatedAt: second,
        });
      });
    const events = [
      message(appId, "m1", "A", "B", t),
      call("c1", "A", "B", t + 10),
      call("c2", "B", "A", t + 20),
      call("c3", "C", "D", t + 30),
      message(appId, "m2", "C", "D", t + 40),
    ];

    // Act
    const { sql, expected } = await bothWays(appId, events);

    // Assess
    expect(sql.figures.chat_to_call).toBe(1);
    expect(sql.figures).toEqual(expected?.figures);
    expect(sql.hours).toEqual(expected?.hours);
  });
});

describe("calls in progress at once (#33)", () => {
  it("takes the peak of calls in progress per day and hour, a call ended without its start counted from the day's start", async () => {
    // Prepare: c3 was in progress at midnight (only its end, 10:30, is in the day); c1 starts at
    // 10:00 and ends 10:20; c2 starts 10:10 and ends 11:05. Levels: 1, 2, 3, 2, 1 | 0.
    const appId = uniqueName("app");
    const at = (h: number, m: number) => Date.UTC(2023, 9, 10, h, m) / 1000;
    const started = (id: string, second: number) =>
      sessionEvent(appId, "call_started", (data) => {
        data.sessionId = id;
        data.created_at = second;
      });
    const ended = (id: string, from: number, to: number) =>
      sessionEvent(appId, "call_ended", (data) => {
        data.sessionId = id;
        data.created_at = from;
        data.destroyed_at = to;
      });
    const events = [
      started("c1", at(10, 0)),
      started("c2", at(10, 10)),
      ended("c1", at(10, 0), at(10, 20)),
      ended("c3", at(9, 0) - 86_400, at(10, 30)),
      ended("c2", at(10, 10), at(11, 5)),
    ];

    // Act
    const { sql, expected } = await bothWays(appId, events);

    // Assess
    expect([sql.figures.peak_calls, sql.figures.calls_at_start, sql.figures.calls_change]).toEqual([
      3, 1, -1,
    ]);
    expect([
      sql.hours[10]?.figures.peak_calls,
      sql.hours[11]?.figures.calls_at_start,
      sql.hours[12]?.figures.peak_calls,
    ]).toEqual([3, 1, 0]);
    expect(sql.figures).toEqual(expected?.figures);
    expect(sql.hours).toEqual(expected?.hours);
  });
});
