/**
 * The silence rule's input read from the rollup's ledger (#52): the passes of today and of the 14
 * days before (fifteen GETs of `rollup/date=<day>.json`, whatever the number of apps: an app
 * silent for up to 7 days keeps the 7 days before its silence as its history), each app's hours
 * and the pass that last saw it grow. No read or write per app.
 */

import type { RollupLedger } from "../analytics/store/rollup-ledger";
import { utcDay } from "../contracts/bucket-layout";
import { SILENCE_RULE, type SilenceReport, silentApps } from "./silence";

const DAY_MS = 86_400_000;

/**
 * Which apps are silent at `now`, from the ledger alone.
 *
 * @example await silenceFromLedger(ledger, Date.now()) // { silent: [{ appId: "app1", silentForMs: 2_700_000, … }], judged: 40, learning: 0 }
 */
export async function silenceFromLedger(ledger: RollupLedger, now: number): Promise<SilenceReport> {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const dayStarts = Array.from(
    { length: 2 * SILENCE_RULE.historyDays + 1 },
    (_, i) => today - (2 * SILENCE_RULE.historyDays - i) * DAY_MS,
  );
  const passes = await Promise.all(dayStarts.map((d) => ledger.pass(utcDay(d))));
  const apps = new Map<string, { days: Map<number, readonly number[]>; lastSeenAt?: number }>();
  const known: number[] = [];
  passes.forEach((pass, i) => {
    const dayStart = dayStarts[i] as number;
    if (!pass?.hourly) return;
    if (dayStart < today) known.push(dayStart);
    for (const [appId, hours] of Object.entries(pass.hourly)) {
      let app = apps.get(appId);
      if (!app) {
        app = { days: new Map() };
        apps.set(appId, app);
      }
      app.days.set(dayStart, hours);
      const seen = pass.seenAt?.[appId];
      if (seen !== undefined && (app.lastSeenAt === undefined || seen > app.lastSeenAt))
        app.lastSeenAt = seen;
    }
  });
  return silentApps(apps, known, now);
}
