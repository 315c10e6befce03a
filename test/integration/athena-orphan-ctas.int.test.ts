import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { DuckDBConnection } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import {
  compactManifestKey,
  parseCompactionManifest,
  rewriteArchive,
} from "../../shared/analytics/compaction";
import { duckDbArchiveViews } from "../../shared/analytics/dialect";
import { athenaCompactor } from "../../shared/analytics/engines/athena-compactor";
import { objectText } from "../../shared/contracts/bucket-layout";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { athenaStubClient, type StubQuery } from "../support/athena-stub";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { delivery } from "./forget-support";

/**
 * An orphan CTAS (#50, defect 10): a compaction whose query id was never recorded (the PUT of the
 * marker after StartQueryExecution failed) must never have its files read by Athena, even when
 * its query ends after a rewrite of its day. On fauxqs's S3, with Athena played by a stub that
 * runs each CTAS's SELECT on DuckDB over the day's NDJSON as it was when the query started (what
 * a query that read the day before a rewrite holds), and writes its Parquet at the end.
 */
const { s3 } = testClients();
const DAY = "2026-01-02";
const BEFORE = "said-before-the-rewrite";
const AFTER = "redacted-by-the-rewrite";

/** A CTAS of the stub, and the day's NDJSON objects as it read them at its start. */
interface ReadingQuery extends StubQuery {
  read?: Array<{ key: string; bytes: Uint8Array }>;
}

/**
 * Athena on DuckDB for a compaction (`athenaStubClient`): a CTAS reads the day's objects at its
 * start, and at its end (at once, or `finish` for one started to run on) writes its SELECT's rows
 * as Parquet into its `external_location` (`<id>_bucket-00000.parquet`) and its data manifest;
 * while `tokens.kept`, a start with a ClientRequestToken seen before answers that query.
 */
function athenaOnDuckDb(bucket: string, behaviours: Array<"run" | "succeed">) {
  const stub = athenaStubClient(bucket, async (id, q: ReadingQuery) => {
    q.read = [];
    for (const { key } of await listObjects(s3, bucket, `raw/date=${DAY}/`)) {
      const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      q.read.push({ key, bytes: (await out.Body?.transformToByteArray()) ?? new Uint8Array() });
    }
    q.state = "RUNNING";
    if ((behaviours.shift() ?? "succeed") === "succeed") await finish(id);
  });
  /** The CTAS ends: its rows written (a stopped one may have written them too), SUCCEEDED if it ran. */
  const finish = async (id: string) => {
    const q: ReadingQuery | undefined = stub.queries.get(id);
    if (!q?.location) return;
    const dir = mkdtempSync(join(tmpdir(), "athena-stub-"));
    try {
      const files = (q.read ?? []).map(({ key, bytes }) => {
        const path = join(dir, key);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, bytes);
        return path;
      });
      const target = join(dir, "out.parquet");
      const select = q.sql.slice(q.sql.indexOf(") AS ") + ") AS ".length);
      await withDuckDb(async (connection) => {
        for (const view of duckDbArchiveViews({
          archive_events: { ndjson: files },
          archive_edges: { ndjson: [] },
        }))
          await connection.run(view);
        await connection.run(`COPY (${select}) TO '${target}' (FORMAT parquet)`);
      });
      const file = `${q.location}${id}_bucket-00000.parquet`;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: file, Body: readFileSync(target) }));
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `athena-results/${id}-manifest.csv`,
          Body: `s3://${bucket}/${file}`,
        }),
      );
      if (q.state === "RUNNING") q.state = "SUCCEEDED";
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  return { ...stub, finish };
}

/** Runs `work` on a DuckDB connection of its own, closed after. */
async function withDuckDb<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const { DuckDBInstance } = await import("@duckdb/node-api");
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    return await work(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The S3 client with the marker's PUT that records a started query's id refused once (a fault the emulator cannot produce). */
function failingIdPut(client: S3Client): S3Client {
  let faults = 1;
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== "send") return Reflect.get(target, prop, receiver);
      return (command: unknown) => {
        if (
          command instanceof PutObjectCommand &&
          String(command.input.Key).endsWith(".ctas.json") &&
          String(command.input.Body).includes("queryId") &&
          faults-- > 0
        )
          return Promise.reject(new Error("injected: the PUT after StartQueryExecution failed"));
        return target.send(command as never);
      };
    },
  });
}

