import type { SqlValue } from "../analytics/dialect";

/** Which part of the raw archive a query may read: one app's receipt days (all when absent). */
export interface ArchiveScope {
  /** The app's key segment (`appSegment(appId)`). */
  app?: string;
  /** First and last receipt day, YYYY-MM-DD, inclusive. */
  from?: string;
  to?: string;
}

/** A query's answer: the columns in order, each row by column name, and what it cost. */
export interface SqlResult {
  columns: string[];
  rows: Array<Record<string, SqlValue | null>>;
  /** Bytes of the archive the engine read (Athena bills these). */
  bytesScanned: number;
}

/**
 * SQL over the raw archive, as the view `archive_events` (`ARCHIVE_COLUMNS`). Adapters:
 * `adapters/duckdb-sql-engine` (embedded, local) and `adapters/athena-sql-engine` (deployed).
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
