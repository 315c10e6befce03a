import { listObjects } from "../adapters/s3-listing";
import { edgeDaysOf } from "../analytics/edge-days";
import {
  appSegment,
  dayOfKey,
  isArchiveObjectKey,
  type RawArchiveLine,
  utcDay,
} from "../contracts/bucket-layout";
import { S3_PREFIX } from "../platform/constants";
import type { ForgetDependencies } from "./plan";
import { mentionsUid, namesOf, type Redaction, redactArchiveLine, referencesOf } from "./redact";

/*
 * The erasure's step "find", in the archive: the objects whose lines name the user (or are the
 * app's), by SQL over the NDJSON in chunks of days, and what those lines teach (names, groups,
 * sessions, days).
 */

/**
 * The most bytes of archive one search query reads: Athena cancels a query past the workgroup's
 * cutoff (`athenaBytesScannedCutoffMb`, 10 GB by default), so days are searched in chunks under it.
 */
export const SEARCH_CHUNK_BYTES = 4 * 1024 ** 3;

/** A run of days one search query covers. */
export interface DayChunk {
  from: string;
  to: string;
}

/**
 * What the erasure's search saw of the bucket: the archive's objects (raw and edge, the batch
 * layout) with their sizes, the receipt days that have raw objects (the days a recompute can
 * read), and the app's other objects that may hold the user (`sideObjectPrefixes`). Objects the
 * projector adds after it are looked at again before the erasure reports (`addedSince`).
 */
export interface BucketListing {
  archive: Map<string, number>;
  rawDays: Set<string>;
  side: string[];
}

/**
 * Where the app's objects outside the archive's batch layout are: its quarantine records and
 * oversize bodies, every day's sets (`users/`: small, a line per active user), the import records
 * (`imports/`: a line per imported user, #43), and the archive's objects still in the layout before
 * the batch one (`raw/app=…`, `edge/app=…`: until `archive-migrate` rewrites them; no reader reads
 * them, so no figure depends on them), and the facts reconcile applied (`reconcile/app=…`: the
 * listing's names and avatars, #57).
 *
 * @example sideObjectPrefixes("app1") // ["quarantine/app=app1/", "oversize/app1/", "users/", "imports/", "raw/app=app1/", "edge/app=app1/", "reconcile/app=app1/"]
 */
export function sideObjectPrefixes(appId: string): string[] {
  const seg = appSegment(appId);
  return [
    `${S3_PREFIX.quarantine}app=${seg}/`,
    `${S3_PREFIX.oversize}${seg}/`,
    S3_PREFIX.users,
    S3_PREFIX.imports,
    `${S3_PREFIX.raw}app=${seg}/`,
    `${S3_PREFIX.edge}app=${seg}/`,
    `${S3_PREFIX.reconcile}app=${seg}/`,
  ];
}

/**
 * Lists what the erasure searches (`BucketListing`): a LIST per 1,000 objects.
 *
 * @example (await listBucket(deps, "app1")).rawDays // Set { "2026-03-01", "2026-03-02" }
 */
export async function listBucket(deps: ForgetDependencies, appId: string): Promise<BucketListing> {
  const archive = new Map<string, number>();
  const rawDays = new Set<string>();
  for (const prefix of [S3_PREFIX.raw, S3_PREFIX.edge])
    for (const { key, size } of await listObjects(deps.s3, deps.bucket, prefix)) {
      if (!isArchiveObjectKey(key)) continue;
      archive.set(key, size);
      if (key.startsWith(S3_PREFIX.raw)) rawDays.add(dayOfKey(key) ?? "");
    }
  const side: string[] = [];
  for (const prefix of sideObjectPrefixes(appId))
    for (const { key } of await listObjects(deps.s3, deps.bucket, prefix)) side.push(key);
  return { archive, rawDays, side };
}

/**
 * The objects of `now` that `before` did not have: what the projector added since the search.
 *
 * @example addedSince(atSearch, await listBucket(deps, "app1")) // ["raw/date=2026-03-10/hour=09/b7.ndjson.gz"]
 */
export function addedSince(before: BucketListing, now: BucketListing): string[] {
  const seen = new Set(before.side);
  return [
    ...[...now.archive.keys()].filter((k) => !before.archive.has(k)),
    ...now.side.filter((k) => !seen.has(k)),
  ];
}

