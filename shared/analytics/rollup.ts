import { createHash } from "node:crypto";
import pLimit from "p-limit";
import { type ArchiveLease, ArchiveLockedError, withArchiveLease } from "../adapters/archive-lease";
import { utcDay } from "../contracts/bucket-layout";
import { CompactionPendingError } from "../platform/errors";
import { canonicalJson } from "../projections/canonical-json";
import type { ExpirySweep, ExpirySweepReport } from "./archive-expiry";
import type { ArchiveCompactor, CompactionManifest } from "./compaction";
import type { SqlEngine } from "./engines/sql-engine";
import { activityFromRows, type DayActivity, type DaySets, daySetsFromRows, TOP_LIMIT } from "./figures";
import { readQuery } from "./queries";
import type { ActivityStore } from "./store/activity-store";
import type { DayPass, RollupLedger } from "./store/rollup-ledger";
import { hasDaySets, mergeAppDaySets, type UserSetStore, writeDaySets } from "./user-sets";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface RollupDependencies {
  engine: SqlEngine;
  store: ActivityStore;
  /** Injected clock (ms). */
  now: () => number;
  /** How long after a day's end late events are still awaited: a day computed later is final. */
  graceMs: number;
  /** Where passes over every app are remembered (`rollupDayAllApps`): none, every app is written. */
  ledger?: RollupLedger;
  /** Apps written at once by a pass over every app. @default 16 */
  writeConcurrency?: number;
  /**
   * Compacts a receipt day to Parquet once its pass is final (`scheduledRollup`, with a ledger):
   * DuckDB locally, Athena deployed. None: days stay NDJSON.
   */
  compactor?: ArchiveCompactor;
  /**
   * Deletes what expired by the day in its key (`archive-expiry.ts`: the deployment's
   * `retainArchiveDays`), once a day (`scheduledRollup`, under the archive lease, with a ledger).
   * None: only S3's lifecycle expires the archive (by each object's last write).
   */
  expirySweep?: ExpirySweep;
  /**
   * The archive lease (`adapters/archive-lease.ts`) that every rewriter of stored data holds.
   * `scheduledRollup` takes it for each day's pass (its figures, ledger entry and, final, day sets)
   * and for a compaction, `rollupDays` for its range, so that none interleaves with an erasure, a
   * repair or a replay (held: the schedule's day waits for a later tick; a command's lease waits).
   */
  archiveLock?: ArchiveLease;
  /**
   * Where a final pass writes each closed day's sets (`user-sets.ts`: users over time, the
   * conversations started, the membership history). None: not written.
   *
   * The sets, like the figures, are rewritten by an erasure too, so they are written only under
   * the archive lease: `scheduledRollup` and `rollupDays` take it before they pass a day;
   * `rollupDay` and `rollupDayAllApps` do not take it and expect their caller to hold it (an
   * erasure calls `rollupDay` inside its own lease).
   */
  userSets?: UserSetStore;
  /**
   * Called between a pass's steps: after the archive is read (`read`), after the figures are
   * written (`figures`), after the day sets are written (`sets`). Under the archive lease it
   * renews it (`scheduledRollup`); a test runs another writer there.
   */
  checkpoint?: (step: "read" | "figures" | "sets") => Promise<void>;
}

/** What a rollup did for one day. */
export interface DayRollup {
  appId: string;
  day: string;
  /**
   * written; superseded (a run computed later had written it); skipped (already final, not
   * forced); unchanged (a pass over every app found the same figures as its last pass wrote).
   */
  outcome: "written" | "superseded" | "skipped" | "unchanged";
  final: boolean;
  computedAt: number;
  bytesScanned: number;
  /**
   * What a one-app pass of a closed day did to its day sets (users over time, `rollupDay` with
   * `userSets`): merged the app's entry, or wrote every app's (the day had none yet). Absent: none
   * written (the day is not final, or no set store).
   */
  daySets?: "merged" | "written";
}

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

/** How a day is recomputed. */
export interface RollupOptions {
  /** Leave a final day as it is, without reading the archive (the schedule). */
  skipFinal?: boolean;
  /** Read the neighbouring receipt days too (`receiptDaysOf`): days archived before edge objects. */
  neighbours?: boolean;
}

/** What one engine query over a day gave: every app's activity (or one app's), and its cost. */
export interface DayActivities {
  activities: Map<string, DayActivity>;
  /**
   * With `users`: each app's day sets: its active users by uid (its `active_users` is their count),
   * conversations with a message, members' last changes, groups deleted.
   */
  daySets?: Map<string, DaySets>;
  queries: number;
  bytesScanned: number;
}

