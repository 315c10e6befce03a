import { TrinoSQL, TrinoSqlVisitor } from "dt-sql-parser";

/**
 * Trino's grammar (Athena engine 3), from `dt-sql-parser`'s TrinoSQL (an ANTLR grammar kept in
 * step with Trino's own), for the SQL sent to Athena: Athena has no emulator, so the shared query
 * files and ad-hoc statements are checked here, where a DuckDB-only form (`::` casts,
 * `GROUP BY ALL`, `QUALIFY`, `$$` strings) shows as a syntax error before it reaches AWS.
 * A dev-time tool (the CLI and the tests): the rollup function's bundle does not carry it.
 */
const trino = new TrinoSQL();

/**
 * The syntax errors Trino's grammar finds in `sql` (`?` placeholders are valid), one line each.
 *
 * @example trinoSyntaxErrors("SELECT a::int FROM t") // ["1:9 …"]
 */
export function trinoSyntaxErrors(sql: string): string[] {
  return parsed(sql).errors;
}

/** The tree and the syntax errors (collected by a listener: `validate` would also print them). */
function parsed(sql: string) {
  const errors: string[] = [];
  const tree = trino.parse(sql, (e) => {
    errors.push(`${e.startLine}:${e.startColumn} ${e.message}`);
  });
  return { tree, errors };
}

/** Whether a statement's tree is a query (SELECT, WITH, VALUES, TABLE), SHOW or DESCRIBE. */
class ReadOnlyStatement extends TrinoSqlVisitor<boolean> {
  protected override defaultResult(): boolean {
    return false;
  }
  // A statement that only holds a query somewhere inside (INSERT, CTAS, EXPLAIN ANALYZE) is not one.
  override visitChildren(): boolean {
    return false;
  }
  override visitStatementDefault = () => true;
  override visitShowTables = () => true;
  override visitShowSchemas = () => true;
  override visitShowCatalogs = () => true;
  override visitShowColumns = () => true; // DESCRIBE t, too
  override visitShowCreateTable = () => true;
  override visitShowCreateView = () => true;
  override visitShowFunctions = () => true;
  override visitShowStats = () => true;
}

/**
 * Why Athena must not be sent `sql` as an ad-hoc statement, or undefined: it must parse in
 * Trino's grammar as exactly one query, SHOW or DESCRIBE (no DDL, no INSERT, UNLOAD, CTAS,
 * EXPLAIN ANALYZE, PREPARE/EXECUTE or SET). The workgroup and the IAM policies stay the lock;
 * this refuses early, with a reason, what they would refuse or what should not be tried.
 *
 * @example athenaStatementRefusal("SELECT 1; DROP TABLE t") // "one statement is allowed, this text has 2"
 */
export function athenaStatementRefusal(sql: string): string | undefined {
  const { tree, errors } = parsed(sql);
  if (errors.length) return `not valid Athena (Trino) SQL: ${errors[0]}`;
  const statements = tree.statements();
  if (statements.length !== 1) return `one statement is allowed, this text has ${statements.length}`;
  const statement = statements[0]?.singleStatement().statement();
  if (!statement?.accept(new ReadOnlyStatement()))
    return "only a query (SELECT, WITH, VALUES), SHOW or DESCRIBE is allowed";
  return undefined;
}
