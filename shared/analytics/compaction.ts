import { createHash } from "node:crypto";
import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import * as z from "zod/mini";
import { listObjects } from "../adapters/s3-listing";
import { dayOfKey, isArchiveObjectKey, rawArchiveDayPrefix } from "../contracts/bucket-layout";
import { parseJsonContract } from "../contracts/queue-messages";
import { S3_PREFIX } from "../platform/constants";
import type { DayRange } from "./engines/sql-engine";

/**
 * Closed receipt days of the raw archive, rewritten as Parquet: every line of the day's NDJSON
 * objects, sorted by app then event time, in small row groups (`COMPACT_ROW_GROUP_ROWS`), so that
 * a one-app query reads the row groups whose app range holds it, not the day. The NDJSON stays
 * the source of truth: a day's compaction is the Parquet file plus a manifest naming the objects
 * it holds, written last. Readers (`archive_events`) take a day's Parquet and the NDJSON objects
 * the manifest does not name: a line archived after its day was compacted (a redrive, a replay, a
 * batch retried late) is read from its own object, and counted. Compacting again takes every
 * object of the day (same objects: same file, same key); a crash before the manifest leaves the
 * previous state (no manifest: the NDJSON alone), so nothing is lost or counted twice.
 */

/** Rows per Parquet row group: small enough that an app of a few % of a day is a few groups. */
export const COMPACT_ROW_GROUP_ROWS = 2048;

export const compactionManifestSchema = z.object({
  day: z.string(),
  /** The Parquet object(s) of the day. */
  parquet: z.array(z.string()),
  /** The NDJSON objects whose lines they hold. */
  sources: z.array(z.string()),
  rows: z.number(),
  bytes: z.number(),
  compactedAt: z.number(),
});
export type CompactionManifest = z.infer<typeof compactionManifestSchema>;

/** `compact/date=<day>/`. */
export function compactDayPrefix(day: string): string {
  return `${S3_PREFIX.compact}date=${day}/`;
}

/** `compact/date=<day>/manifest.json`: the day's compaction, written last. */
export function compactManifestKey(day: string): string {
  return `${compactDayPrefix(day)}manifest.json`;
}

/**
 * `compact/date=<day>/<hash of its sources>.parquet`: the same objects compact to the same key.
 *
 * @example compactParquetKey("2026-01-02", ["raw/date=2026-01-02/hour=00/a.ndjson.gz"]) // "compact/date=2026-01-02/1f3a….parquet"
 */
export function compactParquetKey(day: string, sources: readonly string[]): string {
  return `${compactDayPrefix(day)}${sourcesHash(sources)}.parquet`;
}

/** The hash that names a compaction by the NDJSON objects it holds (in any order). */
export function sourcesHash(sources: readonly string[]): string {
  return createHash("sha256")
    .update([...sources].sort().join("\n"))
    .digest("hex")
    .slice(0, 32);
}

/** The NDJSON objects of a receipt day, sorted: what a compaction of the day holds (its manifest's sources). */
export async function compactionSources(s3: S3Client, bucket: string, day: string): Promise<string[]> {
  return (await listObjects(s3, bucket, rawArchiveDayPrefix(day)))
    .map((o) => o.key)
    .filter(isArchiveObjectKey)
    .sort();
}

/** A manifest's text, checked. */
export function parseCompactionManifest(text: string, key: string): CompactionManifest {
  return parseJsonContract(compactionManifestSchema, text, key);
}

/**
 * What a day's readers take: the manifest's Parquet, and the NDJSON objects it does not name
 * (archived after the compaction). Without a manifest, every object.
 *
 * @example readPlan(["a", "b", "late"], { parquet: ["p"], sources: ["a", "b"], … }) // { parquet: ["p"], ndjson: ["late"] }
 */
export function readPlan(
  objects: readonly string[],
  manifest: CompactionManifest | undefined,
): { parquet: string[]; ndjson: string[] } {
  if (!manifest) return { parquet: [], ndjson: [...objects] };
  const compacted = new Set(manifest.sources);
  return { parquet: [...manifest.parquet], ndjson: objects.filter((k) => !compacted.has(k)) };
}

/** A day's compaction as a port: DuckDB locally (`engines/duckdb-compactor`), Athena deployed (`engines/athena-compactor`). */
export interface ArchiveCompactor {
  /** Rewrites a closed receipt day as Parquet and writes its manifest; returns it. */
  compactDay(day: string): Promise<CompactionManifest>;
}

/**
 * The prefixes to list for a range of days: one per day when the range is bounded (a day's
 * objects, not the whole archive's), else the table's root.
 */
export function dayPrefixes(root: string, days: DayRange): string[] {
  if (!days.from || !days.to) return [root];
  const prefixes: string[] = [];
  for (let t = Date.parse(`${days.from}T00:00:00Z`); t <= Date.parse(`${days.to}T00:00:00Z`); t += 86_400_000)
    prefixes.push(`${root}date=${new Date(t).toISOString().slice(0, 10)}/`);
  return prefixes;
}

/** The compaction manifests of a range of days, by day (a day without one: absent). */
export async function dayManifests(
  s3: S3Client,
  bucket: string,
  days: DayRange,
): Promise<Map<string, CompactionManifest>> {
  const listed = await Promise.all(
    dayPrefixes(S3_PREFIX.compact, days).map((prefix) => listObjects(s3, bucket, prefix)),
  );
  const found = new Map<string, CompactionManifest>();
  for (const { key } of listed.flat()) {
    const day = dayOfKey(key);
    if (!day || key !== compactManifestKey(day)) continue;
    if ((days.from && day < days.from) || (days.to && day > days.to)) continue;
    found.set(day, parseCompactionManifest(new TextDecoder().decode(await getBytes(s3, bucket, key)), key));
  }
  return found;
}

async function getBytes(s3: S3Client, bucket: string, key: string): Promise<Uint8Array> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await out.Body?.transformToByteArray()) ?? new Uint8Array();
}
