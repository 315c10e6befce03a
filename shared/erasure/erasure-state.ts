import { createHash } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";

/**
 * An erasure's state, in the activity table (it is per app, small, and the rollup's table):
 * - pk `_lock`, sk `archive`: the lease that keeps an erasure and a compaction from rewriting the
 *   same day at once (`acquireArchiveLock`);
 * - pk `_erasures`, sk `<appId>#<sha256(appId, uid)>`: an erasure under way (its id, pseudonym,
 *   the user's names): what a re-run after a crash resumes; deleted when the erasure ends, so the
 *   link between the uid and the pseudonym is gone with it;
 * - pk `<appId>#erasures`, sk `<started ISO>#<erasureId>`: the erasure record (`ErasureRecord`):
 *   when, by whom, what changed, in counts; no personal data.
 */
const LOCK_KEY = { pk: "_lock", sk: "archive" };
const PENDING_PK = "_erasures";

/** How long a lock holds without its holder renewing it (a crashed holder's lock lapses). */
export const ARCHIVE_LOCK_LEASE_MS = 15 * 60_000;

/** The lock is held by another rewrite of the archive (an erasure or a compaction). */
export class ArchiveLockedError extends Error {
  constructor(readonly holder: string) {
    super(`the archive is being rewritten by ${holder}: try again when it ends`);
    this.name = "ArchiveLockedError";
  }
}

export interface ErasureTable {
  doc: DynamoDBDocumentClient;
  tableName: string;
}

/**
 * Takes the archive's rewrite lock for `holder` (`erasure <id>`, `compaction <day>`): free, lapsed
 * (`ARCHIVE_LOCK_LEASE_MS`) or already this holder's (a re-run of the same erasure), else
 * `ArchiveLockedError`. One conditional write.
 */
export async function acquireArchiveLock(table: ErasureTable, holder: string, now: number): Promise<void> {
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...LOCK_KEY, holder, expiresAt: now + ARCHIVE_LOCK_LEASE_MS },
        ConditionExpression: "attribute_not_exists(pk) OR expiresAt < :now OR holder = :holder",
        ExpressionAttributeValues: { ":now": now, ":holder": holder },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const current = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: LOCK_KEY }));
    throw new ArchiveLockedError(String(current.Item?.holder ?? "another rewrite"));
  }
}

/** Releases the lock if `holder` still holds it. */
export async function releaseArchiveLock(table: ErasureTable, holder: string): Promise<void> {
  try {
    await table.doc.send(
      new DeleteCommand({
        TableName: table.tableName,
        Key: LOCK_KEY,
        ConditionExpression: "holder = :holder",
        ExpressionAttributeValues: { ":holder": holder },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** An erasure under way. */
export interface PendingErasure {
  erasureId: string;
  pseudonym: string;
  startedAt: number;
  /** The user's names found so far (a re-run searches for them again). */
  names: string[];
}

/** The pending item's sort key: the app and a hash of the uid (not the uid itself). */
function pendingKey(appId: string, uid: string | undefined) {
  const subject = uid === undefined ? "_app" : createHash("sha256").update(`${appId}\0${uid}`).digest("hex");
  return { pk: PENDING_PK, sk: `${appId}#${subject}` };
}

/** The erasure of this user (or app) under way, if one is. */
export async function pendingErasure(
  table: ErasureTable,
  appId: string,
  uid: string | undefined,
): Promise<PendingErasure | undefined> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: pendingKey(appId, uid), ConsistentRead: true }),
  );
  return out.Item as PendingErasure | undefined;
}

/** Writes (or updates) the erasure under way. */
export async function savePendingErasure(
  table: ErasureTable,
  appId: string,
  uid: string | undefined,
  pending: PendingErasure,
): Promise<void> {
  await table.doc.send(
    new PutCommand({ TableName: table.tableName, Item: { ...pendingKey(appId, uid), ...pending } }),
  );
}

/** Ends the erasure under way: the link between the uid and its pseudonym goes with it. */
export async function clearPendingErasure(
  table: ErasureTable,
  appId: string,
  uid: string | undefined,
): Promise<void> {
  await table.doc.send(new DeleteCommand({ TableName: table.tableName, Key: pendingKey(appId, uid) }));
}

/** What an erasure changed, in counts: what `forget` prints and records. */
export interface ErasureCounts {
  objectsSearched: number;
  objectsRewritten: number;
  objectsDeleted: number;
  linesRedacted: number;
  linesRemoved: number;
  versionsDeleted: number;
  itemsDeleted: number;
  itemsRedacted: number;
  recordingsDeleted: number;
  recordingsKept: number;
  daysRecompacted: number;
  daysRecomputed: number;
  bytesScanned: number;
}

/** The erasure record: no uid, name or text; the pseudonym, which the top lists now show. */
export interface ErasureRecord {
  erasureId: string;
  appId: string;
  /** `user` (one user) or `app` (the whole app). */
  scope: "user" | "app";
  pseudonym?: string;
  requestedBy: string;
  startedAt: number;
  finishedAt: number;
  keepRecordings: boolean;
  counts: ErasureCounts;
  /** What the erasure could not reach (messages still queued or dead-lettered), in words. */
  unreached: string[];
}

/** Writes the erasure record. */
export async function writeErasureRecord(table: ErasureTable, record: ErasureRecord): Promise<void> {
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: `${record.appId}#erasures`,
        sk: `${new Date(record.startedAt).toISOString()}#${record.erasureId}`,
        ...record,
      },
    }),
  );
}

/** An app's erasure records, oldest first. */
export async function erasureRecords(table: ErasureTable, appId: string): Promise<ErasureRecord[]> {
  const records: ErasureRecord[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": `${appId}#erasures` },
        ExclusiveStartKey,
      }),
    );
    for (const item of out.Items ?? []) {
      const { pk: _pk, sk: _sk, ...record } = item;
      records.push(record as ErasureRecord);
    }
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return records;
}

/**
 * The lock as the scheduled compaction takes it (`RollupDependencies.archiveLock`).
 *
 * @example const lock = archiveLock(table, Date.now); await lock.acquire("compaction 2026-01-02")
 */
export function archiveLock(table: ErasureTable, now: () => number) {
  return {
    acquire: (holder: string) => acquireArchiveLock(table, holder, now()),
    release: (holder: string) => releaseArchiveLock(table, holder),
  };
}
