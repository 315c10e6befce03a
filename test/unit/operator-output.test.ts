import { describe, expect, it } from "vitest";
import { explainSqlError, readOnlyRefusal } from "../../tools/analytics/sql-errors";
import { connectLines, rotationLines } from "../../tools/cli/apps-output";
import { epochTime, keyValueLines, tableLines, withIsoTimes } from "../../tools/cli/format";
import { nearestApps } from "../../tools/query/known-apps";
import { summaryLines } from "../../tools/simulate/summary";

// Output a person reads: key/value lines and tables, simulate's summary, connect's and
// rotate-credentials' sentences, one time format, help for mistakes (npm start's output:
// operator-output-local; the stream's: operator-output-stream; forget's and import's:
// operator-output-forget-import).

describe("output a person can read", () => {
  it("one item as aligned key/value lines, leaving out what has no value", () => {
    expect(
      keyValueLines([
        ["name", "Hiking"],
        ["membersCount", 3],
        ["deletedAt", undefined],
      ]),
    ).toEqual(["name          Hiking", "membersCount  3"]);
  });

  it("several as a plain aligned table, without an index column", () => {
    expect(
      tableLines([
        { trigger: "group_created", deliveries: 12 },
        { trigger: "call_ended", deliveries: 3 },
      ]),
    ).toEqual([
      "trigger        deliveries",
      "-------------  ----------",
      "group_created  12",
      "call_ended     3",
    ]);
  });

  const report = {
    sent: 7,
    byStatus: { 200: 5, 0: 2 },
    byTrigger: { group_created: 5, call_ended: 2 },
    seconds: 1,
    deliveriesPerSecond: 7,
    history: { events: [], expected: new Map() },
    interrupted: false,
    dropped: 0,
    problems: Array.from({ length: 60 }, (_, i) => `problem ${i}`),
  };

  it("simulate's summary explains each status, prints plain tables, and says how many differences are not shown", () => {
    const { lines, code } = summaryLines(report, 100);
    const text = lines.join("\n");
    expect(text).toMatch(/^\s*200\s+accepted\s+5$/m);
    expect(text).toMatch(/^\s*0\s+no answer.*\s2$/m);
    expect(text).not.toContain("(index)");
    expect(text).not.toContain("{");
    expect(text).toContain("problem 49");
    expect(text).not.toContain("problem 50");
    expect(text).toContain("… and 10 more");
    expect(code).toBe(1);
  });
});

describe("connect's and rotate-credentials' sentences (#42 item 4)", () => {
  const app = (appId: string, action: "create" | "update" | "unchanged", error?: string) => ({
    appId,
    action,
    changes: action === "update" ? ["username"] : [],
    ...(error ? { error } : {}),
  });

  it("a dry run says what would be done to each app, and one app is one app", () => {
    const { stdout, error } = connectLines(
      { apps: [app("a1", "unchanged"), app("a2", "update")], calls: { list: 2, write: 0 }, dryRun: true },
      0.4,
    );
    expect(stdout).toEqual([
      "a1: unchanged",
      "a2: would be updated (username)",
      "dry run: 2 apps: 0 would be created, 1 would be updated, 1 unchanged; 2 lists, 0 writes in 0.4 s",
    ]);
    expect(error).toBeUndefined();
    const one = connectLines({ apps: [app("a1", "create")], calls: { list: 1, write: 1 }, dryRun: false }, 1);
    expect(one.stdout).toEqual([
      "a1: created",
      "1 app: 1 created, 0 updated, 0 unchanged; 1 list, 1 write in 1.0 s",
    ]);
  });

  it("a failure says how many others were connected, and says none when none was", () => {
    const some = connectLines(
      {
        apps: [app("a1", "create"), app("a2", "unchanged", "refused")],
        calls: { list: 2, write: 1 },
        dryRun: false,
      },
      1,
    );
    expect(some.error).toBe("1 app not connected (a2): the other app is; run again to retry it");
    expect(some.stderr).toEqual(["a2: failed: refused"]);
    const none = connectLines(
      {
        apps: [app("a1", "unchanged", "refused"), app("a2", "unchanged", "refused")],
        calls: { list: 2, write: 0 },
        dryRun: false,
      },
      1,
    );
    expect(none.error).toBe("2 apps not connected (a1, a2): none was; run again to retry them");
  });

  it("a rotation says per credential what happened, and when the old one was refused", () => {
    const base = { appIds: ["a1"], resumed: false, apps: ["a1"], unconnected: [], stillOld: [] };
    const lines = rotationLines(
      {
        outcome: "rotated",
        credentials: [
          {
            ...base,
            outcome: "rotated",
            from: "old",
            to: "new",
            confirmed: ["a1"],
            refusedAt: Date.UTC(2026, 0, 2, 3, 4, 5),
          },
        ],
        confirmed: ["a1"],
        stillOld: [],
      },
      false,
    );
    expect(lines).toEqual([
      "rotated: old → new (for a1); 1 app switched; old refused since 2026-01-02T03:04:05Z",
    ]);
    const dry = rotationLines(
      {
        outcome: "dry-run",
        credentials: [
          { ...base, outcome: "dry-run", from: "old", to: "new", confirmed: [], unconnected: ["a9"] },
        ],
        confirmed: [],
        stillOld: [],
      },
      false,
    );
    expect(dry).toEqual([
      "would add a new credential beside old (for a1), switch its 1 connected app to it, then remove old; but old would be kept: 1 app of its appIds never connected (a9)",
    ]);
  });
});

