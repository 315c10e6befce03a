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

/** The keys of a stored item that hold a time (`receivedAt`, `startTime`, `lastSeen`, `since`…). */
const TIME_KEY = /(?:At|Time|Seen)$|^since$/;

/** Below this, an epoch number is seconds (1e11 ms is in 1973, 1e11 s in year 5138). */
const EPOCH_SECONDS_BELOW = 1e11;

/**
 * An epoch time in seconds or milliseconds (the platform sends both: most times in seconds,
 * presence in ms) as ISO 8601 UTC (`isoTime`); "" for none.
 *
 * @example epochTime(1795656070) // "2026-11-26T01:21:10Z"; epochTime(1795656070567) // "2026-11-26T01:21:10.567Z"
 */
export function epochTime(value: unknown): string {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) return "";
  return isoTime(value < EPOCH_SECONDS_BELOW ? value * 1000 : value);
}

/**
 * A stored item (or any JSON value) for a person to read: every number under a time's key
 * (`TIME_KEY`), at any depth, as ISO 8601 UTC (`epochTime`), whatever the unit it was stored in;
 * the rest as it is. `--json` prints items as stored.
 *
 * @example withIsoTimes({ lastActiveAt: 1795656070, firstSeen: 1795656019504, name: "Ann" })
 *   // { lastActiveAt: "2026-11-26T01:21:10Z", firstSeen: "2026-11-26T01:20:19.504Z", name: "Ann" }
 */
export function withIsoTimes<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withIsoTimes) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      typeof v === "number" && TIME_KEY.test(key) ? epochTime(v) || v : withIsoTimes(v),
    ]),
  ) as T;
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

/** The width a terminal is taken to have: a table printed for a person fits it (`--wide` does not try). */
export const TERMINAL_COLUMNS = 100;

/**
 * `tableLines` that fit `TERMINAL_COLUMNS`: the columns on the right are left out until they do
 * (the first two always stay), so a table lists its widest columns (keys, paths) last; and how
 * many were left out (`leftOutNote` says so).
 *
 * @example fittedTableLines(rows, ["sessionId", "status", "key"]) // { lines: ["sessionId  status", …], dropped: 1 }
 */
export function fittedTableLines(
  rows: ReadonlyArray<Record<string, unknown>>,
  all: readonly string[] = [...new Set(rows.flatMap((r) => Object.keys(r)))],
): { lines: string[]; dropped: number } {
  let columns = all;
  for (;;) {
    const lines = tableLines(rows, columns);
    if (columns.length <= 2 || lines.every((l) => l.length <= TERMINAL_COLUMNS))
      return { lines, dropped: all.length - columns.length };
    columns = columns.slice(0, -1);
  }
}

/**
 * What a table says below it when `fittedTableLines` left columns out: how many, and where they are.
 *
 * @example leftOutNote(2) // "2 columns left out to fit 100 columns: --wide shows them, --json has every value."
 */
export const leftOutNote = (dropped: number) =>
  `${count(dropped, "column")} left out to fit ${TERMINAL_COLUMNS} columns: --wide shows them, --json has every value.`;

/**
 * Rows as a table for a person: within `TERMINAL_COLUMNS` (`fittedTableLines`, with `leftOutNote`
 * after a blank line when columns were left out), or every column with `wide`.
 *
 * @example tableText(recordingRows, { wide: false }) // ["sessionId  startTime  …", …, "", "2 columns left out to fit 100 columns: …"]
 */
export function tableText(
  rows: ReadonlyArray<Record<string, unknown>>,
  { wide = false, columns }: { wide?: boolean; columns?: readonly string[] } = {},
): string[] {
  if (wide) return tableLines(rows, columns);
  const { lines, dropped } = fittedTableLines(rows, columns);
  return dropped ? [...lines, "", leftOutNote(dropped)] : lines;
}

/**
 * A count with its noun, singular for one: never "1 apps".
 *
 * @example count(1, "app") // "1 app"; count(3, "app") // "3 apps"; count(2, "query", "queries") // "2 queries"
 */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? singular : plural}`;
}

/**
 * A line of text within `width` columns: cut at spaces, the lines after the first indented by
 * `indent`. A word longer than the room (a command, a URL, a key) is never cut: it runs past.
 *
 * @example wrapLine("a".repeat(60) + " " + "b".repeat(60), 100) // ["aaa…a", "  bbb…b"]
 */
export function wrapLine(text: string, width = 100, indent = "  "): string[] {
  const lines: string[] = [];
  let rest = text;
  let lead = "";
  while (lead.length + rest.length > width) {
    const room = width - lead.length;
    let cut = rest.lastIndexOf(" ", room);
    if (cut <= 0) cut = rest.indexOf(" ", room);
    if (cut <= 0) break;
    lines.push(lead + rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
    lead = indent;
  }
  lines.push(lead + rest);
  return lines;
}
