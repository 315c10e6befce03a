/**
 * The one-shot rewrite of an archive written before the batch layout (#31): objects per app and
 * batch, `raw/app=<app>/date=<day>/<batch>.ndjson.gz` and `edge/app=<app>/date=<day>/…`, into
 * objects under `raw/date=<day>/hour=<hh>/` and `edge/date=<day>/` (`archiveBatch`), and back.
 * Every reader reads the new layout only; run `webhook archive-migrate` once after deploying it.
 */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { listObjects } from "../../shared/adapters/s3-listing";
import {
  type ArchiveRewriter,
  type RecompactionReport,
  rewriteArchive,
} from "../../shared/analytics/compaction";
import {
  appSegment,
  dayOfKey,
  edgeArchiveDayPrefix,
  isArchiveObjectKey,
  type RawArchiveLine,
  rawArchiveHourPrefix,
} from "../../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../../shared/platform/constants";
import { archiveLines } from "./archive-scan";

/** What a migration did: objects read and written, the old ones deleted, and the compacted days it changed. */
export interface MigrationReport extends RecompactionReport {
  direction: "forward" | "back";
  read: number;
  written: number;
  deleted: number;
  lines: number;
}

const LEGACY = /^(raw|edge)\/app=([^/]+)\/date=(\d{4}-\d{2}-\d{2})\/([^/]+\.ndjson(?:\.gz)?)$/;

async function putLines(s3: S3Client, bucket: string, key: string, lines: readonly RawArchiveLine[]) {
  const body = gzipSync(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  await s3.send(
    new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: "application/gzip" }),
  );
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}

/**
 * Forward: each object of the old layout is rewritten under the new one, its lines unchanged
 * (raw lines under their receipt hour, an edge object under its day), same file name, and only
 * then deleted: a crash mid-way leaves an object in both layouts, which the next run rewrites
 * to the same key and deletes; idempotent. A batch's objects of several apps stay several objects
 * (their PUTs are paid already; the count of objects only matters for what comes next).
 *
 * Back (`back`): each object of the new layout is split per app into the old one
 * (`…/app=<app>/date=<day>/<name>-<hash of its key>-<n>.ndjson.gz`) and deleted: the archive as the previous
 * version of the code reads it, so that a rollback of the deployment keeps its archive.
 *
 * A rewrite of the archive (`rewriteArchive`): under the archive lease throughout, and a compacted
 * receipt day it adds objects to (forward) has its compaction dropped before and compacted again
 * after, so that its Parquet holds them too (`recompacted`); back, a day's compaction is dropped
 * (the previous version reads no compaction) and not written again (`uncompacted`).
 *
 * @example await migrateArchive(s3, bucket, rewriter) // { direction: "forward", read: 1200, written: 1200, deleted: 1200, recompacted: ["2026-01-02"], … }
 * @throws ArchiveLockedError, with nothing changed, when another rewrite holds the archive lease
 */
export async function migrateArchive(
  s3: S3Client,
  bucket: string,
  rewriter: ArchiveRewriter,
  { back = false }: { back?: boolean } = {},
): Promise<MigrationReport> {
  const { result, ...recompaction } = await rewriteArchive(
    s3,
    bucket,
    rewriter,
    `archive-migrate${back ? " --back" : ""}`,
    (touch) => migrateObjects(s3, bucket, back, touch),
    // Back, a day's compaction is dropped as every rewrite drops it (its CTAS stopped first) and
    // not compacted again: the days' objects are in the old layout, which compaction does not read.
    { recompact: !back },
  );
  return { ...result, ...recompaction };
}

/** `migrateArchive`'s rewrite, `touch` called before each change of a receipt day's objects. */
async function migrateObjects(
  s3: S3Client,
  bucket: string,
  back: boolean,
  touch: (day: string | undefined) => Promise<void>,
): Promise<Omit<MigrationReport, keyof RecompactionReport>> {
  const report = {
    direction: back ? ("back" as const) : ("forward" as const),
    read: 0,
    written: 0,
    deleted: 0,
    lines: 0,
  };
  for (const root of [S3_PREFIX.raw, S3_PREFIX.edge]) {
    for (const { key } of await listObjects(s3, bucket, root)) {
      const legacy = LEGACY.exec(key);
      if (back ? !isArchiveObjectKey(key) : !legacy) continue;
      const lines = await archiveLines(s3, bucket, key);
      report.read++;
      report.lines += lines.length;
      const name = key.split("/").pop() ?? "";
      const targets = new Map<string, RawArchiveLine[]>();
      if (!back) {
        const day = legacy?.[3] ?? "";
        if (root === S3_PREFIX.edge) targets.set(`${edgeArchiveDayPrefix(day)}${name}`, [...lines]);
        else
          for (const [prefix, group] of groupBy(lines, (l) => rawArchiveHourPrefix(l.receivedAt)))
            targets.set(`${prefix}${name}`, group);
      } else {
        const day = dayOfKey(key) ?? "";
        // The source key's hash in the name: one batch's objects of two hours share a file name.
        const base = `${name.replace(/\.ndjson(\.gz)?$/, "")}-${createHash("sha256").update(key).digest("hex").slice(0, 8)}`;
        let n = 0;
        for (const [app, group] of groupBy(lines, (l) => appSegment(l.appId)))
          targets.set(`${root}app=${app}/date=${day}/${base}-${n++}.ndjson.gz`, group);
      }
      // The receipt days whose objects change: the targets' forward, the source's back.
      const changed = back ? [key] : [...targets.keys()];
      for (const k of changed) await touch(k.startsWith(S3_PREFIX.raw) ? dayOfKey(k) : undefined);
      for (const [target, group] of targets) {
        await putLines(s3, bucket, target, group);
        report.written++;
      }
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      report.deleted++;
    }
  }
  return report;
}
