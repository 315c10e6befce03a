import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { memoryItemStore } from "../../shared/adapters/memory-item-store";
import { type ForgetReport, zeroCounts } from "../../shared/erasure/plan";
import type { ImportSummary } from "../../shared/imports/run-import";
import { storesByTable } from "../../shared/projector/registry";
import { deliveryEnvelope } from "../../shared/stream/envelope";
import { explainSqlError, readOnlyRefusal } from "../../tools/analytics/sql-errors";
import { connectLines, rotationLines } from "../../tools/cli/apps-output";
import { forgetNotes, forgetReportLines } from "../../tools/cli/forget-output";
import { epochTime, keyValueLines, tableLines, withIsoTimes } from "../../tools/cli/format";
import { importFailureNotes, importReportLines } from "../../tools/cli/import-output";
import { startBanner } from "../../tools/local/banner";
import { readableLine } from "../../tools/local/log-tap";
import type { LedgerEntry } from "../../tools/local/state";
import { countOutcome, emptyCounts, statusLine, statusText } from "../../tools/local/status-line";
import { forwardedLine } from "../../tools/ops/listen";
import { nobodySubscribedLines, streamReplayLines } from "../../tools/ops/stream";
import { judgeArchived } from "../../tools/ops/trace";
import { nearestApps } from "../../tools/query/known-apps";
import { summaryLines } from "../../tools/simulate/summary";

const ID = "33db60451d28b006".padEnd(64, "7");

describe("the local stack's readable log lines", () => {
  it("print an event id in its one printed form: the first 16 hex characters", () => {
    const line = readableLine({ level: "INFO", service: "projector", message: "event", eventId: ID });
    expect(line).toContain(`event=${ID.slice(0, 16)}`);
    expect(line).not.toContain(ID.slice(0, 17));
  });
});

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
      /sent 5,270 deliveries \(5,270 acknowledged\) in 26\.4 s \(200\/s\): 5,000 events, 270 of them sent twice as the platform's duplicates/,
    );
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

describe("listen --forward-to's line per message (#42, walk)", () => {
  const url = "http://127.0.0.1:4000/hooks";
  const body = '{"trigger":"group_created","appId":"app1"}';
  const eventId = createHash("sha256").update(body).digest("hex");
  const receivedAt = Date.UTC(2026, 10, 25, 23, 59, 59, 900);
  const delivery = deliveryEnvelope({ eventId, receivedAt, trigger: "group_created", appId: "app1", body });

  it("says when the endpoint took a message only after a retry, as the failure says its attempts", () => {
    expect(forwardedLine(url, { status: 200, attempts: 1, ok: true }, delivery)).toBe(
      `  → POST ${url} [200]`,
    );
    expect(forwardedLine(url, { status: 200, attempts: 2, ok: true }, delivery)).toBe(
      `  → POST ${url} [200] at attempt 2 (retried)`,
    );
  });

  it("names a delivery it dropped and gives the replay of its app and receipt day (UTC) that publishes it again (#41, walk-5)", () => {
    expect(forwardedLine(url, { status: 0, attempts: 5, ok: false }, delivery).split("\n")).toEqual([
      `  → POST ${url} failed after 5 attempts [no answer]: dropped ${eventId.slice(0, 16)}@${receivedAt}`,
      "    to publish it again: npx webhook replay --to-stream --app app1 --from 2026-11-25 --to 2026-11-25",
    ]);
    expect(forwardedLine(url, { status: 400, attempts: 1, ok: false }, delivery, "prod")).toContain(
      "failed after 1 attempt [400]",
    );
    expect(forwardedLine(url, { status: 400, attempts: 1, ok: false }, delivery, "prod")).toMatch(
      / --stack prod$/,
    );
  });

  it("names an erasure notice it dropped, which no replay sends again", () => {
    const notice = {
      schemaVersion: 1,
      kind: "erasure",
      id: "5ecdb04e580aef21",
      appId: "app1",
      scope: "user",
      finishedAt: receivedAt,
    } as const;
    const line = forwardedLine(url, { status: 503, attempts: 5, ok: false }, notice);
    expect(line).toContain("dropped the erasure notice 5ecdb04e580aef21 (app app1)");
    expect(line).not.toContain("replay --to-stream");
  });
});

