import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utcDayOption } from "../../tools/cli/program";
import { generateHistory } from "../../tools/simulate/generator";
import {
  activityHint,
  ENDS_BEFORE_NOW_SECONDS,
  historyDays,
  historyStartAt,
  parseHistoryStart,
} from "../../tools/simulate/history-start";
import { oneDayHistoryStart } from "../support/clock";

const NOW = Date.parse("2026-11-23T20:30:00Z");
const apps = ["sim-s7-a1", "sim-s7-a2"];

describe("when a simulated history happens", () => {
  it("takes --start as a UTC day (its midnight) or an ISO date-time with its offset", () => {
    expect(parseHistoryStart("2025-11-13")).toBe(Date.parse("2025-11-13T00:00:00Z") / 1000);
    expect(parseHistoryStart("2026-01-02T09:30:00Z")).toBe(Date.parse("2026-01-02T09:30:00Z") / 1000);
    expect(parseHistoryStart("2026-01-02T09:30:00+02:00")).toBe(Date.parse("2026-01-02T07:30:00Z") / 1000);
    for (const bad of ["2025-02-30", "13/11/2025", "yesterday", "2026-01-02T09:30", "", "1763000000"])
      expect(() => parseHistoryStart(bad), bad).toThrow(/expected a UTC day YYYY-MM-DD or a date-time/);
  });

  it("ends a history a minute before now by default, so that today's figures show it", () => {
    // Prepare
    const probe = generateHistory({ events: 500, seed: 7, apps, startAt: 0 });
    const spanSeconds = Math.max(...probe.events.map((e) => e.at)) / 1000;

    // Act
    const startAt = historyStartAt({ spanSeconds, nowMs: NOW });
    const history = generateHistory({ events: 500, seed: 7, apps, startAt });

    // Assess
    const last = Math.max(...history.events.map((e) => e.at));
    expect(NOW - last).toBeGreaterThanOrEqual(ENDS_BEFORE_NOW_SECONDS * 1000);
    expect(NOW - last).toBeLessThan((ENDS_BEFORE_NOW_SECONDS + 1) * 1000);
    expect(historyDays(history.events.map((e) => e.at))).toEqual({ from: "2026-11-23", to: "2026-11-23" });
  });

  it("keeps a given start whatever the time: a seed and a start give the same history", () => {
    const start = parseHistoryStart("2025-11-13");
    expect(historyStartAt({ start, spanSeconds: 5000, nowMs: NOW })).toBe(start);
    expect(historyStartAt({ start, spanSeconds: 5000, nowMs: NOW + 86_400_000 })).toBe(start);
    const a = generateHistory({ events: 300, seed: 7, apps, startAt: start });
    const b = generateHistory({ events: 300, seed: 7, apps, startAt: start });
    expect(a).toEqual(b);
  });

  it("moves only the times: the state a history implies is the same for any start (what --check-only relies on)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }),
        (seed, startAt) => {
          const fixed = generateHistory({ events: 150, seed, apps: ["app"], startAt: 1_763_000_000 });
          const moved = generateHistory({ events: 150, seed, apps: ["app"], startAt });
          expect(moved.expected).toEqual(fixed.expected);
          expect(moved.events.map((e) => e.at - startAt * 1000)).toEqual(
            fixed.events.map((e) => e.at - 1_763_000_000_000),
          );
        },
      ),
      { numRuns: 30 },
    );
  });

  it("names the UTC days of a history, across midnight too", () => {
    expect(historyDays([Date.parse("2026-01-01T23:59:00Z"), Date.parse("2026-01-02T00:01:00Z")])).toEqual({
      from: "2026-01-01",
      to: "2026-01-02",
    });
    expect(historyDays([])).toBeUndefined();
  });

  it("prints the rollup and query commands for the history's days, saying that npm start does today's", () => {
    const today = activityHint(["a1"], { from: "2026-11-23", to: "2026-11-23" }, NOW);
    expect(today).toEqual([
      "Activity figures: npm start recomputes today's every minute; to recompute them now:",
      "  npx webhook rollup --app a1 --from 2026-11-23 --to 2026-11-23",
      "then read them (or open the console's Activity view):",
      "  npx webhook query activity --app a1 --from 2026-11-23 --to 2026-11-23",
    ]);
    const past = activityHint(["a1", "a2"], { from: "2025-11-13", to: "2025-11-14" }, NOW);
    expect(past[0]).toBe(
      "Activity figures: the history is on 2025-11-13 to 2025-11-14; recompute them with:",
    );
    expect(past).toContain("  npx webhook rollup --app a2 --from 2025-11-13 --to 2025-11-14");
  });
});

describe("a day option (rollup, query activity)", () => {
  const day = utcDayOption(() => Date.parse("2026-03-01T00:30:00Z"));

  it("takes a date, today or yesterday (UTC)", () => {
    expect(day("2026-01-02")).toBe("2026-01-02");
    expect(day("today")).toBe("2026-03-01");
    expect(day("yesterday")).toBe("2026-02-28");
  });

  it("refuses anything else in one line", () => {
    for (const bad of ["2026-02-29", "tomorrow", "Today", ""])
      expect(() => day(bad), bad).toThrow("expected a date YYYY-MM-DD, today or yesterday.");
  });
});

describe("the e2e tests' history clock", () => {
  it("puts the e2e tests' histories on one UTC day whatever the time they run (fast-check over the clock)", () => {
    // The e2e activity and console tests read the history's day; just after midnight it is yesterday.
    expect(oneDayHistoryStart(900, Date.parse("2026-01-02T00:05:00Z"))).toEqual({
      startAt: Date.parse("2026-01-01T23:44:00Z") / 1000,
      day: "2026-01-01",
    });
    expect(oneDayHistoryStart(900, Date.parse("2026-01-02T09:00:00Z")).day).toBe("2026-01-02");
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse("2026-01-01T00:00:00Z"), max: Date.parse("2027-01-01T00:00:00Z") }),
        fc.integer({ min: 120, max: 3_600 }),
        (nowMs, lead) => {
          const { startAt, day } = oneDayHistoryStart(lead, nowMs);
          // A history of up to lead - 60 s from startAt ends on `day`, before now.
          const endMs = (startAt + lead - 60) * 1000;
          expect(new Date(startAt * 1000).toISOString().slice(0, 10)).toBe(day);
          expect(new Date(endMs).toISOString().slice(0, 10)).toBe(day);
          expect(endMs).toBeLessThanOrEqual(nowMs);
        },
      ),
    );
  });
});
