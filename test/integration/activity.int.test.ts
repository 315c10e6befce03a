import { createHash } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { duckDbEngine } from "../../shared/adapters/duckdb-sql-engine";
import { dynamoActivityStore } from "../../shared/adapters/dynamo-activity-store";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { activityFromRows, TOP_LIMIT } from "../../shared/analytics/figures";
import { readQuery } from "../../shared/analytics/queries";
import { dayStart, partitionsOf, type RollupDependencies, rollupDay } from "../../shared/analytics/rollup";
import { appSegment } from "../../shared/contracts/bucket-layout";
import type { BlobStore } from "../../shared/ports/blob-store";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { createActivityTable } from "../../tools/local/provision";
import { expectedActivity } from "../../tools/simulate/expected-activity";
import { type GeneratedEvent, generateHistory } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";

const { s3, dynamo } = testClients();
const doc = documentClient(dynamo);
let bucket: string;
let archive: BlobStore;
let activityTable: string;

/** 23:54 UTC: the history crosses midnight, so two days and their hours are checked. */
const START = Date.UTC(2026, 0, 2, 23, 54) / 1000;
const DAYS = ["2026-01-02", "2026-01-03"];
const HOUR = 3_600_000;

beforeAll(async () => {
  bucket = await createBucket(s3, uniqueName("activity"));
  archive = s3BlobStore(s3, bucket);
  activityTable = uniqueName("activity");
  await createActivityTable(dynamo, activityTable);
});

/** A simulated history of one app, with messages to groups added (the simulator sends 1:1 only). */
function historyOf(appId: string, events = 900, seed = 7): GeneratedEvent[] {
  const history = generateHistory({ events, seed, apps: [appId], startAt: START });
  return history.events;
}

/**
 * Receipt: 300 ms after the event and 1 ms per event sent before it (the edge's receipts are
 * strictly increasing, so two facts of one instant rank in the order they were sent, whatever
 * their ids: the property's runs rename the app, which changes every id), but every 50th event
 * arrives two hours late.
 */
const receiptOf = (e: GeneratedEvent, i: number) => e.at + 300 + i + (i % 50 === 0 ? 2 * HOUR : 0);

function queued(e: GeneratedEvent, receivedAt: number): QueuedEvent {
  const eventId = createHash("sha256").update(e.body).digest("hex");
  return {
    messageId: `m-${eventId.slice(0, 8)}-${receivedAt}`,
    eventId,
    receivedAt,
    trigger: e.trigger,
    appId: e.appId,
    body: e.body,
  };
}

async function figuresFromArchive(appId: string, day: string) {
  const engine = duckDbEngine({ s3, bucket });
  const { first, last } = partitionsOf(day, { closed: true });
  const app = appSegment(appId);
  const result = await engine.query(
    readQuery("day-activity"),
    { app, first_date: first, last_date: last, day_start: dayStart(day), day_end: dayStart(day) + 24 * HOUR },
    { app, from: first, to: last },
  );
  return activityFromRows(result.rows, { hours: 24, top: TOP_LIMIT });
}