describe("replay --to-stream's report and warning (#41, walk-5)", () => {
  const report = {
    objects: 16,
    deliveries: 6,
    duplicates: 1,
    refused: 0,
    failed: [],
    requests: 1,
    chunks: 1,
  };

  it("says what it published, what that billed and what it skipped, each line within 100 columns", () => {
    const lines = streamReplayLines(report);
    expect(lines).toEqual([
      "published 6 deliveries from 16 archive objects to the stream",
      "  in 1 request (1 billed 64 KiB chunk)",
      "  skipped: 1 duplicate line, 0 refused (quarantined) deliveries",
    ]);
    expect(streamReplayLines({ ...report, dryRun: true, failed: ["x@1"] })[0]).toBe(
      "would publish 5 deliveries from 16 archive objects to the stream",
    );
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
  });

  it("warns a dry run too that nothing is subscribed, in the future tense", () => {
    const arn = "arn:aws:sns:us-east-1:000000000000:stream";
    expect(nobodySubscribedLines(arn, true)).toEqual([
      `warning: nothing is subscribed to ${arn}`,
      "  published now, they would reach no one: start `npx webhook listen` or declare streamSubscribers",
    ]);
    expect(nobodySubscribedLines(arn, false)[1]).toMatch(/^ {2}they reached no one: .*then run it again$/);
    for (const line of nobodySubscribedLines(arn, true)) expect(line.length).toBeLessThanOrEqual(100);
  });
});

describe("forget's report (#43, walk-5)", () => {
  const plan = {
    objects: [],
    days: [],
    topListDays: [],
    compactDays: [],
    ledgerDays: [],
    items: [],
    groups: [],
    sessions: [],
    recordings: [],
    bytesScanned: 438_328,
  };
  const nothing: ForgetReport = {
    erasureId: "5c8637ef7ef2ec2c",
    appId: "sim-s12-a1",
    scope: "user",
    pseudonym: "erased-aa4a147ae39f0151",
    requestedBy: "dpo",
    startedAt: 0,
    keepRecordings: false,
    counts: zeroCounts(),
    unreached: [],
    dryRun: true,
    plan,
  };
  const found: ForgetReport = {
    ...nothing,
    dryRun: false,
    counts: { ...zeroCounts(), objectsRewritten: 11, linesRedacted: 44, daysRecomputed: 1 },
    plan: { ...plan, objects: ["raw/date=2026-11-26/hour=05/x.ndjson.gz"], days: ["2026-11-26"] },
  };
  const value = (lines: string[], key: string) =>
    lines
      .find((l) => l.startsWith(`${key} `))
      ?.slice(key.length)
      .trim();

  it("says the top lists rewritten in place are those of days whose archive expired, not that the archive expired", () => {
    const lines = forgetReportLines(found, { notified: false });
    expect(value(lines, "days")).toBe("1 recomputed, 0 recompacted");
    expect(value(lines, "top lists")).toBe("0 rewritten in place (days whose archive expired)");
    expect(lines.join("\n")).not.toContain("(archive expired)");
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
  });

  it("says the stream's erasure notice is published, or would be, where the target has a stream", () => {
    expect(value(forgetReportLines(found, { notified: true }), "stream")).toBe(
      "erasure notice published (every subscriber of the app)",
    );
    expect(value(forgetReportLines(nothing, { notified: true }), "stream")).toBe(
      "erasure notice to publish (every subscriber of the app)",
    );
    expect(value(forgetReportLines(found, { notified: false }), "stream")).toBeUndefined();
  });

  it("notes an erasure that found nothing (a mistyped uid reads like a success otherwise), and only that", () => {
    expect(forgetNotes(nothing, "nobody-here")).toEqual([
      "note: nothing in app sim-s12-a1 names nobody-here: erased already, or a mistyped uid (matched whole)",
    ]);
    expect(forgetNotes({ ...nothing, scope: "app" }, undefined)).toEqual([
      "note: nothing holds app sim-s12-a1: erased already, or a mistyped app id",
    ]);
    expect(forgetNotes(found, "sim-s12-a1-u13")).toEqual([]);
    expect(
      forgetNotes(
        {
          ...nothing,
          plan: { ...plan, items: [{ table: "presence", key: { pk: "sim-s12-a1#u1" }, action: "delete" }] },
        },
        "u1",
      ),
    ).toEqual([]);
  });
});

