import { readdirSync, readFileSync } from "node:fs";

/** The query files beside this module (`sql/<name>.sql`, or `sql/<name>/`: `FRAGMENTED`); the rollup function's bundle carries a copy. */
export const QUERY_NAMES = ["day-activity", "users-over-time", "groups-over-time", "weekly-cohorts"] as const;
export type QueryName = (typeof QUERY_NAMES)[number];

/**
 * The queries kept as a folder of fragments (`sql/<name>/`) rather than one file: a single
 * statement (a chain of CTEs whose results are joined) whose steps are each a file. It stays one
 * statement, not a query per step: Athena inlines a CTE at each use and bills the bytes each query
 * scans, so a second query (or a second reader of the archive's lines) would scan the day again.
 */
const FRAGMENTED: ReadonlySet<QueryName> = new Set(["day-activity"]);

/** A fragment's header: its opening paragraph of `--` lines and the blank line after it. */
const FRAGMENT_HEADER = /^(?:--[^\n]*\n)+\n/;

const cache = new Map<QueryName, string>();

/**
 * The text of a query file, read once. A query kept as fragments (`FRAGMENTED`) is its fragments'
 * bodies joined in the order of their names (`1-lines.sql`, `2-facts.sql`, …), each without its
 * header, which is for a reader of the file: the text the engines run is the statement alone.
 *
 * @example readQuery("day-activity") // "-- The activity of every app on one UTC day…"
 */
export function readQuery(name: QueryName): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = FRAGMENTED.has(name) ? readFragments(name) : readSql(`${name}.sql`);
    cache.set(name, text);
  }
  return text;
}

const readSql = (path: string) => readFileSync(new URL(`./sql/${path}`, import.meta.url), "utf8");

/** A fragmented query's text: its files' bodies, in the order of their names. */
function readFragments(name: QueryName): string {
  return readdirSync(new URL(`./sql/${name}/`, import.meta.url))
    .filter((file) => file.endsWith(".sql"))
    .sort()
    .map((file) => {
      const fragment = readSql(`${name}/${file}`);
      const header = FRAGMENT_HEADER.exec(fragment);
      if (!header)
        throw new Error(
          `sql/${name}/${file}: a fragment opens with a paragraph of -- lines, then a blank line`,
        );
      return fragment.slice(header[0].length);
    })
    .join("");
}
