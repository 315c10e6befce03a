import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
} from "@aws-sdk/lib-dynamodb";
import { archiveLease, withArchiveLease } from "../adapters/archive-lease";
import { listObjects } from "../adapters/s3-listing";
import { type ArchiveCompactor, compactDayPrefix, compactManifestKey } from "../analytics/compaction";
import { edgeDaysOf } from "../analytics/edge-days";
import type { SqlEngine } from "../analytics/engines/sql-engine";
import { type RollupDependencies, rollupDay } from "../analytics/rollup";
import {
  appSegment,
  dayOfKey,
  isArchiveObjectKey,
  isGzip,
  objectText,
  type RawArchiveLine,
  utcDay,
} from "../contracts/bucket-layout";
import { S3_PREFIX } from "../platform/constants";
import { isMissingObject } from "../platform/errors";
import {
  ACTIVITY_TABLE,
  appKey,
  keyOfItem,
  PROJECTION_TABLES,
  type TableDefinition,
  type TableNames,
} from "../platform/tables";
import {
  clearPendingErasure,
  type ErasureCounts,
  type ErasureRecord,
  type ErasureTable,
  type PendingErasure,
  pendingErasure,
  savePendingErasure,
  writeErasureRecord,
} from "./erasure-state";
import type { ObjectVersions } from "./object-versions";
import {
  namesOf,
  type Redaction,
  redactArchiveLine,
  redactBody,
  redactNdjson,
  redactValue,
  referencesOf,
  replaceUid,
} from "./redact";

/** What an erasure reads and changes: the deployment's bucket, tables, engine and queues. */
export interface ForgetDependencies {
  s3: S3Client;
  bucket: string;
  /**
   * SQL over the archive's NDJSON with Athena's `"$path"` column: DuckDB with `objectPaths`
   * locally, Athena's `archive_events`/`archive_edges` tables deployed.
   */
  search: SqlEngine;
  /** The bucket's old versions: `s3ObjectVersions` deployed, `UNVERSIONED` locally. */
  versions: ObjectVersions;
  doc: DynamoDBDocumentClient;
  tables: TableNames;
  /** The activity table: the lock, the erasure under way, the records. */
  state: ErasureTable;
  /** Recomputes the days the erasure touched (their top lists then show the pseudonym). */
  rollup: RollupDependencies;
  /** Rewrites a compacted day's Parquet from its redacted NDJSON. None: compacted days are left (reported). */
  compactor?: ArchiveCompactor;
  /** The queues whose messages an erasure cannot change: counted in the report. */
  queues?: { sqs: SQSClient; urls: Record<string, string> };
  now: () => number;
  /** Random ids (erasure id, pseudonym). @default 16 random hex digits */
  newId?: () => string;
  /** The most archive bytes one search query reads. @default SEARCH_CHUNK_BYTES */
  searchChunkBytes?: number;
  /** Called before each change (a test's kill point: a throw there is a crash). */
  checkpoint?: (step: string) => void | Promise<void>;
  /**
   * Called once the erasure record is written (the stream's erasure notice, #41); a failure there
   * fails the run, and a re-run completes it (and calls it again, with the same erasure id).
   */
  onErased?: (notice: {
    appId: string;
    erasureId: string;
    pseudonym?: string;
    scope: "user" | "app";
    finishedAt: number;
  }) => Promise<void>;
}

export interface ForgetRequest {
  appId: string;
  /** The user to erase; absent: the whole app. */
  uid?: string;
  /** Find and report, change nothing. */
  dryRun?: boolean;
  keepRecordings?: boolean;
  /** Who asked (the operator): kept in the record. */
  requestedBy: string;
}

/**
 * What an erasure found: persisted before the first change (without `items`, whose keys hold the
 * uid: a re-run finds them again from the groups and sessions named here), so that a re-run after
 * a crash resumes it. No uid, name or text.
 */
