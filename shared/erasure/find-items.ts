import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { appKey, keyOfItem, PROJECTION_TABLES, type TableNames } from "../platform/tables";
import type { ErasurePlan, ForgetDependencies } from "./plan";
import { type Redaction, redactValue } from "./redact";

/*
 * The erasure's step "find", in the tables: the user's presence and memberships, the sessions
 * and groups that name them, and the recordings of those sessions.
 */

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

/**
 * An item's key in its table.
 *
 * @example keyOf("memberships", item) // { pk: "app1#g1", uid: "u2" }
 */
export function keyOf(table: keyof TableNames, item: Record<string, unknown>): Record<string, string> {
  const key = keyOfItem(PROJECTION_TABLES[table], item);
  return Object.fromEntries(Object.entries(key).map(([name, value]) => [name, String(value)]));
}

/**
 * An item of a projection table, read strongly consistent.
 *
 * @example await getItem(deps, "presence", { pk: "app1#u7" }) // { pk, uid, name, … }
 */
export async function getItem(
  deps: ForgetDependencies,
  table: keyof TableNames,
  key: Record<string, string>,
) {
  const out = await deps.doc.send(
    new GetCommand({ TableName: deps.tables[table], Key: key, ConsistentRead: true }),
  );
  return out.Item;
}

/**
 * Whether a table item names the user (their uid as an identifier, or one of their names).
 *
 * @example itemNames({ pk: "app1#g1", owner: "u7" }, redaction) // true
 */
export function itemNames(item: Record<string, unknown>, redaction: Redaction): boolean {
  return JSON.stringify(redactValue(item, redaction)) !== JSON.stringify(item);
}

/**
 * The items of the user's tables: their presence and memberships, the sessions and groups that name them.
 *
 * @example await planItems(deps, "app1", redaction, { groups, sessions }) // { items: [{ table: "presence", key }], recordings: [] }
 */
export async function planItems(
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