describe("the story of a line an erasure redacted (#43, walk-5)", () => {
  it("names the erasure once (its own field, printed on its own line), the note within 100 columns beside its key", async () => {
    // Prepare: a redacted line is not judged against the items (the erasure rewrote them): empty stores.
    const body = '{"trigger":"group_member_banned","appId":"app1"}';
    const line = {
      eventId: createHash("sha256").update(body).digest("hex"),
      receivedAt: 1_795_670_502_339,
      trigger: "group_member_banned",
      appId: "app1",
      messageId: "m1",
      body,
      erasure: "5ecdb04e580aef21",
    };

    // Act
    const story = await judgeArchived(
      line,
      storesByTable(() => memoryItemStore()),
    );

    // Assess
    expect(story).toMatchObject({ outcome: "redacted", erasure: "5ecdb04e580aef21" });
    expect(story.note).not.toContain("5ecdb04e580aef21");
    expect(`note      ${story.note}`.length).toBeLessThanOrEqual(100);
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

  it("says where the log is, and what the terminal shows of it", () => {
    const text = startBanner(stack, { stateDir: "/tmp/s", retrySeconds: 5 }, 1800, "local");
    expect(text).toContain("  Log           /tmp/s/stack.log: every line of the functions\n");
    expect(text).toContain("here: a status line and every warning (--verbose: every line)");
    expect(text).toContain("In another terminal (first: export LOCAL_STATE_DIR=/tmp/s):");
  });
});

describe("import's report (#43, walk-5)", () => {
  const summary = (over: Partial<ImportSummary> = {}): ImportSummary => ({
    app: "app1",
    kind: "users",
    dryRun: false,
    read: 5,
    invalid: [],
    duplicates: 0,
    alreadyImported: 0,
    toSend: 5,
    imported: 5,
    existed: 0,
    refused: [],
    unsent: 0,
    batches: 1,
    requests: 1,
    ...over,
  });
  const bad = { at: "line 3", reason: "uid: required" };

  it("a dry run shows what it can know: no imported, already-on-the-platform, refused or requests rows", () => {
    // Act
    const lines = importReportLines(summary({ dryRun: true, imported: 0 }), "users.ndjson");

    // Assess
    const keys = lines.map((l) => l.split(/\s{2,}/)[0]);
    expect(keys).toEqual([
      "import",
      "read",
      "would send",
      "already imported (skipped)",
      "repeated in the file (skipped)",
      "invalid (not sent)",
    ]);
    expect(lines[0]).toContain("(dry run: nothing was sent)");
  });

  it("a run that exits 1 says why on stderr; one that imported everything says nothing there", () => {
    expect(importFailureNotes(summary())).toEqual([]);
    expect(importFailureNotes(summary({ invalid: [bad, bad], imported: 3 }))).toEqual([
      "not everything imported: 2 invalid lines (listed above); fix the file and run the same command again",
    ]);
    expect(importFailureNotes(summary({ refused: [{ id: "u1", ...bad }], unsent: 2, imported: 2 }))).toEqual([
      "not everything imported: 1 user refused by the platform, 2 users not sent yet (listed above); run the same command again",
    ]);
    expect(importFailureNotes(summary({ dryRun: true, invalid: [bad] }))[0]).toMatch(
      /^not everything would be imported: 1 invalid line /,
    );
  });
});