export interface ErasurePlan {
  /** Archive, quarantine and oversize objects holding the user (or app). */
  objects: string[];
  /** Days whose figures the erasure changes (event days, receipt days and edge days of the lines). */
  days: string[];
  /** Receipt days with a compaction: their Parquet is rewritten. */
  compactDays: string[];
  /** Table items to delete or redact, by table and key (not persisted: found again on a re-run). */
  items: Array<{ table: keyof TableNames; key: Record<string, string> }>;
  /** The groups and sessions the user's lines name: where the tables hold them besides their own items. */
  groups: string[];
  sessions: string[];
  /** Recording objects of sessions the user took part in. */
  recordings: string[];
  bytesScanned: number;
}

export interface ForgetReport extends Omit<ErasureRecord, "finishedAt"> {
  dryRun: boolean;
  finishedAt?: number;
  plan: ErasurePlan;
}

/** `erasures/<erasureId>/plan.json`: the plan, no personal data (keys, days, counts). */
export function erasurePlanKey(erasureId: string): string {
  return `${S3_PREFIX.erasures}${erasureId}/plan.json`;
}

const randomId = () => randomBytes(8).toString("hex");

const zeroCounts = (): ErasureCounts => ({
  objectsSearched: 0,
  objectsRewritten: 0,
  objectsDeleted: 0,
  linesRedacted: 0,
  linesRemoved: 0,
  versionsDeleted: 0,
  itemsDeleted: 0,
  itemsRedacted: 0,
  recordingsDeleted: 0,
  recordingsKept: 0,
  daysRecompacted: 0,
  daysRecomputed: 0,
  bytesScanned: 0,
});

async function getBytes(deps: ForgetDependencies, key: string): Promise<Uint8Array | undefined> {
  try {
    const out = await deps.s3.send(new GetObjectCommand({ Bucket: deps.bucket, Key: key }));
    return (await out.Body?.transformToByteArray()) ?? new Uint8Array();
  } catch (error) {
    if (isMissingObject(error)) return undefined;
    throw error;
  }
}

type ObjectKind = "ndjson" | "quarantine" | "oversize" | "users";

/** The kind of object a key is, as the erasure rewrites it. */
function objectKind(key: string): ObjectKind | undefined {
  if (isArchiveObjectKey(key)) return "ndjson";
  if (key.startsWith(S3_PREFIX.quarantine)) return "quarantine";
  if (key.startsWith(S3_PREFIX.oversize)) return "oversize";
  if (key.startsWith(S3_PREFIX.users)) return "users";
  return undefined;
}

/** The fields of a day set's lines that are identifiers (analytics/user-sets.ts): the user's uid in them becomes the pseudonym. */
const SET_IDENTIFIERS = new Set(["uid", "conversation", "group"]);

/**
 * A day set's lines (users, first sightings, conversations started, the membership history:
 * analytics/user-sets.ts) with the user's uid as the pseudonym wherever it is an identifier, as
 * the archive's redaction writes it (each user once: every count over the sets stays exact, and a
 * day recomputed from the redacted archive gives the same sets), or without the app's lines.
 */
function rewriteUserSet(text: string, appId: string, redaction: Redaction | undefined): Rewrite {
  let changed = 0;
  const lines = text
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.app !== appId) return [line];
      if (!redaction) {
        changed++;
        return [];
      }
      const next = JSON.stringify(
        Object.fromEntries(
          Object.entries(entry).map(([k, v]) => [
            k,
            SET_IDENTIFIERS.has(k) && typeof v === "string" ? replaceUid(v, redaction) : v,
          ]),
        ),
      );
      if (next === JSON.stringify(entry)) return [line];
      changed++;
      return [next];
    });
  return { text: lines.length ? `${lines.join("\n")}\n` : redaction ? "" : undefined, changed };
}

/** What erasing does to one object's text: the new text (undefined: delete it) and the lines changed. */
interface Rewrite {
  text: string | undefined;
  changed: number;
}