/**
 * Every app's figures of one day (or one app's, with `app`), computed from the archive in one
 * query, `sql/day-activity.sql`, over the day's raw archive and edge (`receiptDaysOf`), with the
 * top lists cut per app in SQL; and the bytes the engine read. An app is there when it has a line
 * on the day. Computed `asOf` a time within the day (a pass's `computedAt`), its hours are those
 * begun by then (`hoursBegun`): a fact timed later (a sender's clock ahead) counts in the day's
 * figures, and in its hour from the first pass after that hour begins. Default: the whole day.
 *
 * @example (await dayActivities(engine, "2026-01-02")).activities.get("app1")?.figures.messages // 9257
 */
export async function dayActivities(
  engine: SqlEngine,
  day: string,
  {
    app = "",
    neighbours = false,
    users = false,
    asOf = Number.POSITIVE_INFINITY,
  }: { app?: string; users?: boolean; asOf?: number } & Pick<RollupOptions, "neighbours"> = {},
): Promise<DayActivities> {
  const start = dayStart(day);
  const { first, last } = receiptDaysOf(day, { neighbours });
  const result = await engine.query(
    readQuery("day-activity"),
    {
      app,
      first_date: first,
      last_date: last,
      day,
      day_start: start,
      day_end: start + DAY_MS,
      top: TOP_LIMIT,
      users: users ? 1 : 0,
    },
    { from: first, to: last, edges: { from: day, to: day } },
  );
  const rowsByApp = new Map<string, typeof result.rows>();
  for (const row of result.rows) {
    const appId = String(row.app);
    const rows = rowsByApp.get(appId);
    if (rows) rows.push(row);
    else rowsByApp.set(appId, [row]);
  }
  const hours = hoursBegun(day, asOf);
  const activities = new Map(
    [...rowsByApp].map(([appId, rows]) => [appId, activityFromRows(rows, { hours, top: TOP_LIMIT })]),
  );
  const daySets = users
    ? new Map([...rowsByApp].map(([appId, rows]) => [appId, daySetsFromRows(rows)]))
    : undefined;
  return {
    activities,
    queries: 1,
    bytesScanned: result.bytesScanned,
    ...(daySets ? { daySets } : {}),
  };
}

/**
 * One day's figures of an app (`dayActivities` narrowed to it; all zero when it has no line that
 * day), and the bytes the engine read for them.
 *
 * @example (await dayActivity(engine, "app1", "2026-01-02")).activity.figures.messages // 9257
 */
export async function dayActivity(
  engine: SqlEngine,
  appId: string,
  day: string,
  options: Pick<RollupOptions, "neighbours"> = {},
): Promise<{ activity: DayActivity; bytesScanned: number }> {
  const { activities, bytesScanned } = await dayActivities(engine, day, { ...options, app: appId });
  return {
    activity: activities.get(appId) ?? activityFromRows([], { hours: 24, top: TOP_LIMIT }),
    bytesScanned,
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
 * A final day with `userSets` gives the app's users over time too (#40): the same query returns
 * the app's day sets, merged into the day's (`mergeAppDaySets`: the app's entry replaced, every
 * other app's kept). A day not closed yet for any app has no sets to merge into, and a day's sets
 * are every app's or none: its query then reads every app of the day (one query, the day's whole
 * bytes) and writes every app's sets (`writeDaySets`), the figures still this app's alone.
 * The caller holds the archive lease (`rollupDays` takes it; an erasure holds its own).
 *
 * @example await rollupDay("app1", "2026-01-02", deps) // { outcome: "written", final: true, daySets: "merged", … }
 * @throws SqlQueryError or the store's error: nothing of the day was written (the sets' error: the figures were)
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
  const final = isFinal(day, computedAt, deps);
  const sets = final ? deps.userSets : undefined;
  const whole = sets !== undefined && !(await hasDaySets(sets, day));
  const { activities, daySets, bytesScanned } = await dayActivities(deps.engine, day, {
    ...options,
    app: whole ? "" : appId,
    users: sets !== undefined,
    asOf: computedAt,
  });
  await deps.checkpoint?.("read");
  const rollup = await replaceDay(deps, {
    appId,
    day,
    activity:
      activities.get(appId) ?? activityFromRows([], { hours: hoursBegun(day, computedAt), top: TOP_LIMIT }),
    computedAt,
    final,
    bytesScanned,
  });
  await deps.checkpoint?.("figures");
  if (!sets || !daySets) return rollup;
  if (whole) await writeDaySets(sets, day, daySets);
  else await mergeAppDaySets(sets, day, appId, daySets.get(appId) ?? NO_SETS);
  await deps.checkpoint?.("sets");
  return { ...rollup, daySets: whole ? "written" : "merged" };
}

