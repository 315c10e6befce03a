import { createHash } from "node:crypto";

/**
 * The projection tables' names and the keys their items are stored under: what the projections
 * compute for each fact (the backend declares the tables themselves, attributes and indexes, in
 * shared/platform/tables.ts, keyed by these names).
 */

/** The four projection tables, in declaration order. */
export const PROJECTION_TABLE_NAMES = ["groups", "memberships", "presence", "sessions"] as const;

/** A projection table's name. */
export type ProjectionTableName = (typeof PROJECTION_TABLE_NAMES)[number];

/** Shards of the `online` index per app. */
export const ONLINE_SHARDS = 16;
/** Shards of the `withRecording` index per app. */
export const RECORDING_SHARDS = 4;

/** `<appId>#<id>`: every key is scoped by app. */
export function appKey(appId: string, id: string): string {
  return `${appId}#${id}`;
}

/**
 * `<appId>#<n>`: the shard of `id` among `shards`, by its hash (stable across runs and machines).
 *
 * @example shardKey("app1", "u1", 16) // "app1#11"
 */
export function shardKey(appId: string, id: string, shards: number): string {
  return appKey(appId, String(createHash("sha256").update(id).digest().readUInt32BE(0) % shards));
}

/** `<appId>#<yyyy-mm>`: the UTC month bucket of a time (ms). */
export function monthBucket(appId: string, ms: number): string {
  return appKey(appId, new Date(ms).toISOString().slice(0, 7));
}

/**
 * The key attributes of each table's items, as DynamoDB holds them (the backend's
 * shared/platform/tables.ts declares its tables with these): the partition key `pk` of every
 * table, and the memberships' sort key `uid` (a projection's `ItemKey.sk`).
 */
export const TABLE_KEYS = {
  groups: { partitionKey: "pk" },
  memberships: { partitionKey: "pk", sortKey: "uid" },
  presence: { partitionKey: "pk" },
  sessions: { partitionKey: "pk" },
} as const satisfies Record<ProjectionTableName, { partitionKey: string; sortKey?: string }>;

/**
 * The id a copy holds an item under (`streamCopy().items`): `<pk>|<sk>`, `sk` being the sort
 * key's value (a membership's `uid`), empty for a table without one. From a projection's key, or
 * from a table's item (a DynamoDB item of the backend's tables) and its table.
 *
 * @example tableItemId({ pk: "app1#g1", sk: "u1" }) // "app1#g1|u1"
 * @example tableItemId("memberships", { pk: "app1#g1", uid: "u1", role: "participant" }) // "app1#g1|u1"
 */
export function tableItemId(key: { pk: string; sk?: string }): string;
export function tableItemId(table: ProjectionTableName, item: Record<string, unknown>): string;
export function tableItemId(
  keyOrTable: { pk: string; sk?: string } | ProjectionTableName,
  item?: Record<string, unknown>,
): string {
  if (typeof keyOrTable !== "string") return `${keyOrTable.pk}|${keyOrTable.sk ?? ""}`;
  const keys: { partitionKey: string; sortKey?: string } = TABLE_KEYS[keyOrTable];
  const sort = keys.sortKey === undefined ? undefined : item?.[keys.sortKey];
  return `${String(item?.[keys.partitionKey])}|${sort === undefined ? "" : String(sort)}`;
}