/** How the erasure rewrites an object's text: the user's lines redacted, or the app's lines removed. */
function rewriteText(
  kind: ObjectKind,
  text: string,
  appId: string,
  redaction: Redaction | undefined,
): Rewrite {
  if (kind === "users") return rewriteUserSet(text, appId, redaction);
  if (!redaction) {
    // The whole app: its lines go; an object left with none goes too.
    if (kind !== "ndjson") return { text: undefined, changed: 1 };
    const lines = text.split("\n").filter((l) => l.trim());
    const kept = lines.filter((l) => (JSON.parse(l) as RawArchiveLine).appId !== appId);
    return {
      text: kept.length ? `${kept.join("\n")}\n` : undefined,
      changed: lines.length - kept.length,
    };
  }
  if (kind === "ndjson") {
    const { text: next, redacted } = redactNdjson(text, appId, redaction);
    return { text: next, changed: redacted };
  }
  if (kind === "quarantine") {
    const next = redactArchiveLine(text, appId, redaction);
    return next === undefined ? { text, changed: 0 } : { text: next, changed: 1 };
  }
  const next = redactBody(text, redaction);
  return { text: next, changed: next === text ? 0 : 1 };
}

/**
 * The most bytes of archive one search query reads: Athena cancels a query past the workgroup's
 * cutoff (`athenaBytesScannedCutoffMb`, 10 GB by default), so days are searched in chunks under it.
 */
export const SEARCH_CHUNK_BYTES = 4 * 1024 ** 3;

/** A run of days one search query covers. */
interface DayChunk {
  from: string;
  to: string;
}

/**
 * The archive's days (raw and edge) in runs of consecutive days of at most `budget` bytes each (a
 * day larger than that alone): one listing of the archive, a LIST per 1,000 objects.
 */
async function searchChunks(deps: ForgetDependencies, budget = SEARCH_CHUNK_BYTES): Promise<DayChunk[]> {
  const bytes = new Map<string, number>();
  for (const prefix of [S3_PREFIX.raw, S3_PREFIX.edge])
    for (const { key, size } of await listObjects(deps.s3, deps.bucket, prefix)) {
      const day = dayOfKey(key);
      if (day && isArchiveObjectKey(key)) bytes.set(day, (bytes.get(day) ?? 0) + size);
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
 */
async function searchArchive(
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
    const result = await deps.search.query(sql, { ...params, ...chunk }, { ...chunk, edges: chunk });
    bytesScanned += result.bytesScanned;
    for (const row of result.rows) {
      const path = String(row.object ?? "");
      if (path.startsWith(prefix)) keys.add(path.slice(prefix.length));
    }
  }
  return { keys: [...keys].sort(), bytesScanned };
}

/** What the lines of one object tell the plan: names, referenced groups and sessions, days. */
function learnFromLines(
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
    for (const s of refs.sessions) learnt.sessions.add(s);
    learnt.days.add(utcDay(line.receivedAt));
    if (line.eventTime !== undefined) {
      learnt.days.add(utcDay(line.eventTime));
      for (const d of edgeDaysOf(line)) learnt.days.add(d);
    }
  }
}

/** Every item of a table index query (paginated). */
async function queryAll(
  deps: ForgetDependencies,
  table: keyof TableNames,
  index: string | undefined,
  keyName: string,
  value: string,
): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await deps.doc.send(
      new QueryCommand({
        TableName: deps.tables[table],
        IndexName: index,
        KeyConditionExpression: "#k = :v",
        ExpressionAttributeNames: { "#k": keyName },
        ExpressionAttributeValues: { ":v": value },
        ExclusiveStartKey,
      }),
    );
    items.push(...(out.Items ?? []));
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

/** An item's key in its table. */
function keyOf(table: keyof TableNames, item: Record<string, unknown>): Record<string, string> {
  const key = keyOfItem(PROJECTION_TABLES[table], item);
  return Object.fromEntries(Object.entries(key).map(([name, value]) => [name, String(value)]));
}

