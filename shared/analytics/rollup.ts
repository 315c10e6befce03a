import { appSegment, utcDay } from "../contracts/bucket-layout";
import type { ActivityStore } from "../ports/activity-store";
import type { SqlEngine } from "../ports/sql-engine";
import { activityFromRows, TOP_LIMIT } from "./figures";
import { readQuery } from "./queries";

const DAY_MS = 86_400_000;

export interface RollupDependencies {
  engine: SqlEngine;
  store: ActivityStore;
  /** Injected clock (ms). */
  now: () => number;
  /** How long after a day's end late events are still awaited: a day computed later is final. */
  graceMs: number;
}

/** What a rollup did for one day. */
export interface DayRollup {
  appId: string;
  day: string;
  /** written; superseded (a run computed later had written it); skipped (already final, not forced). */
  outcome: "written" | "superseded" | "skipped";
  final: boolean;
  computedAt: number;
  bytesScanned: number;
}

/** The start of a UTC day (ms). */
export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

/** Every day from `from` to `to`, inclusive. @example daysInRange("2026-01-30", "2026-02-01") // 3 days */
export function daysInRange(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = dayStart(from); t <= dayStart(to); t += DAY_MS) days.push(utcDay(t));
  return days;
}

/**
 * The receipt days whose partitions a day's recompute reads: the day itself; the next one, for
 * the facts that arrive late (up to the grace period, at most a day); and, once the day is over,
 * the previous one, for the first copies of facts whose event time is their receipt (membership
 * events, blocks): a platform retry received after midnight must find the copy received before,
 * or it would count on both days. While the day is still open (today, recomputed every few
 * minutes) that read is skipped: its figures are provisional anyway, and the recomputes after its
 * end, which make it final, read it. A fact is counted once, at its first receipt.
 *
 * @example partitionsOf("2026-01-02", { closed: true }) // { first: "2026-01-01", last: "2026-01-03" }
 */
export function partitionsOf(day: string, { closed }: { closed: boolean }): { first: string; last: string } {
  return { first: closed ? utcDay(dayStart(day) - DAY_MS) : day, last: utcDay(dayStart(day) + DAY_MS) };
}

/**
 * Recomputes one day of an app from the raw archive and replaces it in the activity table: the
 * query counts each fact once by its natural key, at its event time (`sql/day-activity.sql`), so
 * any number of redeliveries, redrives, replays or duplicated lines give the same figures. The
 * day is final when computed after its end plus the grace period; `skipFinal` leaves a final
 * day as it is (the schedule), without reading the archive.
 *
 * @example await rollupDay("app1", "2026-01-02", deps) // { outcome: "written", final: true, … }
 * @throws SqlQueryError or the store's error: nothing of the day was written
 */
export async function rollupDay(
  appId: string,
  day: string,
  deps: RollupDependencies,
  options: { skipFinal?: boolean } = {},
): Promise<DayRollup> {
  if (options.skipFinal) {
    const stored = await deps.store.day(appId, day);
    if (stored?.final)
      return { appId, day, outcome: "skipped", final: true, computedAt: stored.computedAt, bytesScanned: 0 };
  }
  const computedAt = deps.now();
  const start = dayStart(day);
  const { first, last } = partitionsOf(day, { closed: computedAt >= start + DAY_MS });
  const app = appSegment(appId);
  const result = await deps.engine.query(
    readQuery("day-activity"),
    { app, first_date: first, last_date: last, day_start: start, day_end: start + DAY_MS },
    { app, from: first, to: last },
  );
  const activity = activityFromRows(result.rows, { hours: 24, top: TOP_LIMIT });
  const final = computedAt >= start + DAY_MS + deps.graceMs;
  const written = await deps.store.replace({
    appId,
    day,
    ...activity,
    computedAt,
    final,
    bytesScanned: result.bytesScanned,
  });
  return {
    appId,
    day,
    outcome: written ? "written" : "superseded",
    final,
    computedAt,
    bytesScanned: result.bytesScanned,
  };
}

/** The days a scheduled run recomputes at `now`: yesterday (until final) and today. */
export function scheduledDays(now: number): string[] {
  return [utcDay(now - DAY_MS), utcDay(now)];
}

/** A scheduled run's report: each day's rollup, and the days that failed with why. */
export interface ScheduledRollupReport {
  rollups: DayRollup[];
  failures: Array<{ appId: string; day: string; error: unknown }>;
}

/**
 * The scheduled rollup: yesterday (unless final) and today of every app. A day that fails is
 * reported and left as it was; the other days still run.
 */
export async function scheduledRollup(
  appIds: readonly string[],
  deps: RollupDependencies,
): Promise<ScheduledRollupReport> {
  const report: ScheduledRollupReport = { rollups: [], failures: [] };
  for (const appId of appIds)
    for (const day of scheduledDays(deps.now())) {
      try {
        report.rollups.push(await rollupDay(appId, day, deps, { skipFinal: true }));
      } catch (error) {
        report.failures.push({ appId, day, error });
      }
    }
  return report;
}
