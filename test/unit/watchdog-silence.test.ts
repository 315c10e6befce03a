import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AppDeliveries,
  expectedBetween,
  SILENCE_RULE,
  silentApps,
  usualHourly,
} from "../../shared/watchdog/silence";
import {
  DAY_MS,
  drawQuarters,
  EPOCH,
  HOUR_MS,
  KNOWN_DAYS,
  ledgerView,
  QUARTER_MS,
  type RateProfile,
} from "../support/drawn-deliveries";

const TODAY = EPOCH + 7 * DAY_MS;
const MIN = 60_000;

const profileArb: fc.Arbitrary<RateProfile> = fc.record({
  dayRate: fc.double({ min: 0.5, max: 400, noNaN: true }),
  quietFrom: fc.integer({ min: 0, max: 23 }),
  quietHours: fc.integer({ min: 0, max: 10 }),
  nightRate: fc.constantFrom(0, 0, 0.2, 1),
  quietDays: fc.constantFrom<readonly number[]>([], [], [5, 6]),
});

const judge = (app: AppDeliveries, now: number, known = KNOWN_DAYS) =>
  silentApps(new Map([["app", app]]), known, now);
const isSilent = (app: AppDeliveries, now: number) => judge(app, now).silent.length === 1;

describe("the silence rule (#52), on drawn histories", () => {
  it("never calls an app silent within 30 minutes of its last delivery, whatever its history", () => {
    fc.assert(
      fc.property(profileArb, fc.integer(), fc.integer({ min: 1, max: 95 }), (profile, seed, q) => {
        const quarters = drawQuarters(profile, seed);
        const at = TODAY + q * QUARTER_MS;
        const app = ledgerView(quarters, at);
        if (app.lastSeenAt === undefined) return;
        for (const after of [0, 1, 15, 29])
          expect(isSilent({ ...app, lastSeenAt: at - after * MIN }, at)).toBe(false);
      }),
    );
  });

  it("calls an app that stops silent 30 minutes after the pass that last saw it, where its usual hour holds 20 deliveries or more", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 40, max: 2000, noNaN: true }),
        fc.integer(),
        fc.integer({ min: 4, max: 80 }),
        (dayRate, seed, stopQuarter) => {
          // Prepare: a busy app (no quiet hours) that stops during today
          const profile = { dayRate, quietFrom: 0, quietHours: 0, nightRate: 0, quietDays: [] };
          const stopAt = TODAY + stopQuarter * QUARTER_MS;
          const quarters = drawQuarters(profile, seed, 8, stopAt);
          const app = ledgerView(quarters, stopAt + 2 * HOUR_MS);
          fc.pre(app.lastSeenAt !== undefined && usualHourly(app.days, KNOWN_DAYS).every((n) => n >= 20));
          const seen = app.lastSeenAt as number;

          // Act / Assess: silent from 30 minutes on, for as long as it lasts, with how long
          expect(isSilent(app, seen + 29 * MIN)).toBe(false);
          for (const after of [30, 45, 60, 120]) {
            const report = judge(app, seen + after * MIN);
            expect(report.silent).toEqual([
              expect.objectContaining({ appId: "app", lastSeenAt: seen, silentForMs: after * MIN }),
            ]);
          }
        },
      ),
    );
  });

  it("stays silent once silent while nothing comes (monotone in time)", () => {
    fc.assert(
      fc.property(profileArb, fc.integer(), fc.integer({ min: 1, max: 90 }), (profile, seed, stopQuarter) => {
        const stopAt = TODAY + stopQuarter * QUARTER_MS;
        const quarters = drawQuarters(profile, seed, 8, stopAt);
        let silent = false;
        // Through the next midnight too: the day it stopped never becomes its usual.
        for (let at = stopAt; at <= TODAY + 2 * DAY_MS; at += QUARTER_MS) {
          const now = isSilent(ledgerView(quarters, at), at);
          if (silent) expect(now).toBe(true);
          silent = now;
        }
      }),
    );
  });

  it("alarms nothing over quiet hours that sent nothing on most days of the week before", () => {
    fc.assert(
      fc.property(
        profileArb.filter((p) => p.quietHours >= 2 && p.quietDays.length === 0),
        fc.integer(),
        (profile, seed) => {
          // Prepare: the app sends nothing at night (nightRate 0), today as every day
          const quarters = drawQuarters({ ...profile, nightRate: 0 }, seed, 9);
          const nightStart = TODAY + profile.quietFrom * HOUR_MS;
          // Act / Assess: every pass of the night
          for (let at = nightStart; at <= nightStart + profile.quietHours * HOUR_MS; at += QUARTER_MS)
            expect(isSilent(ledgerView(quarters, at), at)).toBe(false);
        },
      ),
    );
  });

  it("does not judge an app until 3 days of the window have passes, and says it is learning", () => {
    const app: AppDeliveries = {
      days: new Map([[TODAY - DAY_MS, Array.from({ length: 24 }, (_, h) => (h === 22 ? 500 : 0))]]),
      lastSeenAt: TODAY - HOUR_MS,
    };
    expect(judge(app, TODAY + 6 * HOUR_MS, KNOWN_DAYS.slice(-2))).toMatchObject({
      silent: [],
      judged: 0,
      learning: 1,
    });
    // A day without a pass is left out, not taken for a day of zeros: 3 known busy days judge it.
    const busy = new Map(KNOWN_DAYS.map((d) => [d, Array<number>(24).fill(100)] as const));
    const known = KNOWN_DAYS.slice(-3);
    expect(judge({ days: busy, lastSeenAt: TODAY }, TODAY + HOUR_MS, known).silent).toHaveLength(1);
  });

  it("expects deliveries pro rata of the hours a silence covers", () => {
    const usual = Array.from({ length: 24 }, (_, h) => h);
    expect(expectedBetween(usual, TODAY + 10.5 * HOUR_MS, TODAY + 12 * HOUR_MS)).toBeCloseTo(5 + 11);
    expect(expectedBetween(usual, TODAY + 23 * HOUR_MS, TODAY + 25 * HOUR_MS)).toBeCloseTo(23 + 0);
  });
});

