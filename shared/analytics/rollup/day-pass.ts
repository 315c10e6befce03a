/**
 * The pass over every app of a day (`rollupDayAllApps`): one engine query for every app, each
 * app's day replaced unless the ledger's last pass wrote the same figures, on a final pass the
 * day's sets written, and the pass recorded in the ledger when every write succeeded.
 */
import pLimit from "p-limit";
import { hourlyDeliveries } from "../deliveries";
import type { DayPass } from "../store/rollup-ledger";
import { writeDaySets } from "../user-sets";
import { replaceDay } from "./app-pass";
import { dayActivities } from "./day-query";
import { isFinal } from "./days";
import type { DayRollup, RollupDependencies, RollupOptions } from "./dependencies";
import { activityDigest, addWatchEntry, headlineTotals, seenBy, watchEntry, watchFields } from "./ledger";

/** What a pass over every app of a day did. */
export interface DayPassReport {
  day: string;
  /** skipped: the day was final in the ledger and the pass was not forced; nothing was read. */
  outcome: "passed" | "skipped";
  final: boolean;
  computedAt: number;
  queries: number;
  bytesScanned: number;
  rollups: DayRollup[];
  failures: Array<{ appId: string; day: string; error: unknown }>;
}

/**
 * Recomputes one day of every app in one pass: one engine query reads the day once for every app
 * (`dayActivities`), then each app's day is replaced as `rollupDay` does (same transaction, same
 * condition on computedAt), a bounded number at once; an app whose figures and finality are those
 * the ledger's last pass wrote is left alone (`unchanged`: no DynamoDB request). The pass is then
 * recorded in the ledger, unless an app's write failed (the next pass writes it). With
 * `skipFinal`, a day whose last pass was final is not read at all. So the work follows the
 * archive's bytes and the apps whose figures moved, not the number of apps.
 *
 * @example await rollupDayAllApps("2026-01-02", deps) // { queries: 1, rollups: [{ appId: "app1", outcome: "written" }, …] }
 * @throws SqlQueryError when the query fails: nothing of the day was written
 */
export async function rollupDayAllApps(
  day: string,
  deps: RollupDependencies,
  options: RollupOptions = {},
): Promise<DayPassReport> {
  return passDay(day, deps, await deps.ledger?.pass(day), options);
}

/** `rollupDayAllApps` after the ledger's last pass of the day was read (`previous`). */
export async function passDay(
  day: string,
  deps: RollupDependencies,
  previous: DayPass | undefined,
  options: RollupOptions,
): Promise<DayPassReport> {
  if (options.skipFinal && previous?.final)
    return {
      day,
      outcome: "skipped",
      final: true,
      computedAt: previous.computedAt,
      queries: 0,
      bytesScanned: 0,
      rollups: [],
      failures: [],
    };
  const computedAt = deps.now();
  const final = isFinal(day, computedAt, deps);
  // A final pass also returns each app's day sets: its users, conversations, membership changes.
  const withUsers = final && deps.userSets !== undefined;
  const { activities, daySets, queries, bytesScanned } = await dayActivities(deps.engine, day, {
    ...options,
    users: withUsers,
    asOf: computedAt,
  });
  await deps.checkpoint?.("read");
  const limit = pLimit(deps.writeConcurrency ?? 16);
  const digests: Record<string, string> = {};
  const totals: Record<string, number[]> = {};
  const watched = watchFields();
  const report: DayPassReport = {
    day,
    outcome: "passed",
    final,
    computedAt,
    queries,
    bytesScanned,
    rollups: [],
    failures: [],
  };
  await Promise.all(
    [...activities].map(([appId, activity]) =>
      limit(async () => {
        const digest = activityDigest(activity, final);
        digests[appId] = digest;
        totals[appId] = headlineTotals(activity);
        const hours = hourlyDeliveries(activity);
        // A past day's pass dates the sighting by the deliveries (#61), a schedule's by its clock.
        addWatchEntry(watched, appId, watchEntry(appId, hours, previous, seenBy(day, hours, computedAt)));
        if (!options.rewrite && previous?.apps[appId] === digest) {
          report.rollups.push({ appId, day, outcome: "unchanged", final, computedAt, bytesScanned: 0 });
          return;
        }
        try {
          report.rollups.push(
            await replaceDay(deps, { appId, day, activity, computedAt, final, bytesScanned }),
          );
        } catch (error) {
          report.failures.push({ appId, day, error });
        }
      }),
    ),
  );
  report.rollups.sort((a, b) => (a.appId < b.appId ? -1 : a.appId > b.appId ? 1 : 0));
  await deps.checkpoint?.("figures");
  if (withUsers && deps.userSets && daySets) {
    try {
      await writeDaySets(deps.userSets, day, daySets);
    } catch (error) {
      // The pass is not recorded: the next tick passes the day again and writes its sets.
      report.failures.push({ appId: "(day sets)", day, error });
    }
    await deps.checkpoint?.("sets");
  }
  if (report.failures.length === 0)
    await deps.ledger?.record({
      day,
      computedAt,
      final,
      queries,
      bytesScanned,
      apps: digests,
      totals,
      ...watched,
    } satisfies DayPass);
  return report;
}
