import type { SqlValue } from "../dialect";

/** First and last day, YYYY-MM-DD, inclusive (all when absent). */
export interface DayRange {
  from?: string;
  to?: string;
}

/**
 * Which part of the archive a query may read: receipt days of `archive_events` (all when absent)
 * and, when `edges` is given, those days of `archive_edges` (none otherwise). Every app's lines
 * of a day are together: a query narrows to an app by its `app` column.
 */
export interface ArchiveScope extends DayRange {
  edges?: DayRange;
  /** DuckDB: the views hold this app's lines only (`sql --app`). Athena reads what the WHERE says. */
  app?: string;
  /** The closed days of the day-set tables (`DAY_SET_TABLES`) DuckDB reads; none when absent. */
  sets?: DayRange;
}

/** A query's answer: the columns in order, each row by column name, and what it cost. */
export interface SqlResult {
  columns: string[];
  rows: Array<Record<string, SqlValue | null>>;
  /** Bytes of the archive the engine read (Athena bills these). */
  bytesScanned: number;
}

/**
 * SQL over the archive, as the tables `archive_events` and `archive_edges` (`ARCHIVE_TABLES`). Adapters:
 * `./duckdb-sql-engine` (embedded, local) and `./athena-sql-engine` (deployed).
 * Both take Athena's dialect with named parameters (`dialect.ts`).
 */
export interface SqlEngine {
  readonly name: "duckdb" | "athena";
  /**
   * Runs one statement with its `:named` parameters bound. `scope` narrows what the engine reads
   * (DuckDB fetches only those objects; Athena prunes partitions by the WHERE clause).
   * @throws SqlQueryError with the engine's one-line message when the query fails or is cancelled
   */
  query(sql: string, params?: Readonly<Record<string, SqlValue>>, scope?: ArchiveScope): Promise<SqlResult>;
}
