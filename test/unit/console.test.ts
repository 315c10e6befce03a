import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CloudWatchClient, GetMetricDataCommand } from "@aws-sdk/client-cloudwatch";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headlineTotals } from "../../shared/analytics/rollup";
import type { StoredDay } from "../../shared/analytics/store/activity-store";
import { metricTrigger } from "../../shared/events/metric-trigger";
import {
  INGEST_OUTCOMES,
  PROJECTOR_OUTCOMES,
  quarantineSpikes,
  TRIGGER_METRICS,
} from "../../shared/platform/outcomes";
import { busiestApp, busiestFromTotals } from "../../tools/console/api";
import { isLoopback, PAGE_SCRIPTS, refusal } from "../../tools/console/server";
import { FLOW_SERIES, FLOW_WINDOW_SECONDS, FlowWindow, flowSeriesOf } from "../../tools/local/flow";
import {
  appendLedger,
  compactStats,
  type LedgerLine,
  ledgerFollower,
  readStats,
} from "../../tools/local/state";
import { cloudWatchFlow, cloudWatchQuarantineSpikes } from "../../tools/query/cloudwatch";

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0, 500);

describe("the live flow window", () => {
  it("counts each ingest and projector outcome in its second, per app and for all, and forgets what is older than 15 minutes", () => {
    const w = new FlowWindow();
    w.add([
      { at: NOW, entry: ["outcome", "ingest", "accepted", "a"] },
      { at: NOW - 200, entry: ["outcome", "ingest", "accepted-oversize", "b"] },
      { at: NOW, entry: ["outcome", "ingest", "unauthorized"] },
      { at: NOW - 1_000, entry: ["outcome", "projector", "quarantined", "a"] },
      { at: NOW, entry: ["outcome", "recorder", "archived", "a"] },
      { at: NOW, entry: ["failure", "projector", "ThrottlingException"] },
      { entry: ["outcome", "projector", "projected", "a"] },
      { at: NOW - FLOW_WINDOW_SECONDS * 1000, entry: ["outcome", "projector", "projected", "a"] },
    ]);
    const all = w.snapshot(NOW);
    expect(all.resolutionSeconds).toBe(1);
    expect(all.from).toBe((Math.floor(NOW / 1000) - FLOW_WINDOW_SECONDS + 1) * 1000);
    expect(all.totals).toEqual({
      accepted: 2,
      rejected: 1,
      projected: 0,
      stale: 0,
      "archived-only": 0,
      quarantined: 1,
      failed: 0,
    });
    expect(all.series.accepted.at(-1)).toBe(2);
    expect(all.series.quarantined.at(-2)).toBe(1);
    expect(w.snapshot(NOW, "a").totals).toMatchObject({ accepted: 1, rejected: 0, quarantined: 1 });
    expect(w.snapshot(NOW, "b").totals.accepted).toBe(1);
    expect(w.snapshot(NOW + FLOW_WINDOW_SECONDS * 1000).totals.accepted).toBe(0);
  });

  it("for any lines: an app's counts never exceed all apps', the apps add up to all apps' counts of lines with an app, and every counted line is in its series", () => {
    const line = fc.record({
      at: fc.integer({ min: NOW - FLOW_WINDOW_SECONDS * 1000 + 1000, max: NOW }),
      service: fc.constantFrom("ingest", "projector", "recorder"),
      outcome: fc.constantFrom("accepted", "invalid-body", "projected", "stale", "failed", "archived"),
      app: fc.option(fc.constantFrom("a", "b", "c"), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(line, { maxLength: 200 }), (lines) => {
        const w = new FlowWindow();
        w.add(
          lines.map(
            (l): LedgerLine => ({
              at: l.at,
              entry:
                l.app === undefined
                  ? ["outcome", l.service, l.outcome]
                  : ["outcome", l.service, l.outcome, l.app],
            }),
          ),
        );
        const all = w.snapshot(NOW);
        const perApp = ["a", "b", "c"].map((a) => w.snapshot(NOW, a));
        for (const s of FLOW_SERIES) {
          const counted = lines.filter((l) => flowSeriesOf(l.service, l.outcome) === s);
          expect(all.totals[s]).toBe(counted.length);
          expect(perApp.reduce((n, p) => n + p.totals[s], 0)).toBe(counted.filter((l) => l.app).length);
          const exceeds = perApp.some((p) => p.series[s].some((n, i) => n > (all.series[s][i] ?? 0)));
          expect(exceeds).toBe(false);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("the ledger, followed", () => {
  it("returns each whole line once, with its time; reads a compacted ledger from its start; counts old bare entries too", () => {
    const dir = mkdtempSync(join(tmpdir(), "ledger-"));
    const follow = ledgerFollower(dir);
    expect(follow()).toEqual([]);
    // A line written before the ledger had times (a bare entry).
    writeFileSync(
      join(dir, "outcomes.ndjson"),
      `${JSON.stringify(["outcome", "projector", "stale", "a"])}\n`,
    );
    appendLedger(dir, ["outcome", "ingest", "accepted", "a"], 1_000);
    expect(follow()).toEqual([
      { entry: ["outcome", "projector", "stale", "a"] },
      { at: 1_000, entry: ["outcome", "ingest", "accepted", "a"] },
    ]);
    expect(follow()).toEqual([]);
    // Half a line (being written): read once it is whole.
    appendFileSync(join(dir, "outcomes.ndjson"), '{"at":2000,"entry":["outcome","ingest",');
    expect(follow()).toEqual([]);
    appendFileSync(join(dir, "outcomes.ndjson"), '"accepted"]}\n');
    expect(follow()).toEqual([{ at: 2_000, entry: ["outcome", "ingest", "accepted"] }]);
    expect(readStats(dir).total).toEqual({ projector: { stale: 1 }, ingest: { accepted: 2 } });
    compactStats(dir);
    appendLedger(dir, ["outcome", "projector", "projected", "a"], 3_000);
    expect(follow()).toEqual([{ at: 3_000, entry: ["outcome", "projector", "projected", "a"] }]);
  });

  it("a restart's compaction keeps the lines of the live flow's window in the ledger, and the counters stay the same", () => {
    const dir = mkdtempSync(join(tmpdir(), "ledger-"));
    appendLedger(dir, ["outcome", "ingest", "accepted", "a"], 1_000);
    appendLedger(dir, ["outcome", "projector", "stale", "a"], 2_000);
    appendLedger(dir, ["failure", "projector", "ThrottlingException"], 5_000);
    appendLedger(dir, ["outcome", "ingest", "accepted", "b"], 9_000);
    const before = readStats(dir);
    compactStats(dir, 5_000);
    expect(readStats(dir)).toEqual(before);
    expect(ledgerFollower(dir)()).toEqual([
      { at: 5_000, entry: ["failure", "projector", "ThrottlingException"] },
      { at: 9_000, entry: ["outcome", "ingest", "accepted", "b"] },
    ]);
    compactStats(dir);
    expect(readStats(dir)).toEqual(before);
    expect(ledgerFollower(dir)()).toEqual([]);
  });
});

describe("loopback only", () => {
  it("binds to loopback addresses and localhost, nothing else", () => {
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"])
      expect(isLoopback(host), host).toBe(true);
    for (const host of [
      "0.0.0.0",
      "::",
      "10.0.0.1",
      "192.168.1.2",
      "example.com",
      "localhost.example.com",
      "",
    ])
      expect(isLoopback(host), host).toBe(false);
  });

  it("answers its own Host and Origin only; an API request needs its header; a write needs its Origin and a JSON type", () => {
    const at = { host: "127.0.0.1", port: 4000 };
    const api = { "x-webhook-console": "1" };
    const own = { host: "127.0.0.1:4000", ...api };
    expect(refusal("GET", "/", { host: "127.0.0.1:4000" }, at)).toBeUndefined();
    expect(refusal("HEAD", "/", { host: "127.0.0.1:4000" }, at)).toBeUndefined();
    expect(refusal("GET", "/api/flow", own, at)).toBeUndefined();
    expect(
      refusal("GET", "/api/flow", { ...own, host: "localhost:4000", origin: "http://localhost:4000" }, at),
    ).toBeUndefined();
    expect(refusal("GET", "/api/flow", { ...own, host: "[::1]:4000" }, at)).toBeUndefined();
    // Bound to another loopback address, it answers to that address too.
    expect(
      refusal("GET", "/", { host: "127.0.0.2:4000" }, { host: "127.0.0.2", port: 4000 }),
    ).toBeUndefined();
    expect(refusal("GET", "/", { host: "127.0.0.2:4000" }, at)?.status).toBe(421);
    expect(refusal("GET", "/", { host: "127.0.0.1:4001" }, at)?.status).toBe(421);
    expect(refusal("GET", "/", { host: "rebound.example:4000" }, at)?.status).toBe(421);
    expect(refusal("GET", "/", {}, at)?.status).toBe(421);
    expect(refusal("GET", "/api/flow", { ...own, origin: "http://127.0.0.1:4001" }, at)?.status).toBe(403);
    expect(refusal("GET", "/api/flow", { ...own, origin: "null" }, at)?.status).toBe(403);
    // Another site's image or link: no Origin, no header.
    expect(refusal("GET", "/api/events", { host: "127.0.0.1:4000" }, at)?.status).toBe(403);
    expect(refusal("POST", "/api/events/ab/resend", own, at)?.status).toBe(403);
    expect(
      refusal(
        "POST",
        "/api/events/ab/resend",
        { ...own, origin: "http://127.0.0.1:4000", "content-type": "text/plain" },
        at,
      )?.status,
    ).toBe(415);
    expect(
      refusal(
        "POST",
        "/api/events/ab/resend",
        { ...own, origin: "http://127.0.0.1:4000", "content-type": "application/json" },
        at,
      ),
    ).toBeUndefined();
  });
});

describe("the page's scripts", () => {
  it("serves every module the page loads (index.html's script and the imports that follow), and no other", () => {
    // Prepare: the page's folder, read as the browser would walk it.
    const page = new URL("../../tools/console/page/", import.meta.url);
    const html = readFileSync(new URL("index.html", page), "utf8");
    const loaded = new Set<string>();
    const toVisit = [...html.matchAll(/<script src="\/assets\/([\w.-]+\.js)" type="module">/g)].map(
      (m) => m[1],
    );
    // Act: follow each module's relative imports.
    for (let name = toVisit.pop(); name !== undefined; name = toVisit.pop()) {
      if (loaded.has(name)) continue;
      loaded.add(name);
      const text = readFileSync(new URL(name, page), "utf8");
      toVisit.push(...[...text.matchAll(/^import [^;]+ from "\.\/([\w.-]+\.js)";$/gm)].map((m) => m[1]));
    }
    // Assess
    expect([...loaded].sort()).toEqual([...PAGE_SCRIPTS].sort());
    expect(loaded.size).toBeGreaterThan(1);
  });
});

describe("a deployed stack's flow (CloudWatch)", () => {
  // There is no CloudWatch emulator: a stub client answers GetMetricData as CloudWatch does.
  it("asks for every ingest and projector outcome a minute a bucket over 15 minutes, and sums them into the flow's series", async () => {
    const sent: GetMetricDataCommand[] = [];
    const minute = (m: number) => new Date(Date.UTC(2026, 10, 23, 11, 46 + m));
    const client = {
      send: async (command: GetMetricDataCommand) => {
        sent.push(command);
        const ids = Object.fromEntries(
          (command.input.MetricDataQueries ?? []).map((q) => [
            `${q.MetricStat?.Metric?.MetricName}/${q.MetricStat?.Metric?.Dimensions?.find((d) => d.Name === "outcome")?.Value}`,
            q.Id,
          ]),
        );
        return {
          MetricDataResults: [
            { Id: ids["IngestRequests/accepted"], Timestamps: [minute(14), minute(0)], Values: [120, 60] },
            { Id: ids["IngestRequests/accepted-oversize"], Timestamps: [minute(14)], Values: [3] },
            { Id: ids["IngestRequests/unauthorized"], Timestamps: [minute(13)], Values: [7] },
            { Id: ids["ProjectorEvents/projected"], Timestamps: [minute(14)], Values: [100] },
            { Id: ids["ProjectorEvents/quarantined"], Timestamps: [minute(-5)], Values: [9] },
          ],
        };
      },
    } as unknown as CloudWatchClient;
    const flow = await cloudWatchFlow(client, Date.UTC(2026, 10, 23, 12, 0, 30));
    const input = sent[0]?.input;
    expect(input?.MetricDataQueries?.length).toBe(INGEST_OUTCOMES.length + PROJECTOR_OUTCOMES.length);
    expect(
      input?.MetricDataQueries?.every((q) => q.MetricStat?.Period === 60 && q.MetricStat.Stat === "Sum"),
    ).toBe(true);
    expect(flow.resolutionSeconds).toBe(60);
    expect(flow.from).toBe(minute(0).getTime());
    expect(flow.series.accepted).toHaveLength(15);
    expect(flow.series.accepted[14]).toBe(123);
    expect(flow.series.accepted[0]).toBe(60);
    expect(flow.series.rejected[13]).toBe(7);
    expect(flow.totals).toMatchObject({ accepted: 183, rejected: 7, projected: 100, quarantined: 0 });
  });
});

describe("the app the per-app views open on", () => {
  const stored = (day: string, figures: Record<string, number>): StoredDay => ({
    appId: "x",
    day,
    figures: figures as StoredDay["figures"],
    messageKinds: {},
    platforms: {},
    computedAt: NOW,
    final: false,
    bytesScanned: 0,
  });

  it("is the busiest: most messages, then active users, then anything counted; an app without figures last", () => {
    // Prepare: the README's quick start: a curl's app and a trigger's sort before the simulation's.
    const apps = [
      { app: "2598234fa1e3b9c", days: [stored("2026-11-23", { groups_created: 1 })] },
      { app: "my-app", days: [] },
      { app: "sim-s7-a1", days: [stored("2026-11-23", { messages: 40, active_users: 9 })] },
      { app: "sim-s7-a2", days: [stored("2026-11-23", { messages: 38, active_users: 12 })] },
    ];
    // Act, Assess
    expect(busiestApp(apps)).toBe("sim-s7-a1");
    expect(busiestApp(apps.filter((a) => a.app !== "sim-s7-a1"))).toBe("sim-s7-a2");
    expect(busiestApp(apps.filter((a) => !a.app.startsWith("sim")))).toBe("2598234fa1e3b9c");
    expect(
      busiestApp([
        { app: "b", days: [] },
        { app: "a", days: [] },
      ]),
    ).toBe("a");
    expect(busiestApp([])).toBeUndefined();
  });

  it("does not depend on the order the apps are listed in", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            app: fc.string({ minLength: 1, maxLength: 6 }),
            messages: fc.nat(5),
            users: fc.nat(5),
          }),
          { selector: (a) => a.app, minLength: 1, maxLength: 8 },
        ),
        (listed) => {
          const apps = listed.map((a) => ({
            app: a.app,
            days: [stored("2026-11-23", { messages: a.messages, active_users: a.users })],
          }));
          expect(busiestApp([...apps].reverse())).toBe(busiestApp(apps));
          const top = Math.max(...listed.map((a) => a.messages));
          expect(listed.find((a) => a.app === busiestApp(apps))?.messages).toBe(top);
        },
      ),
    );
  });
  it("ranks the same from the rollup ledger's totals as from each app's stored days (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            app: fc.string({ minLength: 1, maxLength: 6 }),
            days: fc.array(
              fc.record({ messages: fc.nat(5), active_users: fc.nat(5), groups_created: fc.nat(3) }),
              {
                maxLength: 3,
              },
            ),
          }),
          { selector: (a) => a.app, minLength: 1, maxLength: 8 },
        ),
        (listed) => {
          const apps = listed.map((a) => ({
            app: a.app,
            days: a.days.map((f, i) => stored(`2026-11-2${i}`, f)),
          }));
          // The ledger: each app's headline totals per day it had a pass, summed.
          const totals = new Map(
            listed
              .filter((a) => a.days.length > 0)
              .map((a) => {
                const perDay = a.days.map((f) => headlineTotals(stored("2026-11-20", f)));
                return [
                  a.app,
                  {
                    totals: perDay.reduce((s, t) => t.map((n, i) => n + (s[i] ?? 0)), [] as number[]),
                    days: perDay.length,
                  },
                ] as const;
              }),
          );
          const withDays = apps.filter((a) => a.days.length > 0);
          if (withDays.length) expect(busiestFromTotals(totals)).toBe(busiestApp(withDays));
        },
      ),
    );
  });
});

