import { describe, expect, it } from "vitest";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import { daysInRange, receiptDaysOf, scheduledDays, scheduledRollup } from "../../shared/analytics/rollup";
import type { ActivityStore, DayWrite, StoredDay } from "../../shared/analytics/store/activity-store";
import { SqlQueryError } from "../../shared/platform/errors";

/** An activity store in memory: enough to see what a rollup wrote (DynamoDB's is tested against DynamoDB Local). */
function memoryActivityStore(): ActivityStore & { writes: DayWrite[] } {
  const writes: DayWrite[] = [];
  const stored = (w: DayWrite): StoredDay => ({ ...w, messageKinds: w.messageKinds });
  return {
    writes,
    day: async (appId, day) => {
      const w = writes.findLast((x) => x.appId === appId && x.day === day);
      return w && stored(w);
    },
    days: async () => [],
    hours: async () => [],
    topGroups: async () => [],
    topUsers: async () => [],
    replace: async (w) => {
      writes.push(w);
      return true;
    },
  };
}

describe("the rollup core", () => {
  it("reads the day's own receipt day (and its edge), or its neighbours too for archives written before edges", () => {
    expect(receiptDaysOf("2026-03-01")).toEqual({ first: "2026-03-01", last: "2026-03-01" });
    expect(receiptDaysOf("2026-03-01", { neighbours: true })).toEqual({
      first: "2026-02-28",
      last: "2026-03-02",
    });
    expect(daysInRange("2026-02-27", "2026-03-01")).toEqual(["2026-02-27", "2026-02-28", "2026-03-01"]);
    expect(scheduledDays(Date.UTC(2026, 0, 1, 0, 5))).toEqual(["2025-12-31", "2026-01-01"]);
  });

  it("counts a failed day and writes nothing of it; the other days still run; final days are skipped", async () => {
    // Prepare
    const store = memoryActivityStore();
    const now = Date.UTC(2026, 0, 2, 12);
    store.writes.push({
      appId: "done",
      day: "2026-01-01",
      figures: {} as never,
      hours: [],
      topGroups: [],
      topUsers: [],
      messageKinds: {},
      computedAt: now - 1000,
      final: true,
      bytesScanned: 0,
    });
    const asked: string[] = [];
    const scopes: unknown[] = [];
    const engine: SqlEngine = {
      name: "duckdb",
      async query(_sql, params, scope) {
        asked.push(`${params?.app} ${params?.day_start}`);
        scopes.push(scope);
        if (params?.app === "broken")
          throw new SqlQueryError("Athena query cancelled: bytes scanned limit", false, "CANCELLED");
        return { columns: [], rows: [], bytesScanned: 10 };
      },
    };

    // Act
    const report = await scheduledRollup(["broken", "done"], {
      engine,
      store,
      now: () => now,
      graceMs: 7_200_000,
    });

    // Assess
    expect(report.failures.map((f) => `${f.appId} ${f.day}`)).toEqual([
      "broken 2026-01-01",
      "broken 2026-01-02",
    ]);
    expect(report.rollups.map((r) => `${r.appId} ${r.day} ${r.outcome} ${r.final}`)).toEqual([
      "done 2026-01-01 skipped true",
      "done 2026-01-02 written false",
    ]);
    expect(store.writes.filter((w) => w.appId === "broken")).toEqual([]);
    expect(asked).toHaveLength(3);
    // Today and yesterday alike: the day's raw archive and its edge, nothing else.
    expect(scopes.at(-1)).toEqual({
      app: "done",
      from: "2026-01-02",
      to: "2026-01-02",
      edges: { from: "2026-01-02", to: "2026-01-02" },
    });
  });
});
