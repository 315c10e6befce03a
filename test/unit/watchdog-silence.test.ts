import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addWatchEntry, watchEntry, watchFields } from "../../shared/analytics/rollup/ledger";
import type { DayPass } from "../../shared/analytics/store/rollup-ledger";
import { silenceFromPasses } from "../../shared/watchdog/ledger-history";
import { clockShift, SILENCE_RULE } from "../../shared/watchdog/silence";
import { poisson, uniform } from "../support/drawn-deliveries";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const PASS = 15 * MIN;

/**
 * An app's deliveries (per minute, from `rate(t)`: deliveries that minute) written to the ledger
 * as the rollup writes it (`watchEntry` at a pass every 15 minutes, a minute after `phase`), and
 * the rule's answer at every pass from `judgeFrom`: the passes at which the app was silent.
 */
function silentPasses(
  rate: (minuteStart: number) => number,
  options: { from: number; to: number; judgeFrom: number; stopAt?: number; phase?: number; seed?: number },
): number[] {
  const next = uniform(options.seed ?? 1);
  const hours = new Map<number, number[]>();
  const passes = new Map<number, DayPass>();
  const silent: number[] = [];
  let minute = options.from;
  for (let t = options.from + (options.phase ?? 7 * MIN); t < options.to; t += PASS) {
    for (; minute < t - MIN; minute += MIN) {
      const n = options.stopAt !== undefined && minute >= options.stopAt ? 0 : poisson(rate(minute), next);
      if (n === 0) continue;
      const day = Math.floor(minute / DAY) * DAY;
      const h = hours.get(day) ?? Array<number>(24).fill(0);
      const at = Math.floor((minute - day) / HOUR);
      h[at] = (h[at] ?? 0) + n;
      hours.set(day, h);
    }
    const today = Math.floor(t / DAY) * DAY;
    for (const day of [today - DAY, today]) {
      if (day < today && t > day + DAY + 2 * HOUR) continue;
      const fields = watchFields();
      const h = hours.get(day);
      if (h) addWatchEntry(fields, "app", watchEntry("app", [...h], passes.get(day), t));
      passes.set(day, {
        day: "",
        computedAt: t,
        final: false,
        queries: 0,
        bytesScanned: 0,
        apps: {},
        ...fields,
      });
    }
    if (t >= options.judgeFrom && silenceFromPasses((d) => passes.get(d), t).silent.length) silent.push(t);
  }
  return silent;
}

/** A local day: nothing from 22:00 to 07:00, `peak` an hour between, in `zone`. */
function localDay(zone: string, peak: number) {
  const format = new Intl.DateTimeFormat("en-US", { timeZone: zone, hour: "numeric", hourCycle: "h23" });
  const cache = new Map<number, number>();
  return (t: number) => {
    const hour = Math.floor(t / HOUR);
    let local = cache.get(hour);
    if (local === undefined) {
      local = Number(format.format(t));
      cache.set(hour, local);
    }
    return local >= 7 && local < 22 ? peak / 60 : 0;
  };
}

const MONDAY = Date.UTC(2026, 5, 1);

describe("the silence rule (#58), on the ledger the rollup writes", () => {
  it("judges a new app on its own history from its first delivery: a stop on its third day is found within an hour", () => {
    // Prepare: the deployment's passes run for weeks; the app's first delivery comes on day 21, 120 an hour
    const first = MONDAY + 21 * DAY + 9 * HOUR;
    const stopAt = first + 2 * DAY + 5 * HOUR;
    // Act
    const silent = silentPasses((t) => (t >= first ? 2 : 0), {
      from: MONDAY,
      to: stopAt + 3 * HOUR,
      judgeFrom: MONDAY,
      stopAt,
    });
    // Assess: never silent before the stop; silent within the hour after it
    expect(silent.filter((t) => t < stopAt)).toEqual([]);
    expect(silent[0]).toBeGreaterThan(stopAt);
    expect(silent[0]).toBeLessThanOrEqual(stopAt + HOUR);
  });

  it("does not page an app that sends its hour at the top of it, and finds it at the next top of the hour when it stops", () => {
    // 60 deliveries each hour, within its first 3 minutes (a scheduled job)
    const rate = (t: number) => ((t % HOUR) / MIN < 3 ? 20 : 0);
    const from = MONDAY;
    const stopAt = MONDAY + 28 * DAY + 10 * HOUR + 30 * MIN;
    const silent = silentPasses(rate, { from, to: stopAt + 3 * HOUR, judgeFrom: from + 7 * DAY, stopAt });
    expect(silent.filter((t) => t < stopAt)).toEqual([]);
    // The first delivery its rhythm expects is at 11:00: found by the pass after it.
    expect(silent[0]).toBeGreaterThan(stopAt + 30 * MIN);
    expect(silent[0]).toBeLessThanOrEqual(stopAt + 30 * MIN + 45 * MIN);
  });

  it("does not page a local-time app after either clock change (Europe/Berlin, America/New_York), nor a weekday-only app on its weekend", () => {
    for (const [zone, change] of [
      ["Europe/Berlin", Date.UTC(2026, 9, 25)],
      ["Europe/Berlin", Date.UTC(2026, 2, 29)],
      ["America/New_York", Date.UTC(2026, 10, 1)],
      ["America/New_York", Date.UTC(2026, 2, 8)],
    ] as const) {
      const silent = silentPasses(localDay(zone, 150), {
        from: change - 28 * DAY,
        to: change + 10 * DAY,
        judgeFrom: change - 2 * DAY,
        seed: change,
      });
      expect(silent, `${zone} ${new Date(change).toISOString()}`).toEqual([]);
    }
    const weekdays = localDay("UTC", 200);
    const silent = silentPasses((t) => ([0, 6].includes(new Date(t).getUTCDay()) ? 0 : weekdays(t)), {
      from: MONDAY,
      to: MONDAY + 35 * DAY,
      judgeFrom: MONDAY + 21 * DAY,
    });
    expect(silent).toEqual([]);
  });

  it("tells an EU or US clock change from the days around it", () => {
    expect(clockShift(Date.UTC(2026, 9, 20), Date.UTC(2026, 9, 27))).toBe(-1);
    expect(clockShift(Date.UTC(2026, 2, 1), Date.UTC(2026, 2, 10))).toBe(1);
    expect(clockShift(Date.UTC(2026, 5, 1), Date.UTC(2026, 5, 20))).toBe(0);
  });

  it("never calls an app silent within 30 minutes of the pass that last saw it, whatever its rate", () => {
    fc.assert(
      fc.property(fc.double({ min: 0.2, max: 600, noNaN: true }), fc.integer(), (perHour, seed) => {
        const stopAt = MONDAY + 14 * DAY + 11 * HOUR;
        const silent = silentPasses(() => perHour / 60, {
          from: MONDAY,
          to: stopAt + 2 * HOUR,
          judgeFrom: MONDAY + 13 * DAY,
          stopAt,
          seed,
        });
        // The last pass that could have seen a delivery is the first after the stop.
        for (const t of silent) expect(t >= stopAt + SILENCE_RULE.minSilenceMs).toBe(true);
      }),
      { numRuns: 15 },
    );
  });
});
