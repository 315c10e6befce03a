import { InvalidArgumentError } from "commander";
import { utcDay } from "../../shared/contracts/bucket-layout";

/**
 * When a simulated history happens. The generator is deterministic for a seed and a start; the
 * simulator's default start puts the history's last event a minute before now, so that the
 * activity figures (recomputed per UTC day) and the console's last 7 days show it. `--start`
 * fixes it instead: a seed and a start always give the same history.
 */

/** How long before now the last event of a default history happens, seconds. */
export const ENDS_BEFORE_NOW_SECONDS = 60;

/**
 * `--start`: a UTC day `YYYY-MM-DD` (its midnight) or an ISO 8601 date-time with its offset, as
 * epoch seconds.
 *
 * @example parseHistoryStart("2025-11-13") // 1762992000
 */
export function parseHistoryStart(value: string): number {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const ms = Date.parse(day ? `${value}T00:00:00Z` : value);
  const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  if (Number.isNaN(ms) || !(day || dateTime) || (day && utcDay(ms) !== value))
    throw new InvalidArgumentError(
      "expected a UTC day YYYY-MM-DD or a date-time such as 2026-01-02T09:30:00Z.",
    );
  return Math.floor(ms / 1000);
}

/**
 * The start (epoch s) of a history: `start` when given, else the one whose last event is a minute
 * before `nowMs`. A history runs about a second of simulated time an event (`spanSeconds`: its
 * last event's offset from its first); one that ran into the future would put its payload-timed
 * facts after the receipt-timed ones (membership) received now, and its users "online since" later.
 *
 * @example historyStartAt({ spanSeconds: 3600, nowMs: Date.parse("2026-01-02T12:00:00Z") }) // 2026-01-02T10:59:00Z in s
 */
export function historyStartAt(o: { start?: number; spanSeconds: number; nowMs: number }): number {
  if (o.start !== undefined) return o.start;
  return Math.floor(o.nowMs / 1000 - o.spanSeconds - ENDS_BEFORE_NOW_SECONDS);
}

/**
 * The UTC days a history's events fall on (their times in ms), first to last.
 *
 * @example historyDays([Date.parse("2026-01-01T23:59:00Z"), Date.parse("2026-01-02T00:01:00Z")]) // { from: "2026-01-01", to: "2026-01-02" }
 */
export function historyDays(times: Iterable<number>): { from: string; to: string } | undefined {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const t of times) {
    first = Math.min(first, t);
    last = Math.max(last, t);
  }
  return Number.isFinite(first) ? { from: utcDay(first), to: utcDay(last) } : undefined;
}

/**
 * What a simulation prints after it for its activity figures: `npm start` recomputes today's every
 * minute; the rollup recomputes any day now, and `query activity` reads them.
 */
export function activityHint(
  apps: readonly string[],
  days: { from: string; to: string },
  todayMs: number,
): string[] {
  const today = utcDay(todayMs);
  const span = days.from === days.to ? days.from : `${days.from} to ${days.to}`;
  return [
    days.from === today && days.to === today
      ? "Activity figures: npm start recomputes today's every minute; to recompute them now:"
      : `Activity figures: the history is on ${span}; recompute them with:`,
    ...apps.map((app) => `  npx webhook rollup --app ${app} --from ${days.from} --to ${days.to}`),
    "then read them (or open the console's Activity view):",
    ...apps.map((app) => `  npx webhook query activity --app ${app} --from ${days.from} --to ${days.to}`),
  ];
}
