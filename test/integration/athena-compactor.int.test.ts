import type { AthenaClient } from "@aws-sdk/client-athena";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { listObjects } from "../../shared/adapters/s3-listing";
import {
  compactManifestKey,
  parseCompactionManifest,
  rewriteArchive,
  sourcesHash,
} from "../../shared/analytics/compaction";
import { athenaCompactor } from "../../shared/analytics/engines/athena-compactor";
import { CompactionPendingError, SqlQueryError } from "../../shared/platform/errors";
import { athenaStubClient, type StubQuery } from "../support/athena-stub";
import { createBucket, testClients, uniqueName } from "../support/aws";

const { s3 } = testClients();
const DAY = "2026-01-02";

/** What a CTAS does when started: succeed, run on (part of its files written), or fail (part written). */
type Behaviour = "succeed" | "run" | "fail";

/**
 * No Athena emulator exists: the SDK client is a stub that plays Athena's part for these
 * statements on fauxqs's S3 (`athenaStubClient`). A CTAS checks that its location is empty
 * (failing as Athena does when it is not), writes its two Parquet files (`bucket-00000`,
 * `bucket-00001`) and its data manifest (`athena-results/<id>-manifest.csv`, the files it wrote;
 * for a failed query, also the ones it meant to), and ends as `behaviours` says. Every statement is
 * checked against Trino's grammar (Athena engine 3); the CTAS's SELECT runs on DuckDB in
 * compaction.int and athena-orphan-ctas.int.
 */
function stubAthena(bucket: string, behaviours: Behaviour[] = []) {
  const statements: string[] = [];
  const put = (key: string, body: string) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const file = (q: StubQuery, n: number) => `${q.location}bucket-0000${n}.parquet`;
  const manifest = (id: string, q: StubQuery, n: number) =>
    put(
      `athena-results/${id}-manifest.csv`,
      Array.from({ length: n }, (_, i) => `s3://${bucket}/${file(q, i)}`).join("\n"),
    );
  const stub = athenaStubClient(bucket, async (id, q) => {
    if ((await listObjects(s3, bucket, q.location ?? "")).length) {
      q.state = "FAILED";
      return;
    }
    const behaviour = behaviours.shift() ?? "succeed";
    await put(file(q, 0), "PAR1");
    if (behaviour === "succeed") await finish(id);
    else if (behaviour === "run") q.state = "RUNNING";
    else {
      await manifest(id, q, 2);
      q.state = "FAILED";
    }
  });
  /** A query left running writes its second file and its data manifest, and succeeds. */
  const finish = async (id: string) => {
    const q = stub.queries.get(id) as StubQuery;
    await put(file(q, 1), "PAR1");
    await manifest(id, q, 2);
    q.state = "SUCCEEDED";
  };
  const send = stub.client.send.bind(stub.client);
  // Every statement the compactor sent, in order (a start answered from its token is not a new one).
  const client = {
    send: async (command: { input: Record<string, unknown> }) => {
      const before = stub.queries.size;
      const out = await send(command as never);
      if (stub.queries.size > before) statements.push([...stub.queries.values()].at(-1)?.sql ?? "");
      return out;
    },
  } as unknown as AthenaClient;
  return { client, statements, queries: stub.queries, finish };
}

async function setUp(behaviours: Behaviour[] = []) {
  const bucket = await createBucket(s3, uniqueName("athena-compact"));
  for (const key of ["raw/date=2026-01-02/hour=01/a.ndjson.gz", "raw/date=2026-01-02/hour=02/b.ndjson.gz"])
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x" }));
  const athena = stubAthena(bucket, behaviours);
  // Each poll's wait moves the clock on: `withDeadline` stops waiting after 5 s of polls.
  let clock = 0;
  const compactorUntil = (deadline: number) =>
    athenaCompactor({
      client: athena.client,
      workGroup: "wg",
      database: "db",
      s3,
      bucket,
      now: () => clock,
      deadline,
      sleep: async (ms) => {
        clock += ms;
      },
    });
  const compactor = compactorUntil(Number.POSITIVE_INFINITY);
  const withDeadline = compactorUntil(5_000);
  const keys = async (prefix = "compact/") =>
    (await listObjects(s3, bucket, prefix)).map((o) => o.key).sort();
  const manifest = async () => {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: compactManifestKey(DAY) }));
    return parseCompactionManifest((await out.Body?.transformToString()) ?? "", "manifest");
  };
  return { bucket, athena, compactor, withDeadline, keys, manifest };
}

