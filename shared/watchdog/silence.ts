/**
 * Silence, per app, at no per-app cost (#52): which apps stopped sending, judged from what the
 * rollup already writes (the ledger's per-app hourly deliveries and when each app's day last
 * grew, `store/rollup-ledger.ts`), never from a write per delivery or per app.
 *
 * The rule (`SILENCE_RULE`, docs/operating.md "Silent apps"): an app is **silent** when it has
 * sent nothing for at least 30 minutes and its own history says it would have sent at least 10
 * deliveries meanwhile. What it would have sent is read per hour of the day: for each UTC hour the
 * silence covers (in part: pro rata), the median of that hour's deliveries over the 7 days before
 * the day of its last delivery (so a silence never becomes its usual while it lasts). A quiet night, a quiet hour of any day, expects nothing and alarms nothing; a busy app
 * that stops is silent 30 minutes later; a sparse one after long enough to expect 10 (were
 * deliveries a Poisson process at those rates, a silence is called wrongly once in e^10 ≈ 22,000
 * judgements). An app needs 3 days of passes in the window to be judged.
 */

/** The rule's constants (docs/operating.md, "Silent apps"). */
export const SILENCE_RULE = {
  /** No app is silent before this much time without a delivery. */
  minSilenceMs: 30 * 60_000,
  /** Deliveries the app's history expects over the silence before it is called silent. */
  expectedDeliveries: 10,
  /** The days before the day of an app's last delivery whose hours make its history. */
  historyDays: 7,
  /** Days of the window with a pass needed before an app is judged (a new deployment learns first). */
  minKnownDays: 3,
} as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** What the ledger tells of one app. */
export interface AppDeliveries {
  /** Deliveries per UTC hour (0 to 23) of each day, by the day's start (ms); a day or hour absent had none. */
  days: ReadonlyMap<number, readonly number[]>;
  /** When the rollup last saw the app's figures grow (a pass's start, ms), when known. */
  lastSeenAt?: number;
}

/** A silent app, as the log line, the console and `apps --silent` give it. */
export interface SilentApp {
  appId: string;
  /** When it was last seen delivering (ms): the pass that saw it, or the end of its last hour with deliveries. */
  lastSeenAt: number;
  silentForMs: number;
  /** Deliveries its history expected over the silence (rounded to a tenth). */
  expected: number;
}

export interface SilenceReport {
  at: number;
  silent: SilentApp[];
  /** Apps judged (seen within the window, with enough history). */
  judged: number;
  /** Apps seen but not judged: fewer than `minKnownDays` days of passes in the window. */
  learning: number;
}

/** The UTC hour's start of `at`. @example hourStart(Date.UTC(2026, 0, 2, 10, 5)) // Date.UTC(2026, 0, 2, 10) */
export function hourStart(at: number): number {
  return Math.floor(at / HOUR_MS) * HOUR_MS;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * The deliveries an app usually sends in each hour of the UTC day: the median over the known days
 * of the window (a day with no pass is not known: it is left out, not taken for zero).
 *
 * @example usualHourly(days, [Date.UTC(2026, 0, 1), …])[10] // 42
 */
export function usualHourly(
  days: ReadonlyMap<number, readonly number[]>,
  knownDayStarts: readonly number[],
): number[] {
  const known = knownDayStarts.map((d) => days.get(d));
  return Array.from({ length: 24 }, (_, h) => median(known.map((hours) => hours?.[h] ?? 0)));
}

/**
 * When the app was last seen: the pass that saw its figures grow (a pass every 15 minutes deployed,
 * every minute locally), else the end of its last hour with deliveries (no later than `now`).
 * Undefined when the window holds none.
 */
export function lastSeen(app: AppDeliveries, now: number): number | undefined {
  let lastHour: number | undefined;
  for (const [day, hours] of app.days)
    for (let h = hours.length - 1; h >= 0; h--) {
      const hour = day + h * HOUR_MS;
      if ((hours[h] ?? 0) > 0 && hour <= now) {
        if (lastHour === undefined || hour > lastHour) lastHour = hour;
        break;
      }
    }
  // The pass that saw the figures grow is the finer clock, unless an hour with deliveries began after it.
  if (app.lastSeenAt !== undefined && (lastHour === undefined || lastHour <= app.lastSeenAt))
    return Math.min(now, app.lastSeenAt);
  return lastHour === undefined ? undefined : Math.min(now, lastHour + HOUR_MS);
}

/**
 * The deliveries `usual` (per hour of the day) expects from `from` to `to`: each hour the span
 * covers counts pro rata.
 *
 * @example expectedBetween(usual, Date.UTC(2026, 0, 2, 10, 30), Date.UTC(2026, 0, 2, 11, 0)) // usual[10] / 2
 */
export function expectedBetween(usual: readonly number[], from: number, to: number): number {
  let expected = 0;
  const end = Math.min(to, from + SILENCE_RULE.historyDays * DAY_MS);
  for (let hour = hourStart(from); hour < end; hour += HOUR_MS) {
    const covered = Math.min(end, hour + HOUR_MS) - Math.max(from, hour);
    expected += ((usual[new Date(hour).getUTCHours()] ?? 0) * covered) / HOUR_MS;
  }
  return expected;
}

/**
 * Judges every app the ledger saw in the window (`SILENCE_RULE`). Pure: the ledger's reading is
 * `silenceInputs` (`./ledger-history.ts`).
 *
 * @example silentApps(apps, knownDays, now).silent // [{ appId: "app1", silentForMs: 2_700_000, expected: 31.5, … }]
 */
export function silentApps(
  apps: ReadonlyMap<string, AppDeliveries>,
  knownDayStarts: readonly number[],
  now: number,
): SilenceReport {
  const report: SilenceReport = { at: now, silent: [], judged: 0, learning: 0 };
  for (const [appId, app] of apps) {
    const seen = lastSeen(app, now);
    if (seen === undefined) continue;
    // The history is the 7 days before the day of the last delivery: the silence never becomes
    // the app's usual (judging stays the same as it lasts), until it is older than the window.
    const seenDay = Math.floor(seen / DAY_MS) * DAY_MS;
    const historyFrom = seenDay - SILENCE_RULE.historyDays * DAY_MS;
    const known = knownDayStarts.filter((d) => d >= historyFrom && d < seenDay);
    if (known.length < SILENCE_RULE.minKnownDays) {
      report.learning++;
      continue;
    }
    report.judged++;
    const silentForMs = now - seen;
    if (silentForMs < SILENCE_RULE.minSilenceMs) continue;
    const expected = expectedBetween(usualHourly(app.days, known), seen, now);
    if (expected >= SILENCE_RULE.expectedDeliveries)
      report.silent.push({ appId, lastSeenAt: seen, silentForMs, expected: Math.round(expected * 10) / 10 });
  }
  report.silent.sort((a, b) => b.silentForMs - a.silentForMs || (a.appId < b.appId ? -1 : 1));
  return report;
}
