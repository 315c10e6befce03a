import { DeleteObjectsCommand, type S3Client } from "@aws-sdk/client-s3";
import { listFolders, listObjects } from "../adapters/s3-listing";
import { isExpired } from "../contracts/bucket-layout";
import { S3_PREFIX } from "../platform/constants";
import { StorageError } from "../platform/errors";
import { DAY_SET_TABLES } from "./dialect";

/*
 * The archive's retention by the day in its keys (#40 review, B). S3's lifecycle counts an
 * object's days from its last write, and every rewrite resets that clock: an erasure's rewrite of
 * a batch object (other people's lines in it), `rederive`, a day's recompaction, a one-app merge of
 * a day's sets, an import's fold. Such an object would outlive `retainArchiveDays`, and a
 * recompacted Parquet would outlive the raw objects it holds (so that `forget`, which searches the
 * NDJSON, could no longer find its lines while readers still read them). The lifecycle rules stay
 * (they expire what is never rewritten, at no request cost); once a day the schedule also deletes,
 * under the archive lease, every object of a day-dated prefix whose day is past the window.
 */

/**
 * The prefixes whose keys go on with the day they belong to (`<prefix><yyyy-mm-dd>/…`), kept as
 * long as the archive (`retainArchiveDays`): the raw archive, its edge copies, the compacted
 * Parquet, the day sets (`DAY_SET_TABLES`: users, first sightings, conversations, memberships) and
 * the import records. (Quarantine records, oversize bodies and recordings are keyed by app first:
 * a sweep by day would list every app; they are rewritten by nothing but an erasure.)
 */
export const ARCHIVE_DAY_PREFIXES: readonly string[] = [
  `${S3_PREFIX.raw}date=`,
  `${S3_PREFIX.edge}date=`,
  `${S3_PREFIX.compact}date=`,
  ...Object.values(DAY_SET_TABLES).map((table) => table.prefix),
];

/** What a sweep did: the day folders it emptied (`<prefix><day>/`), the objects deleted, its requests. */
export interface ExpirySweepReport {
  swept: string[];
  objectsDeleted: number;
  /** LIST and DeleteObjects requests made. */
  requests: number;
}

/** The schedule's sweep (`RollupDependencies.expirySweep`): run at `now`, `renew` called between days. */
export type ExpirySweep = (now: number, renew: () => Promise<void>) => Promise<ExpirySweepReport>;

/** Keys a DeleteObjects request takes at most. */
const DELETE_BATCH = 1000;

/** The days under a day-dated prefix that hold an object (`<prefix><day>/`). */
async function dayFolders(s3: S3Client, bucket: string, prefix: string, report: ExpirySweepReport) {
  const folders = await listFolders(s3, bucket, prefix);
  report.requests += Math.max(1, Math.ceil(folders.length / 1000));
  return folders
    .map((folder) => folder.slice(prefix.length, -1))
    .filter((day) => /^\d{4}-\d{2}-\d{2}$/.test(day));
}

/**
 * Deletes every object of the archive's day-dated prefixes (`ARCHIVE_DAY_PREFIXES`) whose day is
 * past `archiveDays` at `now` (`isExpired`: as S3's lifecycle rounds), whenever it was last
 * written. Per prefix: one LIST of its day folders (a delimiter: S3 has no empty folder, so only
 * days that still hold an object), then, per expired day, one LIST of its objects and one
 * DeleteObjects per 1,000 keys. The lifecycle deletes what was never rewritten, so an expired day
 * normally holds only what was rewritten, or what the lifecycle has not reached yet. The caller
 * holds the archive lease (what it deletes is what rewriters rewrite); `renew` is called before
 * each day.
 *
 * @example await sweepExpiredDays(s3, bucket, 400, Date.now()) // { swept: ["raw/date=2025-01-01/"], objectsDeleted: 3, requests: 10 }
 * @throws StorageError when S3 refuses a key of a DeleteObjects (the rest of the sweep is not run)
 */
export async function sweepExpiredDays(
  s3: S3Client,
  bucket: string,
  archiveDays: number,
  now: number,
  renew: () => Promise<void> = async () => {},
): Promise<ExpirySweepReport> {
  const report: ExpirySweepReport = { swept: [], objectsDeleted: 0, requests: 0 };
  for (const prefix of ARCHIVE_DAY_PREFIXES) {
    const expired = (await dayFolders(s3, bucket, prefix, report)).filter((day) =>
      isExpired(day, archiveDays, now),
    );
    for (const day of expired) {
      await renew();
      const folder = `${prefix}${day}/`;
      const keys = (await listObjects(s3, bucket, folder)).map((o) => o.key);
      report.requests += Math.max(1, Math.ceil(keys.length / 1000));
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const out = await s3.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: keys.slice(i, i + DELETE_BATCH).map((Key) => ({ Key })), Quiet: true },
          }),
        );
        report.requests++;
        const failed = out.Errors ?? [];
        if (failed.length)
          throw new StorageError(
            `the expiry sweep could not delete ${failed.length} object(s) of ${folder}: ${failed[0]?.Key} (${failed[0]?.Code})`,
          );
      }
      report.swept.push(folder);
      report.objectsDeleted += keys.length;
    }
  }
  return report;
}

/**
 * The sweep the schedule runs once a day (`scheduledRollup`), over a bucket whose archive is kept
 * `archiveDays` days (the deployment's `retainArchiveDays`).
 *
 * @example const deps = { ...rollup, expirySweep: archiveExpirySweep(s3, bucket, 400) }
 */
export function archiveExpirySweep(s3: S3Client, bucket: string, archiveDays: number): ExpirySweep {
  return (now, renew) => sweepExpiredDays(s3, bucket, archiveDays, now, renew);
}
