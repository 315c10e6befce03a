/**
 * The one layer where DuckDB and Athena (Trino) differ, for the query files in `sql/`: those are
 * written in Athena's dialect, with named parameters (`:app`), and run unchanged on both.
 * - Parameters: `:name` becomes a positional `?`, bound by each engine's own mechanism (DuckDB's
 *   prepared statements; Athena's `ExecutionParameters`, which take SQL literals).
 * - Functions: DuckDB gets macros named after the Athena JSON functions the queries use.
 * - The archive tables `archive_events` and `archive_edges` (`ARCHIVE_TABLES`): in Athena Glue
 *   tables with those columns; in DuckDB views over the archive files (`duckDbArchiveViews`).
 */

import { S3_PREFIX } from "../platform/constants";

export type SqlValue = string | number;

/** A query ready for an engine: its text with `?` placeholders and the values, in order. */
export interface BoundQuery {
  text: string;
  values: SqlValue[];
}

/**
 * Replaces each `:name` outside string literals (DuckDB's `$$…$$` too), quoted identifiers and
 * comments by `?`, and lists the values in placeholder order (a name used twice is bound twice).
 *
 * @example bindNamed("SELECT * FROM t WHERE a = :app AND b = ':x'", { app: "a1" })
 *   // { text: "SELECT * FROM t WHERE a = ? AND b = ':x'", values: ["a1"] }
 * @throws Error naming a parameter the query uses but `params` lacks
 */
export function bindNamed(sql: string, params: Readonly<Record<string, SqlValue>>): BoundQuery {
  const values: SqlValue[] = [];
  let text = "";
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    const skipped =
      /^'(?:[^']|'')*'/.exec(rest) ??
      /^"(?:[^"]|"")*"/.exec(rest) ??
      /^--[^\n]*/.exec(rest) ??
      /^\/\*[\s\S]*?\*\//.exec(rest) ??
      /^\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$/.exec(rest) ??
      /^::/.exec(rest);
    if (skipped) {
      text += skipped[0];
      i += skipped[0].length;
      continue;
    }
    const named = /^:([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
    if (named) {
      const name = named[1] as string;
      if (!(name in params)) throw new Error(`query parameter :${name} has no value`);
      values.push(params[name] as SqlValue);
      text += "?";
      i += named[0].length;
      continue;
    }
    text += sql[i];
    i++;
  }
  return { text, values };
}

/**
 * A value as an Athena execution parameter (a SQL literal): strings quoted with `'` doubled,
 * numbers as they are.
 *
 * @example athenaLiteral("it's") // "'it''s'"
 */
export function athenaLiteral(value: SqlValue): string {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
    return String(value);
  }
  return `'${value.replaceAll("'", "''")}'`;
}

/** DuckDB macros for the Athena functions the queries use (DuckDB names them differently). */
export const DUCKDB_MACROS: readonly string[] = [
  "CREATE OR REPLACE MACRO json_extract_scalar(j, p) AS json_extract_string(j, p)",
  // Athena's json_size: the number of members of the object (or array) at the path.
  `CREATE OR REPLACE MACRO json_size(j, p) AS CASE json_type(j, p)
     WHEN 'OBJECT' THEN CAST(len(json_keys(j, p)) AS BIGINT)
     WHEN 'ARRAY' THEN CAST(json_array_length(j, p) AS BIGINT)
     ELSE CAST(0 AS BIGINT) END`,
  // Athena's sequence(start, stop): the integers from start to stop, as a list to UNNEST.
  "CREATE OR REPLACE MACRO sequence(a, b) AS generate_series(a, b)",
];

/** The columns of the archive view, as both engines expose them. */
export const ARCHIVE_COLUMNS = {
  app: "the app id, as the envelope's appId was sent (null when it had none)",
  date: "the partition day, YYYY-MM-DD (ARCHIVE_TABLES: the receipt day, or the day that needs the line)",
  event_id: "SHA-256 of the raw body",
  received_at: "edge receipt time, ms",
  event_time: "event time, ms (archive lines written before #20: null)",
  rank: "lifecycle rank: 0 opening, 1 other, 2 terminal",
  trigger: "the envelope's trigger",
  natural_key: "the dedupe key (null for an invalid body or an old line)",
  body: "the raw body, as the platform sent it",
} as const;

