/**
 * `npx webhook events [--app <appId>] [--trigger <t>…] [--limit <n>] [--follow] [--json]`: the most
 * recent events, newest first (id, receipt time, trigger, app, outcome), from the raw archive and
 * the quarantine of the local stack or, with `--stack`, a deployed one; `--follow` tails them.
 */
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { Command } from "commander";
import pLimit from "p-limit";
import type { RawArchiveLine } from "../../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../../shared/platform/constants";
import type { ProjectionStores } from "../../shared/projector/core";
import { projectionStores } from "../../shared/projector/stores";
import { integer, runProgram, UserFacingError, withTarget } from "../cli";
import { isoTime, tableLines } from "../format";
import { resolveTarget } from "../target";
import { shortId } from "./event-id";
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

const row = (e: RecentEvent) => ({
  event: shortId(e.eventId),
  time: isoTime(e.receivedAt),
  trigger: e.trigger,
  app: e.appId ?? "",
  outcome: e.outcome,
});

/** A followed event's line: fixed widths, so the lines printed as they come stay aligned. */
const followLine = (r: Record<string, string>) =>
  [r.event?.padEnd(16), r.time?.padEnd(24), r.trigger?.padEnd(28), r.app?.padEnd(16), r.outcome]
    .join("  ")
    .trimEnd();

interface EventsOptions {
  app?: string;
  trigger?: string[];
  limit: number;
  follow?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: EventsOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (!target.bucket) throw new UserFacingError("the target has no data bucket");
    const bucket = target.bucket;
    const stores = projectionStores(target.dynamo, target.tables);
    const recent = (limit: number) =>
      recentEvents(target.s3, bucket, stores, { appId: o.app, triggers: o.trigger, limit });
    if (!o.follow) {
      const events = await recent(o.limit);
      if (o.json) console.log(JSON.stringify(events, null, 2));
      else for (const line of tableLines(events.map(row))) console.log(line);
      if (events.length === 0) {
        console.error(`nothing found: no events${o.app ? ` of app ${o.app}` : ""}`);
        process.exitCode = 3;
      }
      return;
    }
    // Oldest first, then each new event as it is archived; one still pending is shown once judged
    // (or after three looks).
    const looks = new Map<string, number>();
    if (!o.json)
      console.log(
        followLine({ event: "event", time: "time", trigger: "trigger", app: "app", outcome: "outcome" }),
      );
    let first = true;
    let stopped = false;
    process.once("SIGINT", () => {
      stopped = true;
    });
    while (!stopped) {
      const events = (await recent(first ? o.limit : 50)).reverse();
      for (const e of events) {
        const n = looks.get(e.eventId) ?? 0;
        if (n < 0 || (e.outcome === "pending" && n < 3 && !first)) {
          if (n >= 0) looks.set(e.eventId, n + 1);
          continue;
        }
        looks.set(e.eventId, -1);
        console.log(o.json ? JSON.stringify(e) : followLine(row(e)));
      }
      if (first) console.error("following new events (Ctrl-C stops)");
      first = false;
      for (let i = 0; i < 20 && !stopped; i++) await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("events")
    .description(
      "The most recent events, newest first, with their outcome (from the archive and the quarantine)",
    )
    .option("--app <appId>", "one app (default: all)")
    .option("--trigger <trigger...>", "only these triggers")
    .option("--limit <n>", "how many", integer(1, 10_000), 20)
    .option("--follow", "then print new events as they are archived (Ctrl-C stops)")
    .option("--json", "one JSON array on stdout (--follow: one JSON object a line)"),
).action((o: EventsOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
