/**
 * The notes below the tables that name days: consecutive days as ranges, a value as a word of a
 * shell command, and the note per run of days the rollup has not computed, with the rollup that
 * computes them (`query activity`'s notes, the console's).
 */
import { addDays } from "../../../shared/contracts/bucket-layout";
import type { Note } from "./text";

/** Consecutive days as ranges: `[["2026-01-01", "2026-01-03"], …]` (sorted input). */
export function dayRanges(days: readonly string[]): Array<[string, string]> {
  const ranges: Array<[string, string]> = [];
  for (const day of days) {
    const last = ranges.at(-1);
    if (last && addDays(last[1], 1) === day) last[1] = day;
    else ranges.push([day, day]);
  }
  return ranges;
}

export const rangeText = ([from, to]: readonly [string, string]) => (from === to ? from : `${from} … ${to}`);

/** A value as one word of a shell command (an app id with spaces or quotes is quoted). */
export const shellWord = (value: string) =>
  /^[\w.@:/+-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;

/**
 * What to say of an app's days the rollup has not computed (sorted): a note per run of days,
 * with the rollup that computes them for the app (`query activity`'s notes, the console's).
 *
 * @example notComputedNotes("a1", ["2026-01-01", "2026-01-02"])[0]
 *   // { from: "2026-01-01", to: "2026-01-02", text: "2026-01-01 … 2026-01-02: not computed yet; the rollup computes them:", run: "npx webhook rollup --app a1 --from 2026-01-01 --to 2026-01-02" }
 */
export function notComputedNotes(
  app: string,
  missing: readonly string[],
  targetArgs = "",
): Array<Note & { from: string; to: string }> {
  return dayRanges(missing).map((r) => ({
    from: r[0],
    to: r[1],
    text: `${rangeText(r)}: not computed yet; the rollup computes ${r[0] === r[1] ? "it" : "them"}:`,
    // For this app: a day without its events is then written as zeros, where the schedule's pass
    // over every app writes nothing for it (a range over every app writes it only for an app with
    // events in the range), and this note would come back after the command it gave.
    run: `npx webhook rollup --app ${shellWord(app)} --from ${r[0]} --to ${r[1]}${targetArgs}`,
  }));
}