/**
 * The two archive tables, with the same columns (`ARCHIVE_COLUMNS`) and line format:
 * - `archive_events` (`raw/`): every archived line, under its receipt day (`date`). The view for
 *   ad-hoc SQL: an event is there once per receipt (a platform retry, received again, twice).
 * - `archive_edges` (`edge/`): copies of the lines that the activity recompute of another day
 *   needs, under that day (`date`): late and early events under their event day, receipt-timed
 *   lines received just before midnight under the next day. Every line there is also in
 *   `archive_events`: count from one table, or deduplicate by `event_id`.
 */
export const ARCHIVE_TABLES = {
  archive_events: {
    prefix: S3_PREFIX.raw,
    description: "The raw archive: one row per archived line, under its receipt day",
    date: "the receipt day, YYYY-MM-DD (the partition)",
  },
  archive_edges: {
    prefix: S3_PREFIX.edge,
    description: "Copies of archive lines another day's activity recompute needs, under that day",
    date: "the day whose recompute needs the line, YYYY-MM-DD (the partition)",
  },
} as const;
export type ArchiveTable = keyof typeof ARCHIVE_TABLES;

/**
 * The day sets a final pass writes (`user-sets/`) as tables, for SQL on both engines (`webhook
 * sql`: WAU, MAU, retention, conversations started, churn by SQL; `sql/users-over-time.sql`): JSON
 * lines under `prefix`, `date` the closed day (the partition, from the path). Columns are lower
 * case, as Glue has them; `fields` names the JSON field of a column named otherwise (`group` and
 * `at` are reserved words). `imported_users` is the import records beside them (#43,
 * `contracts/import-records.ts`): `date` the import day; a query needs every day of them, whatever
 * days of sets it reads (`everyDay`: an imported user exists from their `createdAt`).
 */
export const DAY_SET_TABLES = {
  day_users: {
    prefix: `${S3_PREFIX.users}date=`,
    description: "Each closed day's active users, per app (users over time)",
    columns: { app: "VARCHAR", uid: "VARCHAR", createdat: "BIGINT" },
    fields: { createdat: "createdAt" },
  },
  first_seen_users: {
    prefix: `${S3_PREFIX.users}first-seen/date=`,
    description: "The users first seen on each closed day, per app",
    columns: { app: "VARCHAR", uid: "VARCHAR", createdat: "BIGINT" },
    fields: { createdat: "createdAt" },
  },
  conversations_started: {
    prefix: `${S3_PREFIX.users}conversations/first-seen/date=`,
    description: "The conversations whose first message was on each closed day, per app",
    columns: { app: "VARCHAR", conversation: "VARCHAR" },
    fields: {},
  },
  imported_users: {
    prefix: `${S3_PREFIX.imports}users/date=`,
    description: "The users an import brought into each app, as the platform confirmed them, by import day",
    columns: {
      app: "VARCHAR",
      uid: "VARCHAR",
      createdat: "BIGINT",
      importedat: "BIGINT",
      existed: "BOOLEAN",
    },
    fields: { createdat: "createdAt", importedat: "importedAt" },
    everyDay: true,
  },
  membership_changes: {
    prefix: `${S3_PREFIX.users}members/date=`,
    description: "Each member's last membership change of each closed day, and the groups deleted, per app",
    columns: {
      app: "VARCHAR",
      group_id: "VARCHAR",
      uid: "VARCHAR",
      member: "BOOLEAN",
      removed: "BOOLEAN",
      changed_at: "VARCHAR",
      deleted: "VARCHAR",
    },
    fields: { group_id: "group", changed_at: "at" },
  },
} as const;
export type DaySetTable = keyof typeof DAY_SET_TABLES;

/** Whether a statement names a day-set table (its objects are then copied for DuckDB). */
export const namesDaySets = (sql: string): boolean =>
  Object.keys(DAY_SET_TABLES).some((t) => new RegExp(`\\b${t}\\b`, "i").test(sql));

/**
 * DuckDB's day-set views over copied set files (`…/users/…/date=<day>/….ndjson.gz`), with the
 * columns of `DAY_SET_TABLES` and `date`; with `app`, that app's lines only. No file: empty.
 */
