import { gunzipSync } from "node:zlib";
import * as z from "zod/mini";
import { S3_PREFIX } from "../platform/constants";
import { parseJsonContract } from "./queue-messages";

/**
 * What the data bucket holds and where, defined once: the projector writes the raw archive and
 * the quarantine, the ingest the oversize bodies; the operations tools (replay, query) read them.
 */

/** One line of a raw-archive NDJSON object: an event as it was accepted. */
export const rawArchiveLineSchema = z.object({
  eventId: z.string().check(z.minLength(1)),
  receivedAt: z.number(),
  trigger: z.string(),
  appId: z.optional(z.string()),
  /** The raw body, as the platform sent it. */
  body: z.string(),
  /**
   * The facts about the event computed once, at archive time, so that SQL over the archive never
   * re-derives them (absent on lines archived before, and on a body that fails its schema):
   * its event time (ms, `eventTime`), natural key (`dedupeKey`) and lifecycle rank (`lifecycleRank`).
   */
  eventTime: z.optional(z.number()),
  naturalKey: z.optional(z.string()),
  rank: z.optional(z.number()),
  /** Set on a line an erasure redacted (`shared/erasure`): the erasure's id. */
  erasure: z.optional(z.string()),
});
export type RawArchiveLine = z.infer<typeof rawArchiveLineSchema>;

/** A raw-archive object is gzip-compressed NDJSON (`.ndjson.gz`); objects written before are plain `.ndjson`. */
export const RAW_ARCHIVE_SUFFIX = ".ndjson.gz";

/**
 * The lines of a raw-archive object, plain or gzip-compressed (told by gzip's magic bytes, so a
 * key's suffix cannot mislead it), each parsed by its contract.
 *
 * @example parseRawArchiveObject(await blobs.getBytes(key), key) // [{ eventId, receivedAt, … }]
 * @throws ContractViolationError naming the key when a line breaks the contract
 */
export function parseRawArchiveObject(bytes: Uint8Array, key: string): RawArchiveLine[] {
  return parseNdjsonObject(rawArchiveLineSchema, bytes, `raw archive line in ${key}`);
}

/**
 * The lines of an NDJSON object of the bucket, plain or gzip-compressed, each parsed by `schema`.
 *
 * @example parseNdjsonObject(importedUserSchema, bytes, `import record line in ${key}`)
 * @throws ContractViolationError naming `what` when a line breaks the contract
 */
export function parseNdjsonObject<S extends z.ZodMiniType>(
  schema: S,
  bytes: Uint8Array,
  what: string,
): z.infer<S>[] {
  return objectText(bytes)
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => parseJsonContract(schema, line, what));
}

/** Whether an object's bytes are gzip-compressed (gzip's magic bytes: a key's suffix cannot mislead it). */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** An object's text, gunzipped when it is gzip-compressed (archive, edge and user-set objects). */
export function objectText(bytes: Uint8Array): string {
  return Buffer.from(isGzip(bytes) ? gunzipSync(bytes) : bytes).toString("utf8");
}

/** A quarantined event: the raw line, the queue message it came in, and why it was refused. */
export const quarantineRecordSchema = z.extend(rawArchiveLineSchema, {
  messageId: z.string(),
  error: z.string(),
  quarantinedAt: z.number(),
});
export type QuarantineRecord = z.infer<typeof quarantineRecordSchema>;

/** `yyyy-mm-dd` (UTC) of an epoch-ms time. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** An app id as one key segment (`_none` when the envelope had none). */
export function appSegment(appId: string | undefined): string {
  return encodeURIComponent(appId ?? "_none");
}

/**
 * The day `n` days after (before, for a negative `n`) a `yyyy-mm-dd` day, UTC.
 *
 * @example addDays("2026-01-31", 1) // "2026-02-01"
 */
export function addDays(day: string, n: number): string {
  return utcDay(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000);
}

/** `hh` (UTC, 00-23) of an epoch-ms time. */
export function utcHour(ms: number): string {
  return new Date(ms).toISOString().slice(11, 13);
}

