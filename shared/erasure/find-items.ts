import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import pLimit from "p-limit";
import { batchGetAll, queryAll } from "../adapters/dynamo-reads";
import { TOP_LIMIT } from "../analytics/figures";
import { RUNNER_UPS_KEPT } from "../platform/constants";
import { appKey, keyOfItem, PROJECTION_TABLES, type TableNames } from "../platform/tables";
import { canonicalJson } from "../projections/canonical-json";
import type { ForgetDependencies, PlannedItem } from "./plan";
import { itemErasure, mentionsUid, type Redaction } from "./redact";

/*
 * The erasure's step "find", in the tables and the figures: the items that hold the user, found
 * from the tables themselves (their own items, their memberships' groups, the fields that name a
 * person) and from the groups and sessions the archive's lines name; and the days whose top lists
 * name them.
 */

type Table = keyof TableNames;
type Item = Record<string, unknown>;

/** A part's field as its runner-ups keep it: each of the `RUNNER_UPS_KEPT` in a list, and the one runner-up of items written before #49. */
function runnerUpPaths(part: string, field: string): string[] {
  return [
    `fallback.${part}.f.${field}`,
    ...Array.from({ length: RUNNER_UPS_KEPT }, (_, i) => `fallback.${part}[${i}].f.${field}`),
  ];
}

/**
 * The fields of the groups and memberships items that hold a uid (`projections/groups.ts`,
 * `memberships.ts`), the runner-ups' copies (`fallback.<part>[i].f`, and `fallback.<part>.f` on
 * items written before #49) included: where a filtered Scan looks for the user in items that no
 * index and no archive line leads to (a group they own or renamed with no membership of theirs
 * left, another member they added or kicked). A unit test (`erasure-sweep`) keeps it complete:
 * every field a projection writes a uid into.
 */
export const PERSON_FIELDS = {
  groups: [
    "owner",
    "updatedBy",
    "previousOwner",
    "deletedBy",
    ...runnerUpPaths("info", "owner"),
    ...runnerUpPaths("info", "updatedBy"),
    ...runnerUpPaths("transfer", "previousOwner"),
    ...runnerUpPaths("deleted", "deletedBy"),
  ],
  memberships: ["uid", "by", ...runnerUpPaths("status", "by")],
} as const satisfies Partial<Record<Table, readonly string[]>>;

/** Segments of a Scan read at once: a large table is read in parallel. */
const SCAN_SEGMENTS = 4;

/**
 * The app's items of a table whose `PERSON_FIELDS` hold the uid: a parallel Scan with a filter.
 * DynamoDB bills a Scan for every item it reads, the filter only spares the transfer: one read
 * unit per 8 KB of the whole table (eventually consistent), once per erasure; nothing per event.
 *
 * @example await sweep(deps, "groups", "app1", "u7") // [{ pk: "app1#g1", owner: "u7", … }]
 */
