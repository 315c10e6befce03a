import { DeleteObjectsCommand, type S3Client } from "@aws-sdk/client-s3";
import { ContractViolationError } from "@webhook-backend/stream/errors";
import { s3BlobStore } from "../adapters/s3-blob-store";
import { listFolders, listObjects } from "../adapters/s3-listing";
import { isExpired } from "../contracts/bucket-layout";
import {
  decodeImportedUsers,
  encodeImportedUsers,
  existsFrom,
  type ImportedUser,
  importDayKey,
} from "../contracts/import-records";
import { S3_PREFIX } from "../platform/constants";
import { StorageError } from "../platform/errors";
import { DAY_SET_TABLES } from "./dialect";
import { decodeUsers, userSetKey } from "./user-sets";

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
  /** Import record lines moved to a later day that a retained day's figures depend on (`carryImportRecords`). */
  carried: number;
  /** LIST, GET, PUT and DeleteObjects requests made. */
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
 * DeleteObjects per 1,000 keys. The import records a retained day's figures depend on are moved
 * to that day first (`carryImportRecords`). The lifecycle deletes what was never rewritten, so an expired day
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
  const report: ExpirySweepReport = { swept: [], objectsDeleted: 0, carried: 0, requests: 0 };
  for (const prefix of ARCHIVE_DAY_PREFIXES) {
    const expired = (await dayFolders(s3, bucket, prefix, report)).filter((day) =>
      isExpired(day, archiveDays, now),
    );
    if (prefix === IMPORTS_PREFIX && expired.length)
      await carryImportRecords(s3, bucket, expired, (day) => !isExpired(day, archiveDays, now), report);
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

const IMPORTS_PREFIX = DAY_SET_TABLES.imported_users.prefix;

/**
 * How long after `retainArchiveDays` S3's lifecycle rule for `imports/` expires an import record
 * object (deployed): the sweep, not the rule, must decide its end, since it carries the lines a
 * retained day's figures depend on to that day first (`carryImportRecords`); a rule at the window
 * itself could delete an import day's object before the sweep of that day ran. The rule stays as
 * a backstop (a sweep that has not run for a week), and a carried object, written when it is
 * carried, starts its own clock.
 */
export const IMPORT_RECORDS_EXPIRY_GRACE_DAYS = 7;

/** An import record object's users; none when it is gone, or not an import record (nothing to keep). */
async function importedUsersIn(s3: S3Client, bucket: string, key: string): Promise<ImportedUser[]> {
  // Gone since it was listed: `getBytesIfPresent` (#48: a missing key told from a refused read).
  const bytes = await s3BlobStore(s3, bucket).getBytesIfPresent(key);
  if (!bytes) return [];
  try {
    return decodeImportedUsers(bytes, key);
  } catch (error) {
    if (error instanceof ContractViolationError) return [];
    throw error;
  }
}

/**
 * Before the import records of `expired` days go (#50, defect 8): each line whose user a retained
 * day's figures still depend on is moved to the latest such day's object
 * (`imports/users/date=<day>/users.ndjson.gz`, merged, each user once, the earliest confirmation),
 * where it is kept as long as that day, and carried again when that day expires. An import record
 * is filed by its import day, but the figures it qualifies are later, and kept as long as their
 * own day: a user imported on 03-01 as created in 2020 whose first action is on 03-06 is not new
 * on 03-06 only while the record says so, so deleting it with 03-01 turned 03-06's `newUsers` from
 * 1 to 2 while 03-06 was still kept. What depends on a line (`usersOverTime`, `users-over-time.sql`):
 * every day that holds its user in its active users (`users/date=`: their first sighting, whose
 * `newUsers` and retention it decides, and the days whose entity `createdAt` it competes with), and
 * the day it says the user exists from (`createdUsers`). A line that no retained day depends on
 * goes with its day: the figures of the days still kept are those they had. Costs, only on a sweep
 * that expires an import day: a GET per object of those days, a GET per retained day's set of active
 * users (newest first, until every line is placed), and a GET and a PUT per day carried to.
 */
async function carryImportRecords(
  s3: S3Client,
  bucket: string,
  expired: readonly string[],
  retained: (day: string) => boolean,
  report: ExpirySweepReport,
): Promise<void> {
  const lines: ImportedUser[] = [];
  for (const day of expired) {
    const keys = (await listObjects(s3, bucket, `${IMPORTS_PREFIX}${day}/`)).map((o) => o.key);
    report.requests += 1 + keys.length;
    for (const key of keys) lines.push(...(await importedUsersIn(s3, bucket, key)));
  }
  if (!lines.length) return;
  const id = (u: Pick<ImportedUser, "app" | "uid">) => `${u.app}\0${u.uid}`;
  // Where each line goes: the day it says the user exists from, if kept, or a later kept day
  // that holds the user among its active users.
  const target = new Map<string, string>();
  for (const line of lines) {
    const from = existsFrom(line);
    if (retained(from) && from > (target.get(id(line)) ?? "")) target.set(id(line), from);
  }
  const setDays = (await dayFolders(s3, bucket, DAY_SET_TABLES.day_users.prefix, report))
    .filter(retained)
    .sort()
    .reverse();
  const unplaced = new Set(lines.map(id));
  for (const day of setDays) {
    if (!unplaced.size) break;
    const bytes = await s3BlobStore(s3, bucket).getBytesIfPresent(userSetKey(day));
    if (!bytes) continue;
    const users = decodeUsers(bytes);
    report.requests++;
    for (const [app, list] of users)
      for (const { uid } of list) {
        const key = id({ app, uid });
        if (!unplaced.delete(key)) continue;
        if (day > (target.get(key) ?? "")) target.set(key, day);
      }
  }
  const byDay = new Map<string, ImportedUser[]>();
  for (const line of lines) {
    const day = target.get(id(line));
    if (day) byDay.set(day, [...(byDay.get(day) ?? []), line]);
  }
  for (const [day, carried] of byDay) {
    const key = importDayKey("users", day);
    const merged = new Map<string, ImportedUser>();
    for (const line of [...(await importedUsersIn(s3, bucket, key)), ...carried]) {
      const was = merged.get(id(line));
      if (!was || line.importedAt < was.importedAt) merged.set(id(line), line);
    }
    await s3BlobStore(s3, bucket).put(key, encodeImportedUsers([...merged.values()]), {
      contentType: "application/gzip",
    });
    report.requests += 2;
    report.carried += carried.length;
  }
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
