/**
 * What `webhook sql` says when a statement fails: the tables and their columns, in the words of
 * this project, instead of the engine's binder or catalog text; and "read-only: one SELECT" for
 * anything that would write (which DuckDB's binder or the engine's check refuses in its own terms).
 */
import { ARCHIVE_COLUMNS, ARCHIVE_TABLES, DAY_SET_TABLES } from "../../shared/analytics/dialect";

/** Every table `webhook sql` reads, with its columns in order. */
export const SQL_TABLES: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ...Object.keys(ARCHIVE_TABLES).map((t): [string, string[]] => [t, Object.keys(ARCHIVE_COLUMNS)]),
  ...Object.entries(DAY_SET_TABLES).map(([t, d]): [string, string[]] => [
    t,
    [...Object.keys(d.columns), "date"],
  ]),
]);

const READ_ONLY = "read-only: one SELECT (or WITH, VALUES, FROM, SHOW, DESCRIBE)";

/** The statements that write or change the session, by their first keyword. */
const WRITES =
  /^(INSERT|UPDATE|DELETE|MERGE|UPSERT|CREATE|DROP|ALTER|TRUNCATE|COPY|ATTACH|DETACH|INSTALL|LOAD|SET|RESET|PRAGMA|CALL|EXPORT|IMPORT|VACUUM|CHECKPOINT|GRANT|REVOKE|BEGIN|COMMIT|ROLLBACK|USE|EXPLAIN)\b/i;

/** The statement's first keyword, after comments and whitespace. */
function firstKeyword(statement: string): string {
  return (
    statement
      .replace(/^(\s|--[^\n]*\n?|\/\*[\s\S]*?\*\/)+/, "")
      .match(/^[A-Za-z_]+/)?.[0]
      ?.toUpperCase() ?? ""
  );
}

/**
 * Why a statement is refused before it runs: one that writes or changes the session (its first
 * keyword). Undefined for a read (the engine's own check still applies).
 *
 * @example readOnlyRefusal("DELETE FROM archive_events") // "read-only: one SELECT (…); DELETE is not one"
 */
export function readOnlyRefusal(statement: string): string | undefined {
  const keyword = firstKeyword(statement);
  return WRITES.test(keyword) ? `${READ_ONLY}; ${keyword} is not one` : undefined;
}

const columnsOf = (table: string) => `${table} (${SQL_TABLES.get(table)?.join(", ")})`;

/** The tables the statement names (as whole words), else every one. */
function tablesNamed(statement: string): string[] {
  const named = [...SQL_TABLES.keys()].filter((t) => new RegExp(`\\b${t}\\b`, "i").test(statement));
  return named.length ? named : [...SQL_TABLES.keys()];
}

/**
 * The engine's error in this project's words: a column or table it does not know names the
 * tables and their columns, a statement that would write says read-only, a parse error keeps
 * DuckDB's text without its prefix. Anything else as the engine said it.
 *
 * @example explainSqlError('Binder Error: Referenced column "app_id" not found in FROM clause!', "SELECT app_id FROM archive_events")
 *   // 'no column "app_id" in archive_events (app, date, event_id, …)'
 */
export function explainSqlError(message: string, statement: string): string {
  const column =
    /Referenced column "([^"]+)" not found|column "([^"]+)" (?:not found|does not exist|cannot be resolved)/i.exec(
      message,
    );
  if (column)
    return `no column "${column[1] ?? column[2]}" in ${tablesNamed(statement).map(columnsOf).join("; ")}`;
  const table =
    /Table with name ([^\s!]+) does not exist|Table ([^\s]+) does not exist|table ([^\s]+) not found/i.exec(
      message,
    );
  if (table)
    return `no table ${table[1] ?? table[2] ?? table[3]}: the tables are ${[...SQL_TABLES.keys()].map(columnsOf).join("; ")}`;
  if (
    /Can only (delete from|update) base table|is not an? table|only a SELECT is allowed/i.test(message) ||
    readOnlyRefusal(statement)
  )
    return readOnlyRefusal(statement) ?? READ_ONLY;
  const statements = /one statement is allowed, this text has (\d+)/.exec(message);
  if (statements) return `${READ_ONLY}: this text has ${statements[1]} statements`;
  return message.replace(/^Failed to extract statements: /, "");
}
