import { describe, expect, it } from "vitest";
import { startBanner } from "../../tools/local/banner";
import { readableLine, warningFilter } from "../../tools/local/log-tap";
import type { LedgerEntry } from "../../tools/local/state";
import { countOutcome, emptyCounts, statusLine, statusText } from "../../tools/local/status-line";

// What `npm start` prints: the readable log lines, the status line, the banner (the other
// operator output: operator-output, operator-output-stream, operator-output-forget-import).

const ID = "33db60451d28b006".padEnd(64, "7");

describe("the local stack's readable log lines", () => {
  it("print an event id in its one printed form: the first 16 hex characters", () => {
    const line = readableLine({ level: "INFO", service: "projector", message: "event", eventId: ID });
    expect(line).toContain(`event=${ID.slice(0, 16)}`);
    expect(line).not.toContain(ID.slice(0, 17));
  });
});

describe("npm start's status line (#42 item 1)", () => {
  const AT = Date.UTC(2026, 0, 2, 3, 4, 5);
  const outcome = (service: string, what: string): LedgerEntry => [
    "outcome",
    service,
    what,
    "app1",
    "message_sent",
  ];

  it("counts what the functions report: accepted, refused, projected (tables, stale, archive only), quarantined, failed", () => {
    const counts = emptyCounts();
    for (const entry of [
      outcome("ingest", "accepted"),
      outcome("ingest", "accepted-oversize"),
      outcome("ingest", "unauthorized"),
      outcome("projector", "projected"),
      outcome("projector", "stale"),
      outcome("projector", "archived-only"),
      outcome("projector", "quarantined"),
      outcome("projector", "failed"),
      outcome("recorder", "archived"),
      ["failure", "projector", "NoSuchKey"] as LedgerEntry,
    ])
      countOutcome(counts, entry);
    expect(statusText(counts, 7, AT)).toBe(
      "03:04:05Z  accepted 2  refused 1  projected 3  quarantined 1  queued 7  failed 1  recordings 1",
    );
    expect(statusText(emptyCounts(), undefined, AT)).toBe(
      "03:04:05Z  accepted 0  projected 0  quarantined 0  queued ?  failed 0",
    );
  });

  it("shows the apps the rollup found silent (#52), the first two by name", () => {
    const counts = { ...emptyCounts(), silent: ["sim-s7-a2", "sim-s7-a1", "other"] };
    expect(statusText(counts, 0, AT)).toBe(
      "03:04:05Z  accepted 0  projected 0  quarantined 0  queued 0  failed 0  silent 3 (sim-s7-a2, sim-s7-a1, …)",
    );
  });

  it("off a terminal, prints a plain line only when something moved", async () => {
    const written: string[] = [];
    const status = statusLine({ stream: { write: (t) => written.push(t) }, now: () => AT });
    await status.refresh(async () => 0);
    await status.refresh(async () => 0);
    status.count(outcome("ingest", "accepted"));
    await status.refresh(async () => 1);
    await status.stop();
    expect(written).toEqual([
      "03:04:05Z  accepted 0  projected 0  quarantined 0  queued 0  failed 0\n",
      "03:04:05Z  accepted 1  projected 0  quarantined 0  queued 1  failed 0\n",
    ]);
  });

  it("on a terminal, redraws in place, steps aside for other output, and ends with a newline", async () => {
    const written: string[] = [];
    const status = statusLine({
      stream: { write: (t) => written.push(t), isTTY: true, columns: 40 },
      now: () => AT,
    });
    await status.refresh(async () => 0);
    status.terminal.beforeOutput();
    written.push("a warning\n");
    status.terminal.afterOutput();
    await status.stop();
    const line = "03:04:05Z  accepted 0  projected 0  qua";
    expect(written).toEqual([`\r\x1b[2K${line}`, "\r\x1b[2K", "a warning\n", `\r${line}`, "\n"]);
  });
});

describe("npm start's banner (#42, walk-5)", () => {
  const stack = {
    credentialCount: 1,
    info: {
      pid: 27857,
      webhookUrl: "http://127.0.0.1:3000/webhook",
      healthUrl: "http://127.0.0.1:3000/health",
      consoleUrl: "http://127.0.0.1:3001/",
      credentials: { username: "local-webhook", password: "local-password-change-me" },
    },
  };

  it("keeps every line within 100 columns in the default state directory (the log line ran to 134)", () => {
    for (const options of [{}, { verbose: true }, { inMemory: true }]) {
      const text = startBanner(stack, { stateDir: ".", retrySeconds: 5, ...options }, 1800, "local");
      for (const line of text.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
    }
  });

  it("says when the console's port was taken, and which it uses instead (#61)", () => {
    const moved = { ...stack, info: { ...stack.info, consoleUrl: "http://127.0.0.1:40655/" } };
    const text = startBanner(moved, { stateDir: ".", retrySeconds: 5, consolePort: 3001 }, 1800, "local");
    expect(text).toContain(
      "  Console       http://127.0.0.1:40655/ (port 3001 was taken, by another stack's console?)\n",
    );
    for (const line of text.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
    const kept = startBanner(stack, { stateDir: ".", retrySeconds: 5, consolePort: 3001 }, 1800, "local");
    expect(kept).toContain("  Console       http://127.0.0.1:3001/\n");
  });

  it("says where the log is, and what the terminal shows of it", () => {
    const text = startBanner(stack, { stateDir: "/tmp/s", retrySeconds: 5 }, 1800, "local");
    expect(text).toContain("  Log           /tmp/s/stack.log: every line of the functions\n");
    expect(text).toContain("here: a status line and every warning (--verbose: every line)");
    expect(text).toContain("In another terminal (first: export LOCAL_STATE_DIR=/tmp/s):");
  });
});

describe("npm start's WARN lines in the terminal (#61)", () => {
  const warn = (at: string) => ({
    level: "WARN",
    service: "recorder",
    message: "recording fetch failed",
    timestamp: at,
    reason: "fetch-failed",
    sessionId: "v1.eu.sim-s7-a1.s1",
    key: `recordings/app=sim-s7-a1/${"k".repeat(60)}.mp4`,
    error: { name: "FetchError", message: "connect ECONNREFUSED 127.0.0.1:8099" },
  });

  it("shows a line within 100 columns, and the same warning again once, then none for 10 minutes", () => {
    let now = 0;
    const show = warningFilter(() => now);
    const line = (at: string) => readableLine(warn(at));
    const seen: Array<string | undefined> = [];
    for (const minute of [0, 0.5, 1, 1.5, 2, 2.5, 11]) {
      now = minute * 60_000;
      seen.push(show(warn(""), "fetch-failed", line(new Date(now).toISOString())));
    }
    expect(line("1970-01-01T00:00:00.000Z").length).toBeGreaterThan(100);
    expect(seen[0]).toMatch(/^00:00:00 recorder {2}WARN recording fetch failed .*…$/);
    expect(seen[0]?.length).toBe(100);
    expect(seen[1]).toBe(
      "00:00:30 recorder  WARN fetch-failed again: the same in the next 10 minutes goes to stack.log only",
    );
    expect(seen.slice(2, 6)).toEqual([undefined, undefined, undefined, undefined]);
    expect(seen[6]).toMatch(/^00:11:00 recorder {2}WARN recording fetch failed/);
    // Another reason is its own warning.
    now = 11.5 * 60_000;
    expect(show({ service: "projector", level: "WARN" }, "other", "00:11:30 projector WARN x")).toBe(
      "00:11:30 projector WARN x",
    );
  });
});
