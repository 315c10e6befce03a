/**
 * How the command-line tools print for a person: one time format (ISO 8601 UTC), one item as
 * aligned key/value lines, several as an aligned plain table. `--json` prints values as they are.
 */

/** An epoch-ms time as ISO 8601 UTC, without zero milliseconds; "" for none. */
export function isoTime(ms: unknown): string {
  return typeof ms === "number" && Number.isFinite(ms)
    ? new Date(ms).toISOString().replace(".000Z", "Z")
    : "";
}

/** A value as one cell: nothing for none, JSON for objects. */
function cell(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * One item as aligned `key  value` lines; keys without a value are left out.
 *
 * @example keyValueLines([["outcome", "projected"], ["key", "raw/…"]]) // ["outcome  projected", "key      raw/…"]
 */
export function keyValueLines(pairs: ReadonlyArray<readonly [string, unknown]>): string[] {
  const shown = pairs.filter(([, v]) => cell(v) !== "");
  const width = Math.max(0, ...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`);
}

/**
 * Rows as an aligned plain table with a header and a rule (no index column); nothing for no rows.
 * `columns` gives their order where the rows' keys cannot: an object lists integer-like keys
 * (`"10"`, `"23"`) before all others, whatever order they were set in.
 *
 * @example tableLines([{ h: "Mon", "10": 1, "09": 2 }], ["h", "09", "10"]) // ["h    09  10", "---  --  --", "Mon  2   1"]
 */
export function tableLines(
  rows: ReadonlyArray<Record<string, unknown>>,
  columns: readonly string[] = [...new Set(rows.flatMap((r) => Object.keys(r)))],
): string[] {
  if (rows.length === 0) return [];
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [
    line(columns),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map((r) => line(columns.map((c) => cell(r[c])))),
  ];
}
