import { beforeAll, describe, expect, it } from "vitest";
import { archiveLease, type LeaseTable } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import { type ScheduledRollupReport, scheduledRollup } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { createActivityTable } from "../../tools/local/provision";
import { createBucket, testClients, uniqueName } from "../support/aws";

/**
 * The rollup has no reserved concurrency (#48 item 3: reserving 1 fails stack creation on an
 * account whose concurrency quota is below 101): two scheduled runs may overlap (a slow run and
 * the next tick, or Lambda's at-least-once delivery of an asynchronous invocation). The archive
 * lease serialises them: each day's pass that writes holds it, and the schedule never waits for
 * it, so the second run defers the day it finds held (not a failure: no alarm) and writes
 * nothing, and the first run's figures stand. On DynamoDB Local (the lease, the figures) and
 * fauxqs (the ledger); the engine is a stub that counts its queries.
 */
const { dynamo, s3 } = testClients();
const doc = documentClient(dynamo);
let table: LeaseTable;
let bucket: string;

beforeAll(async () => {
  table = { doc, tableName: uniqueName("overlap") };
  await createActivityTable(dynamo, table.tableName);
  bucket = await createBucket(s3, uniqueName("overlap"));
});

describe("two scheduled rollups at once (no reserved concurrency)", () => {
  it("the second defers each day the first holds, reads nothing, writes nothing, and fails nothing", async () => {
    // Prepare: yesterday and today, one app; the second run starts inside the first's query of today.
    const now = () => Date.UTC(2026, 0, 2, 1);
    const queries: string[] = [];
    let second: Promise<ScheduledRollupReport> | undefined;
    const engine: SqlEngine = {
      name: "duckdb",
      async query(_sql, params) {
        queries.push(String(params?.day));
        // The second run, whole, while the first holds the lease of its first day.
        if (!second) {
          second = scheduledRollup({ ...deps, engine: secondEngine });
          await second;
        }
        return { columns: [], rows: [{ app: "a1", grouping_set: 63, messages: 3 }], bytesScanned: 1 };
      },
    };
    const secondEngine: SqlEngine = {
      name: "duckdb",
      async query(_sql, params) {
        queries.push(`second ${params?.day}`);
        return { columns: [], rows: [], bytesScanned: 0 };
      },
    };
    const store = dynamoActivityStore(doc, table.tableName);
    const deps = {
      engine,
      store,
      now,
      graceMs: 7_200_000,
      ledger: blobRollupLedger(s3BlobStore(s3, bucket)),
      archiveLock: archiveLease(table, now),
    };

    // Act
    const first = await scheduledRollup(deps);
    const overlapped = await second;

    // Assess: the second deferred both days (the lease held), queried nothing, and failed
    // nothing (a deferral is not counted as a failure: no alarm); the first passed both days.
    expect(overlapped).toMatchObject({
      failures: [],
      passes: [],
      passesDeferred: ["2026-01-01", "2026-01-02"],
    });
    expect(queries.filter((q) => q.startsWith("second"))).toEqual([]);
    expect(first.failures).toEqual([]);
    expect(first.passes.map((p) => p.day)).toEqual(["2026-01-01", "2026-01-02"]);
    expect((await store.day("a1", "2026-01-01"))?.figures).toMatchObject({ messages: 3 });
  });
});