const parquetOf = (keys: string[]) => keys.filter((k) => k.endsWith(".parquet"));

describe("the Athena compactor (against a stub Athena client: no Athena emulator exists)", () => {
  it("lists the day's objects, writes Parquet bucketed by app with CTAS, adopts the files of its data manifest, drops the table, and writes the manifest last; a re-run starts no query", async () => {
    // Prepare
    const { athena, compactor, keys } = await setUp();

    // Act
    const first = await compactor.compactDay(DAY);
    const again = await compactor.compactDay(DAY);

    // Assess
    expect(athena.statements).toHaveLength(2);
    expect(athena.statements[0]).toMatch(
      /^CREATE TABLE compact_2026_01_02_[0-9a-f]{8}_[0-9a-f]{8} WITH \(format = 'PARQUET', write_compression = 'ZSTD', bucketed_by = ARRAY\['app'\],\s+bucket_count = 16, external_location = 's3:\/\/[^/]+\/compact\/date=2026-01-02\/[0-9a-f]{32}-[0-9a-f]{8}\/'\) AS SELECT app, date/,
    );
    expect(athena.statements[0]).toContain(`WHERE "date" = '2026-01-02'`);
    expect(athena.statements[0]).toContain("ORDER BY app, event_time, received_at, event_id");
    expect(athena.statements[1]).toMatch(/^DROP TABLE IF EXISTS compact_2026_01_02_/);
    expect(first.sources).toEqual([
      "raw/date=2026-01-02/hour=01/a.ndjson.gz",
      "raw/date=2026-01-02/hour=02/b.ndjson.gz",
    ]);
    expect(first.parquet).toHaveLength(2);
    expect(again.parquet).toEqual(first.parquet);
    expect(parquetOf(await keys())).toEqual(first.parquet);
    expect(await keys()).toContain(compactManifestKey(DAY));
  });

  it("never adopts the folder of a CTAS still running at the deadline: left to run, adopted once it succeeds (exactly its data manifest's files), no second query", async () => {
    // Prepare: a CTAS that has written one of its two files when the invocation's time runs out.
    const { athena, withDeadline, compactor, keys, manifest, bucket } = await setUp(["run"]);

    // Act
    const pending = await withDeadline.compactDay(DAY).catch((e: unknown) => e);
    const duringRun = await keys();
    const stillRunning = await withDeadline.compactDay(DAY).catch((e: unknown) => e);
    // A file the query did not write appears in its folder (another writer's): not adopted.
    const folder = parquetOf(duringRun)[0]?.replace(/[^/]+$/, "") ?? "";
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${folder}stray.parquet`, Body: "PAR1" }));
    await athena.finish("q-1");
    const adopted = await compactor.compactDay(DAY);

    // Assess
    expect(pending).toBeInstanceOf(CompactionPendingError);
    expect(stillRunning).toBeInstanceOf(CompactionPendingError);
    expect(duringRun).not.toContain(compactManifestKey(DAY));
    expect(parquetOf(duringRun)).toHaveLength(1);
    expect(athena.statements.filter((s) => s.startsWith("CREATE TABLE"))).toHaveLength(1);
    expect(adopted.parquet).toEqual([`${folder}bucket-00000.parquet`, `${folder}bucket-00001.parquet`]);
    expect((await manifest()).parquet).toEqual(adopted.parquet);
    expect(parquetOf(await keys())).toEqual(adopted.parquet);
  });

  it("removes a failed CTAS's folder and table before the retry, which starts a new query", async () => {
    // Prepare: a CTAS that fails with one file written (and maybe its table).
    const { athena, compactor, keys } = await setUp(["fail", "succeed"]);

    // Act: the failed attempt, then the next tick's.
    const failed = await compactor.compactDay(DAY).catch((e: unknown) => e);
    const afterFailure = await keys();
    const adopted = await compactor.compactDay(DAY);

    // Assess
    expect(failed).toBeInstanceOf(SqlQueryError);
    expect(parquetOf(afterFailure)).toEqual([]);
    expect(afterFailure).not.toContain(compactManifestKey(DAY));
    const creates = athena.statements.filter((s) => s.startsWith("CREATE TABLE"));
    expect(creates).toHaveLength(2);
    const tokens = [...athena.queries.values()].filter((q) => q.location).map((q) => q.token);
    expect(new Set(tokens).size).toBe(2);
    // The failed query's table dropped before the retry's CREATE.
    const retry = athena.statements.lastIndexOf(creates[1] as string);
    expect(athena.statements.slice(1, retry).some((s) => s.startsWith("DROP TABLE IF EXISTS"))).toBe(true);
    expect(adopted.parquet).toHaveLength(2);
    expect(parquetOf(await keys())).toEqual(adopted.parquet);
  });

  it("clears a folder left by an earlier writer (a partial output, no attempt recorded) before its CTAS, and finds again a query whose start it did not see end", async () => {
    // Prepare: a partial output of the previous version's compaction in the day's folder, with a
    // manifest that adopted it.
    const { athena, compactor, keys, bucket, manifest } = await setUp();
    const sources = ["raw/date=2026-01-02/hour=01/a.ndjson.gz", "raw/date=2026-01-02/hour=02/b.ndjson.gz"];
    const folder = `compact/date=${DAY}/${sourcesHash(sources)}/`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${folder}partial-0.parquet`, Body: "PAR1" }));
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: compactManifestKey(DAY),
        Body: JSON.stringify({
          day: DAY,
          parquet: [`${folder}partial-0.parquet`],
          sources,
          rows: -1,
          bytes: 4,
          compactedAt: 1,
        }),
      }),
    );

    // Act
    const adopted = await compactor.compactDay(DAY);
    // A crash right after the start: the attempt recorded without its id. The next call's start,
    // with the same token, is the same query.
    const marker = `compact/date=${DAY}/${sourcesHash(sources)}.ctas.json`;
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: marker }));
    const { queryId: _id, ...withoutId } = JSON.parse((await out.Body?.transformToString()) ?? "{}");
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: marker, Body: JSON.stringify(withoutId) }));
    const again = await compactor.compactDay(DAY);

    // Assess
    expect(parquetOf(await keys())).toEqual(adopted.parquet);
    expect(adopted.parquet.every((k) => /bucket-0000\d\.parquet$/.test(k))).toBe(true);
    expect((await manifest()).parquet).toEqual(adopted.parquet);
    expect(athena.statements.filter((s) => s.startsWith("CREATE TABLE"))).toHaveLength(1);
    expect(again.parquet).toEqual(adopted.parquet);
  });

  it("a rewrite of a day whose CTAS still runs (no manifest yet) stops that query and drops its output before the first change, then compacts the day anew: what read the old objects is never adopted (#40 review)", async () => {
    // Prepare: the schedule's CTAS left running at its deadline (the lease then released).
    const { athena, withDeadline, compactor, keys, bucket } = await setUp(["run", "succeed"]);
    const pending = await withDeadline.compactDay(DAY).catch((e: unknown) => e);
    const lease = {
      acquire: async () => undefined,
      renew: async () => undefined,
      release: async () => undefined,
    };

    // Act: a rewrite in place of one of the day's objects (an erasure's or a repair's).
    const { recompacted } = await rewriteArchive(
      s3,
      bucket,
      { lease, compactor, now: Date.now },
      "test",
      async (touch) => {
        await touch(DAY);
        await s3.send(
          new PutObjectCommand({ Bucket: bucket, Key: "raw/date=2026-01-02/hour=01/a.ndjson.gz", Body: "y" }),
        );
      },
    );

    // Assess: the first query stopped, never adopted; the day compacted by a query started after the change.
    expect(pending).toBeInstanceOf(CompactionPendingError);
    expect(recompacted).toEqual([DAY]);
    expect(athena.queries.get("q-1")?.state).toBe("CANCELLED");
    // The next call (the schedule's) finds the day compacted: no query.
    const after = await compactor.compactDay(DAY);
    const ctas = [...athena.queries].filter(([, q]) => q.location).map(([id]) => id);
    expect(ctas).toHaveLength(2);
    const manifestText = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: compactManifestKey(DAY) }),
    );
    expect(JSON.parse((await manifestText.Body?.transformToString()) ?? "{}").queryId).toBe(ctas[1]);
    expect(parquetOf(await keys())).toEqual(after.parquet);
    expect(athena.statements.filter((s) => s.startsWith("CREATE TABLE"))).toHaveLength(2);
  });
});