async function getItem(deps: ForgetDependencies, table: keyof TableNames, key: Record<string, string>) {
  const out = await deps.doc.send(
    new GetCommand({ TableName: deps.tables[table], Key: key, ConsistentRead: true }),
  );
  return out.Item;
}

/** Whether a table item names the user (their uid as an identifier, or one of their names). */
function itemNames(item: Record<string, unknown>, redaction: Redaction): boolean {
  return JSON.stringify(redactValue(item, redaction)) !== JSON.stringify(item);
}

/** The items of the user's tables: their presence and memberships, the sessions and groups that name them. */
async function planItems(
  deps: ForgetDependencies,
  appId: string,
  redaction: Redaction,
  learnt: { groups: Set<string>; sessions: Set<string> },
): Promise<{ items: ErasurePlan["items"]; recordings: string[] }> {
  const { uid } = redaction;
  const userKey = appKey(appId, uid);
  const candidates: Array<{ table: keyof TableNames; item: Record<string, unknown> }> = [];
  const presence = await getItem(deps, "presence", { pk: userKey });
  if (presence) candidates.push({ table: "presence", item: presence });
  for (const item of await queryAll(deps, "memberships", "byUser", "userKey", userKey))
    candidates.push({ table: "memberships", item });
  const sessionIds = new Set(learnt.sessions);
  for (const [index, attribute] of [
    ["byInitiator", "initiatorKey"],
    ["byReceiver", "receiverKey"],
  ] as const)
    for (const item of await queryAll(deps, "sessions", index, attribute, userKey))
      sessionIds.add(String(item.sessionId ?? String(item.pk).slice(appId.length + 1)));
  for (const sessionId of sessionIds) {
    const item = await getItem(deps, "sessions", { pk: appKey(appId, sessionId) });
    if (item) candidates.push({ table: "sessions", item });
  }
  for (const guid of learnt.groups) {
    const item = await getItem(deps, "groups", { pk: appKey(appId, guid) });
    if (item) candidates.push({ table: "groups", item });
    // The group's other members: the user may have added, kicked or banned them (`by`).
    for (const member of await queryAll(deps, "memberships", undefined, "pk", appKey(appId, guid)))
      candidates.push({ table: "memberships", item: member });
  }
  const named = candidates.filter(({ item }) => itemNames(item, redaction));
  const recordings = named.flatMap(({ table, item }) =>
    table === "sessions"
      ? Object.values((item.recordings ?? {}) as Record<string, { key?: string }>).flatMap((r) =>
          r.key ? [r.key] : [],
        )
      : [],
  );
  return {
    items: named.map(({ table, item }) => ({ table, key: keyOf(table, item) })),
    recordings,
  };
}

/** Every object under a prefix. */
async function keysUnder(deps: ForgetDependencies, prefix: string): Promise<string[]> {
  return (await listObjects(deps.s3, deps.bucket, prefix)).map((o) => o.key);
}

/**
 * Finds everything to change (`ErasurePlan`): archive objects by SQL (the user's uid and names,
 * again once new names are learnt from their entities), the app's quarantine and oversize
 * objects that name them, the table items, the recordings, the days to recompute.
 */
