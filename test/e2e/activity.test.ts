import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { freePort } from "../../tools/local/emulators";
import { type LocalStack, startLocalStack } from "../../tools/local/stack";
import { scanArchive } from "../../tools/ops/archive-scan";
import { checkActivity } from "../../tools/simulate/check";
import type { SimulationReport } from "../../tools/simulate/run";
import { simulateActivityDay } from "../support/activity-day";
import { oneDayHistoryStart } from "../support/clock";
import { once } from "../support/once";

const ROOT = new URL("../../", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "activity-e2e-"));
const APP = "e2e-activity";
let stack: LocalStack;
let report: SimulationReport;
let firstReceipt: Map<string, number>;
const DAY_MS = 86_400_000;
// The history's day: today, unless the test runs just after midnight (then yesterday, whole).
const history = oneDayHistoryStart(900);
const today = history.day;
const at = (day: string) => Date.parse(`${day}T12:00:00Z`);
const [yesterday, tomorrow] = [utcDay(at(today) - DAY_MS), utcDay(at(today) + DAY_MS)];

/** `npx webhook …` in its own process, against the local stack of `dir`. */
async function cli(args: string[]) {
  const child = spawn(
    join(ROOT, "node_modules/.bin/node"),
    [join(ROOT, "bin/webhook.mjs"), ...args, "--state-dir", dir],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stdout, stderr };
}

