/**
 * The silence rule's input read from the rollup's ledger (#52, #58): the passes of today and of
 * the 28 days before (29 GETs of `rollup/date=<day>.json`, whatever the number of apps: an app
 * silent for up to 7 days keeps the 21 days before its silence as its history), each app's hours,
 * the pass that last saw it grow and in which quarters of the hour. No read or write per app.
 */

import type { DayPass, RollupLedger } from "../analytics/store/rollup-ledger";
import { utcDay } from "../contracts/bucket-layout";
import { SILENCE_RULE, type SilenceReport, silentApps } from "./silence";

const DAY_MS = 86_400_000;

/** The days (their starts, ms, oldest first) whose passes the rule reads at `now`. */
export function silenceDays(now: number): number[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const days = SILENCE_RULE.historyDays + SILENCE_RULE.maxSilenceDays;
  return Array.from({ length: days + 1 }, (_, i) => today - (days - i) * DAY_MS);
}

/**
 * Which apps are silent at `now`, from the passes of `silenceDays(now)` (pure: what
 * `silenceFromLedger` runs once they are read, and what the judge, `bench/watchdog.ts`, runs at
 * every tick).
 */
export function silenceFromPasses(
  pass: (dayStart: number) => DayPass | undefined,
  now: number,
): SilenceReport {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const apps = new Map<
    string,
    { days: Map<number, readonly number[]>; quarters: Map<number, readonly number[]>; lastSeenAt?: number }
  >();
  const known: number[] = [];
  for (const dayStart of silenceDays(now)) {
    const day = pass(dayStart);
    if (!day?.hourly) continue;
    if (dayStart < today) known.push(dayStart);
    for (const [appId, hours] of Object.entries(day.hourly)) {
      let app = apps.get(appId);
      if (!app) {
        app = { days: new Map(), quarters: new Map() };
        apps.set(appId, app);
      }
      app.days.set(dayStart, hours);
      const quarters = day.quarters?.[appId];
      if (quarters) app.quarters.set(dayStart, quarters);
      const seen = day.seenAt?.[appId];
      if (seen !== undefined && (app.lastSeenAt === undefined || seen > app.lastSeenAt))
        app.lastSeenAt = seen;
    }
  }
  return silentApps(apps, known, now);
}

/**
 * Which apps are silent at `now`, from the ledger alone.
 *
 * @example await silenceFromLedger(ledger, Date.now()) // { silent: [{ appId: "app1", silentForMs: 2_700_000, … }], judged: 40, learning: 0 }
 */
export async function silenceFromLedger(ledger: RollupLedger, now: number): Promise<SilenceReport> {
  const days = silenceDays(now);
  const passes = await Promise.all(days.map((d) => ledger.pass(utcDay(d))));
  const byDay = new Map(days.map((d, i) => [d, passes[i]]));
  return silenceFromPasses((d) => byDay.get(d), now);
}
