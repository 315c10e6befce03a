import { readFileSync } from "node:fs";

/** The query files beside this module (`sql/<name>.sql`); the rollup function's bundle carries a copy. */
export const QUERY_NAMES = ["day-activity", "users-over-time", "groups-over-time", "weekly-cohorts"] as const;
export type QueryName = (typeof QUERY_NAMES)[number];

const cache = new Map<QueryName, string>();

/**
 * The text of a query file, read once.
 *
 * @example readQuery("day-activity") // "-- The activity of one app on one UTC day…"
 */
export function readQuery(name: QueryName): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`./sql/${name}.sql`, import.meta.url), "utf8");
    cache.set(name, text);
  }
  return text;
}