describe("activity figures: SQL over the archive on DuckDB equals what the history implies", () => {
  it("rolls up two days into the activity table, each figure, hour and top list as the history implies", async () => {
    // Prepare
    const appId = uniqueName("app");
    const events = historyOf(appId);
    const receipts = new Map(events.map((e, i) => [e, receiptOf(e, i)]));
    for (let i = 0; i < events.length; i += 100)
      await archiveBatch(
        events.slice(i, i + 100).map((e) => queued(e, receipts.get(e) ?? 0)),
        archive,
      );
    const expected = expectedActivity(events, (e) => receipts.get(e) ?? 0).get(appId);
    const store = dynamoActivityStore(doc, activityTable);
    const deps: RollupDependencies = {
      engine: duckDbEngine({ s3, bucket }),
      store,
      now: () => Date.UTC(2026, 0, 5),
      graceMs: 2 * HOUR,
    };

    // Act
    const rollups = [];
    for (const day of DAYS) rollups.push(await rollupDay(appId, day, deps));

    // Assess
    expect(rollups.map((r) => [r.outcome, r.final])).toEqual([
      ["written", true],
      ["written", true],
    ]);
    for (const day of DAYS) {
      const want = expected?.get(day);
      const stored = await store.day(appId, day);
      expect(stored?.figures).toEqual(want?.figures);
      expect(stored?.messageKinds).toEqual(want?.messageKinds);
      expect(await store.hours(appId, day)).toEqual(want?.hours);
      expect(await store.topGroups(appId, day, TOP_LIMIT)).toEqual(want?.topGroups);
      expect(await store.topUsers(appId, day, 5)).toEqual(want?.topUsers.slice(0, 5));
    }
    expect(expected?.get("2026-01-02")?.figures.messages).toBeGreaterThan(0);
    expect(expected?.get("2026-01-03")?.figures.peak_online).toBeGreaterThan(0);
    // The simulator sends a third of its members' messages to their groups.
    expect(expected?.get("2026-01-02")?.figures.messages_group).toBeGreaterThan(0);
    expect(expected?.get("2026-01-02")?.topGroups.length).toBeGreaterThan(1);
  });

  it("replaces a day: a recompute with more facts rewrites it, one computed earlier is refused", async () => {
    // Prepare
    const appId = uniqueName("app");
    const events = historyOf(appId, 300, 3);
    const half = events.slice(0, 150);
    await archiveBatch(
      half.map((e, i) => queued(e, receiptOf(e, i))),
      archive,
    );
    const store = dynamoActivityStore(doc, activityTable);
    let now = Date.UTC(2026, 0, 3, 0, 30);
    const deps: RollupDependencies = {
      engine: duckDbEngine({ s3, bucket }),
      store,
      now: () => now,
      graceMs: 2 * HOUR,
    };
    await rollupDay(appId, DAYS[0] as string, deps);
    const before = await store.day(appId, DAYS[0] as string);

    // Act
    await archiveBatch(
      events.slice(150).map((e, i) => queued(e, receiptOf(e, i + 150))),
      archive,
    );
    now = Date.UTC(2026, 0, 3, 3);
    const later = await rollupDay(appId, DAYS[0] as string, deps);
    now = Date.UTC(2026, 0, 3, 1);
    const stale = await rollupDay(appId, DAYS[0] as string, deps);

    // Assess
    expect(before?.final).toBe(false);
    expect(later).toMatchObject({ outcome: "written", final: true });
    expect(stale.outcome).toBe("superseded");
    const want = expectedActivity(events, (e) => receiptOf(e, events.indexOf(e)))
      .get(appId)
      ?.get(DAYS[0] as string);
    expect((await store.day(appId, DAYS[0] as string))?.figures).toEqual(want?.figures);
    expect((await store.day(appId, DAYS[0] as string))?.computedAt).toBe(Date.UTC(2026, 0, 3, 3));
    const skipped = await rollupDay(appId, DAYS[0] as string, deps, { skipFinal: true });
    expect(skipped.outcome).toBe("skipped");
  });

  it("gives the same figures whatever the duplicates, order, batch splits, redrives and replays (fast-check)", async () => {
    const appId = uniqueName("app");
    const events = historyOf(appId, 250, 11);
    const expected = expectedActivity(events, (e) => receiptOf(e, events.indexOf(e))).get(appId);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          // A platform retry: the same bytes again, received later (never earlier than the first).
          retries: fc.array(
            fc.record({ index: fc.nat(events.length - 1), delayMs: fc.integer({ min: 1, max: 6 * HOUR }) }),
            {
              maxLength: 40,
            },
          ),
          // An SQS redelivery or a redrive: the same message (same receipt) processed again.
          redelivered: fc.array(fc.nat(events.length - 1), { maxLength: 40 }),
          order: fc.array(fc.nat(), { minLength: events.length, maxLength: events.length }),
          batchSizes: fc.array(fc.integer({ min: 5, max: 100 }), { minLength: 1, maxLength: 8 }),
          // A batch archived again (a retried batch split differently, or a replay's resend).
          rearchived: fc.array(fc.nat(), { maxLength: 3 }),
        }),
        async ({ retries, redelivered, order, batchSizes, rearchived }) => {
          const runApp = `${appId}-r${run++}`;
          const rebody = (e: GeneratedEvent) => ({
            ...e,
            appId: runApp,
            body: e.body.replaceAll(appId, runApp),
          });
          const deliveries: QueuedEvent[] = events.map((e, i) => queued(rebody(e), receiptOf(e, i)));
          for (const r of retries)
            deliveries.push(
              queued(
                rebody(events[r.index] as GeneratedEvent),
                receiptOf(events[r.index] as GeneratedEvent, r.index) + r.delayMs,
              ),
            );
          for (const i of redelivered) deliveries.push(deliveries[i] as QueuedEvent);
          const shuffled = deliveries
            .map((d, i) => ({ d, k: order[i % order.length] ?? 0 }))
            .sort((a, b) => a.k - b.k)
            .map((x) => x.d);
          const batches: QueuedEvent[][] = [];
          for (let i = 0, b = 0; i < shuffled.length; b++) {
            const size = batchSizes[b % batchSizes.length] ?? 10;
            batches.push(shuffled.slice(i, i + size));
            i += size;
          }
          for (const b of rearchived) batches.push(batches[b % batches.length] as QueuedEvent[]);
          await Promise.all(batches.map((batch) => archiveBatch(batch, archive)));
          for (const day of DAYS) {
            const got = await figuresFromArchive(runApp, day);
            const want = expected?.get(day);
            expect(got.figures).toEqual(want?.figures);
            expect(got.hours).toEqual(want?.hours);
            expect(got.topUsers.map((u) => ({ ...u, uid: u.uid.replace(runApp, appId) }))).toEqual(
              want?.topUsers,
            );
            expect(got.topGroups.map((g) => ({ ...g, groupId: g.groupId.replace(runApp, appId) }))).toEqual(
              want?.topGroups,
            );
          }
        },
      ),
      { numRuns: 10 },
    );
  }, 600_000);
});
