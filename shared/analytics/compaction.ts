import { createHash } from "node:crypto";
import { DeleteObjectCommand, GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import * as z from "zod/mini";
import { type ArchiveLease, withArchiveLease } from "../adapters/archive-lease";
import { s3BlobStore } from "../adapters/s3-blob-store";
import { listEach, listObjects } from "../adapters/s3-listing";
import { dayOfKey, isArchiveObjectKey, rawArchiveDayPrefix } from "../contracts/bucket-layout";
import { parseJsonContract } from "../contracts/queue-messages";
import { S3_PREFIX } from "../platform/constants";
import { UncompactedDaysError } from "../platform/errors";
import type { DayRange } from "./engines/sql-engine";
import { blobRollupLedger } from "./store/rollup-ledger";

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
  /**
   * Ends what a compaction of the day left running (Athena: a CTAS still running at its caller's
   * deadline, which outlives the lease: stopped, awaited, its table dropped), so that
   * `dropCompaction` leaves no writer behind that read the day's objects before a rewrite and
   * would be adopted, or add files, after it. Absent: nothing outlives `compactDay` (DuckDB).
   */
  stopDay?(day: string): Promise<void>;
}

/**
 * Whether a day has anything of a compaction: its manifest, or one under way (an Athena CTAS's
 * marker and folder, adopted by a later call once its query succeeds). What a rewrite of the
 * day's objects must drop before its first change (`dropCompaction`). One LIST.
 *
 * @example await hasCompaction(s3, bucket, "2026-01-02") // true
 */
export async function hasCompaction(s3: S3Client, bucket: string, day: string): Promise<boolean> {
  return (await listObjects(s3, bucket, compactDayPrefix(day))).length > 0;
}

/**
 * Removes a day's compaction: what the compactor left running ended first (`stopDay`: a CTAS
 * under way would otherwise be adopted later with the old lines), then the rollup ledger's
 * `compactedAt` of the day (so that nothing, the schedule included, takes the day for compacted
 * if the caller fails before it compacts it again), then its manifest (readers then take the
 * day's NDJSON, which is always right), then every object under its prefix (Parquet, a CTAS
 * folder, its marker). What a rewrite of the day's NDJSON in place (a repair, a migration, an
 * erasure) does before its first change, so that no reader takes a Parquet that holds the old
 * lines; it then compacts the day again (`ArchiveCompactor.compactDay`) from its objects as they
 * now are. The caller holds the archive lease. Returns the keys deleted.
 *
 * @example await dropCompaction(s3, bucket, "2026-01-02", compactor) // ["compact/date=2026-01-02/manifest.json", "compact/date=2026-01-02/1f3a….parquet"]
 */
export async function dropCompaction(
  s3: S3Client,
  bucket: string,
  day: string,
  compactor?: ArchiveCompactor,
): Promise<string[]> {
  await compactor?.stopDay?.(day);
  await recordCompaction(s3, bucket, day, undefined);
  const deleted = [compactManifestKey(day)];
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: compactManifestKey(day) }));
  for (const { key } of await listObjects(s3, bucket, compactDayPrefix(day))) {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    deleted.push(key);
  }
  return deleted;
}

/**
 * Sets (a time) or clears (`undefined`) the rollup ledger's `compactedAt` of a day's pass, if the
 * day has a pass and it differs: one GET, and a PUT when it changes.
 */
async function recordCompaction(s3: S3Client, bucket: string, day: string, at: number | undefined) {
  const ledger = blobRollupLedger(s3BlobStore(s3, bucket));
  const pass = await ledger.pass(day);
  if (!pass || pass.compactedAt === at) return;
  const { compactedAt: _was, ...rest } = pass;
  await ledger.record(at === undefined ? rest : { ...rest, compactedAt: at });
}

/** What a rewrite of archive objects in place needs (`rewriteArchive`). */
export interface ArchiveRewriter {
  /** The archive lease every rewriter holds (`adapters/archive-lease.ts`). */
  lease: ArchiveLease;
  /** Compacts again the compacted days whose objects changed. None: their compaction is dropped (reported). */
  compactor?: ArchiveCompactor;
  now: () => number;
}

