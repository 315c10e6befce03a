/**
 * Silence, per app, at no per-app cost (#52, #58): which apps stopped sending, judged from what
 * the rollup already writes (the ledger's per-app hourly deliveries, when each app's day last
 * grew and in which quarters of the hour, `store/rollup-ledger.ts`), never from a write per
 * delivery or per app.
 *
 * The rule (`SILENCE_RULE`, docs/operating.md "Silent apps"): an app is **silent** when it has
 * sent nothing for at least 30 minutes and its own history says it would have sent at least
 * `expectedDeliveries` meanwhile. Its history is its own: the 21 days before the day of its last
 * delivery, from the day of its first delivery (a new app is judged from its second day, on what
 * it has sent so far). What it usually sends in an hour is read in its week: the median of that
 * hour on the same weekday (at least 2 of them; before, that hour of every day of its history,
 * the smallest), and the least of that hour and the hours either side, so that a clock change
 * (its day moving by an hour in UTC) never expects an hour it has not reached. When in an hour:
 * the passes after its last one seen each expect the share of the hour its history saw in that
 * quarter of the hour (an app that sends at the top of each hour expects nothing at :45).
 */

/** The rule's constants (docs/operating.md, "Silent apps"). */
export const SILENCE_RULE = {
  /** No app is silent before this much time without a delivery. */
  minSilenceMs: 30 * 60_000,
  /** Deliveries the app's history expects over the silence before it is called silent. */
  expectedDeliveries: 20,
  /** The days before the day of an app's last delivery whose hours make its history (3 weeks). */
  historyDays: 21,
  /** The longest silence the ledger's window keeps judging (the window read: history + this + today). */
  maxSilenceDays: 7,
  /** Whole days of its own history (after the day of its first delivery) before an app is judged. */
  minHistoryDays: 1,
  /** Same weekdays in its history before an hour is read in the app's week, not in its day. */
  minSameWeekdays: 2,
  /** Days after a clock change of `CLOCK_ZONES` during which an hour is read with its neighbour (`clockShift`). */
  clockChangeDays: 15,
  /** The rollup's schedule: the passes a silence spans are this far apart. */
  passEveryMs: 15 * 60_000,
} as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const QUARTER_MS = HOUR_MS / 4;

/** What the ledger tells of one app. */
export interface AppDeliveries {
  /** Deliveries per UTC hour (0 to 23) of each day with a pass that saw it, by the day's start (ms). */
  days: ReadonlyMap<number, readonly number[]>;
  /** Each day's deliveries by the quarter of the hour of the pass that saw them (absent: evenly). */
  quarters?: ReadonlyMap<number, readonly number[]>;
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
  /** Apps judged (seen within the window, with a whole day of their own history). */
  judged: number;
  /** Apps seen but not judged yet: their first delivery came today or yesterday. */
  learning: number;
}

/** The UTC hour's start of `at`. @example hourStart(Date.UTC(2026, 0, 2, 10, 5)) // Date.UTC(2026, 0, 2, 10) */
export function hourStart(at: number): number {
  return Math.floor(at / HOUR_MS) * HOUR_MS;
}

const dayOf = (at: number) => Math.floor(at / DAY_MS) * DAY_MS;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
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

/** The app's first hour with a delivery in the window (ms), if any. */
function firstHour(app: AppDeliveries): number | undefined {
  let first: number | undefined;
  for (const [day, hours] of app.days) {
    const h = hours.findIndex((n) => n > 0);
    if (h >= 0 && (first === undefined || day + h * HOUR_MS < first)) first = day + h * HOUR_MS;
  }
  return first;
}

/**
 * The zones whose clock changes move most apps' days (the EU's and North America's rules; a zone
 * with none, or another rule, is not tolerated this way: docs/operating.md).
 */
export const CLOCK_ZONES = ["Europe/Berlin", "America/New_York"] as const;
const offsetFormats = CLOCK_ZONES.map(
  (timeZone) => new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" }),
);
const offsetCache = new Map<number, number[]>();

/** Each of `CLOCK_ZONES`' UTC offset (minutes) on the day of `at`. */
function offsetsOn(at: number): number[] {
  const day = dayOf(at) + 12 * HOUR_MS;
  let offsets = offsetCache.get(day);
  if (!offsets) {
    offsets = offsetFormats.map((f) => {
      const name = f.formatToParts(day).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
      const m = /GMT([+-])(\d\d):(\d\d)/.exec(name);
      return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
    });
    if (offsetCache.size > 400) offsetCache.clear();
    offsetCache.set(day, offsets);
  }
  return offsets;
}

/**
 * +1 when a clock of `CLOCK_ZONES` went forward (spring: a local day comes an hour earlier in
 * UTC) between `from` and `now`, -1 when one went back (autumn: an hour later), else 0.
 *
 * @example clockShift(Date.UTC(2026, 9, 20), Date.UTC(2026, 9, 27)) // -1 (the EU's change of 25 October)
 */
export function clockShift(from: number, now: number): -1 | 0 | 1 {
  const since = offsetsOn(from);
  const at = offsetsOn(now);
  if (at.some((o, i) => o > (since[i] ?? o))) return 1;
  return at.some((o, i) => o < (since[i] ?? o)) ? -1 : 0;
}

/** An app's usual week: what it sends in an hour of it, and in which quarters of an hour. */
export interface UsualWeek {
  /** Deliveries usually sent in the UTC hour starting at `hour` (ms), tolerant of a clock change. */
  expectedIn(hour: number): number;
  /** The share of an hour's deliveries its passes see in each quarter of the hour (sums to 1). */
  quarterShares: readonly number[];
}