describe("the quarantine-rate highlight (#30)", () => {
  const lines = (trigger: string, outcome: string, n: number, app = "a"): LedgerLine[] =>
    Array.from({ length: n }, (_, i) => ({
      at: NOW - i * 1000,
      entry: ["outcome", "projector", outcome, app, trigger],
    }));

  it("highlights a trigger with more than 5% of at least 20 events quarantined over the window, per app and for all", () => {
    const w = new FlowWindow();
    w.add([
      ...lines("message_edited", "archived-only", 18),
      ...lines("message_edited", "quarantined", 2),
      ...lines("message_sent", "archived-only", 100),
      ...lines("message_sent", "quarantined", 5),
      // 19 events: too few to judge, however bad.
      ...lines("group_member_banned", "quarantined", 19, "b"),
      ...lines("made_up_trigger", "archived-only", 30),
    ]);
    expect(w.snapshot(NOW).spikes).toEqual([
      { trigger: "message_edited", events: 20, quarantined: 2, share: 10 },
    ]);
    expect(w.snapshot(NOW, "b").spikes).toEqual([]);
    expect(w.snapshot(NOW + FLOW_WINDOW_SECONDS * 1000).spikes).toEqual([]);
  });

  it("counts a trigger the projector does not model as (other), so the metrics stay bounded", () => {
    expect(metricTrigger("message_edited")).toBe("message_edited");
    expect(metricTrigger("x".repeat(90))).toBe("(other)");
    expect(quarantineSpikes([{ trigger: "(other)", events: 40, quarantined: 3 }])).toEqual([
      { trigger: "(other)", events: 40, quarantined: 3, share: 7.5 },
    ]);
  });

  it("reads a deployed stack's per-trigger counts over the window from CloudWatch (a stub: there is no emulator)", async () => {
    const sent: GetMetricDataCommand[] = [];
    const client = {
      send: async (command: GetMetricDataCommand) => {
        sent.push(command);
        return {
          MetricDataResults: (command.input.MetricDataQueries ?? []).flatMap((q) => {
            const trigger = q.MetricStat?.Metric?.Dimensions?.find((d) => d.Name === "trigger")?.Value;
            if (trigger !== "message_deleted") return [];
            const quarantined = q.MetricStat?.Metric?.MetricName === TRIGGER_METRICS.quarantined;
            return [{ Id: q.Id, Timestamps: [new Date(NOW)], Values: [quarantined ? 30 : 40] }];
          }),
        };
      },
    } as unknown as CloudWatchClient;
    const spikes = await cloudWatchQuarantineSpikes(client, NOW);
    expect(sent[0]?.input.MetricDataQueries?.every((q) => q.MetricStat?.Period === 900)).toBe(true);
    expect(spikes).toEqual([{ trigger: "message_deleted", events: 40, quarantined: 30, share: 75 }]);
  });
});
