/**
 * The one way the operations tools read the raw archive (`raw/date=<day>/hour=<hh>/<batch>`,
 * every app's lines together): its days from one listing, each day's objects hour by hour, newest
 * first or oldest first, the lines narrowed to an app as they are read. Replay, `events`, the
 * console, trace, resend and the simulator's check all go through it.
 */
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { listObjects } from "../../shared/adapters/s3-listing";
import {
  appSegment,
  dayOfKey,
  isArchiveObjectKey,
  parseRawArchiveObject,
  type RawArchiveLine,
  rawArchiveDayPrefix,
  rawArchiveHourPrefix,
} from "../../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../../shared/platform/constants";

/** Which part of the archive to read: receipt days (inclusive), an app, a receipt hour. */
export interface ArchiveWindow {
  appId?: string;
  /** First and last receipt day, YYYY-MM-DD. */
  from?: string;
  to?: string;
  /** Read only the hour of this receipt time (ms): a lookup that knows when the event came. */
  receivedAt?: number;
}

/** One listing's objects (with their times) and sub-prefixes, every page. */
export async function listLevel(s3: S3Client, bucket: string, prefix: string) {
  const objects: Array<{ key: string; modified: number }> = [];
  const prefixes: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: "/", ContinuationToken: token }),
    );
    for (const o of page.Contents ?? [])
      if (o.Key) objects.push({ key: o.Key, modified: o.LastModified?.getTime() ?? 0 });
    for (const p of page.CommonPrefixes ?? []) if (p.Prefix) prefixes.push(p.Prefix);
    token = page.NextContinuationToken;
  } while (token);
  return { objects, prefixes };
}

/**
 * The archive's receipt days within the window, oldest first: one listing request per thousand
 * days.
 *
 * @example await archiveDays(s3, bucket, { from: "2026-01-01" }) // ["2026-01-01", "2026-01-02"]
 */
export async function archiveDays(
  s3: S3Client,
  bucket: string,
  window: ArchiveWindow = {},
): Promise<string[]> {
  return (await listLevel(s3, bucket, `${S3_PREFIX.raw}date=`)).prefixes
    .map((p) => /^raw\/date=(\d{4}-\d{2}-\d{2})\/$/.exec(p)?.[1])
    .filter((d): d is string => d !== undefined)
    .filter((d) => (!window.from || d >= window.from) && (!window.to || d <= window.to))
    .sort();
}

/** The archive objects of one receipt day (or of one hour of it), in key order (hour, then batch). */
export async function dayObjects(s3: S3Client, bucket: string, day: string, receivedAt?: number) {
  const prefix = receivedAt === undefined ? rawArchiveDayPrefix(day) : rawArchiveHourPrefix(receivedAt);
  const hours = receivedAt === undefined ? (await listLevel(s3, bucket, prefix)).prefixes : [prefix];
  const objects = [];
  for (const hour of hours.sort())
    objects.push(...(await listLevel(s3, bucket, hour)).objects.filter((o) => isArchiveObjectKey(o.key)));
  return objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The lines of one raw-archive object (gzip or, written before, plain NDJSON). */
export async function archiveLines(s3: S3Client, bucket: string, key: string): Promise<RawArchiveLine[]> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return parseRawArchiveObject((await out.Body?.transformToByteArray()) ?? new Uint8Array(), key);
}

/** What a scan read: the days and objects, for a report of how far a lookup looked. */
export interface ScanExtent {
  days: string[];
  objects: number;
}

/** The receipt hour an archive object's key names: `raw/date=<day>/hour=<hh>/`. */
const hourOf = (key: string) => key.slice(0, key.lastIndexOf("/") + 1);

