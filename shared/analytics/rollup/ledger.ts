/**
 * What the rollup ledger keeps of an app's day (`store/rollup-ledger.ts`): a digest of what its
 * write stored, so that a pass over every app rewrites only the apps whose figures moved, and its
 * headline totals, so that the console ranks apps without a query per app; and its deliveries per
 * hour and when a pass last saw them grow, what the watchdog judges silence from (#52).
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import type { DayActivity } from "../figures";
import type { DayPass } from "../store/rollup-ledger";
import { dayStart } from "./days";

const HOUR_MS = 3_600_000;

const sum = (values: readonly number[] | undefined) => (values ?? []).reduce((a, b) => a + b, 0);

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

/**
 * When a pass at `computedAt` saw an app's deliveries of `day` arrive: its start, while the day
 * lasts (the schedule's passes: their clock is the finer one); a pass after the day's end (a past
 * day recomputed, `webhook rollup` over a history, #61) did not see them arrive then: the end of the
 * day's last hour with deliveries.
 *
 * @example seenBy("2026-01-02", [0, 4], Date.parse("2026-01-05T00:00:00Z")) // Date.parse("2026-01-02T02:00:00Z")
 */
export function seenBy(day: string, hourly: readonly number[], computedAt: number): number {
  const last = hourly.findLastIndex((n) => n > 0);
  if (last < 0 || computedAt < dayStart(day) + 24 * HOUR_MS) return computedAt;
  return dayStart(day) + (last + 1) * HOUR_MS;
}

/**
 * When an app was last seen delivering on a day, as this pass records it: this pass's start when
 * its deliveries grew since the previous pass of the day (or it had none), else what the previous
 * pass recorded. Undefined for an app with no delivery in the day.
 *
 * @example lastSeenAt("app1", [0, 4], { hourly: { app1: [0, 3] }, … }, 1000) // 1000
 */
export function lastSeenAt(
  appId: string,
  hourly: readonly number[],
  previous: Pick<DayPass, "hourly" | "seenAt"> | undefined,
  computedAt: number,
): number | undefined {
  const now = sum(hourly);
  if (now === 0) return undefined;
  const before = previous?.seenAt?.[appId];
  return before !== undefined && sum(previous?.hourly?.[appId]) >= now ? before : computedAt;
}

/** What a pass records of an app's day for the watchdog (#52, #58): its hours, when it was last seen to grow, and in which quarters of the hour. */
export interface WatchEntry {
  hourly: number[];
  seenAt?: number;
  quarters?: number[];
}

/**
 * The watchdog's part of an app's day as this pass records it, from its deliveries per hour and
 * the previous pass of the day: the hours, when last seen growing (`lastSeenAt`), and the growth
 * since the previous pass added to the quarter of the hour this pass runs in. What `passDay`
 * writes, and what the judge (`bench/watchdog.ts`) replays at every tick.
 *
 * @example watchEntry("app1", [0, 4], previous, Date.UTC(2026, 0, 2, 1, 7)) // { hourly: [0, 4], seenAt: …, quarters: [4, 0, 0, 0] }
 */
export function watchEntry(
  appId: string,
  hourly: number[],
  previous: Pick<DayPass, "hourly" | "seenAt" | "quarters"> | undefined,
  computedAt: number,
): WatchEntry {
  const seen = lastSeenAt(appId, hourly, previous, computedAt);
  const quarters = [...(previous?.quarters?.[appId] ?? [0, 0, 0, 0])];
  const grown = sum(hourly) - sum(previous?.hourly?.[appId]);
  if (grown > 0) {
    const q = Math.floor((computedAt % 3_600_000) / 900_000);
    quarters[q] = (quarters[q] ?? 0) + grown;
  }
  return seen === undefined ? { hourly, quarters } : { hourly, seenAt: seen, quarters };
}

/** The watchdog's fields of a pass, as `passDay` records them. */
export type WatchFields = Required<Pick<DayPass, "hourly" | "seenAt" | "quarters">>;

/** An empty set of the watchdog's fields of a pass. */
export function watchFields(): WatchFields {
  return { hourly: {}, seenAt: {}, quarters: {} };
}

/** Puts an app's `WatchEntry` into a pass's fields. */
export function addWatchEntry(into: WatchFields, appId: string, entry: WatchEntry): void {
  into.hourly[appId] = entry.hourly;
  if (entry.seenAt !== undefined) into.seenAt[appId] = entry.seenAt;
  if (entry.quarters !== undefined) into.quarters[appId] = entry.quarters;
}
