/**
 * The most recent events, newest first, with their outcome: what `npx webhook events` lists and
 * the console's recent events show (one implementation of the question).
 */
import type { S3Client } from "@aws-sdk/client-s3";
import pLimit from "p-limit";
import { type RawArchiveLine, utcDay } from "../../shared/contracts/bucket-layout";
import type { ProjectionStores } from "../../shared/projector/core";
import { triggerFilter } from "../../shared/stream/subscribers";
import { quarantineKeys, scanArchive } from "./archive-scan";
import { type EventTrace, judgeArchived } from "./trace";

/** One recent event, as `events` lists it. */
export interface RecentEvent {
  eventId: string;
  receivedAt: number;
  trigger: string;
  appId?: string;
  outcome: EventTrace["outcome"];
}

/**
 * The `limit` most recent events (of one app, or of all), newest first: the receipt days newest
 * first, each day's objects newest first (`scanArchive`), until `limit` events of the wanted
 * triggers are read; the same days' quarantine keys say which were quarantined; every other
 * outcome is judged by the pure projections against the items (`judgeArchived`). A LIST per day
 * and hour read, a GET per archive object read, a GetItem per item an event touches.
 */
export async function recentEvents(
  s3: S3Client,
  bucket: string,
  stores: ProjectionStores,
  options: {
    appId?: string;
    /** Trigger forms (`triggerFilter`: names, `group:*`, `group_member_*`). */
    triggers?: readonly string[];
    limit: number;
  },
): Promise<RecentEvent[]> {
  const wanted = triggerFilter(options.triggers);
  const lines = new Map<string, RawArchiveLine>();
  const quarantined = new Set<string>();
  const days = new Set<string>();
  await scanArchive(s3, bucket, { appId: options.appId }, "newest", (line) => {
    days.add(utcDay(line.receivedAt));
    if (!wanted(line.trigger)) return;
    const known = lines.get(line.eventId);
    if (!known || line.receivedAt < known.receivedAt) lines.set(line.eventId, line);
    return lines.size >= options.limit ? "stop" : undefined;
  });
  for (const key of await quarantineKeys(s3, bucket, options.appId, (day) => days.has(day)))
    quarantined.add(
      key
        .split("/")
        .pop()
        ?.replace(/\.json$/, "") ?? "",
    );
  const newest = [...lines.values()]
    .sort((a, b) => b.receivedAt - a.receivedAt || a.eventId.localeCompare(b.eventId))
    .slice(0, options.limit);
  const limit = pLimit(8);
  return Promise.all(
    newest.map((line) =>
      limit(async () => ({
        eventId: line.eventId,
        receivedAt: line.receivedAt,
        trigger: line.trigger,
        appId: line.appId,
        outcome: quarantined.has(line.eventId) ? "quarantined" : (await judgeArchived(line, stores)).outcome,
      })),
    ),
  );
}