async function findPlan(
  deps: ForgetDependencies,
  request: ForgetRequest,
  redaction: Redaction | undefined,
): Promise<{ plan: ErasurePlan; names: string[]; searched: number }> {
  const { appId } = request;
  const seg = appSegment(appId);
  // Besides the archive: the app's quarantine and oversize bodies, and every day's user sets
  // (small: a line per active user).
  const side = [
    ...(await keysUnder(deps, `${S3_PREFIX.quarantine}app=${seg}/`)),
    ...(await keysUnder(deps, `${S3_PREFIX.oversize}${seg}/`)),
    ...(await keysUnder(deps, S3_PREFIX.users)),
  ];
  /** The side objects the erasure changes (read each: they are the app's own, or small). */
  const changing = async (subject: Redaction | undefined) => {
    const out: string[] = [];
    for (const key of side) {
      const kind = objectKind(key);
      const bytes = kind && (await getBytes(deps, key));
      if (kind && bytes && rewriteText(kind, objectText(bytes), appId, subject).changed > 0) out.push(key);
    }
    return out;
  };
  if (!redaction) {
    const found = await searchArchive(deps, appId, [], await searchChunks(deps, deps.searchChunkBytes));
    const days = new Set(found.keys.map((k) => dayOfKey(k) ?? ""));
    const plan: ErasurePlan = {
      objects: [...found.keys, ...(await changing(undefined))],
      days: [],
      compactDays: await compacted(deps, [...days]),
      items: [],
      groups: [],
      sessions: [],
      recordings: await keysUnder(deps, `${S3_PREFIX.recordings}${seg}/`),
      bytesScanned: found.bytesScanned,
    };
    return { plan, names: [], searched: found.keys.length + side.length };
  }
  const learnt = {
    names: new Set(redaction.names),
    groups: new Set<string>(),
    sessions: new Set<string>(),
    days: new Set<string>(),
  };
  // The name their presence item holds: a name to search the archive by, before any line is read.
  const presence = await getItem(deps, "presence", { pk: appKey(appId, redaction.uid) });
  if (typeof presence?.name === "string" && presence.name) learnt.names.add(presence.name);
  const objects = new Set<string>();
  let bytesScanned = 0;
  let searchedFor = new Set<string>();
  let chunks: DayChunk[] | undefined;
  // The uid first, then any name learnt from the lines found (a call's occupants are named only).
  for (let round = 0; round < 4; round++) {
    const needles = [redaction.uid, ...learnt.names].filter((n) => !searchedFor.has(n));
    if (needles.length === 0) break;
    searchedFor = new Set([...searchedFor, ...needles]);
    chunks ??= await searchChunks(deps, deps.searchChunkBytes);
    const found = await searchArchive(deps, appId, needles.map(jsonInner), chunks);
    bytesScanned += found.bytesScanned;
    for (const key of found.keys) {
      if (objects.has(key)) continue;
      const bytes = await getBytes(deps, key);
      if (!bytes) continue;
      const current = { ...redaction, names: [...learnt.names] };
      const text = objectText(bytes);
      if (redactNdjson(text, appId, current).redacted === 0) {
        // A line that only looked like the user (a substring of another id): learn its names anyway.
        learnFromLines(text, appId, current, learnt);
        continue;
      }
      objects.add(key);
      learnFromLines(text, appId, current, learnt);
    }
  }
  const final = { ...redaction, names: [...learnt.names] };
  for (const key of await changing(final)) objects.add(key);
  const items = await planItems(deps, appId, final, learnt);
  const receiptDays = [...objects]
    .filter(isArchiveObjectKey)
    .flatMap((k) => (k.startsWith(S3_PREFIX.raw) ? [dayOfKey(k) ?? ""] : []));
  const plan: ErasurePlan = {
    objects: [...objects].sort(),
    days: [...learnt.days].sort(),
    compactDays: await compacted(deps, receiptDays),
    items: items.items,
    groups: [...learnt.groups].sort(),
    sessions: [...learnt.sessions].sort(),
    recordings: items.recordings,
    bytesScanned,
  };
  return { plan, names: [...learnt.names], searched: objects.size + side.length };
}

/** A text as it stands inside a JSON string (what the raw body holds). */
const jsonInner = (text: string) => JSON.stringify(text).slice(1, -1);

/** The days of a list that have a compaction manifest. */
async function compacted(deps: ForgetDependencies, days: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const day of [...new Set(days)].sort())
    if (await getBytes(deps, compactManifestKey(day))) out.push(day);
  return out;
}