describe("one time format in text output (#42 item 4)", () => {
  it("every time of an item in ISO 8601 UTC, whether stored in seconds or in milliseconds, at any depth", () => {
    const presence = {
      uid: "u1",
      firstSeen: 1795656019504,
      lastActiveAt: 1795656070,
      lastSeen: 1795656070567,
      since: 1795656070567,
      transcripts: { t1: { startTime: 1795655750, transcriptDate: "2026-11-26" } },
      durationSeconds: 114,
    };
    expect(withIsoTimes(presence)).toEqual({
      uid: "u1",
      firstSeen: "2026-11-26T01:20:19.504Z",
      lastActiveAt: "2026-11-26T01:21:10Z",
      lastSeen: "2026-11-26T01:21:10.567Z",
      since: "2026-11-26T01:21:10.567Z",
      transcripts: { t1: { startTime: "2026-11-26T01:15:50Z", transcriptDate: "2026-11-26" } },
      durationSeconds: 114,
    });
    expect(epochTime(undefined)).toBe("");
  });

  it("simulate says how many deliveries were the platform's duplicates", () => {
    const events = Array.from({ length: 5000 }, () => ({}));
    const { lines } = summaryLines(
      {
        sent: 5270,
        byStatus: { 200: 5270 },
        byTrigger: {},
        seconds: 26.35,
        deliveriesPerSecond: 200,
        history: { events: events as never, expected: new Map() },
        interrupted: false,
        dropped: 0,
      },
      200,
    );
    expect(lines.join("\n")).toMatch(
      /sent 5,270 deliveries \(5,270 acknowledged\) in 26\.4 s \(200\/s\)\n {2}5,000 events, 270 of them sent twice as the platform's duplicates/,
    );
    // Within 100 columns (the one line ran to 142, #61).
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it("simulate interrupted says the recordings it sent cannot be fetched once its file server is gone (#61)", () => {
    const { lines, code } = summaryLines(
      {
        sent: 800,
        byStatus: { 200: 800 },
        byTrigger: {},
        seconds: 4,
        deliveriesPerSecond: 200,
        interrupted: true,
        dropped: 0,
        recordingsSent: 3,
      },
      200,
    );
    expect(code).toBe(130);
    expect(lines.join(" ")).toMatch(
      /3 recordings of what was sent are served by this simulator's file server, closed/,
    );
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100);
  });
});

describe("mistakes get help (#42 item 5)", () => {
  it("sql: a column or table it does not know names the tables' columns; a write says read-only", () => {
    expect(
      explainSqlError(
        'Binder Error: Referenced column "app_id" not found in FROM clause!',
        "SELECT app_id FROM archive_events",
      ),
    ).toBe(
      'no column "app_id" in archive_events (app, date, event_id, received_at, event_time, rank, trigger, natural_key, body)',
    );
    expect(
      explainSqlError("Catalog Error: Table with name events does not exist!", "SELECT * FROM events"),
    ).toMatch(
      /^no table events: the tables are archive_events \(app, date, .*\); .*day_users \(app, uid, createdat, date\)/,
    );
    expect(
      explainSqlError(
        "Binder Error: Can only delete from base table",
        "WITH x AS (SELECT 1) DELETE FROM archive_events",
      ),
    ).toMatch(/^read-only: one SELECT/);
    expect(readOnlyRefusal("  -- a comment\n delete from archive_events")).toMatch(
      /^read-only: one SELECT .*; DELETE is not one$/,
    );
    expect(readOnlyRefusal("WITH a AS (SELECT 1) SELECT * FROM a")).toBeUndefined();
    expect(explainSqlError("one statement is allowed, this text has 2", "SELECT 1; SELECT 2")).toMatch(
      /this text has 2 statements$/,
    );
  });

  it("an app that never delivered is answered with the nearest known app ids", () => {
    expect(
      nearestApps("sim-s7-a9", ["other-app", "sim-s7-a1", "sim-s7-a2", "sim-s8-a1", "sim-s7-a9"]),
    ).toEqual(["sim-s7-a1", "sim-s7-a2", "sim-s8-a1"]);
  });
});