/**
 * Visits the archive's lines in the window, object by object, each line of the window's app: oldest
 * receipt first (days and hours in order), or newest first (days, then hours, newest first: by
 * receipt, never by when an object was last written, which a rewrite of an old object, an
 * erasure's or a rederive's, makes recent; within an hour, last written first). `visit` returns
 * "stop" to end the scan after this object, "enough" to end it once this receipt hour is read (the
 * events received after them are all read: what "the newest N" needs), anything else goes on.
 * Returns what was read.
 *
 * @example await scanArchive(s3, bucket, { appId: "app1" }, "newest", (line) => (line.eventId === id ? "stop" : undefined))
 */
export async function scanArchive(
  s3: S3Client,
  bucket: string,
  window: ArchiveWindow,
  order: "oldest" | "newest",
  visit: (line: RawArchiveLine, key: string) => unknown,
): Promise<ScanExtent> {
  const days =
    window.receivedAt === undefined
      ? await archiveDays(s3, bucket, window)
      : [new Date(window.receivedAt).toISOString().slice(0, 10)];
  if (order === "newest") days.reverse();
  const extent: ScanExtent = { days: [], objects: 0 };
  for (const day of days) {
    extent.days.push(day);
    const objects = await dayObjects(s3, bucket, day, window.receivedAt);
    if (order === "newest")
      objects.sort((a, b) => {
        const [ha, hb] = [hourOf(a.key), hourOf(b.key)];
        return ha !== hb ? (ha < hb ? 1 : -1) : b.modified - a.modified || (a.key < b.key ? 1 : -1);
      });
    // The receipt hour at whose end the scan ends ("enough").
    let lastHour: string | undefined;
    for (const { key } of objects) {
      if (lastHour !== undefined && hourOf(key) !== lastHour) return extent;
      extent.objects++;
      let stop = false;
      for (const line of await archiveLines(s3, bucket, key)) {
        if (window.appId !== undefined && line.appId !== window.appId) continue;
        const answer = visit(line, key);
        if (answer === "stop") stop = true;
        else if (answer === "enough") lastHour ??= hourOf(key);
      }
      if (stop) return extent;
    }
    if (lastHour !== undefined) return extent;
  }
  return extent;
}

/**
 * The quarantine's keys (`quarantine/app=<app>/date=<day>/<eventId>.json`) of an app, or of every
 * app, whose receipt day `onDay` keeps: one listing (the quarantine stays small). A line of the
 * archive with a key here was refused by the projector (its schema, or a key DynamoDB cannot
 * hold), whatever its body says now.
 *
 * @example (await quarantineKeys(s3, bucket, "app1", (day) => day === "2026-04-02")).has(quarantineKey("app1", receivedAt, eventId))
 */
export async function quarantineKeys(
  s3: S3Client,
  bucket: string,
  appId: string | undefined,
  onDay: (day: string) => boolean,
): Promise<Set<string>> {
  const root = appId ? `${S3_PREFIX.quarantine}app=${appSegment(appId)}/` : S3_PREFIX.quarantine;
  return new Set(
    (await listObjects(s3, bucket, root)).map((o) => o.key).filter((key) => onDay(dayOfKey(key) ?? "")),
  );
}

/**
 * The objects of the facts reconcile applied (`reconcile/app=<app>/date=<day>/…`, #57) of one app
 * (or every app) whose day `onDay` takes, by day then key: what a replay onto the stream sends
 * besides the deliveries.
 *
 * @example await reconcileObjects(s3, bucket, "app1", (day) => day === "2026-04-02") // [{ key, day }]
 */
export async function reconcileObjects(
  s3: S3Client,
  bucket: string,
  appId: string | undefined,
  onDay: (day: string) => boolean,
): Promise<Array<{ key: string; day: string }>> {
  const root = appId ? `${S3_PREFIX.reconcile}app=${appSegment(appId)}/` : S3_PREFIX.reconcile;
  return (await listObjects(s3, bucket, root))
    .map((o) => ({ key: o.key, day: dayOfKey(o.key) ?? "" }))
    .filter((o) => onDay(o.day))
    .sort((a, b) => a.day.localeCompare(b.day) || a.key.localeCompare(b.key));
}