async function putText(deps: ForgetDependencies, key: string, text: string, gzip: boolean): Promise<void> {
  await deps.s3.send(
    new PutObjectCommand({
      Bucket: deps.bucket,
      Key: key,
      Body: gzip ? gzipSync(text) : text,
      ContentType: gzip
        ? "application/gzip"
        : key.endsWith(".json")
          ? "application/json"
          : "application/octet-stream",
    }),
  );
}

async function deleteObject(deps: ForgetDependencies, key: string): Promise<number> {
  await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key }));
  return deps.versions.purge(key, { all: true, exact: true });
}

/** Rewrites (or deletes) each object of the plan, then deletes its old versions. */
async function rewriteObjects(
  deps: ForgetDependencies,
  request: ForgetRequest,
  plan: ErasurePlan,
  redaction: Redaction | undefined,
  counts: ErasureCounts,
): Promise<void> {
  for (const key of plan.objects) {
    const kind = objectKind(key);
    const bytes = kind && (await getBytes(deps, key));
    if (kind && bytes) {
      const rewrite = rewriteText(kind, objectText(bytes), request.appId, redaction);
      if (rewrite.changed > 0) {
        await deps.checkpoint?.(`rewrite ${key}`);
        if (rewrite.text === undefined) {
          counts.versionsDeleted += await deleteObject(deps, key);
          counts.objectsDeleted++;
        } else {
          await putText(deps, key, rewrite.text, isGzip(bytes));
          counts.objectsRewritten++;
        }
        if (redaction) counts.linesRedacted += rewrite.changed;
        else counts.linesRemoved += rewrite.changed;
      }
    }
    await deps.checkpoint?.(`purge ${key}`);
    counts.versionsDeleted += await deps.versions.purge(key, { exact: true });
  }
}

/** Deletes the user's presence and memberships, redacts the sessions and groups that name them. */
async function eraseItems(
  deps: ForgetDependencies,
  plan: ErasurePlan,
  redaction: Redaction,
  counts: ErasureCounts,
): Promise<void> {
  for (const { table, key } of plan.items) {
    const item = await getItem(deps, table, key);
    if (!item) continue;
    const own = table === "presence" || (table === "memberships" && item.uid === redaction.uid);
    await deps.checkpoint?.(`item ${table}`);
    if (own) {
      await deps.doc.send(new DeleteCommand({ TableName: deps.tables[table], Key: key }));
      counts.itemsDeleted++;
      continue;
    }
    const next = redactValue(item, redaction) as Record<string, unknown>;
    if (JSON.stringify(next) === JSON.stringify(item)) continue;
    const nextKey = keyOf(table, next);
    await deps.doc.send(new PutCommand({ TableName: deps.tables[table], Item: next }));
    if (JSON.stringify(nextKey) !== JSON.stringify(key))
      await deps.doc.send(new DeleteCommand({ TableName: deps.tables[table], Key: key }));
    counts.itemsRedacted++;
  }
}

/** Deletes every item of the app in the projection tables and its figures (a whole-app erasure). */
async function eraseAppItems(deps: ForgetDependencies, appId: string, counts: ErasureCounts): Promise<void> {
  const targets = [
    ...Object.entries(deps.tables).map(([table, tableName]) => ({
      tableName,
      definition: PROJECTION_TABLES[table as keyof TableNames] as TableDefinition,
    })),
    { tableName: deps.state.tableName, definition: ACTIVITY_TABLE },
  ];
  for (const { tableName, definition } of targets) {
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const out = await deps.doc.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: "begins_with(pk, :app)",
          ExpressionAttributeValues: { ":app": `${appId}#` },
          ExclusiveStartKey,
        }),
      );
      for (const item of out.Items ?? []) {
        // The app's erasure records stay: they are what says the app was erased.
        if (item.pk === `${appId}#erasures`) continue;
        await deps.checkpoint?.(`item ${tableName}`);
        await deps.doc.send(new DeleteCommand({ TableName: tableName, Key: keyOfItem(definition, item) }));
        counts.itemsDeleted++;
      }
      ExclusiveStartKey = out.LastEvaluatedKey;
    } while (ExclusiveStartKey);
  }
}