/** An app's sets of a day it has no line on. */
const NO_SETS: DaySets = { users: [], conversations: [], members: [], deletions: [] };

/** Whether a day computed at `computedAt` is final: its end plus the grace period has passed. */
const isFinal = (day: string, computedAt: number, deps: Pick<RollupDependencies, "graceMs">) =>
  computedAt >= dayStart(day) + DAY_MS + deps.graceMs;

/** One app's day replaced in the store (the condition on computedAt is the store's), and what became of it. */
async function replaceDay(
  deps: RollupDependencies,
  write: {
    appId: string;
    day: string;
    activity: DayActivity;
    computedAt: number;
    final: boolean;
    bytesScanned: number;
  },
): Promise<DayRollup> {
  const { appId, day, activity, computedAt, final, bytesScanned } = write;
  const written = await deps.store.replace({ appId, day, ...activity, computedAt, final, bytesScanned });
  return { appId, day, outcome: written ? "written" : "superseded", final, computedAt, bytesScanned };
}

/** The days a scheduled run recomputes at `now`: yesterday (until final) and today. */
export function scheduledDays(now: number): string[] {
  return [utcDay(now - DAY_MS), utcDay(now)];
}

/** A digest of what a day's write stores for an app: a pass rewrites the app when it differs. */
export function activityDigest(activity: DayActivity, final: boolean): string {
  return createHash("sha256").update(canonicalJson({ activity, final })).digest("base64url").slice(0, 16);
}

/**
 * An app's day in three numbers, `[messages, active users, every figure summed]`, kept in the
 * ledger (`DayPass.totals`) so that the console ranks apps without a query per app.
 *
 * @example headlineTotals(activity) // [9257, 30, 48211]
 */
export function headlineTotals(activity: Pick<DayActivity, "figures">): number[] {
  const figures = activity.figures as Record<string, number>;
  return [
    figures.messages ?? 0,
    figures.active_users ?? 0,
    Object.values(figures).reduce((a, b) => a + b, 0),
  ];
}

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
async function passDay(
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
        if (previous?.apps[appId] === digest) {
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
    } satisfies DayPass);
  return report;
}

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
          const pass = await rollupDayAllApps(day, d, { neighbours });
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

/** A scheduled run's report: each day's pass, the days compacted, and the days (or apps' days) that failed with why. */
export interface ScheduledRollupReport {
  passes: DayPassReport[];
  /**
   * Days whose pass waited for another rewrite of the archive (an erasure, a repair, a replay) to
   * release the lease (`archiveLock`): passed at a later tick (the day keeps its figures, and
   * stays not final, meanwhile).
   */
  passesDeferred: string[];
  compactions: CompactionManifest[];
  /**
   * Days whose compaction waited: for an erasure or a repair to release the archive
   * (`archiveLock`), or for its Athena CTAS, still running, to end (adopted at a later tick).
   */
  compactionsDeferred: string[];
  /** What the day's expiry sweep deleted (`expirySweep`: once a day, at the tick after yesterday's final pass). */
  sweep?: ExpirySweepReport;
  /** Days whose sweep waited for another rewrite of the archive to release the lease: swept at a later tick. */
  sweepsDeferred: string[];
  failures: Array<{ appId?: string; day: string; error: unknown }>;
}

/**
 * The scheduled rollup: yesterday (unless its last pass was final) and today, every app in one
 * pass a day (`rollupDayAllApps`): two engine queries a run at most, whatever the number of
 * apps. A day that fails is reported and left as it was; the other day still runs.
 */
