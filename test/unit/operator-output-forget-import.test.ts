import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { memoryItemStore } from "../../shared/adapters/memory-item-store";
import { type ForgetReport, zeroCounts } from "../../shared/erasure/plan";
import type { ImportApi } from "../../shared/imports/import-api";
import { USERS_IMPORT } from "../../shared/imports/kinds";
import { type ImportSummary, runImport } from "../../shared/imports/run-import";
import { storesByTable } from "../../shared/projector/registry";
import { forgetNotes, forgetReportLines } from "../../tools/cli/forget-output";
import { importCountsLines, importFailureNotes, importReportLines } from "../../tools/cli/import-output";
import { judgeArchived } from "../../tools/ops/trace";

// What forget and import print (#43): forget's report and notes, the story of a line an erasure
// redacted, import's report and why a run exits 1.

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
    // Within 100 columns but the command, whole on its line to be copied.
    for (const line of lines.filter((l) => !l.includes("npx"))) expect(line.length).toBeLessThanOrEqual(100);
  });

  it("says the stream's erasure notice is published, or would be, where the target has a stream", () => {
    expect(value(forgetReportLines(found, { notified: true }), "stream")).toBe(
      "erasure notice published (every subscriber of the app)",
    );
    expect(value(forgetReportLines({ ...found, dryRun: true }, { notified: true }), "stream")).toBe(
      "erasure notice to publish (every subscriber of the app)",
    );
    expect(value(forgetReportLines(found, { notified: false }), "stream")).toBeUndefined();
  });

  it('says what happened when nothing was left to erase: not a bare "erasure notice published" (#61)', () => {
    const again = { ...nothing, dryRun: false };
    expect(value(forgetReportLines(again, { notified: true }), "stream")).toBe(
      "nothing left here (erased already?): erasure notice published again",
    );
    for (const line of forgetReportLines(again, { notified: true }))
      expect(line.length).toBeLessThanOrEqual(100);
  });

  it("says a dry run's pseudonym is its own draw, unless it is the one of an erasure under way (#61)", () => {
    expect(
      value(forgetReportLines({ ...nothing, drawnForDryRun: true }, { notified: false }), "pseudonym"),
    ).toBe("erased-aa4a147ae39f0151 (this dry run's draw: the erasure draws its own)");
    expect(value(forgetReportLines(nothing, { notified: false }), "pseudonym")).toBe(
      "erased-aa4a147ae39f0151",
    );
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

  it("says when the users count (#52): 100 with a past createdAt now, 100 without it once the import day closes (UTC), and the command", async () => {
    // Arrange: 200 users, every other one without createdAt; the platform (an in-memory stand-in
    // that confirms each: the point is what the report says of the confirmed) and the ledger.
    const now = Date.parse("2026-11-27T16:00:00Z");
    const past = Date.parse("2026-10-01T12:00:00Z") / 1000;
    const entries = Array.from({ length: 200 }, (_, i) => ({
      at: `line ${i + 1}`,
      value: { uid: `u${i}`, name: `User ${i}`, ...(i % 2 ? {} : { createdAt: past }) },
    }));
    let requests = 0;
    const platform: ImportApi = {
      send: async (kind, batch) => {
        requests++;
        return batch.map((e) => ({ id: kind.id(e), result: "imported" as const }));
      },
      get requests() {
        return requests;
      },
    };
    const ledger = { recorded: async () => new Set<string>(), record: async () => {} };

    // Act
    const s = await runImport({
      app: "app1",
      kind: USERS_IMPORT,
      entries,
      api: platform,
      ledger,
      batchSize: 50,
      now: () => now,
    });
    const lines = importCountsLines(s, { now, graceMinutes: 120 });

    // Assess
    expect(s.countedOn).toEqual({ days: { "2026-10-01": 100, "2026-11-27": 100 }, withoutCreatedAt: 100 });
    const text = lines.map((l) => l.trim().replace(/\s{2,}/g, "  ")).join("\n");
    expect(text).toContain("created users  100 users on closed days (2026-10-01): in the figures now");
    expect(text).toContain("100 users on 2026-11-27 (100 without createdAt: the import day):");
    expect(text).toContain(
      '"—" until the day closes at 2026-11-28T02:00:00Z (UTC: its end plus the\n120-minute grace period)',
    );
    expect(text).toContain(
      "see them  npx webhook query activity --users --app app1 --from 2026-10-01 --to 2026-11-27",
    );
    // Within 100 columns but the command, whole on its line to be copied.
    for (const line of lines.filter((l) => !l.includes("npx"))) expect(line.length).toBeLessThanOrEqual(100);
    // A dry run confirms nothing, so says nothing of when.
    expect(importCountsLines(summary({ dryRun: true }), { now, graceMinutes: 120 })).toEqual([]);
  });
});
