import { describe, expect, it } from "vitest";
import { type ArchiveLease, ArchiveLockedError } from "../../shared/adapters/archive-lease";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import { daysInRange, receiptDaysOf, scheduledDays, scheduledRollup } from "../../shared/analytics/rollup";
import type { ActivityStore, DayWrite, StoredDay } from "../../shared/analytics/store/activity-store";
import type { DayPass, RollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { type UserSetStore, userSetKey } from "../../shared/analytics/user-sets";
import { CompactionPendingError, SqlQueryError } from "../../shared/platform/errors";
import { watchedRollup } from "../../shared/watchdog/scheduled";

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

/** The rollup's ledger in memory (its S3 adapter is read and written by the integration tests' passes). */
function memoryLedger() {
  const passes = new Map<string, DayPass>();
  const ledger: RollupLedger = {
    pass: async (day) => passes.get(day),
    record: async (p) => {
      passes.set(p.day, p);
    },
    apps: async () => [...new Set([...passes.values()].flatMap((p) => Object.keys(p.apps)))],
    appTotals: async () => new Map(),
  };
  return { passes, ledger };
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

  it("runs one query a day for every app, writes only apps whose figures changed, and skips a final day", async () => {
    // Prepare: an engine that answers every app's day rows for 3 apps; the ledger in memory.
    const store = memoryActivityStore();
    const { ledger } = memoryLedger();
    const asked: unknown[] = [];
    let messages = 1;
    const engine: SqlEngine = {
      name: "duckdb",
      async query(_sql, params, scope) {
        asked.push({ app: params?.app, day: params?.day, scope });
        return {
          columns: [],
          rows: ["a1", "a2", "ä 3/x"].map((app) => ({
            app,
            grouping_set: 31,
            messages: app === "a1" ? messages : 1,
          })),
          bytesScanned: 10,
        };
      },
    };
    let now = Date.UTC(2026, 0, 2, 1);
    const deps = { engine, store, ledger, now: () => now, graceMs: 7_200_000 };

    // Act: a pass, then one where only a1 moved, then one after yesterday's grace.
    const first = await scheduledRollup(deps);
    messages = 2;
    now += 900_000;
    const second = await scheduledRollup(deps);
    now = Date.UTC(2026, 0, 2, 3);
    await scheduledRollup(deps);
    const after = await scheduledRollup(deps);

    // Assess
    expect(first.passes.map((p) => `${p.day} ${p.queries} ${p.rollups.length}`)).toEqual([
      "2026-01-01 1 3",
      "2026-01-02 1 3",
    ]);
    expect(asked[0]).toEqual({
      app: "",
      day: "2026-01-01",
      scope: { from: "2026-01-01", to: "2026-01-01", edges: { from: "2026-01-01", to: "2026-01-01" } },
    });
    expect(second.passes[1]?.rollups.map((r) => `${r.appId} ${r.outcome}`)).toEqual([
      "a1 written",
      "a2 unchanged",
      "ä 3/x unchanged",
    ]);
    expect(
      store.writes
        .filter((w) => w.day === "2026-01-01" && w.final)
        .map((w) => w.appId)
        .sort(),
    ).toEqual(["a1", "a2", "ä 3/x"]);
    // Yesterday final in the ledger: not read again.
    expect(after.passes[0]).toMatchObject({ day: "2026-01-01", outcome: "skipped", queries: 0 });
    expect(asked).toHaveLength(7);
  });

  it("reports a failed day and records no pass for it; the other day still runs", async () => {
    // Prepare
    const store = memoryActivityStore();
    const { passes, ledger } = memoryLedger();
    const now = Date.UTC(2026, 0, 2, 12);
    const engine: SqlEngine = {
      name: "duckdb",
      async query(_sql, params) {
        if (params?.day === "2026-01-01")
          throw new SqlQueryError("Athena query cancelled: bytes scanned limit", false, "CANCELLED");
        return { columns: [], rows: [{ app: "done", grouping_set: 31, messages: 3 }], bytesScanned: 10 };
      },
    };

    // Act
    const report = await scheduledRollup({ engine, store, ledger, now: () => now, graceMs: 7_200_000 });

    // Assess
    expect(report.failures.map((f) => `${f.appId ?? "every app"} ${f.day}`)).toEqual([
      "every app 2026-01-01",
    ]);
    expect(report.passes.map((p) => `${p.day} ${p.rollups.map((r) => `${r.appId} ${r.outcome}`)}`)).toEqual([
      "2026-01-02 done written",
    ]);
    expect(store.writes.map((w) => `${w.appId} ${w.day}`)).toEqual(["done 2026-01-02"]);
    expect([...passes.keys()]).toEqual(["2026-01-02"]);
  });

  it("passes every day (final or not) under the archive lease; held by another, each day waits for a later tick with nothing read or written", async () => {
    // Prepare: the lease and the day sets in memory; a tick after yesterday's grace.
    const store = memoryActivityStore();
    const { passes, ledger } = memoryLedger();
    const taken: string[] = [];
    let holder: string | undefined = "erasure e1";
    const archiveLock: ArchiveLease = {
      async acquire(who) {
        if (holder !== undefined && holder !== who) throw new ArchiveLockedError(holder);
        holder = who;
        taken.push(who);
      },
      async renew() {},
      async release(who) {
        if (holder === who) holder = undefined;
      },
    };
    const objects = new Map<string, Uint8Array>();
    const userSets: UserSetStore = {
      blobs: {
        bucket: "b",
        put: async (key, body) => {
          objects.set(key, typeof body === "string" ? new TextEncoder().encode(body) : body);
          return { bucket: "b", key, size: 0 };
        },
        getText: async () => {
          throw Object.assign(new Error("NoSuchKey"), { name: "NoSuchKey" });
        },
        getBytes: async () => {
          throw Object.assign(new Error("NoSuchKey"), { name: "NoSuchKey" });
        },
        getBytesIfPresent: async () => undefined,
      },
      list: async (prefix) => [...objects.keys()].filter((k) => k.startsWith(prefix)),
    };
    const asked: unknown[] = [];
    const engine: SqlEngine = {
      name: "duckdb",
      async query(_sql, params) {
        asked.push(params?.day);
        return { columns: [], rows: [{ app: "a1", grouping_set: 31, messages: 3 }], bytesScanned: 10 };
      },
    };
    const deps = {
      engine,
      store,
      ledger,
      archiveLock,
      userSets,
      now: () => Date.UTC(2026, 0, 2, 3),
      graceMs: 7_200_000,
    };

    // Act: a tick while an erasure holds the lease, then one after it released it.
    const blocked = await scheduledRollup(deps);
    holder = undefined;
    const after = await scheduledRollup(deps);

    // Assess: every pass writes figures, so both waited (nothing read, nothing written), then
    // passed under the lease, each as a run of its own (its name and a run id).
    expect(blocked.passesDeferred).toEqual(["2026-01-01", "2026-01-02"]);
    expect(blocked.failures).toEqual([]);
    expect(blocked.passes).toEqual([]);
    expect(asked).toEqual(["2026-01-01", "2026-01-02"]);
    expect(store.writes.filter((w) => w.day === "2026-01-02")).toHaveLength(1);
    expect(after.passesDeferred).toEqual([]);
    expect(after.passes.map((p) => `${p.day} ${p.final}`)).toEqual(["2026-01-01 true", "2026-01-02 false"]);
    expect(taken).toEqual([
      expect.stringMatching(/^final pass 2026-01-01 [0-9a-f]{8}$/),
      expect.stringMatching(/^pass 2026-01-02 [0-9a-f]{8}$/),
    ]);
    expect(holder).toBeUndefined();
    expect(passes.get("2026-01-01")?.final).toBe(true);
    expect([...objects.keys()]).toContain(userSetKey("2026-01-01"));
  });

  it("defers yesterday's compaction while its CTAS still runs (not a failure), and records it once adopted", async () => {
    // Prepare: a final day, and a compactor whose first call finds its query running.
    const store = memoryActivityStore();
    const { passes, ledger } = memoryLedger();
    let running = true;
    const compactor = {
      async compactDay(day: string) {
        if (running) throw new CompactionPendingError(day, "q-7");
        return { day, parquet: ["p"], sources: ["s"], rows: -1, bytes: 1, compactedAt: 1 };
      },
    };
    const engine: SqlEngine = {
      name: "athena",
      query: async () => ({ columns: [], rows: [], bytesScanned: 0 }),
    };
    const deps = { engine, store, ledger, compactor, now: () => Date.UTC(2026, 0, 2, 3), graceMs: 7_200_000 };

    // Act
    const first = await scheduledRollup(deps);
    running = false;
    const second = await scheduledRollup(deps);

    // Assess
    expect(first.compactionsDeferred).toEqual(["2026-01-01"]);
    expect(first.failures).toEqual([]);
    expect(second.compactions.map((c) => c.day)).toEqual(["2026-01-01"]);
    expect(passes.get("2026-01-01")?.compactedAt).toBe(deps.now());
  });

  it("records a compaction on the ledger's pass as it is under the lease: an erasure that removed an app from it just before is not undone", async () => {
    // Prepare: yesterday final in the ledger with two apps; the lease, when the compaction takes
    // it, finds that a whole-app erasure has just removed a1 from the pass (its lease released).
    const store = memoryActivityStore();
    const { passes, ledger } = memoryLedger();
    const day = "2026-01-01";
    passes.set(day, {
      day,
      computedAt: Date.UTC(2026, 0, 2, 2, 30),
      final: true,
      queries: 1,
      bytesScanned: 10,
      apps: { a1: "d1", a2: "d2" },
      totals: { a1: [1, 1, 2], a2: [3, 1, 4] },
    });
    const archiveLock: ArchiveLease = {
      async acquire(who) {
        const pass = passes.get(day);
        if (who.startsWith("compaction") && pass) {
          const { a1: _digest, ...apps } = pass.apps;
          const { a1: _totals, ...totals } = pass.totals ?? {};
          passes.set(day, { ...pass, apps, totals });
        }
      },
      renew: async () => undefined,
      release: async () => undefined,
    };
    const compactor = {
      compactDay: async (d: string) => ({
        day: d,
        parquet: ["p"],
        sources: ["s"],
        rows: -1,
        bytes: 1,
        compactedAt: 1,
      }),
    };
    const engine: SqlEngine = {
      name: "duckdb",
      query: async () => ({ columns: [], rows: [], bytesScanned: 0 }),
    };
    const now = () => Date.UTC(2026, 0, 2, 3);

    // Act
    const report = await scheduledRollup({
      engine,
      store,
      ledger,
      compactor,
      archiveLock,
      now,
      graceMs: 7_200_000,
    });

    // Assess: compacted and recorded, a1 still gone from the pass.
    expect(report.compactions.map((c) => c.day)).toEqual([day]);
    expect(passes.get(day)?.compactedAt).toBe(now());
    expect(passes.get(day)?.apps).toEqual({ a2: "d2" });
    expect(passes.get(day)?.totals).toEqual({ a2: [3, 1, 4] });
  });
});