export async function scheduledRollup(deps: RollupDependencies): Promise<ScheduledRollupReport> {
  const report: ScheduledRollupReport = {
    passes: [],
    passesDeferred: [],
    compactions: [],
    compactionsDeferred: [],
    sweepsDeferred: [],
    failures: [],
  };
  const days = scheduledDays(deps.now());
  for (const day of days) {
    try {
      const pass = await scheduledPass(day, deps);
      report.passes.push(pass);
      report.failures.push(...pass.failures);
    } catch (error) {
      // An erasure (or a repair) is rewriting the archive: the day's final pass waits for a later tick.
      if (error instanceof ArchiveLockedError) report.passesDeferred.push(day);
      else report.failures.push({ day, error });
    }
  }
  const yesterday = days[0] as string;
  const { compactor, expirySweep } = deps;
  if (compactor)
    await oncePerFinalDay(yesterday, deps, report, {
      mark: "compactedAt",
      holder: `compaction ${yesterday}`,
      deferred: report.compactionsDeferred,
      run: async () => {
        report.compactions.push(await compactor.compactDay(yesterday));
      },
    });
  if (expirySweep)
    await oncePerFinalDay(yesterday, deps, report, {
      mark: "sweptAt",
      holder: `expiry sweep ${yesterday}`,
      deferred: report.sweepsDeferred,
      run: async (renew) => {
        report.sweep = await expirySweep(deps.now(), renew);
      },
    });
  return report;
}

/**
 * One day's pass of the schedule. Every pass that writes figures runs whole (its read of the
 * archive and its writes) under the archive lease (`archiveLock`), the one rule without exception
 * (#40): a final pass writes the day sets, which an erasure rewrites, and any pass writes figures
 * and a ledger entry, which a whole-app erasure deletes; a pass that read the archive before an
 * erasure's rewrite could otherwise write them back after it. Held by another, it throws
 * `ArchiveLockedError` at once (the schedule never waits) and the day waits for a later tick: its
 * figures pause while an erasure runs. A day whose last pass was final is skipped without the
 * lease (nothing is read or written). The clock is read once: whether the pass is final, and its
 * `computedAt`, are the same reading.
 */
async function scheduledPass(day: string, deps: RollupDependencies): Promise<DayPassReport> {
  const at = deps.now();
  const pinned: RollupDependencies = { ...deps, now: () => at };
  const previous = await deps.ledger?.pass(day);
  const { archiveLock } = deps;
  if (previous?.final || !archiveLock) return passDay(day, pinned, previous, { skipFinal: true });
  const holder = `${isFinal(day, at, deps) ? "final pass" : "pass"} ${day}`;
  return withArchiveLease(archiveLock, holder, deps.now, (renew) =>
    // The ledger read again under the lease: another run may have passed the day meanwhile.
    rollupDayAllApps(
      day,
      {
        ...pinned,
        checkpoint: async (step) => {
          await renew();
          await deps.checkpoint?.(step);
        },
      },
      { skipFinal: true },
    ),
  );
}

/** A step the schedule runs once a day (`oncePerFinalDay`). */
interface DailyStep {
  /** The field of the ledger's pass that records it. */
  mark: "compactedAt" | "sweptAt";
  holder: string;
  /** Where the day goes when the step waits (the lease held, a CTAS still running). */
  deferred: string[];
  run: (renew: () => Promise<void>) => Promise<void>;
}

/**
 * Runs a step of yesterday once its last pass is final and the step is not recorded on it
 * (`mark`: compacting it to Parquet, `compactedAt`; sweeping what expired, `sweptAt`), then
 * records it: once a day, at the first tick after the grace period. It runs under the archive
 * lease, and is recorded on the ledger's pass as it is under the lease (a whole-app erasure may
 * have rewritten it since). A failed step is a failure of the run (counted, alarmed) and is tried
 * again at the next tick, until it is done or the day stops being yesterday (then `webhook
 * compact` compacts it; the next day's sweep covers every expired day). The lease held by another
 * rewrite, or the day's CTAS still running (adopted once it ends), defer it to a later tick.
 * Nothing is lost either way: the NDJSON stays the source of truth.
 */
async function oncePerFinalDay(
  day: string,
  deps: RollupDependencies,
  report: ScheduledRollupReport,
  step: DailyStep,
) {
  // A day whose pass failed this tick is counted once, for that.
  if (!deps.ledger || report.failures.some((f) => f.day === day)) return;
  const { ledger } = deps;
  try {
    const pass = await ledger.pass(day);
    if (!pass?.final || pass[step.mark] !== undefined) return;
    const run = async (renew: () => Promise<void>) => {
      const current = (await ledger.pass(day)) ?? pass;
      await step.run(renew);
      await ledger.record({ ...current, [step.mark]: deps.now() });
    };
    if (deps.archiveLock) await withArchiveLease(deps.archiveLock, step.holder, deps.now, run);
    else await run(async () => {});
  } catch (error) {
    if (error instanceof ArchiveLockedError || error instanceof CompactionPendingError)
      step.deferred.push(day);
    else report.failures.push({ day, error });
  }
}