/** The compacted days a rewrite changed. */
export interface RecompactionReport {
  /** Compacted receipt days whose objects changed: their compaction rewritten (dry run: to be). */
  recompacted: string[];
  /**
   * Of those, the days whose compaction was dropped and not written again (no compactor): right,
   * read from their NDJSON, until `webhook compact` compacts them. A rewrite that fails between
   * the drop and the compaction leaves its days so too (its error says so).
   */
  uncompacted: string[];
}

/**
 * Runs `work`, a rewrite in place of the archive's NDJSON objects (`rederive`, `archive-migrate`),
 * as every such rewrite must (docs/design-and-limits.md, "Writers meet"): under the archive lease
 * for `holder` (renewed at each `touch`), a compacted receipt day's compaction dropped
 * (`dropCompaction`, its compactor's query stopped, its ledger's `compactedAt` cleared) before the
 * first of its objects changes (`work` calls `touch(day)` before each change of an object of that
 * receipt day), and compacted again once `work` is done (its `compactedAt` recorded again). So no
 * reader ever takes a Parquet that holds a day's old lines beside what the rewrite wrote. With
 * `dryRun`: no lease, nothing dropped, the days that would be recompacted. With `recompact:
 * false` (`archive-migrate --back`: the previous version reads no compaction), the days dropped
 * are not compacted again (`uncompacted`).
 *
 * @example await rewriteArchive(s3, bucket, rewriter, "rederive", async (touch) => { await touch(day); await put(key, lines) })
 * @throws ArchiveLockedError, before `work` starts, when another rewrite holds the lease
 * @throws UncompactedDaysError, naming the days, when it fails after dropping a compaction and before writing it again
 */
export async function rewriteArchive<T>(
  s3: S3Client,
  bucket: string,
  rewriter: ArchiveRewriter,
  holder: string,
  work: (touch: (day: string | undefined) => Promise<void>) => Promise<T>,
  { dryRun = false, recompact = true }: { dryRun?: boolean; recompact?: boolean } = {},
): Promise<{ result: T } & RecompactionReport> {
  const compacted = new Map<string, boolean>();
  // A day with a compaction under way (an Athena CTAS left running) counts: it is dropped too.
  const isCompacted = async (day: string) => {
    let known = compacted.get(day);
    if (known === undefined) {
      known = await hasCompaction(s3, bucket, day);
      compacted.set(day, known);
    }
    return known;
  };
  const dropped: string[] = [];
  if (dryRun) {
    const result = await work(async (day) => {
      if (day && (await isCompacted(day)) && !dropped.includes(day)) dropped.push(day);
    });
    return {
      result,
      recompacted: dropped.sort(),
      uncompacted: recompact && rewriter.compactor ? [] : dropped,
    };
  }
  const { compactor } = rewriter;
  return withArchiveLease(rewriter.lease, holder, rewriter.now, async (renew) => {
    // The days dropped and not compacted again yet: what an error names.
    const pending = new Set<string>();
    try {
      const result = await work(async (day) => {
        await renew();
        if (!day || dropped.includes(day) || !(await isCompacted(day))) return;
        pending.add(day);
        await dropCompaction(s3, bucket, day, compactor);
        dropped.push(day);
      });
      const uncompacted: string[] = [];
      for (const day of dropped.sort()) {
        await renew();
        if (!recompact || !compactor) {
          uncompacted.push(day);
          continue;
        }
        await compactor.compactDay(day);
        await recordCompaction(s3, bucket, day, rewriter.now());
        pending.delete(day);
      }
      return { result, recompacted: dropped, uncompacted };
    } catch (error) {
      if (pending.size === 0) throw error;
      throw new UncompactedDaysError([...pending].sort(), error);
    }
  });
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
  const listed = await listEach(s3, bucket, dayPrefixes(S3_PREFIX.compact, days));
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