export async function sweep(
  deps: ForgetDependencies,
  table: keyof typeof PERSON_FIELDS,
  appId: string,
  uid: string,
): Promise<Item[]> {
  const names: Record<string, string> = { "#app": "appId" };
  const tests = PERSON_FIELDS[table].map((path, i) => {
    const parts = path.split(".").map((segment, j) => {
      // A list element (`info[2]`): the name, then its index as DynamoDB writes it.
      const [, part = segment, index = ""] = /^(.*?)(\[\d+\])?$/.exec(segment) ?? [];
      names[`#p${i}_${j}`] = part;
      return `#p${i}_${j}${index}`;
    });
    return `${parts.join(".")} = :uid`;
  });
  const segment = async (Segment: number) => {
    const items: Item[] = [];
    let ExclusiveStartKey: Item | undefined;
    do {
      const out = await deps.doc.send(
        new ScanCommand({
          TableName: deps.tables[table],
          FilterExpression: `#app = :app AND (${tests.join(" OR ")})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ":app": appId, ":uid": uid },
          Segment,
          TotalSegments: SCAN_SEGMENTS,
          ExclusiveStartKey,
        }),
      );
      items.push(...(out.Items ?? []));
      ExclusiveStartKey = out.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return items;
  };
  return (await Promise.all(Array.from({ length: SCAN_SEGMENTS }, (_, s) => segment(s)))).flat();
}

/**
 * An item's key in its table, as strings.
 *
 * @example keyOf("memberships", item) // { pk: "app1#g1", uid: "u2" }
 */
export function keyOf(table: Table, item: Item): Record<string, string> {
  const key = keyOfItem(PROJECTION_TABLES[table], item);
  return Object.fromEntries(Object.entries(key).map(([name, value]) => [name, String(value)]));
}

/** Every item of a table's partition (a group's members). */
const partition = (deps: ForgetDependencies, table: Table, pk: string) =>
  queryAll(deps.doc, {
    TableName: deps.tables[table],
    KeyConditionExpression: "pk = :pk",
    ExpressionAttributeValues: { ":pk": pk },
  });

/** The keys an index holds for a value (the indexes project keys only). */
const indexed = (deps: ForgetDependencies, table: Table, index: string, attribute: string, value: string) =>
  queryAll(deps.doc, {
    TableName: deps.tables[table],
    IndexName: index,
    KeyConditionExpression: "#k = :v",
    ExpressionAttributeNames: { "#k": attribute },
    ExpressionAttributeValues: { ":v": value },
  });

/** What the tables lead to besides the archive's lines. */
export interface ItemsFound {
  items: PlannedItem[];
  /** Recording objects of sessions that name the user. */
  recordings: string[];
  /** The groups and sessions found (their lines' and the tables'): what a re-run looks at again. */
  groups: string[];
  sessions: string[];
}

/**
 * The items the erasure changes (`itemErasure`: the user's own deleted, those naming them
 * redacted), found from the tables on their own and from what the archive's lines name, so that
 * an expired archive hides nothing that the tables still hold:
 * - their presence (its key) and memberships (`byUser`), whose groups lead to the group's item and
 *   every member's (the user may have added, kicked or banned them: `by`);
 * - the sessions they initiated or received (`byInitiator`, `byReceiver`) and those the lines name;
 * - the groups the lines name, and their members;
 * - with `sweep`, a filtered Scan of groups and memberships (`PERSON_FIELDS`): a group they own or
 *   updated and others' memberships they changed, with no membership of theirs left.
 * Each item is read once (BatchGetItem) and listed once.
 *
 * @example await planItems(deps, "app1", redaction, { groups, sessions }, { sweep: true }) // { items: [{ table: "presence", key, action: "delete" }, …], … }
 */
export async function planItems(
  deps: ForgetDependencies,
  appId: string,
  redaction: Redaction,
  learnt: { groups: Iterable<string>; sessions: Iterable<string> },
  { sweep: swept = true }: { sweep?: boolean } = {},
): Promise<ItemsFound> {
  const { uid } = redaction;
  const userKey = appKey(appId, uid);
  const keys = new Map<string, { table: Table; key: Record<string, string> }>();
  const add = (table: Table, item: Item) => {
    const key = keyOf(table, item);
    keys.set(`${table}|${canonicalJson(key)}`, { table, key });
  };
  const groups = new Set(learnt.groups);
  const sessions = new Set(learnt.sessions);
  add("presence", { pk: userKey });
  for (const membership of await indexed(deps, "memberships", "byUser", "userKey", userKey)) {
    add("memberships", membership);
    if (typeof membership.guid === "string") groups.add(membership.guid);
  }
  if (swept)
    for (const table of ["groups", "memberships"] as const)
      for (const item of await sweep(deps, table, appId, uid)) add(table, item);
  for (const [index, attribute] of [
    ["byInitiator", "initiatorKey"],
    ["byReceiver", "receiverKey"],
  ] as const)
    for (const item of await indexed(deps, "sessions", index, attribute, userKey))
      sessions.add(String(item.pk).slice(appId.length + 1));
  for (const sessionId of sessions) add("sessions", { pk: appKey(appId, sessionId) });
  for (const guid of groups) {
    add("groups", { pk: appKey(appId, guid) });
    for (const member of await partition(deps, "memberships", appKey(appId, guid)))
      add("memberships", member);
  }
  const items: PlannedItem[] = [];
  const recordings: string[] = [];
  for (const table of ["presence", "memberships", "sessions", "groups"] as const) {
    const wanted = [...keys.values()].filter((k) => k.table === table).map((k) => k.key);
    const found = await batchGetAll(deps.doc, deps.tables[table], wanted, (item) =>
      canonicalJson(keyOf(table, item)),
    );
    for (const key of wanted) {
      const item = found.get(canonicalJson(key));
      const next = item && itemErasure(table, item, redaction);
      if (!item || next === undefined) continue;
      items.push({ table, key, action: next === null ? "delete" : "redact" });
      if (table === "sessions")
        for (const r of Object.values((item.recordings ?? {}) as Record<string, { key?: string }>))
          if (r.key) recordings.push(r.key);
    }
  }
  return { items, recordings, groups: [...groups].sort(), sessions: [...sessions].sort() };
}

/** Days of an app's figures read at once when looking for the user's top lists. */
const DAYS_AT_ONCE = 8;

/**
 * The days whose stored top lists (busiest users, busiest groups) name the user: every stored day
 * of the app (one Query), then its two top lists (two Queries of at most `TOP_LIMIT` items a day).
 * The activity table keeps them for as long as it keeps the day: a day whose archive has expired
 * holds the user only there.
 *
 * @example await topListDays(deps, "app1", "u7") // ["2025-06-01", "2026-03-02"]
 */
export async function topListDays(deps: ForgetDependencies, appId: string, uid: string): Promise<string[]> {
  const { store } = deps.rollup;
  const limit = pLimit(DAYS_AT_ONCE);
  const days = await store.days(appId, "0000-01-01", "9999-12-31");
  const named = await Promise.all(
    days.map(({ day }) =>
      limit(async () => {
        const users = await store.topUsers(appId, day, TOP_LIMIT);
        const groups = await store.topGroups(appId, day, TOP_LIMIT);
        return users.some((u) => mentionsUid(u.uid, uid)) || groups.some((g) => mentionsUid(g.groupId, uid))
          ? [day]
          : [];
      }),
    ),
  );
  return named.flat().sort();
}