beforeAll(async () => {
  // The timer off: the test recomputes with the CLI (the timer runs the same pass, rollupDayAllApps).
  stack = await startLocalStack({
    port: await freePort(),
    stateDir: dir,
    inMemory: true,
    logMode: "silent",
    activityEveryMinutes: 0,
  });
  // Event times around now, so the days recomputed are the days received; the simulation
  // recomputes its day and checks the activity items.
  ({ report } = await simulateActivityDay(stack.info, { app: APP, events: 600, seed: 9, history }));
  // Each event's first receipt at the edge, as archived: membership events fall on it.
  firstReceipt = new Map();
  const { s3 } = stack.clients;
  await scanArchive(s3, stack.info.bucket, { appId: APP }, "oldest", (line) => {
    firstReceipt.set(line.eventId, Math.min(firstReceipt.get(line.eventId) ?? Infinity, line.receivedAt));
  });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

/** `query activity` of today with `flags`, as JSON. */
async function todaysJson(...flags: string[]) {
  const r = await cli([
    "query",
    "activity",
    "--app",
    APP,
    "--from",
    today,
    "--to",
    today,
    ...flags,
    "--json",
  ]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** `query activity` of today with `flags`, as printed: its one row, by column. */
async function todaysRow(...flags: string[]): Promise<Record<string, string | undefined>> {
  const r = await cli(["query", "activity", "--app", APP, "--from", today, "--to", today, ...flags]);
  expect(r.code, r.stderr).toBe(0);
  const [header, row] = r.stdout
    .trim()
    .split("\n")
    .filter((l) => !/^-+/.test(l));
  const cells = (row ?? "").split(/\s+/);
  return Object.fromEntries((header ?? "").split(/\s+/).map((column, i) => [column, cells[i]]));
}

/**
 * `webhook rollup` of the days around the history, run once, by the first test that needs the
 * days computed (the tests pass in any order, issue #56; the simulation computed only its own day).
 */
const rollupOnce = once(() => cli(["rollup", "--app", APP, "--from", yesterday, "--to", tomorrow, "--json"]));

describe("activity analytics on the local stack", () => {
  it("recomputes the simulated days with `webhook rollup`, and the activity table holds what the history implies", async () => {
    // Act
    const rollup = await rollupOnce();

    // Assess
    expect(report.problems).toEqual([]);
    expect(rollup.code).toBe(0);
    const { queries, rollups: results } = JSON.parse(rollup.stdout) as {
      queries: number;
      rollups: Array<{ day: string; outcome: string; bytesScanned: number }>;
    };
    expect(queries).toBe(3);
    expect(results.map((r) => r.outcome)).toEqual(["written", "written", "written"]);
    expect(results.find((r) => r.day === today)?.bytesScanned).toBeGreaterThan(0);
    const store = dynamoActivityStore(documentClient(stack.clients.dynamo), stack.info.activityTable ?? "");
    const receivedAt = (e: { body: string }) =>
      firstReceipt.get(createHash("sha256").update(e.body).digest("hex")) ?? Number.NaN;
    expect(await checkActivity(report.history, store, receivedAt)).toEqual([]);
  });

  it("reads the figures back with `query activity`: each day with when it was computed and whether it is final", async () => {
    await rollupOnce();
    const out = await cli(["query", "activity", "--app", APP, "--from", today, "--to", today, "--json"]);
    expect(out.code).toBe(0);
    const { days } = JSON.parse(out.stdout) as {
      days: Array<{ day: string; final: boolean; computedAt: number; figures: { messages: number } }>;
    };
    expect(days).toHaveLength(1);
    expect(days[0]).toMatchObject({ day: today, final: false });
    expect(days[0]?.figures.messages).toBeGreaterThan(0);
    const hourly = await cli(["query", "activity", "--app", APP, "--from", today, "--to", today, "--hourly"]);
    expect(hourly.code).toBe(0);
    expect(hourly.stdout).toMatch(/^day\s+hour\s+messages/);
    const top = await todaysJson("--top", "users");
    expect(top[0].users.length).toBeGreaterThan(0);
    // --calls and --latency (#33): the day's row as stored; --heatmap: today's weekday row is today's hourly peaks.
    const figures = (JSON.parse(out.stdout).days[0] as { figures: Record<string, number> }).figures;
    const calls = await todaysRow("--calls", "--wide");
    expect(Number(calls.calls_ended)).toBe(figures.calls_ended);
    expect(Number(calls.sessions_under_1m)).toBe(figures.sessions_under_1m);
    expect(Number(calls.call_participants)).toBe(figures.call_participants);
    expect(figures.calls_ended).toBeGreaterThan(0);
    const latency = await todaysRow("--latency", "--wide");
    expect(Number(latency.read_latencies)).toBe(figures.read_latencies);
    expect(Number(latency.read_latency_p90_s)).toBe((figures.read_latency_p90_ms ?? Number.NaN) / 1000);
    expect(figures.read_latencies).toBeGreaterThan(0);
    const heatmap = await todaysJson("--heatmap");
    const hours = (await todaysJson("--hourly"))[0].hours as Array<{
      hour: number;
      figures: Record<"peak_online" | "peak_calls", number>;
    }>;
    const weekday =
      ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][new Date(`${today}T00:00:00Z`).getUTCDay()] ?? "";
    const peaks = hours.map((h) => h.figures.peak_online);
    // Today's hours up to the computation's; the heatmap leaves the later ones null (#42, walk-2).
    const grid = (figure: "peak_online" | "peak_calls") =>
      Array.from({ length: 24 }, (_, h) => hours.find((x) => x.hour === h)?.figures[figure] ?? null);
    expect(hours.map((h) => h.hour)).toEqual(hours.map((_, i) => i));
    expect(heatmap.peakOnline[weekday]).toEqual(grid("peak_online"));
    expect(heatmap.peakCalls[weekday]).toEqual(grid("peak_calls"));
    expect(Math.max(...peaks)).toBeGreaterThan(0);
  });

  it("prints within 100 columns by default (every figure with --wide), the heatmap's hours in order, and says why users over time are blank (#42)", async () => {
    await rollupOnce();
    const range = ["query", "activity", "--app", APP, "--from", yesterday, "--to", today];
    for (const flags of [
      [],
      ["--hourly"],
      ["--calls"],
      ["--latency"],
      ["--heatmap"],
      ["--groups"],
      ["--users"],
      ["--retention"],
    ]) {
      const r = await cli([...range, ...flags]);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trimEnd().split("\n");
      expect(
        // (A command a note suggests stays whole on its line, to be copied: here it names the test's state dir.)
        lines.filter((l) => [...l].length > 100 && !l.startsWith("    npx webhook ")),
        flags.join(" "),
      ).toEqual([]);
    }
    // --wide: the one table of every figure, as before (266 columns for the days).
    const wide = await cli([...range, "--wide"]);
    expect(wide.stdout.split("\n")[0]).toMatch(
      /^day\s+messages\s+active_users\s+active_senders\s.*\splatforms\s+computedAt\s+final$/,
    );
    const hours = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, "0"));
    const heatmap = (await cli([...range, "--heatmap"])).stdout.split("\n");
    expect(heatmap.filter((l) => /^\d\d /.test(l)).map((l) => l.slice(0, 2))).toEqual([...hours, ...hours]);
    const wideHeatmap = (await cli([...range, "--heatmap", "--wide"])).stdout.split("\n");
    expect(wideHeatmap[0]?.split(/\s+/)).toEqual(["peak", "weekday", ...hours]);
    // Today is not closed yet: "—", never 0, and when it closes, in UTC.
    const users = (await cli([...range, "--users"])).stdout;
    expect(users).toMatch(new RegExp(`^${today}(\\s+—){7}$`, "m"));
    expect(users.replace(/\s+/g, " ")).toContain(`${today}: not closed yet: closes at ${tomorrow}T02:00:00Z`);
  });

  it("answers ad-hoc SQL over the archive with `webhook sql`, as JSON and CSV; refuses a write and reports an error in one line (exit 2)", async () => {
    const counted = await cli([
      "sql",
      `SELECT count(DISTINCT natural_key) AS facts, count(*) AS lines FROM archive_events WHERE app = '${APP}'`,
      "--json",
    ]);
    expect(counted.code).toBe(0);
    const [row] = JSON.parse(counted.stdout) as Array<{ facts: number; lines: number }>;
    expect(row?.lines).toBeGreaterThanOrEqual(row?.facts ?? Infinity);
    expect(row?.facts).toBeGreaterThan(0);

    const csv = await cli([
      "sql",
      "SELECT trigger, count(*) AS n FROM archive_events GROUP BY trigger ORDER BY trigger",
      "--csv",
    ]);
    expect(csv.stdout.split("\n")[0]).toBe("trigger,n");

    const write = await cli(["sql", "DROP TABLE archive_events"]);
    expect(write.code).toBe(2);
    expect(write.stderr.trim().split("\n")).toHaveLength(1);

    const broken = await cli(["sql", "SELECT nope FROM archive_events"]);
    expect(broken.code).toBe(2);
    expect(broken.stderr.trim().split("\n")).toHaveLength(1);
    expect(broken.stderr).toMatch(/^error: .*nope/);
  });
});
