import {
  type AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
} from "@aws-sdk/client-athena";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import type { ArchiveCompactor } from "../../shared/analytics/compaction";
import { compactManifestKey } from "../../shared/analytics/compaction";
import { withArchiveEvents } from "../../shared/analytics/dialect";
import { athenaEngine } from "../../shared/analytics/engines/athena-sql-engine";
import { duckDbCompactor } from "../../shared/analytics/engines/duckdb-compactor";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { dayActivities, scheduledRollup } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { trinoSyntaxErrors } from "../../tools/analytics/trino-statement";
import { createActivityTable } from "../../tools/local/provision";
import { generateHistory } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { queuedAt } from "../support/queued";

const { s3, dynamo } = testClients();
const D1 = "2026-01-02";
const D2 = "2026-01-03";
const HOUR = 3_600_000;

/**
 * Athena has no emulator: its SDK client is a stub that records each statement and answers
 * SUCCEEDED with no rows, and every statement is checked against Trino's grammar (Athena engine
 * 3). The manifests and archive objects it plans from are real, on fauxqs's S3.
 */
function stubAthena() {
  const statements: string[] = [];
  const client = {
    async send(command: { input: Record<string, unknown> }) {
      if (command instanceof StartQueryExecutionCommand) {
        statements.push(String(command.input.QueryString));
        return { QueryExecutionId: `q-${statements.length}` };
      }
      if (command instanceof GetQueryExecutionCommand)
        return { QueryExecution: { Status: { State: "SUCCEEDED" }, StatementType: "DML", Statistics: {} } };
      if (command instanceof GetQueryResultsCommand)
        return { ResultSet: { ResultSetMetadata: { ColumnInfo: [] }, Rows: [] } };
      throw new Error(`unexpected ${command.constructor.name}`);
    },
  };
  return { client: client as unknown as AthenaClient, statements };
}