export function duckDbDaySetViews(
  files: Readonly<Partial<Record<DaySetTable, readonly string[]>>>,
  app?: string,
): string[] {
  return (Object.entries(DAY_SET_TABLES) as Array<[DaySetTable, (typeof DAY_SET_TABLES)[DaySetTable]]>).map(
    ([name, table]) => {
      const columns = Object.entries(table.columns);
      const list = files[name] ?? [];
      const where = app === undefined ? "" : ` WHERE app = '${app.replaceAll("'", "''")}'`;
      if (!list.length)
        return `CREATE OR REPLACE TEMP VIEW ${name} AS SELECT * FROM (VALUES (${columns
          .map(([, type]) => `NULL::${type}`)
          .join(", ")}, NULL::VARCHAR)) AS t(${columns.map(([c]) => c).join(", ")}, date) WHERE false`;
      const field = (c: string) => (table.fields as Record<string, string>)[c] ?? c;
      const json = columns.map(([c, type]) => `"${field(c)}": '${type}'`);
      const select = columns.map(([c]) => `"${field(c)}" AS ${c}`);
      return `CREATE OR REPLACE TEMP VIEW ${name} AS SELECT ${select.join(", ")},
        regexp_extract(filename, 'date=([0-9]{4}-[0-9]{2}-[0-9]{2})/', 1) AS date
      FROM read_json([${quoted(list)}], format = 'newline_delimited', filename = true, columns = {${json.join(", ")}})${where}`;
    },
  );
}

/** The view's columns in order, as a SELECT list of their own names. */
const VIEW_COLUMNS = "app, date, event_id, received_at, event_time, rank, trigger, natural_key, body";

const quoted = (files: readonly string[]) => files.map((f) => `'${f.replaceAll("'", "''")}'`).join(", ");

/** The archive files of a view: NDJSON objects (gzip or plain), and Parquet of compacted days. */
export interface ArchiveFiles {
  ndjson: readonly string[];
  parquet?: readonly string[];
}

/**
 * Where the copied files of a view came from: with it, the view has Athena's `"$path"` column
 * too (`s3://<bucket>/<key>`: the object a line was read from), as the erasure's search needs.
 */
export interface ObjectPaths {
  /** The directory the objects were copied into, keys as paths. */
  dir: string;
  bucket: string;
}

/** A DuckDB view `name` over archive files, or an empty one with the same columns when there is none. */
function duckDbView(name: ArchiveTable, files: ArchiveFiles, app?: string, paths?: ObjectPaths): string {
  const parts: string[] = [];
  const path = paths
    ? `, ${quoted([`s3://${paths.bucket}/`])} || substr(filename, ${paths.dir.length + 2}) AS "$path"`
    : "";
  const columns = paths ? `${VIEW_COLUMNS}, "$path"` : VIEW_COLUMNS;
  // The day comes from the path as the text it is (no Hive decoding, no type guessing); the app
  // from the line, so an app id of any characters compares as it was sent.
  if (files.ndjson.length)
    parts.push(`SELECT appId AS app, regexp_extract(filename, 'date=([0-9]{4}-[0-9]{2}-[0-9]{2})/', 1) AS date,
      eventId AS event_id, receivedAt AS received_at, eventTime AS event_time, rank, trigger,
      naturalKey AS natural_key, body${path}
    FROM read_json([${quoted(files.ndjson)}], format = 'newline_delimited', filename = true,
      columns = {eventId: 'VARCHAR', receivedAt: 'BIGINT', trigger: 'VARCHAR', appId: 'VARCHAR', body: 'VARCHAR',
        eventTime: 'BIGINT', naturalKey: 'VARCHAR', rank: 'INTEGER'})`);
  // A compacted day (`compaction.ts`): the same columns, written by `compactionSelect`.
  if (files.parquet?.length && !paths)
    parts.push(`SELECT ${VIEW_COLUMNS} FROM read_parquet([${quoted(files.parquet)}])`);
  if (parts.length === 0)
    return `CREATE OR REPLACE TEMP VIEW ${name} AS SELECT * FROM (VALUES
      (NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR, NULL::BIGINT, NULL::BIGINT, NULL::INTEGER,
       NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR${paths ? ", NULL::VARCHAR" : ""}))
      AS t(${columns}) WHERE false`;
  const where = app === undefined ? "" : ` WHERE app = '${app.replaceAll("'", "''")}'`;
  return `CREATE OR REPLACE TEMP VIEW ${name} AS SELECT ${columns} FROM (${parts.join("\n    UNION ALL ")})${where}`;
}

/**
 * The statement that rewrites a day's NDJSON (the view `archive_events` over it) as its Parquet:
 * every column of the view, sorted by app, event time and receipt, so that row groups hold
 * ranges of apps (`compaction.ts`).
 */
export function compactionSelect(day: string): string {
  return `SELECT ${VIEW_COLUMNS} FROM archive_events WHERE "date" = '${day.replaceAll("'", "''")}'
    ORDER BY app, event_time, received_at, event_id`;
}

