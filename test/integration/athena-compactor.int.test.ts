import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { listObjects } from "../../shared/adapters/s3-listing";
import { compactManifestKey, parseCompactionManifest } from "../../shared/analytics/compaction";
import { athenaCompactor } from "../../shared/analytics/engines/athena-compactor";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import { createBucket, testClients, uniqueName } from "../support/aws";

const { s3 } = testClients();

/**
 * No Athena emulator exists: the engine is a stub that records the statements and, for the CTAS,
 * writes Parquet-named files where Athena would (the bucket is fauxqs). The statement's text is
 * checked here; its SQL (`compactionSelect`) runs on DuckDB in compaction.int.
 */
function stubAthena(bucket: string) {
  const statements: string[] = [];
  const engine: SqlEngine = {
    name: "athena",
    async query(sql) {
      statements.push(sql);
      const location = /external_location = 's3:\/\/[^/]+\/([^']+)'/.exec(sql)?.[1];
      if (location)
        for (const n of [0, 1])
          await s3.send(
            new PutObjectCommand({ Bucket: bucket, Key: `${location}bucket-0000${n}.parquet`, Body: "PAR1" }),
          );
      return { columns: [], rows: [], bytesScanned: location ? 4096 : 0 };
    },
  };
  return { engine, statements };
}

describe("the Athena compactor (against a stub engine: no Athena emulator exists)", () => {
  it("lists the day's objects, writes Parquet bucketed by app with CTAS, drops the table, and writes the manifest last; a re-run reuses the files", async () => {
    // Prepare
    const bucket = await createBucket(s3, uniqueName("athena-compact"));
    for (const key of ["raw/date=2026-01-02/hour=01/a.ndjson.gz", "raw/date=2026-01-02/hour=02/b.ndjson.gz"])
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x" }));
    const { engine, statements } = stubAthena(bucket);
    const compactor = athenaCompactor({ engine, s3, bucket, now: () => 7 });

    // Act
    const first = await compactor.compactDay("2026-01-02");
    const again = await compactor.compactDay("2026-01-02");

    // Assess
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(
      /^CREATE TABLE compact_2026_01_02_[0-9a-f]{8} WITH \(format = 'PARQUET', write_compression = 'ZSTD', bucketed_by = ARRAY\['app'\],\s+bucket_count = 16, external_location = 's3:\/\/[^/]+\/compact\/date=2026-01-02\/[0-9a-f]{32}\/'\) AS SELECT app, date/,
    );
    expect(statements[0]).toContain(`WHERE "date" = '2026-01-02'`);
    expect(statements[0]).toContain("ORDER BY app, event_time, received_at, event_id");
    expect(statements[1]).toMatch(/^DROP TABLE IF EXISTS compact_2026_01_02_/);
    expect(first.sources).toEqual([
      "raw/date=2026-01-02/hour=01/a.ndjson.gz",
      "raw/date=2026-01-02/hour=02/b.ndjson.gz",
    ]);
    expect(first.parquet).toHaveLength(2);
    expect(again.parquet).toEqual(first.parquet);
    const [manifest] = await listObjects(s3, bucket, compactManifestKey("2026-01-02"));
    expect(manifest?.key).toBe(compactManifestKey("2026-01-02"));
    const out = await s3.send(
      new GetObjectCommand({
        Bucket: bucket,
        Key: compactManifestKey("2026-01-02"),
      }),
    );
    expect(parseCompactionManifest((await out.Body?.transformToString()) ?? "", "manifest").parquet).toEqual(
      first.parquet,
    );
  });
});
