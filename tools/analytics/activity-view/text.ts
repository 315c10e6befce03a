/**
 * The text output every view prints through: the sections (a title and a table) and the notes
 * below them, wrapped within `TERMINAL_COLUMNS` unless `--wide`; and the cells and rows the views
 * share: `—` for a figure with no value, a ratio's text, a blank day's row, each day's rows of a
 * range, a day's stamp (when computed, whether final).
 */
import type { StoredDay } from "../../../shared/analytics/store/activity-store";
import { fittedTableLines, leftOutNote, TERMINAL_COLUMNS, tableLines } from "../../cli/format";
import type { Row } from "./options";

/** What a figure with no value shows where the reason is given in a note below: never a 0. */
export const BLANK = "—";

export const ratioText = (x: number | null) => (x === null ? "" : x.toFixed(2));

/** A note below the tables: a sentence, and the command it suggests, printed whole on a line of its own. */
export interface Note {
  text: string;
  run?: string;
}

/** A section of the text output: a title, and a table whose columns come in this order. */
export interface Section {
  title?: string;
  columns: readonly string[];
  rows: Row[];
}

/**
 * Text wrapped at `width` on spaces, the lines after the first indented by two.
 *
 * @example wrapText("a b c", 3) // ["a b", "  c"]
 */
function wrapText(text: string, width = TERMINAL_COLUMNS): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const next = line ? `${line} ${word}` : word;
    if (next.length > width && line.trim()) {
      lines.push(line);
      line = `  ${word}`;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * The text output: each section's title and table, then the notes (why a figure shows `—`, and
 * what to run), every line within `TERMINAL_COLUMNS` unless `wide`. Nothing at all when no
 * section has a row and there is no note (the runner says "nothing found").
 */
export function textLines(sections: Section[], notes: readonly Note[], wide = false): string[] {
  const out: string[] = [];
  let dropped = 0;
  const shown = sections.filter((s) => s.rows.length > 0);
  for (const s of shown) {
    if (out.length) out.push("");
    if (s.title) out.push(...(wide ? [s.title] : wrapText(s.title)));
    const table = wide
      ? { lines: tableLines(s.rows, s.columns), dropped: 0 }
      : fittedTableLines(s.rows, s.columns);
    dropped += table.dropped;
    out.push(...table.lines);
  }
  const all: readonly Note[] = dropped ? [...notes, { text: leftOutNote(dropped) }] : notes;
  if (all.length > 0 && out.length > 0) out.push("");
  for (const note of all) {
    out.push(...(wide ? [note.text] : wrapText(note.text)));
    // A command stays whole, to be copied.
    if (note.run) out.push(`    ${note.run}`);
  }
  return out;
}

/** A row of `—` for a day with nothing to show (its reason is a note). */
export const blankRow = (columns: readonly string[], day: string): Row =>
  Object.fromEntries(columns.map((c) => [c, c === "day" ? day : BLANK]));

/** Each day's rows of the range, oldest first: `row(d)` for a computed day, `—` for one missing. */
export function byDay(days: readonly StoredDay[], missing: readonly string[], columns: readonly string[]) {
  return (row: (d: StoredDay) => Row[]): Row[] =>
    [...days.flatMap((d) => row(d)), ...missing.map((day) => blankRow(columns, day))].sort((a, b) =>
      String(a.day).localeCompare(String(b.day)),
    );
}

/** When a stored day was computed, and whether it is final: every day's JSON and row say it. */
export const stamp = (d: StoredDay) => ({
  computedAt: new Date(d.computedAt).toISOString(),
  final: d.final,
});
