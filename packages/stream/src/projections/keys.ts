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