/**
 * Rewrites a compacted day's Parquet from its redacted NDJSON: the manifest goes first (readers
 * then take the NDJSON), then every object of the day's compaction and its old versions, then the
 * day is compacted again (Athena's CTAS refuses a location that holds files).
 */
async function recompact(
  deps: ForgetDependencies,
  plan: ErasurePlan,
  counts: ErasureCounts,
): Promise<string[]> {
  const left: string[] = [];
  for (const day of plan.compactDays) {
    if (!deps.compactor) {
      left.push(day);
      continue;
    }
    await deps.checkpoint?.(`compact ${day}`);
    const manifest = compactManifestKey(day);
    if (await getBytes(deps, manifest)) counts.versionsDeleted += await deleteObject(deps, manifest);
    for (const key of await keysUnder(deps, compactDayPrefix(day)))
      counts.versionsDeleted += await deleteObject(deps, key);
    counts.versionsDeleted += await deps.versions.purge(compactDayPrefix(day), { all: true });
    await deps.compactor.compactDay(day);
    counts.daysRecompacted++;
  }
  return left;
}

/** What the queues hold that the erasure cannot change (SQS messages cannot be edited). */
async function unreachedQueues(deps: ForgetDependencies): Promise<string[]> {
  if (!deps.queues) return [];
  const out: string[] = [];
  for (const [name, url] of Object.entries(deps.queues.urls)) {
    if (!url) continue;
    const attributes = await deps.queues.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    const n =
      Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
    if (n > 0)
      out.push(
        `${name}: ${n} message(s) not yet processed, not searched (SQS cannot edit a message): once processed or redriven they are archived, and a second forget erases them`,
      );
  }
  return out;
}

/**
 * Erases one user of an app (or, without `uid`, the whole app) from everything the deployment
 * keeps, leaving every figure exact (docs/personal-data.md):
 * 1. takes the archive's rewrite lock and the erasure under way (a re-run resumes it: same id and
 *    pseudonym);
 * 2. finds (`findPlan`) and saves the plan before the first change;
 * 3. rewrites each archive, quarantine and oversize object that holds the user, their lines
 *    redacted (`redact.ts`: one random pseudonym for their uid and names, their free text removed,
 *    `erasure` stamped) and every other line byte for byte as it was, one PUT per object (atomic),
 *    then deletes the object's old versions; a whole app: its lines removed;
 * 4. deletes their presence and memberships, redacts the sessions and groups naming them;
 * 5. deletes their recordings (unless `keepRecordings`), rewrites the compacted days' Parquet
 *    from the redacted NDJSON, recomputes the days touched;
 * 6. writes the erasure record, removes the plan and the erasure under way, releases the lock.
 * Each step is idempotent: a crash anywhere leaves a state a re-run completes; a second run after
 * the first ends finds nothing. With `dryRun`, only step 2's finding, and nothing is written.
 *
 * @example await forget(deps, { appId: "app1", uid: "u7", requestedBy: "ops" }) // { counts: { objectsRewritten: 12, … }, … }
 */