/**
 * `raw/date=<yyyy-mm-dd>/`: the raw archive of one receipt day, every app's lines together (the
 * app is a field of each line, `appId`). Hive-style, so Athena can partition on it.
 *
 * @example rawArchiveDayPrefix("2026-01-02") // "raw/date=2026-01-02/"
 */
export function rawArchiveDayPrefix(day: string): string {
  return `${S3_PREFIX.raw}date=${day}/`;
}

/**
 * `raw/date=<yyyy-mm-dd>/hour=<hh>/`: where the lines received in one UTC hour are archived, one
 * object per batch whatever apps it holds (`archiveBatch`), so that a lookup that knows when an
 * event was received reads one hour of objects.
 *
 * @example rawArchiveHourPrefix(Date.UTC(2026, 0, 2, 7)) // "raw/date=2026-01-02/hour=07/"
 */
export function rawArchiveHourPrefix(receivedAt: number): string {
  return `${rawArchiveDayPrefix(utcDay(receivedAt))}hour=${utcHour(receivedAt)}/`;
}

/**
 * `edge/date=<yyyy-mm-dd>/`: the copies of archive lines received on other days that the
 * recompute of this day needs (`edgeDaysOf`), in the raw archive's line format, every app together.
 *
 * @example edgeArchiveDayPrefix("2026-01-03") // "edge/date=2026-01-03/"
 */
export function edgeArchiveDayPrefix(day: string): string {
  return `${S3_PREFIX.edge}date=${day}/`;
}

/**
 * Whether a key is a raw-archive or edge object of the layout above. Objects of the layout before
 * it (`raw/app=<app>/date=<day>/…`, one object per app and batch) are not: `webhook archive
 * migrate` rewrites them (`tools/ops/archive-migrate.ts`).
 */
export function isArchiveObjectKey(key: string): boolean {
  return /^(raw|edge)\/date=\d{4}-\d{2}-\d{2}\/(hour=\d{2}\/)?[^/]+\.ndjson(\.gz)?$/.test(key);
}

/** The receipt day of a raw-archive or quarantine key (`date=<yyyy-mm-dd>/`), if it has one. */
export function dayOfKey(key: string): string | undefined {
  return /date=(\d{4}-\d{2}-\d{2})\//.exec(key)?.[1];
}

/**
 * The day a key is dated by: `date=<yyyy-mm-dd>/` (archive, edges, Parquet, day sets, import
 * records, quarantine) or `/<yyyy>/<mm>/<dd>/` (oversize bodies, recordings). What retention
 * dates an object by, whenever it was last written (a rewrite resets S3's lifecycle clock, not
 * this day).
 *
 * @example keyDay("recordings/app1/2026/01/02/s1/1.mp4") // "2026-01-02"
 */
export function keyDay(key: string): string | undefined {
  const hive = dayOfKey(key);
  if (hive) return hive;
  const path = /\/(\d{4})\/(\d{2})\/(\d{2})\//.exec(key);
  return path ? `${path[1]}-${path[2]}-${path[3]}` : undefined;
}

/**
 * Whether what is dated `day` is past a retention of `days` at `now`: from the first midnight
 * (UTC) after its day plus the window, as S3's lifecycle rounds an object's expiry.
 *
 * @example isExpired("2026-01-02", 10, Date.UTC(2026, 0, 13)) // true
 */
export function isExpired(day: string, days: number, now: number): boolean {
  return Date.parse(`${day}T00:00:00Z`) + (days + 1) * 86_400_000 <= now;
}

/** `quarantine/app=<appId>/date=<day>/<eventId>.json`: the raw body with why it was refused. */
export function quarantineKey(appId: string | undefined, receivedAt: number, eventId: string): string {
  return `${S3_PREFIX.quarantine}app=${appSegment(appId)}/date=${utcDay(receivedAt)}/${eventId}.json`;
}

/** `oversize/<app>/<yyyy>/<mm>/<dd>/<eventId>.json`: deterministic, so a retried request overwrites itself. */
export function oversizeKey(appId: string | undefined, receivedAt: number, eventId: string): string {
  return `${S3_PREFIX.oversize}${appSegment(appId)}/${utcDay(receivedAt).replaceAll("-", "/")}/${eventId}.json`;
}
