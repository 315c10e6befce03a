import { describe, expect, it } from "vitest";
import { generateHistory } from "../../tools/simulate/generator";
import { receiptTimes, runSimulation } from "../../tools/simulate/run";
import { runApp } from "../../tools/simulate/seed-choice";
import { summaryLines } from "../../tools/simulate/summary";

/**
 * The silent-app demo's pieces (#61, item 2; the demo itself runs as docs/operating.md writes it
 * in test/e2e/readme.test.ts): a history stored as received over days, an app named by the end of
 * its id whatever seed the run picked, and a platform that sends nothing for a disabled webhook.
 */
describe("simulate --days, --stop-app a2", () => {
  it("stores each delivery as received a second after its event, in the plan's order, strictly later each", () => {
    expect(receiptTimes([{ at: 10_000 }, { at: 5_000 }, { at: 10_000 }, { at: 30_000.4 }])).toEqual([
      11_000, 11_001, 11_002, 31_001,
    ]);
  });

  it("hands every delivery to the store with its receipt time instead of posting it, and reports the store's answers", async () => {
    // Prepare: a history over days (the pace --days picks), a store that records what it is given.
    const stored: Array<{ body: string; receivedAt: number }> = [];
    const startAt = Date.UTC(2026, 0, 1) / 1000;

    // Act
    const report = await runSimulation({
      url: "http://127.0.0.1:9/never",
      username: "u",
      password: "p",
      events: 60,
      rate: 100_000,
      concurrency: 4,
      seed: 5,
      apps: ["d1", "d2"],
      startAt,
      pace: 3_000,
      duplicateShare: 0,
      reorderShare: 0,
      settleTimeoutSeconds: 1,
      storeAt: async (delivery, receivedAt) => {
        stored.push({ body: delivery.body, receivedAt });
        return 200;
      },
    });

    // Assess: all stored, none posted (the URL answers nothing), receipts integer ms, over days.
    expect(report.byStatus).toEqual({ 200: report.sent });
    expect(stored.length).toBe(report.sent);
    expect(stored.every((s) => Number.isInteger(s.receivedAt))).toBe(true);
    const history = generateHistory({ events: 60, seed: 5, apps: ["d1", "d2"], startAt, pace: 3_000 });
    expect(new Set(stored.map((s) => s.body))).toEqual(new Set(history.events.map((e) => e.body)));
    const span = Math.max(...stored.map((s) => s.receivedAt)) - Math.min(...stored.map((s) => s.receivedAt));
    expect(span).toBeGreaterThan(86_400_000);
  });

  it("names an app of the run by its id or the end of it, whatever the seed", () => {
    expect(runApp("a2", ["sim-s8-a1", "sim-s8-a2"])).toBe("sim-s8-a2");
    expect(runApp("sim-s8-a1", ["sim-s8-a1", "sim-s8-a2"])).toBe("sim-s8-a1");
    expect(runApp("sim-s7-a2", ["sim-s8-a1", "sim-s8-a2"])).toBeUndefined();
    expect(runApp("2", ["sim-s8-a1", "sim-s8-a2"])).toBeUndefined();
  });

  it("counts deliveries the platform's stand-in did not send (no webhook) as no failure; a refusal still is", () => {
    const base = {
      sent: 10,
      byTrigger: {},
      seconds: 1,
      deliveriesPerSecond: 10,
      interrupted: false,
      dropped: 0,
    };
    expect(summaryLines({ ...base, byStatus: { 200: 6, unsubscribed: 4 }, problems: [] }, 10).code).toBe(0);
    expect(summaryLines({ ...base, byStatus: { 200: 6, 401: 4 }, problems: [] }, 10).code).toBe(1);
  });
});