/** The archive lines (bodies) in the Parquet files of a folder: what Athena reads of a compacted day. */
async function bodiesIn(bucket: string, folder: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "athena-read-"));
  try {
    const files: string[] = [];
    for (const { key } of await listObjects(s3, bucket, folder)) {
      const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const path = join(dir, `${files.length}.parquet`);
      writeFileSync(path, (await out.Body?.transformToByteArray()) ?? new Uint8Array());
      files.push(path);
    }
    if (!files.length) return [];
    const list = files.map((f) => `'${f}'`).join(", ");
    return await withDuckDb(async (connection) =>
      (await connection.runAndReadAll(`SELECT body FROM read_parquet([${list}])`))
        .getRowObjectsJS()
        .map((r) => String(r.body)),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("an orphan CTAS (#50, defect 10)", () => {
  for (const tokens of ["kept", "forgotten"] as const)
    it(`a CTAS whose id was never recorded, still running when its day is rewritten: ${tokens === "kept" ? "found by its token and stopped" : "not found (Athena no longer knows its token)"}, and even when it writes its files after the rewrite, Athena reads none of them`, async () => {
      // Prepare: a day of two archive objects, one with a message saying BEFORE.
      const bucket = await createBucket(s3, uniqueName("orphan-ctas"));
      const at = Date.UTC(2026, 0, 2, 10);
      const store = s3BlobStore(s3, bucket);
      const [said] = await archiveBatch(
        [delivery("message_sent", "o-1", at, (b) => (b.data.message.data.text = BEFORE))],
        store,
      );
      await archiveBatch([delivery("group_created", "o-1", at + 60_000)], store);
      // The orphan runs on; so does, when tokens are forgotten, the query that looking for it starts.
      const athena = athenaOnDuckDb(
        bucket,
        tokens === "kept" ? ["run", "succeed"] : ["run", "run", "succeed"],
      );
      const options = {
        client: athena.client,
        workGroup: "wg",
        database: "db",
        bucket,
        sleep: async () => {},
      };
      // The schedule's compaction: the query starts, runs on; the PUT of its id fails.
      const failed = await athenaCompactor({ ...options, s3: failingIdPut(s3) })
        .compactDay(DAY)
        .catch((error: unknown) => error);
      const lease = { acquire: async () => {}, renew: async () => {}, release: async () => {} };
      athena.tokens.kept = tokens === "kept";

      // Act: a rewrite of the day in place (an erasure's): the line saying BEFORE now says AFTER;
      // then the orphan query ends and writes its files (what it read: BEFORE).
      const { recompacted } = await rewriteArchive(
        s3,
        bucket,
        { lease, compactor: athenaCompactor({ ...options, s3 }), now: Date.now },
        "erasure e1",
        async (touch) => {
          await touch(DAY);
          const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: said }));
          const text = objectText((await out.Body?.transformToByteArray()) ?? new Uint8Array());
          await s3.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: said,
              Body: gzipSync(text.replaceAll(BEFORE, AFTER)),
            }),
          );
        },
      );
      await athena.finish("q-1");

      // Assess: the first attempt failed at the injected PUT; the day compacted again by a second
      // query; the orphan stopped; and what Athena reads of the day (the folder of the manifest's
      // Parquet, every file in it) is the second query's, with AFTER and never BEFORE.
      expect((failed as Error).message).toBe("injected: the PUT after StartQueryExecution failed");
      expect(recompacted).toEqual([DAY]);
      expect(athena.queries.get("q-1")?.state).toBe(tokens === "kept" ? "CANCELLED" : "SUCCEEDED");
      const manifestOut = await s3.send(
        new GetObjectCommand({ Bucket: bucket, Key: compactManifestKey(DAY) }),
      );
      const manifest = parseCompactionManifest(
        (await manifestOut.Body?.transformToString()) ?? "",
        "manifest",
      );
      const folder = (manifest.parquet[0] ?? "").replace(/[^/]+$/, "");
      expect((await listObjects(s3, bucket, folder)).map((o) => o.key)).toEqual(manifest.parquet);
      expect(manifest.parquet.filter((k) => k.includes("/q-1_"))).toEqual([]);
      // The orphan's files, where it wrote them: beside, never in, the folder Athena reads.
      const orphan = (await listObjects(s3, bucket, `compact/date=${DAY}/`)).filter((o) =>
        o.key.includes("/q-1_"),
      );
      expect(orphan.map((o) => o.key.replace(/[^/]+$/, ""))).not.toContain(folder);
      const bodies = await bodiesIn(bucket, folder);
      expect(bodies.some((b) => b.includes(AFTER))).toBe(true);
      expect(bodies.filter((b) => b.includes(BEFORE))).toEqual([]);
    }, 60_000);
});