/**
 * The app's usual week from its history days (the days from its first delivery to the day
 * before its last one seen, each with a pass): per hour of the week the median of the same
 * weekday's hour (once `minSameWeekdays` of them), else the least of that hour over every
 * history day; then the least of the hour and its two neighbours (a clock change moves its day
 * by an hour in UTC).
 *
 * @example usualWeek(app, historyDays, firstHour).expectedIn(Date.UTC(2026, 0, 5, 10)) // 42
 */
export function usualWeek(
  app: AppDeliveries,
  historyDays: readonly number[],
  firstDeliveryHour: number,
  now: number,
): UsualWeek {
  const byHourOfWeek = new Map<number, number>();
  const countAt = (day: number, h: number) =>
    day + h * HOUR_MS < firstDeliveryHour ? undefined : (app.days.get(day)?.[h] ?? 0);
  const hourOfWeek = (hour: number): number => {
    const key = Math.floor(hour / HOUR_MS) % (7 * 24);
    const cached = byHourOfWeek.get(key);
    if (cached !== undefined) return cached;
    const h = new Date(hour).getUTCHours();
    const weekday = new Date(hour).getUTCDay();
    const same: number[] = [];
    const any: number[] = [];
    for (const day of historyDays) {
      const n = countAt(day, h);
      if (n === undefined) continue;
      any.push(n);
      if (new Date(day).getUTCDay() === weekday) same.push(n);
    }
    const usual =
      same.length >= SILENCE_RULE.minSameWeekdays ? median(same) : any.length ? Math.min(...any) : 0;
    byHourOfWeek.set(key, usual);
    return usual;
  };
  const quarters = [0, 0, 0, 0];
  for (const day of historyDays) {
    const q = app.quarters?.get(day);
    if (q) for (let i = 0; i < 4; i++) quarters[i] = (quarters[i] ?? 0) + (q[i] ?? 0);
  }
  const seen = quarters.reduce((a, b) => a + b, 0);
  // After a clock change its day comes an hour later (autumn) or earlier (spring) in UTC: an hour
  // expects no more than the hour before it (autumn) or after it (spring) did, while most of the
  // same weekdays of its history are from before the change (`clockChangeDays` before the day of
  // its last delivery; past that, their median has moved with it).
  const seenDay = (historyDays.at(-1) ?? dayOf(now)) + DAY_MS;
  const shift = clockShift(
    Math.max(historyDays[0] ?? now, seenDay - SILENCE_RULE.clockChangeDays * DAY_MS),
    now,
  );
  return {
    expectedIn: (hour) => Math.min(hourOfWeek(hour), shift ? hourOfWeek(hour + shift * HOUR_MS) : Infinity),
    quarterShares: seen > 0 ? quarters.map((n) => n / seen) : [0.25, 0.25, 0.25, 0.25],
  };
}

/**
 * The deliveries `usual` expects the passes after `from` up to `to` to see: each pass (every
 * `passEveryMs` after the one that last saw the app) expects its hour's usual deliveries times
 * the share the app's passes usually see in that quarter of the hour. Capped at `maxSilenceDays`.
 *
 * @example expectedBetween(usual, Date.UTC(2026, 0, 2, 10, 7), Date.UTC(2026, 0, 2, 10, 37)) // usual 40 an hour, evenly: 20
 */
export function expectedBetween(usual: UsualWeek, from: number, to: number): number {
  let expected = 0;
  const end = Math.min(to, from + SILENCE_RULE.maxSilenceDays * DAY_MS);
  for (let pass = from + SILENCE_RULE.passEveryMs; pass <= end; pass += SILENCE_RULE.passEveryMs) {
    const quarter = Math.floor((pass % HOUR_MS) / QUARTER_MS);
    // A pass sees what came since the one before: at the top of an hour, the end of the hour before too.
    const hourly = Math.min(
      usual.expectedIn(hourStart(pass)),
      usual.expectedIn(hourStart(pass - SILENCE_RULE.passEveryMs)),
    );
    expected += (hourly * (usual.quarterShares[quarter] ?? 0) * SILENCE_RULE.passEveryMs) / QUARTER_MS;
  }
  return expected;
}

/**
 * Judges every app the ledger saw in the window (`SILENCE_RULE`). Pure: the ledger's reading is
 * `silenceFromPasses` (`./ledger-history.ts`). `knownDayStarts`: the days with a pass (a day
 * without one is left out, never taken for a day of zeros).
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
    const first = firstHour(app);
    if (seen === undefined || first === undefined) continue;
    // Its own history: from the day after its first delivery's (a whole day), to the day before its
    // last delivery's (anchored there, the silence never becomes the app's usual while it lasts).
    const seenDay = dayOf(seen);
    const historyFrom = Math.max(dayOf(first), seenDay - SILENCE_RULE.historyDays * DAY_MS);
    const history = knownDayStarts.filter((d) => d >= historyFrom && d < seenDay);
    if (dayOf(now) - dayOf(first) <= SILENCE_RULE.minHistoryDays * DAY_MS || history.length === 0) {
      report.learning++;
      continue;
    }
    report.judged++;
    const silentForMs = now - seen;
    if (silentForMs < SILENCE_RULE.minSilenceMs) continue;
    const expected = expectedBetween(usualWeek(app, history, first, now), seen, now);
    if (expected >= SILENCE_RULE.expectedDeliveries)
      report.silent.push({ appId, lastSeenAt: seen, silentForMs, expected: Math.round(expected * 10) / 10 });
  }
  report.silent.sort((a, b) => b.silentForMs - a.silentForMs || (a.appId < b.appId ? -1 : 1));
  return report;
}
