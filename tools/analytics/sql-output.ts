/** What `webhook sql` prints for a result: a table (the default), CSV or JSON, and a row count. */
import type { SqlResult } from "../../shared/analytics/engines/sql-engine";

export interface SqlOutputOptions {
  json?: boolean;
  csv?: boolean;
}

/**
 * A value as text: timestamps in ISO 8601, as every other command prints them (an engine may
 * give a `Date` for a TIMESTAMP column, whose own text is the local-time `Thu Nov 13 2025 …`).
 */
function text(value: unknown): string {
  if (value === null || value === undefined) return "";
  return value instanceof Date ? value.toISOString() : String(value);
}

/** A value for JSON: a timestamp as its ISO 8601 text, anything else as it is. */
const jsonValue = (value: unknown) => (value instanceof Date ? value.toISOString() : value);

const csvCell = (value: unknown) => {
  const t = text(value);
  return /[",\n\r]/.test(t) ? `"${t.replaceAll('"', '""')}"` : t;
};

/**
 * The lines `webhook sql` writes: on stdout the rows (a padded table with cells cut at 80
 * characters, CSV, or one JSON array), on stderr after a table how many rows and bytes scanned.
 *
 * @example sqlOutputLines({ columns: ["n"], rows: [{ n: 1 }], bytesScanned: 0 }, {}).stderr // ["(1 row, 0 bytes scanned)"]
 */
export function sqlOutputLines(
  result: SqlResult,
  o: SqlOutputOptions,
): { stdout: string[]; stderr: string[] } {
  const rows: ReadonlyArray<Record<string, unknown>> = result.rows;
  if (o.json)
    return {
      stdout: [
        JSON.stringify(
          rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, jsonValue(v)]))),
          null,
          2,
        ),
      ],
      stderr: [],
    };
  if (o.csv)
    return {
      stdout: [
        result.columns.map(csvCell).join(","),
        ...rows.map((row) => result.columns.map((c) => csvCell(row[c])).join(",")),
      ],
      stderr: [],
    };
  const cell = (value: unknown) => {
    const t = text(value);
    return t.length > 80 ? `${t.slice(0, 77)}...` : t;
  };
  const widths = result.columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  const count = `${rows.length} ${rows.length === 1 ? "row" : "rows"}`;
  return {
    stdout: [
      line(result.columns),
      line(widths.map((w) => "-".repeat(w))),
      ...rows.map((row) => line(result.columns.map((c) => cell(row[c])))),
    ],
    stderr: [`(${count}, ${result.bytesScanned} bytes scanned)`],
  };
}
