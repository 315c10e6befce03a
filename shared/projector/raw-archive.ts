import { createHash } from "node:crypto";
import {
  type QuarantineRecord,
  quarantineKey,
  type RawArchiveLine,
  rawArchiveDayPrefix,
} from "../contracts/bucket-layout";
import type { BlobStore } from "../ports/blob-store";
import type { QueuedEvent } from "./queued-event";

/** An archive line from a queued event: every field the contract names, and nothing else. */
function archiveLine(event: QueuedEvent): RawArchiveLine {
  const { eventId, receivedAt, trigger, appId, body } = event;
  return { eventId, receivedAt, trigger, appId, body };
}

/**
 * The raw archive: one NDJSON object per (app, day) in a batch, under
 * `raw/app=<appId>/date=<yyyy-mm-dd>/<hash of the batch's event ids>.ndjson`; each line is a
 * `RawArchiveLine`. A retried batch rewrites the same key; a batch split differently may archive
 * an event twice, which replay deduplicates by eventId.
 *
 * @example await archiveBatch(events, dataStore) // ["raw/app=app1/date=2026-01-02/5f0c….ndjson"]
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
      const key = `${prefix}${createHash("sha256").update(ids.join("\n")).digest("hex").slice(0, 32)}.ndjson`;
      const lines = group.map((e) => JSON.stringify(archiveLine(e)));
      await store.put(key, `${lines.join("\n")}\n`, { contentType: "application/x-ndjson" });
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
    ...archiveLine(event),
    messageId: event.messageId,
    error,
    quarantinedAt: now(),
  };
  await store.put(quarantineKey(event.appId, event.receivedAt, event.eventId), JSON.stringify(record), {
    contentType: "application/json",
  });
}
