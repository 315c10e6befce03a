import { hash } from "node:crypto";
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { LeaseTable } from "../adapters/archive-lease";

/**
 * An erasure's state, in the activity table (it is per app, small, and the rollup's table):
 * - pk `_lock`, sk `archive`: the archive lease every rewriter holds (`adapters/archive-lease.ts`);
 * - pk `_erasures`, sk `<appId>#<sha256(appId, uid)>`: an erasure under way (its id, pseudonym,
 *   the user's names): what a re-run after a crash resumes; deleted when the erasure ends, so the
 *   link between the uid and the pseudonym is gone with it;
 * - pk `<appId>#erasures`, sk `<started ISO>#<erasureId>`: the erasure record (`ErasureRecord`):
 *   when, by whom, what changed, in counts; no personal data.
 */
const PENDING_PK = "_erasures";

/** The activity table, where an erasure keeps its state (and the archive lease lives). */
export type ErasureTable = LeaseTable;

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
  return { pk: PENDING_PK, sk: `${appId}#${uid === undefined ? "_app" : erasureSubject(appId, uid)}` };
}

/**
 * The user an erasure is about, without their uid: the SHA-256 of the app and the uid (hex). The
 * erasure under way is keyed by it, and the stream's erasure notice carries it, so that a consumer
 * that holds the uid can find whom to erase by hashing the uids it holds (it learns nothing it did
 * not hold).
 *
 * @example erasureSubject("app1", "cometchat-uid-1") // "3b0c…" (64 hex digits)
 */
export function erasureSubject(appId: string, uid: string): string {
  // One-shot `hash` (Node 21.7+): the projector hashes a delivery's identifiers with it (in-flight.ts).
  return hash("sha256", `${appId}\0${uid}`);
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
  /** Days whose top lists were rewritten in place (their archive expired: nothing to recompute from). */
  topListsRewritten: number;
  /** Days of the rollup ledger the app's totals were removed from (a whole app). */
  ledgerPassesRewritten: number;
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
