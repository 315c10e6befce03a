import { type DynamoDBDocumentClient, GetCommand, type QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import type { GroupState } from "@webhook-backend/stream/projections/groups";
import { appKey } from "@webhook-backend/stream/projections/keys";
import type { MembershipState } from "@webhook-backend/stream/projections/memberships";
import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import type { SessionState } from "@webhook-backend/stream/projections/sessions";
import pLimit from "p-limit";
import { batchGetAll, queryAll } from "../../shared/adapters/dynamo-reads";
import { monthBuckets, shardQueries, type TableNames } from "../../shared/platform/tables";

/**
 * The access patterns of the tables, each one GetItem or Query (never Scan). Used by the query
 * CLI and the tests. Results are the items as stored, without the bookkeeping (`rev`,
 * `versions` and the index keys).
 */
export interface AnalyticsQueries {
  group(appId: string, guid: string): Promise<GroupView | undefined>;
  members(appId: string, guid: string, options?: { includeFormer?: boolean }): Promise<MembershipView[]>;
  groupsOf(appId: string, uid: string, options?: { includeFormer?: boolean }): Promise<MembershipView[]>;
  presence(appId: string, uid: string): Promise<PresenceView | undefined>;
  online(appId: string): Promise<PresenceView[]>;
  session(appId: string, sessionId: string): Promise<SessionView | undefined>;
  sessionsBetween(appId: string, fromMs: number, toMs: number): Promise<SessionView[]>;
  sessionsOf(appId: string, uid: string): Promise<SessionView[]>;
  recordings(appId: string): Promise<SessionView[]>;
}

type Bookkeeping =
  | "versions"
  | "fallback"
  | "known"
  | "pk"
  | "userKey"
  | "onlineShard"
  | "initiatorKey"
  | "receiverKey"
  | "timeBucket"
  | "recordingShard";
export type GroupView = Omit<GroupState, Bookkeeping>;
export type MembershipView = Omit<MembershipState, Bookkeeping>;
export type PresenceView = Omit<PresenceState, Bookkeeping>;
export type SessionView = Omit<SessionState, Bookkeeping>;

/** The item without its bookkeeping (revision, versions, seen and known ids, runner-ups, index keys, and keys of older layouts). */
function view<T>(item: Record<string, unknown> | undefined): T | undefined {
  if (!item) return undefined;
  const {
    rev: _rev,
    versions: _versions,
    seen: _seen,
    fallback: _fallback,
    known: _known,
    pk: _pk,
    userKey: _userKey,
    onlineShard: _onlineShard,
    onlineApp: _onlineApp,
    initiatorKey: _initiatorKey,
    receiverKey: _receiverKey,
    timeBucket: _timeBucket,
    recordingShard: _recordingShard,
    recordingApp: _recordingApp,
    finalOccupants: _finalOccupants,
    ...rest
  } = item;
  return rest as T;
}

/** Reads the items of the given keys (BatchGetItem), in the keys' order; keys without an item are left out. */
async function getAll(
  doc: DynamoDBDocumentClient,
  TableName: string,
  keys: Array<Record<string, unknown>>,
  keyNames: string[],
): Promise<Record<string, unknown>[]> {
  const id = (k: Record<string, unknown>) => keyNames.map((n) => String(k[n])).join("|");
  const found = await batchGetAll(doc, TableName, keys, id);
  return keys.flatMap((k) => {
    const item = found.get(id(k));
    return item ? [item] : [];
  });
}

export function analyticsQueries(doc: DynamoDBDocumentClient, tables: TableNames): AnalyticsQueries {
  // A fan-out over shards or months runs 16 queries at a time.
  const limit = pLimit(16);
  const get = async <T>(TableName: string, Key: Record<string, string>) =>
    view<T>((await doc.send(new GetCommand({ TableName, Key }))).Item);
  /** An index query (keys only), then the items from the table. */
  const viaIndex = async <T>(
    TableName: string,
    keyNames: string[],
    queries: Array<Omit<QueryCommandInput, "TableName">>,
  ) => {
    const keys = (
      await Promise.all(queries.map((q) => limit(() => queryAll(doc, { TableName, ...q }))))
    ).flat();
    const items = await getAll(
      doc,
      TableName,
      keys.map((k) => Object.fromEntries(keyNames.map((n) => [n, k[n]]))),
      keyNames,
    );
    return items.map((i) => view<T>(i) as T);
  };
  const currentOnly = (items: MembershipView[], includeFormer?: boolean) =>
    includeFormer ? items : items.filter((m) => m.status === "member");
  const bySessionTime = (a: SessionView, b: SessionView) =>
    a.sessionTime - b.sessionTime || a.sessionId.localeCompare(b.sessionId);

  return {
    group: (appId, guid) => get<GroupView>(tables.groups, { pk: appKey(appId, guid) }),
    async members(appId, guid, options = {}) {
      const items = (
        await queryAll(doc, {
          TableName: tables.memberships,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": appKey(appId, guid) },
        })
      ).map((i) => view<MembershipView>(i) as MembershipView);
      return currentOnly(items, options.includeFormer);
    },
    async groupsOf(appId, uid, options = {}) {
      const items = await viaIndex<MembershipView>(
        tables.memberships,
        ["pk", "uid"],
        [
          {
            IndexName: "byUser",
            KeyConditionExpression: "userKey = :u",
            ExpressionAttributeValues: { ":u": appKey(appId, uid) },
          },
        ],
      );
      return currentOnly(items, options.includeFormer);
    },
    presence: (appId, uid) => get<PresenceView>(tables.presence, { pk: appKey(appId, uid) }),
    async online(appId) {
      const users = await viaIndex<PresenceView>(tables.presence, ["pk"], shardQueries(appId, "online"));
      // The index is eventually consistent: keep only who the item itself says is online.
      return users.filter((p) => p.status === "online").sort((a, b) => a.uid.localeCompare(b.uid));
    },
    session: (appId, sessionId) => get<SessionView>(tables.sessions, { pk: appKey(appId, sessionId) }),
    async sessionsBetween(appId, fromMs, toMs) {
      const sessions = await viaIndex<SessionView>(
        tables.sessions,
        ["pk"],
        // No session starts in the future: the range stops a day past now.
        monthBuckets(appId, fromMs, Math.min(toMs, Date.now() + 86_400_000)).map((bucket) => ({
          IndexName: "byTime",
          KeyConditionExpression: "timeBucket = :b AND sessionTime BETWEEN :from AND :to",
          ExpressionAttributeValues: { ":b": bucket, ":from": fromMs, ":to": toMs },
        })),
      );
      return sessions.sort(bySessionTime);
    },
    async sessionsOf(appId, uid) {
      const query = (IndexName: string, attribute: string) => ({
        IndexName,
        KeyConditionExpression: `${attribute} = :u`,
        ExpressionAttributeValues: { ":u": appKey(appId, uid) },
      });
      const sessions = await viaIndex<SessionView>(
        tables.sessions,
        ["pk"],
        [query("byInitiator", "initiatorKey"), query("byReceiver", "receiverKey")],
      );
      const unique = new Map(sessions.map((s) => [s.sessionId, s]));
      return [...unique.values()].sort(bySessionTime);
    },
    async recordings(appId) {
      const sessions = await viaIndex<SessionView>(
        tables.sessions,
        ["pk"],
        shardQueries(appId, "withRecording"),
      );
      return sessions.sort(bySessionTime);
    },
  };
}
