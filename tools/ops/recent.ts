/**
 * The most recent events, newest first, with their outcome: what `npx webhook events` lists and
 * the console's recent events show (one implementation of the question).
 */
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import pLimit from "p-limit";
import type { RawArchiveLine } from "../../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../../shared/platform/constants";
import type { ProjectionStores } from "../../shared/projector/core";
import { archiveLines } from "./inspect";
import { type EventTrace, judgeArchived } from "./trace";

/** One recent event, as `events` lists it. */
export interface RecentEvent {
  eventId: string;
  receivedAt: number;
  trigger: string;
  appId?: string;
  outcome: EventTrace["outcome"];
}

/** One page after another of a listing: the objects with their times, or the sub-prefixes (`/`). */
async function list(s3: S3Client, bucket: string, prefix: string) {
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
 * The `limit` most recent events of each app (or of one), newest first: per app, its receipt days
 * newest first, each day's archive objects newest first, until `limit` events of the wanted
 * triggers are read; the same days' quarantine keys say which were quarantined; every other
 * outcome is judged by the pure projections against the items (`judgeArchived`). A LIST per app
 * and day read, a GET per archive object read, a GetItem per item an event touches.
 */
export async function recentEvents(
  s3: S3Client,
  bucket: string,
  stores: ProjectionStores,
  options: { appId?: string; triggers?: readonly string[]; limit: number },
): Promise<RecentEvent[]> {
  const apps = options.appId
    ? [`${S3_PREFIX.raw}app=${encodeURIComponent(options.appId)}/`]
    : (await list(s3, bucket, S3_PREFIX.raw)).prefixes;
  const lines = new Map<string, RawArchiveLine>();
  const quarantined = new Set<string>();
  for (const app of apps) {
    let found = 0;
    for (const day of (await list(s3, bucket, app)).prefixes.sort().reverse()) {
      const quarantine = await list(s3, bucket, `${S3_PREFIX.quarantine}${day.slice(S3_PREFIX.raw.length)}`);
      for (const { key } of quarantine.objects)
        quarantined.add(
          key
            .split("/")
            .pop()
            ?.replace(/\.json$/, "") ?? "",
        );
      const objects = (await list(s3, bucket, day)).objects.sort((a, b) => b.modified - a.modified);
      for (const { key } of objects) {
        for (const line of await archiveLines(s3, bucket, key)) {
          if (options.triggers?.length && !options.triggers.includes(line.trigger)) continue;
          const known = lines.get(line.eventId);
          if (!known) found++;
          if (!known || line.receivedAt < known.receivedAt) lines.set(line.eventId, line);
        }
        if (found >= options.limit) break;
      }
      if (found >= options.limit) break;
    }
  }
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
