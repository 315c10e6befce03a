import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { dedupeKey } from "@webhook-backend/stream/events/dedupe";
import { eventTime } from "@webhook-backend/stream/events/event-time";
import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import type { ParsedEvent } from "@webhook-backend/stream/events/schemas";
import { lifecycleRank } from "@webhook-backend/stream/projections/version";
import { edgeDaysOf } from "../analytics/edge-days";
import {
  edgeArchiveDayPrefix,
  type QuarantineRecord,
  quarantineKey,
  RAW_ARCHIVE_SUFFIX,
  type RawArchiveLine,
  rawArchiveHourPrefix,
} from "../contracts/bucket-layout";
import type { BlobStore } from "../ports/blob-store";
import type { QueuedEvent } from "./queued-event";

/** An event as the contract names it, nothing else (the quarantine record's base); redacted in flight, its erasure. */
function acceptedLine(event: QueuedEvent): RawArchiveLine {
  const { eventId, receivedAt, trigger, appId, body, erasure } = event;
  return { eventId, receivedAt, trigger, appId, body, ...(erasure === undefined ? {} : { erasure }) };
}

/**
 * An archive line: the event, with its event time, natural key and lifecycle rank computed here,
 * once, by the same functions the projector orders and deduplicates by. An unknown trigger has
 * its receipt as event time and its body hash as key; a body the projector refuses (`refusalOf`:
 * it fails its schema, or is the platform's on-behalf-of membership bug) gets none (the analytics
 * skip it, as the projector quarantines it).
 *
 * @example archiveLine(queuedMessageSent).naturalKey // "app1|message_sent|m1"
 */
export function archiveLine(
  event: QueuedEvent,
  parsed: ParsedEvent = parseEventBody(event.body),
): RawArchiveLine {
  const line = acceptedLine(event);
  // A refused event (quarantined) is in no figure: no facts.
  if (refusalOf(parsed) !== undefined || parsed.kind === "invalid") return line;
  const known = parsed.kind === "known" ? parsed.event : undefined;
  return {
    ...line,
    eventTime: eventTime(known, event.receivedAt).ms,
    naturalKey: known
      ? dedupeKey(known, event.eventId)
      : `${event.appId}|${event.trigger}|body:${event.eventId}`,
    rank: lifecycleRank(event.trigger),
  };
}

/**
 * `<prefix><hash of the events' ids and receipts>.ndjson.gz`: a retried batch (SQS redelivers the
 * same receipts) rewrites the same key; a platform retry alone in a later batch, the same id at a
 * later receipt, does not overwrite its first receipt's object.
 */
function batchObjectKey(prefix: string, events: readonly QueuedEvent[]): string {
  const ids = events.map((e) => `${e.eventId}@${e.receivedAt}`).sort();
  return `${prefix}${createHash("sha256").update(ids.join("\n")).digest("hex").slice(0, 32)}${RAW_ARCHIVE_SUFFIX}`;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string | undefined): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    if (key === undefined) continue;
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * The raw archive: one gzip-compressed NDJSON object per batch, whatever apps it holds, under
 * `raw/date=<yyyy-mm-dd>/hour=<hh>/<hash of the batch's event ids and receipts>.ndjson.gz` (its
 * receipt hour; a batch received across an hour's end writes one object per hour); each line is
 * a `RawArchiveLine` (`archiveLine`), the app a field of it. So the archive's PUTs follow batches,
 * not apps: a batch of 10 events of 10 apps is one object, not ten. Compressed, a day is ~0.15×
 * its raw JSON: what SQL over the archive scans (Athena and DuckDB read gzip). A retried batch
 * rewrites the same key; a batch split differently may archive an event twice, which replay and
 * the analytics deduplicate.
 *
 * Only when the batch holds lines another day's recompute needs (`edgeDaysOf`: late events,
 * lines received in the last minutes of a day), one more object per day needing them under
 * `edge/date=<that day>/`, with copies of those lines, every app together. Nothing but the
 * activity rollup reads `edge/`: the raw archive alone is every event once per receipt.
 *
 * @example await archiveBatch(events, dataStore) // ["raw/date=2026-01-02/hour=07/5f0c….ndjson.gz"]
 */
export async function archiveBatch(
  events: readonly QueuedEvent[],
  store: BlobStore,
  parsedEvents?: readonly ParsedEvent[],
): Promise<string[]> {
  const entries = events.map((event, i) => ({ event, line: archiveLine(event, parsedEvents?.[i]) }));
  type Entry = (typeof entries)[number];
  const put = async (prefix: string, group: Entry[]) => {
    const key = batchObjectKey(
      prefix,
      group.map((e) => e.event),
    );
    const lines = group.map((e) => JSON.stringify(e.line));
    await store.put(key, gzipSync(`${lines.join("\n")}\n`), { contentType: "application/gzip" });
    return key;
  };
  const raw = groupBy(entries, (e) => rawArchiveHourPrefix(e.event.receivedAt));
  const edges = groupBy(
    entries.flatMap((e) => edgeDaysOf(e.line).map((day) => ({ ...e, edge: edgeArchiveDayPrefix(day) }))),
    (e) => e.edge,
  );
  return Promise.all([...raw, ...edges].map(([prefix, group]) => put(prefix, group)));
}

/**
 * Keeps a refused event with why: `quarantine/app=<appId>/date=<day>/<eventId>.json`, a
 * `QuarantineRecord`.
 */
export async function quarantine(
  event: QueuedEvent,
  error: string,
  store: BlobStore,
  now: () => number,
): Promise<void> {
  const record: QuarantineRecord = {
    ...acceptedLine(event),
    messageId: event.messageId,
    error,
    quarantinedAt: now(),
  };
  await store.put(quarantineKey(event.appId, event.receivedAt, event.eventId), JSON.stringify(record), {
    contentType: "application/json",
  });
}