/**
 * The archive's days (raw and edge) in runs of consecutive days of at most `budget` bytes each (a
 * day larger than that alone).
 *
 * @example searchChunks(listing, 4 * 1024 ** 3) // [{ from: "2026-03-01", to: "2026-03-31" }, …]
 */
export function searchChunks(
  listing: Pick<BucketListing, "archive">,
  budget = SEARCH_CHUNK_BYTES,
): DayChunk[] {
  const bytes = new Map<string, number>();
  for (const [key, size] of listing.archive) {
    const day = dayOfKey(key);
    if (day) bytes.set(day, (bytes.get(day) ?? 0) + size);
  }
  const chunks: Array<DayChunk & { bytes: number }> = [];
  for (const day of [...bytes.keys()].sort()) {
    const size = bytes.get(day) ?? 0;
    const last = chunks.at(-1);
    if (last && last.bytes + size <= budget) {
      last.to = day;
      last.bytes += size;
    } else chunks.push({ from: day, to: day, bytes: size });
  }
  return chunks.map(({ from, to }) => ({ from, to }));
}

/**
 * The archive objects (raw and edge) whose lines of the app hold any of `needles` (or, with none,
 * every line of the app), found by SQL, one query per chunk of days (`searchChunks`); and the
 * bytes the engine read.
 *
 * @example await searchArchive(deps, "app1", ["u7"], chunks) // { keys: ["raw/date=…/b1.ndjson.gz"], bytesScanned: 5120 }
 */
export async function searchArchive(
  deps: ForgetDependencies,
  appId: string,
  needles: readonly string[],
  chunks: readonly DayChunk[],
): Promise<{ keys: string[]; bytesScanned: number }> {
  const params: Record<string, string> = { app: appId };
  needles.forEach((n, i) => {
    params[`n${i}`] = n;
  });
  const match = needles.length
    ? ` AND (${needles.map((_, i) => `strpos(body, :n${i}) > 0`).join(" OR ")})`
    : "";
  const sql = ["archive_events", "archive_edges"]
    .map(
      (t) =>
        `SELECT DISTINCT "$path" AS object FROM ${t} WHERE app = :app AND "date" BETWEEN :from AND :to${match}`,
    )
    .join("\nUNION\n");
  const prefix = `s3://${deps.bucket}/`;
  const keys = new Set<string>();
  let bytesScanned = 0;
  for (const chunk of chunks) {
    // A query reads up to 4 GB (minutes on Athena): the lease is renewed between them.
    await deps.checkpoint?.(`search ${chunk.from}..${chunk.to}`);
    const result = await deps.search.query(sql, { ...params, ...chunk }, { ...chunk, edges: chunk });
    bytesScanned += result.bytesScanned;
    for (const row of result.rows) {
      const path = String(row.object ?? "");
      if (path.startsWith(prefix)) keys.add(path.slice(prefix.length));
    }
  }
  return { keys: [...keys].sort(), bytesScanned };
}

/**
 * What the lines of one object tell the plan: names, referenced groups, days, and the sessions
 * their uid ties to them (a line that names their uid names the session: a line that only bears
 * one of their names may be a namesake's, and ties nothing).
 *
 * @example learnFromLines(text, "app1", redaction, learnt) // learnt.names has "Ann", learnt.groups "g1"
 */
export function learnFromLines(
  text: string,
  appId: string,
  redaction: Redaction,
  learnt: { names: Set<string>; groups: Set<string>; sessions: Set<string>; days: Set<string> },
): void {
  for (const raw of text.split("\n")) {
    if (!raw.trim() || redactArchiveLine(raw, appId, redaction) === undefined) continue;
    const line = JSON.parse(raw) as RawArchiveLine;
    let body: unknown;
    try {
      body = JSON.parse(line.body);
    } catch {
      continue;
    }
    namesOf(body, redaction.uid, learnt.names);
    const refs = referencesOf(body);
    for (const g of refs.groups) learnt.groups.add(g);
    if (mentionsUid(line.body, redaction.uid)) for (const s of refs.sessions) learnt.sessions.add(s);
    learnt.days.add(utcDay(line.receivedAt));
    if (line.eventTime !== undefined) {
      learnt.days.add(utcDay(line.eventTime));
      for (const d of edgeDaysOf(line)) learnt.days.add(d);
    }
  }
}

/**
 * A text as it stands inside a JSON string (what the raw body holds).
 *
 * @example jsonInner('say "hi"') // 'say \\"hi\\"'
 */
export const jsonInner = (text: string) => JSON.stringify(text).slice(1, -1);