/**
 * DuckDB's `archive_events` and `archive_edges` over archive files laid out as in the bucket
 * (`…/raw/date=<day>/hour=<hh>/<batch>.ndjson[.gz]`, `…/edge/date=<day>/…`; gzip read by its
 * suffix; compacted days' Parquet beside them), with the columns Athena's Glue tables have; with
 * `app`, that app's lines only. No file: an empty view with the same columns.
 *
 * @example duckDbArchiveViews({ archive_events: { ndjson: ["/tmp/x/raw/date=2026-01-02/hour=07/1.ndjson.gz"] }, archive_edges: { ndjson: [] } })
 */
export function duckDbArchiveViews(
  files: Readonly<Record<ArchiveTable, ArchiveFiles>>,
  app?: string,
  paths?: ObjectPaths,
): string[] {
  return (Object.keys(ARCHIVE_TABLES) as ArchiveTable[]).map((name) =>
    duckDbView(name, files[name], app, paths),
  );
}

/** Glue's table over the Parquet of compacted days (`compact/date=<day>/<compaction>/`, the Athena compactor's layout). */
export const ATHENA_COMPACT_TABLE = "archive_compact";

/**
 * A receipt day of `archive_events` as Athena reads it: its NDJSON objects, or, once compacted,
 * its compaction's Parquet (`folder`: the `<compaction>` of its location) and the NDJSON objects
 * archived after the compaction (`late`, full `s3://` paths), as `readPlan` says.
 */
export interface AthenaDaySource {
  day: string;
  compacted?: { folder: string; late: readonly string[] };
}

/**
 * The query Athena reads `archive_events` through when some of a query's days are compacted:
 * the NDJSON table (`"<database>"."archive_events"`, qualified so the CTE does not read itself)
 * for the open days and the late objects of the compacted ones (`"$path"`: Athena reads only those
 * files), and the Parquet table for each compacted day (an equality on both partition keys: one
 * folder). The same columns as the NDJSON table (`hour` null for the Parquet rows).
 *
 * @example athenaArchiveEvents("db", [{ day: "2026-01-02", compacted: { folder: "ab12", late: [] } }, { day: "2026-01-03" }])
 */
export function athenaArchiveEvents(database: string, days: readonly AthenaDaySource[]): string {
  const columns = "app, event_id, received_at, event_time, rank, trigger, natural_key, body";
  const db = `"${database.replaceAll('"', '""')}"`;
  const open = days.filter((d) => !d.compacted).map((d) => athenaLiteral(d.day));
  const late = days.flatMap((d) =>
    d.compacted?.late.length
      ? [
          `("date" = ${athenaLiteral(d.day)} AND "$path" IN (${d.compacted.late.map(athenaLiteral).join(", ")}))`,
        ]
      : [],
  );
  const ndjsonWhere = [...(open.length ? [`"date" IN (${open.join(", ")})`] : []), ...late];
  const parts = [
    `SELECT ${columns}, "date", "hour" FROM ${db}."archive_events" WHERE ${ndjsonWhere.length ? ndjsonWhere.join(" OR ") : "false"}`,
    ...days.flatMap((d) =>
      d.compacted
        ? [
            `SELECT ${columns}, "date", CAST(NULL AS varchar) AS "hour" FROM ${db}."${ATHENA_COMPACT_TABLE}" WHERE "day" = ${athenaLiteral(d.day)} AND "compaction" = ${athenaLiteral(d.compacted.folder)}`,
          ]
        : [],
    ),
  ];
  return parts.join("\n  UNION ALL\n  ");
}

/**
 * `sql` with `archive_events` read through `source` (`athenaArchiveEvents`): a WITH entry put
 * first, in the statement's own WITH when it has one.
 *
 * @example withArchiveEvents("SELECT count(*) FROM archive_events", "SELECT …") // "WITH archive_events AS (SELECT …)\nSELECT count(*) FROM archive_events"
 */
export function withArchiveEvents(sql: string, source: string): string {
  const entry = `archive_events AS (\n  ${source}\n)`;
  // Leading comments and blank lines aside, a statement that opens with WITH gets the entry first.
  const lead = /^(\s*(--[^\n]*\n|\/\*[\s\S]*?\*\/))*\s*/.exec(sql)?.[0] ?? "";
  const rest = sql.slice(lead.length);
  if (/^with\s/i.test(rest)) return `${lead}WITH ${entry},\n${rest.slice(4).trimStart()}`;
  return `${lead}WITH ${entry}\n${rest}`;
}
