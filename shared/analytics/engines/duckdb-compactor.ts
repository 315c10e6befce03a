import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { listObjects } from "../../adapters/s3-listing";
import {
  type ArchiveCompactor,
  COMPACT_ROW_GROUP_ROWS,
  type CompactionManifest,
  compactDayPrefix,
  compactionSources,
  compactManifestKey,
  compactParquetKey,
} from "../compaction";
import { compactionSelect, duckDbArchiveViews } from "../dialect";

export interface DuckDbCompactorOptions {
  s3: S3Client;
  bucket: string;
  now?: () => number;
  /** Rows per row group. @default COMPACT_ROW_GROUP_ROWS */
  rowGroupRows?: number;
  workDir?: string;
}

/**
 * A day's compaction with embedded DuckDB (the local stack, `webhook compact`): every NDJSON
 * object of the receipt day is copied down, rewritten as one ZSTD Parquet file sorted by app and
 * event time in row groups of `rowGroupRows`, put at `compactParquetKey` (a hash of its sources),
 * and only then the manifest naming those sources; a Parquet file of an earlier compaction of the
 * day is deleted after. Re-run: the same objects give the same key; more objects (late lines), a
 * new file and manifest.
 *
 * @example await duckDbCompactor({ s3, bucket }).compactDay("2026-01-02") // { rows: 83974, parquet: ["compact/date=2026-01-02/….parquet"], … }
 */
export function duckDbCompactor(options: DuckDbCompactorOptions): ArchiveCompactor {
  const now = options.now ?? Date.now;
  return {
    async compactDay(day) {
      const sources = await compactionSources(options.s3, options.bucket, day);
      const parquetKey = compactParquetKey(day, sources);
      const previous = (await listObjects(options.s3, options.bucket, compactDayPrefix(day)))
        .map((o) => o.key)
        .filter((k) => k.endsWith(".parquet") && k !== parquetKey);
      const dir = mkdtempSync(join(options.workDir ?? tmpdir(), "archive-compact-"));
      try {
        const files: string[] = [];
        for (const key of sources) {
          const out = await options.s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: key }));
          const path = join(dir, key);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, (await out.Body?.transformToByteArray()) ?? new Uint8Array());
          files.push(path);
        }
        const target = join(dir, "day.parquet");
        const { DuckDBInstance } = await import("@duckdb/node-api");
        const instance = await DuckDBInstance.create(":memory:");
        const connection = await instance.connect();
        let rows = 0;
        try {
          for (const view of duckDbArchiveViews({
            archive_events: { ndjson: files },
            archive_edges: { ndjson: [] },
          }))
            await connection.run(view);
          await connection.run(
            `COPY (${compactionSelect(day)}) TO '${target.replaceAll("'", "''")}'
              (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${options.rowGroupRows ?? COMPACT_ROW_GROUP_ROWS})`,
          );
          const counted = await connection.runAndReadAll(
            `SELECT count(*) AS n FROM read_parquet('${target.replaceAll("'", "''")}')`,
          );
          rows = Number(counted.getRowObjectsJS()[0]?.n ?? 0);
        } finally {
          connection.closeSync();
          instance.closeSync();
        }
        const body = readFileSync(target);
        await options.s3.send(
          new PutObjectCommand({
            Bucket: options.bucket,
            Key: parquetKey,
            Body: body,
            ContentType: "application/vnd.apache.parquet",
          }),
        );
        const manifest: CompactionManifest = {
          day,
          parquet: [parquetKey],
          sources,
          rows,
          bytes: body.byteLength,
          compactedAt: now(),
        };
        // The manifest last: until it is there, readers take the NDJSON alone.
        await options.s3.send(
          new PutObjectCommand({
            Bucket: options.bucket,
            Key: compactManifestKey(day),
            Body: JSON.stringify(manifest),
            ContentType: "application/json",
          }),
        );
        for (const key of previous)
          await options.s3.send(new DeleteObjectCommand({ Bucket: options.bucket, Key: key }));
        return manifest;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
