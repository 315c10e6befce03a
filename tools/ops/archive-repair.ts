import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { DeleteObjectCommand, GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import { type ArchiveLease, withArchiveLease } from "../../shared/adapters/archive-lease";
import {
  type ArchiveRewriter,
  type RecompactionReport,
  rewriteArchive,
} from "../../shared/analytics/compaction";
import { edgeDaysOf } from "../../shared/analytics/edge-days";
import {
  appSegment,
  dayOfKey,
  edgeArchiveDayPrefix,
  parseRawArchiveObject,
  type QuarantineRecord,
  quarantineRecordSchema,
  RAW_ARCHIVE_SUFFIX,
  type RawArchiveLine,
} from "../../shared/contracts/bucket-layout";
import { parseJsonContract } from "../../shared/contracts/queue-messages";
import { S3_PREFIX } from "../../shared/platform/constants";
import type { BlobStore } from "../../shared/ports/blob-store";
import { archiveLine } from "../../shared/projector/raw-archive";
import { triggerFilter } from "../../shared/stream/subscribers";
import { listKeys, resendEvent } from "./inspect";

/**
 * Repairs after a change of what the receiver understands: archive lines whose derived facts
 * (event time, natural key, rank) were computed by an older version are derived again, and the
 * quarantined events that are now accepted go back on the events queue.
 */

export interface ArchiveRange {
  /** One app, or all when undefined. */
  appId?: string;
  /** Receipt (or edge) dates, YYYY-MM-DD, inclusive. */
  from?: string;
  to?: string;
  /** Say what would change, change nothing. */
  dryRun?: boolean;
}

const inRange = (o: ArchiveRange) => (key: string) => {
  const day = dayOfKey(key) ?? "";
  return (!o.from || day >= o.from) && (!o.to || day <= o.to);
};

/** The derived facts of a line, as comparable text. */
const derived = (line: RawArchiveLine) => JSON.stringify([line.eventTime, line.naturalKey, line.rank]);

/**
 * A line with its facts derived by today's code (the same `archiveLine` the projector writes with),
 * its erasure mark kept: a redacted line stays one through every rewrite (`replay` skips it, `query
 * event` says so), whatever is derived again. A redacted line that was refused (no facts: the
 * projector quarantined it) stays refused: the redaction may have made its body acceptable (it
 * removes a malformed avatar), and derived again it would count a fact the platform never gave
 * (#50; `replay --quarantine` leaves its record where it is).
 */
export function rederivedLine(line: RawArchiveLine): RawArchiveLine {
  // A line without an app came from a body without an envelope: nothing to derive.
  if (line.appId === undefined) return line;
  if (line.erasure !== undefined && line.naturalKey === undefined) return line;
  const fresh = archiveLine({ ...line, appId: line.appId, messageId: "" });
  return line.erasure === undefined ? fresh : { ...fresh, erasure: line.erasure };
}

export interface RederiveReport extends RecompactionReport {
  dryRun?: boolean;
  objects: number;
  lines: number;
  /** Lines whose event time, natural key or rank changed. */
  changed: number;
  /** Objects rewritten (raw and edge). */
  rewritten: number;
  /** Edge objects added for changed lines now needed on another day. */
  edges: number;
  /** Changed lines per trigger. */
  byTrigger: Record<string, number>;
}

/**
 * Derives the facts of every archive line in the range again (`archiveLine`), rewriting in place
 * each raw and edge object that holds a line whose event time, natural key or rank changed (the
 * same key: readers see the old object or the new one, never a mix), and adding an edge object
 * for a changed raw line that another day now needs (`edgeDaysOf`). Idempotent: a second run
 * changes nothing. Recompute the days it reports (`rollup --from … --to …`) afterwards.
 *
 * A rewrite of the archive (`rewriteArchive`): it holds the archive lease throughout (an erasure,
 * a final pass, a compaction or a migration never interleaves with it), and a compacted receipt
 * day whose objects it changes has its compaction dropped before the first change and compacted
 * again after (`recompacted`): readers of a closed day read its Parquet, which would otherwise
 * keep the old lines, and count them on their old day beside the edge copy added for the new one.
 *
 * Example: the edits and deletes archived before #30 carry the action message's id as natural
 * key and its `sentAt` as time; derived again, the edited message's id and the edit time.
 *
 * @example await rederiveArchive(s3, archive, { from: "2026-09-01" }, { lease, compactor, now: Date.now }) // { changed: 12, rewritten: 3, recompacted: ["2026-09-02"], … }
 * @throws ArchiveLockedError, with nothing changed, when another rewrite holds the archive lease
 */
export async function rederiveArchive(
  s3: S3Client,
  archive: BlobStore,
  range: ArchiveRange,
  rewriter: ArchiveRewriter,
): Promise<RederiveReport> {
  // One object holds every app of its batch (#31): an app's lines are found in every object of
  // the days, and only they are derived again.
  const prefixes = [S3_PREFIX.raw, S3_PREFIX.edge];
  const keys = (await Promise.all(prefixes.map((p) => listKeys(s3, archive.bucket, p))))
    .flat()
    .filter(inRange(range));
  const holder = `rederive ${range.appId ?? "(every app)"} ${range.from ?? "…"}..${range.to ?? "…"}`;
  const { result, ...recompaction } = await rewriteArchive(
    s3,
    archive.bucket,
    rewriter,
    holder,
    (touch) => rederiveObjects(archive, keys, range, touch),
    { dryRun: range.dryRun },
  );
  return { ...result, ...recompaction, ...(range.dryRun ? { dryRun: true } : {}) };
}

/** `rederiveArchive`'s rewrite of `keys`, `touch` called before each change of a raw object's day. */
async function rederiveObjects(
  archive: BlobStore,
  keys: readonly string[],
  range: ArchiveRange,
  touch: (day: string | undefined) => Promise<void>,
): Promise<Omit<RederiveReport, keyof RecompactionReport | "dryRun">> {
  const report = {
    objects: keys.length,
    lines: 0,
    changed: 0,
    rewritten: 0,
    edges: 0,
    byTrigger: {} as Record<string, number>,
  };
  const newEdges = new Map<string, RawArchiveLine[]>();
  for (const key of keys) {
    const lines = parseRawArchiveObject(await archive.getBytes(key), key);
    report.lines += lines.length;
    let changed = false;
    const next = lines.map((line) => {
      if (range.appId !== undefined && line.appId !== range.appId) return line;
      const fresh = rederivedLine(line);
      if (derived(fresh) === derived(line)) return line;
      changed = true;
      report.changed++;
      report.byTrigger[line.trigger] = (report.byTrigger[line.trigger] ?? 0) + 1;
      if (key.startsWith(S3_PREFIX.raw)) {
        const before = new Set(edgeDaysOf(line));
        for (const day of edgeDaysOf(fresh).filter((d) => !before.has(d))) {
          const prefix = edgeArchiveDayPrefix(day);
          newEdges.set(prefix, [...(newEdges.get(prefix) ?? []), fresh]);
        }
      }
      return fresh;
    });
    if (!changed) continue;
    report.rewritten++;
    // Only receipt days are compacted (edges are always read as NDJSON).
    await touch(key.startsWith(S3_PREFIX.raw) ? dayOfKey(key) : undefined);
    if (!range.dryRun) await archive.put(key, ndjsonGz(next), { contentType: "application/gzip" });
  }
  for (const [prefix, lines] of newEdges) {
    report.edges++;
    const ids = lines.map((l) => `${l.eventId}@${l.receivedAt}`).sort();
    const key = `${prefix}rederived-${createHash("sha256").update(ids.join("\n")).digest("hex").slice(0, 32)}${RAW_ARCHIVE_SUFFIX}`;
    await touch(undefined);
    if (!range.dryRun) await archive.put(key, ndjsonGz(lines), { contentType: "application/gzip" });
  }
  return report;
}

function ndjsonGz(lines: readonly RawArchiveLine[]): Uint8Array {
  return gzipSync(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
}

export interface QuarantineReplayReport {
  dryRun?: boolean;
  /** Quarantine records read. */
  records: number;
  /** Put back on the events queue (their record removed), per trigger. */
  resent: Record<string, number>;
  /** Still refused, per trigger, with one reason each. */
  stillRefused: Record<string, { count: number; reason: string }>;
  /**
   * Records an erasure redacted (`erasure` set), left where they are: the redaction may make a
   * refused body acceptable (it removes a malformed avatar), and put back it would be projected
   * as a new fact of the pseudonym, a membership the erasure deleted (#50).
   */
  redacted: number;
}

/**
 * Replays the quarantine: each quarantined event (of the triggers given, or all) that today's
 * schemas accept and the projector would not refuse (`refusalOf`) goes back on the events queue as
 * the ingest sent it (its first receipt time, so it is archived on its receipt day and counted
 * once), and its quarantine record is removed once it is queued. The rest stay, with why; so do
 * the records an erasure redacted (counted: `redacted`), as `replay` skips a redacted line.
 * Recompute the receipt days afterwards (`rollup`): the figures then count them.
 *
 * It reads records an erasure rewrites, puts what it read on the queue and deletes them: it holds
 * the archive lease throughout (`lease`, renewed per record), so that an erasure never counts the
 * queues and reports done while a record it read before the redaction goes back on the queue
 * after. A dry run writes nothing and takes no lease.
 *
 * @example await replayQuarantine(clients, where, lease, { triggers: ["message_edited", "message_deleted"] }) // { resent: { message_edited: 40 }, … }
 * @throws ArchiveLockedError, with nothing resent, when another rewrite holds the lease (after the lease's wait)
 */
export async function replayQuarantine(
  clients: { s3: S3Client; sqs: SQSClient },
  where: { bucket: string; queueUrl: string },
  lease: ArchiveLease,
  options: ArchiveRange & { triggers?: readonly string[]; now?: () => number } = {},
): Promise<QuarantineReplayReport> {
  if (options.dryRun) return resendQuarantined(clients, where, options, async () => {});
  const holder = `replay --quarantine ${options.appId ?? "(every app)"} ${options.from ?? "…"}..${options.to ?? "…"}`;
  return withArchiveLease(lease, holder, options.now ?? Date.now, (renew) =>
    resendQuarantined(clients, where, options, renew),
  );
}

/** `replayQuarantine`'s work, `renew` called before each record. */
async function resendQuarantined(
  clients: { s3: S3Client; sqs: SQSClient },
  where: { bucket: string; queueUrl: string },
  options: ArchiveRange & { triggers?: readonly string[] },
  renew: () => Promise<void>,
): Promise<QuarantineReplayReport> {
  // The quarantine stays one record per event under its app (`quarantineKey`).
  const prefix = options.appId
    ? `${S3_PREFIX.quarantine}app=${appSegment(options.appId)}/`
    : S3_PREFIX.quarantine;
  const keys = (await listKeys(clients.s3, where.bucket, prefix)).filter(inRange(options));
  const report: QuarantineReplayReport = { records: 0, resent: {}, stillRefused: {}, redacted: 0 };
  const wanted = triggerFilter(options.triggers);
  for (const key of keys) {
    await renew();
    const out = await clients.s3.send(new GetObjectCommand({ Bucket: where.bucket, Key: key }));
    const record: QuarantineRecord = parseJsonContract(
      quarantineRecordSchema,
      (await out.Body?.transformToString()) ?? "",
      `quarantine record ${key}`,
    );
    if (!wanted(record.trigger)) continue;
    report.records++;
    // Redacted by an erasure: the erasure rewrote what it named; put back, it would bring the
    // user back under the pseudonym (a refused body the redaction made acceptable).
    if (record.erasure !== undefined) {
      report.redacted++;
      continue;
    }
    const reason = refusalOf(parseEventBody(record.body));
    if (reason !== undefined) {
      const refused = report.stillRefused[record.trigger] ?? { count: 0, reason };
      refused.count++;
      report.stillRefused[record.trigger] = refused;
      continue;
    }
    report.resent[record.trigger] = (report.resent[record.trigger] ?? 0) + 1;
    if (options.dryRun) continue;
    const { eventId, receivedAt, trigger, appId, body } = record;
    await resendEvent(clients.sqs, clients.s3, where.bucket, where.queueUrl, {
      eventId,
      receivedAt,
      trigger,
      appId,
      body,
    });
    await clients.s3.send(new DeleteObjectCommand({ Bucket: where.bucket, Key: key }));
  }
  return options.dryRun ? { ...report, dryRun: true } : report;
}
