import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { appKey, type TableNames } from "../../shared/platform/tables";
import type { GroupState } from "../../shared/projections/groups";
import type { MembershipState } from "../../shared/projections/memberships";
import type { PresenceState } from "../../shared/projections/presence";
import type { SessionState } from "../../shared/projections/sessions";

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
  | "pk"
  | "userKey"
  | "onlineApp"
  | "initiatorKey"
  | "receiverKey"
  | "recordingApp";
export type GroupView = Omit<GroupState, Bookkeeping>;
export type MembershipView = Omit<MembershipState, Bookkeeping>;
export type PresenceView = Omit<PresenceState, Bookkeeping>;
export type SessionView = Omit<SessionState, Bookkeeping>;

function view<T>(item: Record<string, unknown> | undefined): T | undefined {
  if (!item) return undefined;
  const {
    rev: _rev,
    versions: _versions,
    seen: _seen,
    pk: _pk,
    userKey: _userKey,
    onlineApp: _onlineApp,
    initiatorKey: _initiatorKey,
    receiverKey: _receiverKey,
    recordingApp: _recordingApp,
    ...rest
  } = item;
  return rest as T;
}

/** Runs a Query to the end, following LastEvaluatedKey. */
async function queryAll(
  doc: DynamoDBDocumentClient,
  input: QueryCommandInput,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(new QueryCommand({ ...input, ExclusiveStartKey }));
    items.push(...(out.Items ?? []));
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

export function analyticsQueries(doc: DynamoDBDocumentClient, tables: TableNames): AnalyticsQueries {
  const get = async <T>(TableName: string, Key: Record<string, string>) =>
    view<T>((await doc.send(new GetCommand({ TableName, Key }))).Item);
  const many = async <T>(input: QueryCommandInput) =>
    (await queryAll(doc, input)).map((i) => view<T>(i) as T);
  const currentOnly = (items: MembershipView[], includeFormer?: boolean) =>
    includeFormer ? items : items.filter((m) => m.status === "member");
  const bySessionTime = (a: SessionView, b: SessionView) =>
    a.sessionTime - b.sessionTime || a.sessionId.localeCompare(b.sessionId);

  return {
    group: (appId, guid) => get<GroupView>(tables.groups, { pk: appKey(appId, guid) }),
    async members(appId, guid, options = {}) {
      const items = await many<MembershipView>({
        TableName: tables.memberships,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": appKey(appId, guid) },
      });
      return currentOnly(items, options.includeFormer);
    },
    async groupsOf(appId, uid, options = {}) {
      const items = await many<MembershipView>({
        TableName: tables.memberships,
        IndexName: "byUser",
        KeyConditionExpression: "userKey = :u",
        ExpressionAttributeValues: { ":u": appKey(appId, uid) },
      });
      return currentOnly(items, options.includeFormer);
    },
    presence: (appId, uid) => get<PresenceView>(tables.presence, { pk: appKey(appId, uid) }),
    online: (appId) =>
      many<PresenceView>({
        TableName: tables.presence,
        IndexName: "online",
        KeyConditionExpression: "onlineApp = :a",
        ExpressionAttributeValues: { ":a": appId },
      }),
    session: (appId, sessionId) => get<SessionView>(tables.sessions, { pk: appKey(appId, sessionId) }),
    sessionsBetween: (appId, fromMs, toMs) =>
      many<SessionView>({
        TableName: tables.sessions,
        IndexName: "byTime",
        KeyConditionExpression: "appId = :a AND sessionTime BETWEEN :from AND :to",
        ExpressionAttributeValues: { ":a": appId, ":from": fromMs, ":to": toMs },
      }),
    async sessionsOf(appId, uid) {
      const query = (IndexName: string, attribute: string) =>
        many<SessionView>({
          TableName: tables.sessions,
          IndexName,
          KeyConditionExpression: `${attribute} = :u`,
          ExpressionAttributeValues: { ":u": appKey(appId, uid) },
        });
      const [initiated, received] = await Promise.all([
        query("byInitiator", "initiatorKey"),
        query("byReceiver", "receiverKey"),
      ]);
      const unique = new Map([...initiated, ...received].map((s) => [s.sessionId, s]));
      return [...unique.values()].sort(bySessionTime);
    },
    recordings: (appId) =>
      many<SessionView>({
        TableName: tables.sessions,
        IndexName: "withRecording",
        KeyConditionExpression: "recordingApp = :a",
        ExpressionAttributeValues: { ":a": appId },
      }),
  };
}