export async function forget(deps: ForgetDependencies, request: ForgetRequest): Promise<ForgetReport> {
  const newId = deps.newId ?? randomId;
  const { appId, uid } = request;
  const scope = uid === undefined ? "app" : "user";
  const existing = await pendingErasure(deps.state, appId, uid);
  const pending: PendingErasure = existing ?? {
    erasureId: newId(),
    pseudonym: `erased-${newId()}`,
    startedAt: deps.now(),
    names: [],
  };
  const redaction: Redaction | undefined =
    uid === undefined
      ? undefined
      : { uid, names: pending.names, pseudonym: pending.pseudonym, erasureId: pending.erasureId };
  const counts = zeroCounts();
  const base = {
    erasureId: pending.erasureId,
    appId,
    scope,
    ...(redaction ? { pseudonym: pending.pseudonym } : {}),
    requestedBy: request.requestedBy,
    startedAt: pending.startedAt,
    keepRecordings: request.keepRecordings ?? false,
  } as const;
  if (request.dryRun) {
    const { plan, searched } = await findPlan(deps, request, redaction);
    counts.objectsSearched = searched;
    counts.bytesScanned = plan.bytesScanned;
    return { ...base, dryRun: true, counts, unreached: await unreachedQueues(deps), plan };
  }
  // The erasure under way first: a crash after it leaves the lock to this erasure's re-run.
  if (!existing) await savePendingErasure(deps.state, appId, uid, pending);
  const holder = `erasure ${pending.erasureId}`;
  const outer = deps;
  // Every step runs under the archive lease, renewed before a step once a third of it has passed.
  return withArchiveLease(archiveLease(outer.state, outer.now), holder, outer.now, async (renew) => {
    const deps: ForgetDependencies = {
      ...outer,
      checkpoint: async (step) => {
        await renew();
        await outer.checkpoint?.(step);
      },
    };
    const planKey = erasurePlanKey(pending.erasureId);
    const saved = await getBytes(deps, planKey);
    let plan: ErasurePlan;
    let names = pending.names;
    if (saved) {
      // A re-run: the items are found again (their keys hold the uid, so the plan does not).
      const persisted = JSON.parse(objectText(saved)) as Omit<ErasurePlan, "items">;
      const items = redaction
        ? await planItems(
            deps,
            appId,
            { ...redaction, names },
            { groups: new Set(persisted.groups), sessions: new Set(persisted.sessions) },
          )
        : { items: [] };
      plan = { ...persisted, items: items.items };
    } else {
      const found = await findPlan(deps, request, redaction);
      plan = found.plan;
      names = found.names;
      counts.objectsSearched = found.searched;
      await deps.checkpoint?.("save plan");
      await savePendingErasure(deps.state, appId, uid, { ...pending, names });
      const { items: _items, ...persisted } = plan;
      await putText(deps, planKey, JSON.stringify(persisted), false);
    }
    counts.bytesScanned = plan.bytesScanned;
    const full = redaction && { ...redaction, names };
    await rewriteObjects(deps, request, plan, full, counts);
    if (full) await eraseItems(deps, plan, full, counts);
    else await eraseAppItems(deps, appId, counts);
    for (const key of plan.recordings) {
      if (request.keepRecordings) {
        counts.recordingsKept++;
        continue;
      }
      await deps.checkpoint?.(`recording ${key}`);
      counts.versionsDeleted += await deleteObject(deps, key);
      counts.recordingsDeleted++;
    }
    const uncompacted = await recompact(deps, plan, counts);
    for (const day of plan.days) {
      await deps.checkpoint?.(`rollup ${day}`);
      await rollupDay(appId, day, deps.rollup);
      counts.daysRecomputed++;
    }
    const unreached = [
      ...(await unreachedQueues(deps)),
      ...uncompacted.map(
        (day) =>
          `${day}: its compacted Parquet was not rewritten (no compactor): run webhook compact --day ${day}`,
      ),
    ];
    const record: ErasureRecord = { ...base, finishedAt: deps.now(), counts, unreached };
    await deps.checkpoint?.("record");
    await writeErasureRecord(deps.state, record);
    await deps.onErased?.({
      appId,
      erasureId: record.erasureId,
      ...(record.pseudonym ? { pseudonym: record.pseudonym } : {}),
      scope,
      finishedAt: record.finishedAt,
    });
    await deleteObject(deps, planKey);
    await clearPendingErasure(deps.state, appId, uid);
    return { ...record, dryRun: false, plan };
  });
}
