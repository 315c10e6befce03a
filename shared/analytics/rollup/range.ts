/**
 * A range of days recomputed on command (`webhook rollup`, `rollupDays`): each day's every app in
 * one pass, or one app's, a day at a time, the whole run under the archive lease; the days not
 * final yet reported with when they become final.
 */
import { ArchiveLockedError, withArchiveLease } from "../../adapters/archive-lease";
import { noActivity, replaceDay, rollupDay } from "./app-pass";
import { rollupDayAllApps } from "./day-pass";
import { DAY_MS, dayStart, isFinal } from "./days";
import type { DayRollup, RollupDependencies, RollupOptions } from "./dependencies";

/** What `rollupDays` did over a range. */
export interface RangeRollupReport {
  rollups: DayRollup[];
  failures: Array<{ appId: string; day: string; error: unknown }>;
  queries: number;
  bytesScanned: number;
  /**
   * The days of the range that are not final yet, and when each becomes final (its end plus the
   * grace period, ms): no day set is written for them, so their users over time are blank until
   * a pass after that (the schedule's, or `webhook rollup` again) closes them.
   */
  open: Array<{ day: string; finalAt: number }>;
}

/**
 * Recomputes a range of days (`webhook rollup`): each day's every app in one pass
 * (`rollupDayAllApps`), or one app's (`rollupDay`, `app`), a day at a time. Its writes of figures
 * (and, for a closed day, of day sets: a one-app pass merges its entry) meet an erasure's, which
 * deletes or recomputes them: the whole run holds the archive lease (`archiveLock`, renewed
 * between steps), as every pass that writes figures does (docs/design-and-limits.md, "Writers
 * meet"); held by another, the lease's wait applies (a command's: it waits) and then
 * `ArchiveLockedError`, naming its holder, before anything is read. A range of open days writes
 * no set. A day that fails is reported and the next one runs.
 *
 * Over every app, an app with a line on some day of the range is written on each of its days: a
 * day without its line as zeros (`noActivity`, as the one-app form writes it), so that no day of
 * the range is left "not computed" for it (#61: a history's first day and today, nothing between).
 * A day without a line of any app of the range is written for every app the range saw. With a
 * `ledger`, each day's pass is recorded as the schedule's is (what the watchdog judges silence
 * from), every app still written (`rewrite`): the command is a recompute on demand.
 *
 * @example await rollupDays(daysInRange("2026-01-01", "2026-01-31"), deps, { app: "app1" }) // { rollups: [… { daySets: "merged" }], open: [], … }
 * @throws ArchiveLockedError when another rewrite of the archive holds the lease
 */
export async function rollupDays(
  days: readonly string[],
  deps: RollupDependencies,
  options: Pick<RollupOptions, "neighbours"> & { app?: string } = {},
): Promise<RangeRollupReport> {
  const { app, neighbours } = options;
  const run = async (d: RollupDependencies): Promise<RangeRollupReport> => {
    const report: RangeRollupReport = { rollups: [], failures: [], queries: 0, bytesScanned: 0, open: [] };
    for (const day of days) {
      try {
        if (app) {
          const r = await rollupDay(app, day, d, { neighbours });
          report.rollups.push(r);
          report.bytesScanned += r.bytesScanned;
        } else {
          const pass = await rollupDayAllApps(day, d, { neighbours, rewrite: true });
          report.rollups.push(...pass.rollups);
          report.failures.push(...pass.failures);
          report.bytesScanned += pass.bytesScanned;
        }
      } catch (error) {
        // The lease lost (lapsed and taken): nothing more is written.
        if (error instanceof ArchiveLockedError) throw error;
        report.failures.push({ appId: app ?? "(every app)", day, error });
      }
      report.queries++;
      if (!isFinal(day, d.now(), deps))
        report.open.push({ day, finalAt: dayStart(day) + DAY_MS + deps.graceMs });
    }
    if (!app) await writeQuietDays(report, days, d);
    return report;
  };
  const closes = days.some((day) => isFinal(day, deps.now(), deps));
  const writing = closes ? deps : { ...deps, userSets: undefined };
  if (!deps.archiveLock) return run(writing);
  const holder = `rollup ${days[0]}..${days.at(-1)}${app ? ` of ${app}` : ""}`;
  return withArchiveLease(deps.archiveLock, holder, deps.now, (renew) =>
    run({
      ...writing,
      checkpoint: async (step) => {
        await renew();
        await deps.checkpoint?.(step);
      },
    }),
  );
}

/**
 * The days of a range over every app on which an app of the range had no line: written as zeros
 * (`noActivity`), one conditional write each, no query. A day whose pass failed is left as it is.
 */
async function writeQuietDays(
  report: RangeRollupReport,
  days: readonly string[],
  deps: RollupDependencies,
): Promise<void> {
  const apps = new Set(report.rollups.map((r) => r.appId));
  const failed = new Set(report.failures.map((f) => f.day));
  const passed = new Set(report.rollups.map((r) => `${r.day}|${r.appId}`));
  for (const day of days) {
    if (failed.has(day)) continue;
    for (const appId of apps) {
      if (passed.has(`${day}|${appId}`)) continue;
      const computedAt = deps.now();
      try {
        report.rollups.push(
          await replaceDay(deps, {
            appId,
            day,
            activity: noActivity(day, computedAt),
            computedAt,
            final: isFinal(day, computedAt, deps),
            bytesScanned: 0,
          }),
        );
      } catch (error) {
        report.failures.push({ appId, day, error });
      }
    }
    await deps.checkpoint?.("figures");
  }
  report.rollups.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : a.appId < b.appId ? -1 : 1));
}