describe("compacted days on a deployed stack: read from Parquet by Athena, compacted by the schedule", () => {
  let bucket: string;

  beforeAll(async () => {
    bucket = await createBucket(s3, uniqueName("compact-deployed"));
    const events = generateHistory({
      events: 300,
      seed: 3,
      apps: ["d-1", "d-2"],
      startAt: Date.UTC(2026, 0, 2, 8) / 1000,
    }).events;
    const store = s3BlobStore(s3, bucket);
    // D1: two batches; D2: one batch.
    await archiveBatch(
      events.slice(0, 100).map((e, i) => queuedAt(e, e.at + i)),
      store,
    );
    await archiveBatch(
      events.slice(100, 200).map((e, i) => queuedAt(e, e.at + 100 + i)),
      store,
    );
    await archiveBatch(
      events.slice(200).map((e, i) => queuedAt(e, Date.UTC(2026, 0, 3, 9) + i)),
      store,
    );
  });

  it("reads a day without a compaction from the NDJSON table, unchanged", async () => {
    const { client, statements } = stubAthena();
    const engine = athenaEngine({ client, workGroup: "wg", database: "db", archive: { s3, bucket } });
    await dayActivities(engine, D2);
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toMatch(/archive_events AS \(/);
    expect(statements[0]).not.toContain("archive_compact");
  });

  it("reads a compacted day from its Parquet folder and only the objects archived after it from NDJSON; an open day from NDJSON", async () => {
    // Prepare: D1 compacted (as the Athena compactor lays it out) from its first object; the
    // second was archived after the compaction.
    const raw = (await listObjects(s3, bucket, `raw/date=${D1}/`)).map((o) => o.key).sort();
    expect(raw.length).toBeGreaterThanOrEqual(2);
    const [compacted, ...late] = raw as [string, ...string[]];
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: compactManifestKey(D1),
        Body: JSON.stringify({
          day: D1,
          parquet: [`compact/date=${D1}/f00d/part-0.parquet`, `compact/date=${D1}/f00d/part-1.parquet`],
          sources: [compacted],
          rows: -1,
          bytes: 10,
          compactedAt: 1,
        }),
      }),
    );
    const { client, statements } = stubAthena();
    const engine = athenaEngine({ client, workGroup: "wg", database: "db", archive: { s3, bucket } });

    // Act: a day's recompute, and ad-hoc SQL over both days.
    await dayActivities(engine, D1);
    await engine.query("SELECT count(*) AS n FROM archive_events", {}, { from: D1, to: D2 });

    // Assess
    for (const sql of statements) expect(trinoSyntaxErrors(sql)).toEqual([]);
    const [recompute, adHoc] = statements as [string, string];
    expect(recompute).toContain(
      `FROM "db"."archive_compact" WHERE "day" = '${D1}' AND "compaction" = 'f00d'`,
    );
    for (const key of late) expect(recompute).toContain(`'s3://${bucket}/${key}'`);
    expect(recompute).not.toContain(`'s3://${bucket}/${compacted}'`);
    expect(recompute).not.toMatch(/"date" IN \(/);
    // The recompute's own WITH keeps its entries after the archive's.
    expect(recompute).toMatch(/^(\s*--[^\n]*\n)*\s*WITH archive_events AS \(/);
    expect(adHoc).toContain(`"date" IN ('${D2}')`);
    expect(adHoc).toContain(`"compaction" = 'f00d'`);
    expect(adHoc.endsWith("SELECT count(*) AS n FROM archive_events")).toBe(true);
  });

  it("puts the archive's WITH entry first, in a statement's own WITH or before it", () => {
    expect(withArchiveEvents("SELECT 1 FROM archive_events", "SELECT x")).toBe(
      "WITH archive_events AS (\n  SELECT x\n)\nSELECT 1 FROM archive_events",
    );
    expect(withArchiveEvents("-- note\nWITH a AS (SELECT 1) SELECT * FROM a", "SELECT x")).toBe(
      "-- note\nWITH archive_events AS (\n  SELECT x\n),\na AS (SELECT 1) SELECT * FROM a",
    );
  });

  it("compacts yesterday once its pass is final, records it, and tries again after a failed compaction", async () => {
    // Prepare: a tick 3 h after D1's end (grace 2 h): D1 is yesterday and final.
    const fresh = await createBucket(s3, uniqueName("compact-schedule"));
    const events = generateHistory({
      events: 200,
      seed: 9,
      apps: ["s-1"],
      startAt: Date.UTC(2026, 0, 2, 10) / 1000,
    }).events;
    await archiveBatch(
      events.map((e, i) => queuedAt(e, e.at + i)),
      s3BlobStore(s3, fresh),
    );
    const table = uniqueName("activity");
    await createActivityTable(dynamo, table);
    let calls = 0;
    const real = duckDbCompactor({ s3, bucket: fresh });
    let fail = true;
    const compactor: ArchiveCompactor = {
      async compactDay(day) {
        calls++;
        if (fail) throw new Error("injected: the compaction's statement failed");
        return real.compactDay(day);
      },
    };
    const ledger = blobRollupLedger(s3BlobStore(s3, fresh));
    const deps = {
      engine: duckDbEngine({ s3, bucket: fresh }),
      store: dynamoActivityStore(documentClient(dynamo), table),
      now: () => Date.UTC(2026, 0, 3) + 3 * HOUR,
      graceMs: 2 * HOUR,
      ledger,
      compactor,
    };

    // Act and assess: the first tick passes D1 (final) and fails to compact it: a failure, not marked.
    const first = await scheduledRollup(deps);
    expect(first.passes.find((p) => p.day === D1)?.final).toBe(true);
    expect(first.compactions).toEqual([]);
    expect(first.failures.map((f) => f.day)).toEqual([D1]);
    expect((await ledger.pass(D1))?.compactedAt).toBeUndefined();
    // The next tick skips D1's pass (final) but compacts it.
    fail = false;
    const second = await scheduledRollup(deps);
    expect(second.passes.find((p) => p.day === D1)?.outcome).toBe("skipped");
    expect(second.compactions.map((c) => c.day)).toEqual([D1]);
    expect(second.failures).toEqual([]);
    expect((await ledger.pass(D1))?.compactedAt).toBe(deps.now());
    expect((await listObjects(s3, fresh, `compact/date=${D1}/`)).map((o) => o.key)).toContain(
      compactManifestKey(D1),
    );
    // Once compacted, never again; and the figures read from the Parquet are the NDJSON's.
    const third = await scheduledRollup(deps);
    expect(third.compactions).toEqual([]);
    expect(calls).toBe(2);
    const fromParquet = await dayActivities(duckDbEngine({ s3, bucket: fresh }), D1);
    expect(fromParquet.activities.get("s-1")?.figures).toEqual((await deps.store.day("s-1", D1))?.figures);
  });
});