describe("the watchdog on the rollup's pass (#52)", () => {
  it("records each app's hourly deliveries and when a pass last saw it grow, and finds a busy app silent 30 minutes after", async () => {
    // Prepare: a week of passes in the ledger (busy: 120 deliveries an hour; sparse: 1 at 03:00)
    const store = memoryActivityStore();
    const { passes, ledger } = memoryLedger();
    const today = Date.UTC(2026, 0, 9);
    for (let d = 1; d <= 7; d++) {
      const day = new Date(today - d * 86_400_000).toISOString().slice(0, 10);
      passes.set(day, {
        ...{ day, computedAt: today, final: true, queries: 1, bytesScanned: 0, apps: {} },
        hourly: {
          busy: Array(24).fill(120),
          sparse: Array.from({ length: 24 }, (_, h) => (h === 3 ? 1 : 0)),
        },
      });
    }
    // Today the busy app sends until 10:00 and stops; the sparse app sent at 03:00.
    const engine: SqlEngine = {
      name: "duckdb",
      async query(_sql, params) {
        if (params?.day !== "2026-01-09") return { columns: [], rows: [], bytesScanned: 0 };
        const rows = [
          ...Array.from({ length: 10 }, (_, hour) => ({
            app: "busy",
            grouping_set: 31,
            hour,
            messages: 120,
          })),
          { app: "sparse", grouping_set: 31, hour: 3, messages: 1 },
        ];
        return { columns: [], rows, bytesScanned: 10 };
      },
    };
    let now = today + 10 * 3_600_000;
    const deps = { engine, store, ledger, now: () => now, graceMs: 7_200_000 };

    // Act: a pass at 10:00 (the busy app's last deliveries), then at 10:15, 10:29 and 10:45 (nothing new)
    const first = await watchedRollup(deps);
    const reports = [first];
    for (const minutes of [15, 29, 45]) {
      now = today + 10 * 3_600_000 + minutes * 60_000;
      reports.push(await watchedRollup(deps));
    }

    // Assess: the ledger keeps the hours and the pass that saw the app grow (not the later ones)
    const pass = passes.get("2026-01-09");
    expect(pass?.hourly?.busy?.slice(0, 11)).toEqual([...Array(10).fill(120), 0]);
    expect(pass?.seenAt).toEqual({ busy: today + 10 * 3_600_000, sparse: today + 10 * 3_600_000 });
    expect(reports.map((r) => r.silence?.silent.map((s) => s.appId))).toEqual([[], [], [], ["busy"]]);
    expect(reports[3]?.silence).toMatchObject({
      judged: 2,
      silent: [{ appId: "busy", lastSeenAt: today + 10 * 3_600_000, silentForMs: 45 * 60_000, expected: 90 }],
    });
  });
});

describe("the figures an hour's deliveries add up (#61: tagged on the figures, not listed twice)", () => {
  it("are the figures that count facts one by one: no level, sum of seconds, percentile or distinct count", async () => {
    const { FACT_COUNTS, FIGURE_NAMES } = await import("../../shared/analytics/figures");
    const { deliveriesOf } = await import("../../shared/analytics/deliveries");
    expect(FACT_COUNTS.length).toBe(30);
    for (const name of [
      "messages",
      "member_joins",
      "calls_started",
      "recordings",
      "transcripts",
      "users_online",
    ])
      expect(FACT_COUNTS).toContain(name);
    for (const name of FIGURE_NAMES.filter((n) =>
      /_(p\d+_ms|seconds|at_start|change)$|^peak_|^active_/.test(n),
    ))
      expect(FACT_COUNTS).not.toContain(name);
    expect(deliveriesOf({ messages: 3, read_receipts: 2, active_users: 2, peak_online: 9 })).toBe(5);
  });
});
