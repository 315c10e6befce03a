import { beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { daysInRange, rollupDays } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { createActivityTable } from "../../tools/local/provision";
import { generateHistory } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { queuedAt } from "../support/queued";

/**
 * `webhook rollup --from … --to …` over every app (#61, item 1), on fauxqs, DynamoDB Local and
 * DuckDB: a history on its first and last days only leaves no day between "not computed"; and the
 * passes it records in the ledger (what the watchdog judges silence from) date an app's last
 * sighting on a past day by its deliveries, not by the time the command ran.
 */
const { s3, dynamo } = testClients();
let bucket: string;
let activityTable: string;

beforeAll(async () => {
  bucket = await createBucket(s3, uniqueName("range"));
  activityTable = uniqueName("activity");
  await createActivityTable(dynamo, activityTable);
});

describe("a range rolled up over every app", () => {
  it("writes every day of the range for each app it saw (zeros on a day without its line), and dates the ledger's sightings by the deliveries", async () => {
    // Prepare: apps a and b on 2026-05-01 (10:00 for a few minutes), a alone on 2026-05-04; nothing on the 2nd and 3rd.
    const [a, b] = [uniqueName("ra"), uniqueName("rb")];
    const first = generateHistory({
      events: 120,
      seed: 3,
      apps: [a, b],
      startAt: Date.UTC(2026, 4, 1, 10) / 1000,
    });
    const last = generateHistory({
      events: 60,
      seed: 4,
      apps: [a],
      startAt: Date.UTC(2026, 4, 4, 10) / 1000,
    });
    const events = [...first.events, ...last.events];
    await archiveBatch(
      events.map((e) => queuedAt(e, e.at + 500)),
      s3BlobStore(s3, bucket),
    );
    const store = dynamoActivityStore(documentClient(dynamo), activityTable);
    const ledger = blobRollupLedger(s3BlobStore(s3, bucket));
    const now = Date.UTC(2026, 4, 9);

    // Act: the command's range, every app.
    const report = await rollupDays(daysInRange("2026-05-01", "2026-05-04"), {
      engine: duckDbEngine({ s3, bucket }),
      store,
      now: () => now,
      graceMs: 7_200_000,
      ledger,
    });

    // Assess: no failure; each app has each day, zeros where it sent nothing.
    expect(report.failures).toEqual([]);
    for (const app of [a, b])
      for (const day of daysInRange("2026-05-01", "2026-05-04")) {
        const stored = await store.day(app, day);
        expect(stored, `${app} ${day}`).toBeDefined();
        const sent = events.some((e) => e.appId === app && new Date(e.at).toISOString().startsWith(day));
        expect((stored?.figures.messages ?? 0) > 0, `${app} ${day}`).toBe(sent);
        expect(stored?.final).toBe(true);
      }
    // The ledger: hours only for apps with a line on the day; each sighting no later than the
    // end of the app's last hour with deliveries that day (10:00-11:00), never the command's time.
    const pass1 = await ledger.pass("2026-05-01");
    expect(Object.keys(pass1?.hourly ?? {}).sort()).toEqual([a, b].sort());
    expect(pass1?.seenAt?.[a]).toBeLessThanOrEqual(Date.UTC(2026, 4, 1, 12));
    expect(pass1?.seenAt?.[b]).toBeLessThanOrEqual(Date.UTC(2026, 4, 1, 12));
    expect(Object.keys((await ledger.pass("2026-05-02"))?.hourly ?? {})).toEqual([]);
    expect((await ledger.pass("2026-05-04"))?.seenAt?.[a]).toBeLessThanOrEqual(Date.UTC(2026, 4, 4, 12));
  });
});
