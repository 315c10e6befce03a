import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import {
  type QuarantineRecord,
  quarantineKey,
  RAW_ARCHIVE_SUFFIX,
  type RawArchiveLine,
  rawArchiveDayPrefix,
} from "../contracts/bucket-layout";
import { dedupeKey } from "../events/dedupe";
import { eventTime } from "../events/event-time";
import type { BlobStore } from "../ports/blob-store";
import { lifecycleRank } from "../projections/version";
import { parseEventBody } from "./core";
import type { QueuedEvent } from "./queued-event";

/** An event as the contract names it, nothing else (the quarantine record's base). */
function acceptedLine(event: QueuedEvent): RawArchiveLine {
  const { eventId, receivedAt, trigger, appId, body } = event;
  return { eventId, receivedAt, trigger, appId, body };
}

/**
 * An archive line: the event, with its event time, natural key and lifecycle rank computed here,
 * once, by the same functions the projector orders and deduplicates by. An unknown trigger has
 * its receipt as event time and its body hash as key; a body that fails its schema gets none
 * (the analytics skip it, as the projector quarantines it).
 *
 * @example archiveLine(queuedMessageSent).naturalKey // "app1|message_sent|m1"
 */
export function archiveLine(event: QueuedEvent): RawArchiveLine {
  const line = acceptedLine(event);
  const parsed = parseEventBody(event.body);
  if (parsed.kind === "invalid") return line;
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
 * The raw archive: one gzip-compressed NDJSON object per (app, receipt day) in a batch, under
 * `raw/app=<appId>/date=<yyyy-mm-dd>/<hash of the batch's event ids>.ndjson.gz`; each line is a
 * `RawArchiveLine` (`archiveLine`). Compressed, a day is ~0.15× its raw JSON: what SQL over the
 * archive scans (Athena and DuckDB read gzip). A retried batch rewrites the same key; a batch
 * split differently may archive an event twice, which replay and the analytics deduplicate.
 *
 * @example await archiveBatch(events, dataStore) // ["raw/app=app1/date=2026-01-02/5f0c….ndjson.gz"]
 */
export async function archiveBatch(events: readonly QueuedEvent[], store: BlobStore): Promise<string[]> {
  const groups = new Map<string, QueuedEvent[]>();
  for (const event of events) {
    const prefix = rawArchiveDayPrefix(event.appId, event.receivedAt);
    groups.set(prefix, [...(groups.get(prefix) ?? []), event]);
  }
  return Promise.all(
    [...groups].map(async ([prefix, group]) => {
      const ids = group.map((e) => e.eventId).sort();
      const key = `${prefix}${createHash("sha256").update(ids.join("\n")).digest("hex").slice(0, 32)}${RAW_ARCHIVE_SUFFIX}`;
      const lines = group.map((e) => JSON.stringify(archiveLine(e)));
      await store.put(key, gzipSync(`${lines.join("\n")}\n`), { contentType: "application/gzip" });
      return key;
    }),
  );
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
