/**
 * The rollup's calendar: a UTC day's start, the hours of it begun at a time, a range of days, the
 * receipt days a day's recompute reads, and when a day is final (its end plus the grace period).
 * Pure functions of the day and the time, shared by every pass.
 */
import { utcDay } from "../../contracts/bucket-layout";
import type { RollupDependencies } from "./dependencies";

export const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** The start of a UTC day (ms). */
export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

/**
 * How many hours of a day had begun at `at` (ms): 24 once the day is over, none before it
 * begins, else up to the hour `at` falls in (that hour so far). A day computed at `at` has
 * figures for these hours only: an hour that had not begun was not measured, and its users
 * online are not the level carried forward from the last transition (#42).
 *
 * @example hoursBegun("2026-01-02", Date.parse("2026-01-02T04:07:00Z")) // 5 (00 to 04)
 */
export function hoursBegun(day: string, at: number): number {
  return Math.min(24, Math.max(0, Math.floor((at - dayStart(day)) / HOUR_MS) + 1));
}

/** Every day from `from` to `to`, inclusive. @example daysInRange("2026-01-30", "2026-02-01") // 3 days */
export function daysInRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = dayStart(from); t <= dayStart(to); t += DAY_MS) days.push(utcDay(t));
  return days;
}

/**
 * The receipt days of the raw archive (`archive_events`) a day's recompute reads, besides the
 * day's edge (`archive_edges`, the copies of the lines received on other days that it needs:
 * late events, and the first copies of receipt-timed facts retried across midnight; see
 * `edgeDaysOf`): the day itself. With `neighbours`, for archives written before edge objects
 * existed, the day before and the day after too, as the recompute read them then (late events
 * up to a day; the first copies of retries received after midnight).
 *
 * @example receiptDaysOf("2026-01-02") // { first: "2026-01-02", last: "2026-01-02" }
 * @example receiptDaysOf("2026-01-02", { neighbours: true }) // { first: "2026-01-01", last: "2026-01-03" }
 */
export function receiptDaysOf(day: string, { neighbours = false } = {}): { first: string; last: string } {
  if (!neighbours) return { first: day, last: day };
  return { first: utcDay(dayStart(day) - DAY_MS), last: utcDay(dayStart(day) + DAY_MS) };
}

/** Whether a day computed at `computedAt` is final: its end plus the grace period has passed. */
export const isFinal = (day: string, computedAt: number, deps: Pick<RollupDependencies, "graceMs">) =>
  computedAt >= dayStart(day) + DAY_MS + deps.graceMs;
