import { appSegment, utcDay } from "../contracts/bucket-layout";
import type { SqlEngine } from "./engines/sql-engine";
import { activityFromRows, type DayActivity, TOP_LIMIT } from "./figures";
import { readQuery } from "./queries";
import type { ActivityStore } from "./store/activity-store";

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

/** How a day is recomputed. */
export interface RollupOptions {
  /** Leave a final day as it is, without reading the archive (the schedule). */
  skipFinal?: boolean;
  /** Read the neighbouring receipt days too (`receiptDaysOf`): days archived before edge objects. */
  neighbours?: boolean;
}

/**
 * One day's figures of an app, computed from the archive by `sql/day-activity.sql` over the day's
 * raw archive and edge (`receiptDaysOf`), and the bytes the engine read for them.
 *
 * @example (await dayActivity(engine, "app1", "2026-01-02")).activity.figures.messages // 9257
 */
export async function dayActivity(
  engine: SqlEngine,
  appId: string,
  day: string,
  { neighbours = false }: Pick<RollupOptions, "neighbours"> = {},
): Promise<{ activity: DayActivity; bytesScanned: number }> {
  const start = dayStart(day);
  const { first, last } = receiptDaysOf(day, { neighbours });
  const app = appSegment(appId);
  const result = await engine.query(
    readQuery("day-activity"),
    { app, first_date: first, last_date: last, day, day_start: start, day_end: start + DAY_MS },
    { app, from: first, to: last, edges: { from: day, to: day } },
  );
  return {
    activity: activityFromRows(result.rows, { hours: 24, top: TOP_LIMIT }),
    bytesScanned: result.bytesScanned,
  };
}

/**
 * Recomputes one day of an app from the raw archive and replaces it in the activity table: the
 * query counts each fact once by its natural key, at its event time (`sql/day-activity.sql`), so
 * any number of redeliveries, redrives, replays or duplicated lines give the same figures. It
 * reads the day's raw archive and edge (`receiptDaysOf`), whether the day is over or not. The
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
  options: RollupOptions = {},
): Promise<DayRollup> {
  if (options.skipFinal) {
    const stored = await deps.store.day(appId, day);
    if (stored?.final)
      return { appId, day, outcome: "skipped", final: true, computedAt: stored.computedAt, bytesScanned: 0 };
  }
  const computedAt = deps.now();
  const start = dayStart(day);
  const { activity, bytesScanned } = await dayActivity(deps.engine, appId, day, options);
  const final = computedAt >= start + DAY_MS + deps.graceMs;
  const written = await deps.store.replace({
    appId,
    day,
    ...activity,
    computedAt,
    final,
    bytesScanned,
  });
  return {
    appId,
    day,
    outcome: written ? "written" : "superseded",
    final,
    computedAt,
    bytesScanned,
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