/**
 * The false alarms of a rule on drawn apps that never stop: every 15-minute pass of day 7
 * judged, an alarm counted when an app turns silent. Returns alarms per app-day.
 */
function falseAlarms(
  rule: (app: AppDeliveries, now: number) => boolean,
  profiles: readonly RateProfile[],
  seeds: number,
): number {
  let alarms = 0;
  for (const profile of profiles)
    for (let seed = 1; seed <= seeds; seed++) {
      const quarters = drawQuarters(profile, seed * 7919);
      let silent = false;
      for (let at = TODAY + QUARTER_MS; at <= TODAY + DAY_MS; at += QUARTER_MS) {
        const now = rule(ledgerView(quarters, at), at);
        if (now && !silent) alarms++;
        silent = now;
      }
    }
  return alarms / (profiles.length * seeds);
}

/** The example rule: no delivery for max(30 min, 10 × the median gap of the last 7 days). */
function medianGapRule(app: AppDeliveries, now: number): boolean {
  const seen = app.lastSeenAt;
  if (seen === undefined) return false;
  // Gaps from the hours: c deliveries in an hour are c gaps of 1/c hour; an empty run one gap.
  const gaps: Array<[number, number]> = [];
  let empty = 0;
  for (let hour = TODAY - 7 * DAY_MS; hour < TODAY; hour += HOUR_MS) {
    const day = Math.floor(hour / DAY_MS) * DAY_MS;
    const c = app.days.get(day)?.[(hour - day) / HOUR_MS] ?? 0;
    if (c === 0) empty++;
    else {
      if (empty) gaps.push([empty * HOUR_MS, 1]);
      gaps.push([HOUR_MS / c, c]);
      empty = 0;
    }
  }
  gaps.sort((a, b) => a[0] - b[0]);
  const total = gaps.reduce((n, [, w]) => n + w, 0);
  let median = 0;
  for (let acc = 0, i = 0; i < gaps.length && acc < total / 2; i++) {
    acc += gaps[i]?.[1] ?? 0;
    median = gaps[i]?.[0] ?? 0;
  }
  return now - seen >= Math.max(SILENCE_RULE.minSilenceMs, 10 * median);
}

describe("false alarms on a quiet night and a quiet day, counted (docs/operating.md)", () => {
  // Apps busy by day (5 to 300 deliveries an hour) and quiet for 6 hours at night (0 to 1 an hour).
  const nights: RateProfile[] = [5, 20, 60, 300].flatMap((dayRate) =>
    [0, 0.2, 1].map((nightRate) => ({ dayRate, quietFrom: 0, quietHours: 6, nightRate, quietDays: [] })),
  );
  // Weekday-only apps judged on their first quiet day (day 7 is a Monday: day 5 is drawn as today).
  const weekend: RateProfile[] = [5, 60].map((dayRate) => ({
    dayRate,
    quietFrom: 0,
    quietHours: 0,
    nightRate: 0,
    quietDays: [0],
  }));

  it("the rule gives under 1 false alarm in 50 app-nights; the median-gap rule one or more a night", () => {
    const rule = (app: AppDeliveries, now: number) => isSilent(app, now);
    const ours = falseAlarms(rule, nights, 25);
    const example = falseAlarms(medianGapRule, nights, 25);
    const quietDay = falseAlarms(rule, weekend, 25);
    console.log(
      `false alarms per app-day (${nights.length * 25} app-days, quiet 00-06 UTC): the rule ${ours.toFixed(3)}, ` +
        `10 × median gap ${example.toFixed(3)}; a weekday-only app on its first quiet day: ${quietDay.toFixed(2)}`,
    );
    expect(ours).toBeLessThan(0.02);
    expect(example).toBeGreaterThanOrEqual(1);
    // Known and documented: a day the app does not send on, the rule does not know from a median
    // of 7 days (5 busy): one alarm that day.
    expect(quietDay).toBeGreaterThan(0.9);
  });
});
