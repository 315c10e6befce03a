import { describe, expect, it } from "vitest";
import { writeDaySets } from "../../shared/analytics/user-sets";
import { encodeImportedUsers, importDayKey } from "../../shared/contracts/import-records";
import type { BlankNote } from "../../tools/analytics/activity-view/blank-days";
import { BLANK } from "../../tools/analytics/activity-view/text";
import { APP, memorySets, memoryStore, printed, prose, storedDay } from "../support/activity-view";

// `query activity --users`, `--retention` and `--groups` as a person reads them: the figures from
// the day sets, `—` (never 0) for a day not closed, closed without the app's sets, or before the
// archive, each with when it closes (UTC) and the command to run (the fixtures: test/support/activity-view).

describe("figures from the day sets say why they are blank (#42 item 6)", () => {
  // Now: 2026-03-05 01:00 UTC, a grace period of 120 minutes. 03-01 and 03-02: closed, sets
  // written (03-02's by a final pass over every app); 03-03: closed, no sets written; 03-04: over,
  // closes at 02:00; 03-05: today.
  const now = Date.parse("2026-03-05T01:00:00Z");
  const days = [
    storedDay("2026-03-01", true),
    storedDay("2026-03-02", true),
    storedDay("2026-03-03", true),
    storedDay("2026-03-04", false),
    storedDay("2026-03-05", false),
  ];
  const store = memoryStore(days);
  const user = (uid: string) => ({ uid });
  async function setsWritten() {
    const sets = memorySets();
    const daySets = (uids: string[]) =>
      new Map([[APP, { users: uids.map(user), conversations: ["c1"], members: [], deletions: [] }]]);
    await writeDaySets(sets, "2026-03-01", daySets(["u1", "u2"]));
    await writeDaySets(sets, "2026-03-02", daySets(["u2", "u3"]));
    return sets;
  }
  const o = { from: "2026-03-01", to: "2026-03-05", now, graceMinutes: 120 };

  it("--users: the closed days' figures; — never 0 for a day not closed or without its sets, each with when it closes (UTC) and what to run", async () => {
    const { view, lines } = await printed(store, { ...o, users: true }, await setsWritten());
    const json = view.json as {
      days: Array<{ day: string; dau: number | null; wau: number | null; blank?: string }>;
      blank: BlankNote[];
    };

    expect(json.days.map((d) => [d.day, d.dau, d.wau, d.blank])).toEqual([
      ["2026-03-01", 2, 2, undefined],
      ["2026-03-02", 2, 3, undefined],
      ["2026-03-03", null, null, "not written"],
      ["2026-03-04", null, null, "not closed"],
      ["2026-03-05", null, null, "not closed"],
    ]);
    expect(json.blank.map((b) => [b.from, b.to, b.reason, b.closesAt, b.run])).toEqual([
      [
        "2026-03-03",
        "2026-03-03",
        "not written",
        "2026-03-04T02:00:00Z",
        "npx webhook rollup --from 2026-03-03 --to 2026-03-03",
      ],
      [
        "2026-03-04",
        "2026-03-04",
        "not closed",
        "2026-03-05T02:00:00Z",
        "npx webhook rollup --from 2026-03-04 --to 2026-03-04 --grace-minutes 0",
      ],
      [
        "2026-03-05",
        "2026-03-05",
        "not closed",
        "2026-03-06T02:00:00Z",
        `npx webhook query activity --app ${APP} --from 2026-03-05 --to 2026-03-05`,
      ],
    ]);
    const row = (day: string) =>
      lines
        .find((l) => l.startsWith(day))
        ?.split(/\s+/)
        .slice(1);
    expect(row("2026-03-02")).toEqual(["2", "3", "3", "0.67", "1", "0", "0"]);
    for (const day of ["2026-03-03", "2026-03-04", "2026-03-05"])
      expect(row(day)).toEqual(Array(7).fill(BLANK));
    const text = prose(lines);
    expect(text).toContain(
      "— 2026-03-03: closed (at 2026-03-04T02:00:00Z, its end plus the 120-minute grace period, UTC), but its day sets are not written",
    );
    expect(text).toContain("— 2026-03-04: not closed yet: closes at 2026-03-05T02:00:00Z");
    // The command whole, on a line of its own (to be copied).
    expect(lines).toContain("    npx webhook rollup --from 2026-03-04 --to 2026-03-04 --grace-minutes 0");
  });

  it("a closed day whose sets another app's pass wrote, but no final pass of this app's: not written for this app", async () => {
    const sets = await setsWritten();
    const notFinal = memoryStore(days.map((d) => (d.day === "2026-03-02" ? { ...d, final: false } : d)));
    const { view } = await printed(notFinal, { ...o, users: true, targetArgs: " --stack prod" }, sets);
    const json = view.json as { days: Array<{ day: string; blank?: string }>; blank: BlankNote[] };
    expect(json.days.find((d) => d.day === "2026-03-02")?.blank).toBe("not written");
    expect(json.blank[0]).toMatchObject({
      from: "2026-03-02",
      to: "2026-03-03",
      run: "npx webhook rollup --from 2026-03-02 --to 2026-03-03 --stack prod",
    });
  });

  it("a day before the first the sets hold is —: nothing is known of it (the archive begins later, or expired); the days after it are counted", async () => {
    const { view, lines } = await printed(
      store,
      { ...o, from: "2026-02-27", to: "2026-03-01", users: true },
      await setsWritten(),
    );
    const json = view.json as {
      days: Array<{ day: string; dau: number | null; blank?: string }>;
      blank: BlankNote[];
    };
    expect(json.days.map((d) => [d.day, d.dau, d.blank])).toEqual([
      ["2026-02-27", null, "before the archive"],
      ["2026-02-28", null, "before the archive"],
      ["2026-03-01", 2, undefined],
    ]);
    expect(json.blank).toHaveLength(1);
    expect(json.blank[0]?.run).toBeUndefined();
    expect(prose(lines)).toContain(
      "— 2026-02-27 … 2026-02-28: before the first closed day the day sets hold (2026-03-01): nothing is known of them",
    );
  });

  it("an app that imported its users shows, before the archive, who was created each day (#43); the rest stays —", async () => {
    // Prepare: u9 imported as created on 02-27, u2 on 02-28 (and first active on 03-01: not new then).
    const sets = await setsWritten();
    const at = (day: string) => Date.parse(`${day}T10:00:00Z`) / 1000;
    await sets.blobs.put(
      importDayKey("users", "2026-03-01"),
      encodeImportedUsers([
        { app: APP, uid: "u9", createdAt: at("2026-02-27"), importedAt: at("2026-03-01") },
        { app: APP, uid: "u2", createdAt: at("2026-02-28"), importedAt: at("2026-03-01") },
      ]),
    );

    // Act
    const { view, lines } = await printed(
      store,
      { ...o, from: "2026-02-27", to: "2026-03-01", users: true },
      sets,
    );

    // Assess
    const json = view.json as {
      days: Array<{
        day: string;
        dau: number | null;
        newUsers: number | null;
        createdUsers: number | null;
        blank?: string;
      }>;
    };
    expect(json.days.map((d) => [d.day, d.dau, d.newUsers, d.createdUsers, d.blank])).toEqual([
      ["2026-02-27", null, null, 1, "before the archive"],
      ["2026-02-28", null, null, 1, "before the archive"],
      ["2026-03-01", 2, 1, 0, undefined],
    ]);
    const row = lines
      .find((l) => l.startsWith("2026-02-27"))
      ?.split(/\s+/)
      .slice(1);
    expect(row).toEqual([BLANK, BLANK, BLANK, BLANK, BLANK, "1", BLANK]);
  });

  it("--retention: a return (D+k) or a week that reads a blank day is —, not 0", async () => {
    const { view, lines } = await printed(store, { ...o, retention: true }, await setsWritten());
    const json = view.json as {
      days: Array<{ day: string; retainedD1: number | null }>;
      weeks: Array<{ week: string; users: number | null; active: Array<number | null> }>;
    };
    // 03-01's D+1 (03-02) is written: u2 came back; 03-02's D+1 (03-03) is not.
    expect(json.days.slice(0, 2).map((d) => d.retainedD1)).toEqual([1, null]);
    expect(json.weeks).toEqual([
      // Its days before 03-01 are before the first set written (the archive): nothing there, not blank.
      { week: "2026-02-23", users: 2, active: [null, null, null, null] },
      { week: "2026-03-02", users: null, active: [null, null, null, null] },
    ]);
    expect(
      lines
        .find((l) => l.startsWith("week of 2026-03-02"))
        ?.split(/\s+/)
        .slice(3),
    ).toEqual(Array(5).fill(BLANK));
  });

  it("--groups: the members of a blank day are —, the rollup's own figures of the day stay", async () => {
    const { view, lines } = await printed(store, { ...o, groups: true }, await setsWritten());
    const json = view.json as {
      days: Array<{ day: string; membersAtEnd: number | null; groups_created: number | null }>;
    };
    expect(json.days.map((d) => [d.day, d.membersAtEnd])).toEqual([
      ["2026-03-01", 0],
      ["2026-03-02", 0],
      ["2026-03-03", null],
      ["2026-03-04", null],
      ["2026-03-05", null],
    ]);
    const members = lines.filter((l) => l.startsWith("2026-03-04"));
    expect(members[0]?.split(/\s+/).slice(1)).toEqual(["0", "0", "0", "0", "0", "0", "0"]);
    expect(members[1]?.split(/\s+/).slice(1)).toEqual(Array(5).fill(BLANK));
  });

  it("--groups (#42, walk): a day not computed for the app is — with the rollup to run, and today's note names no users' command", async () => {
    const without = memoryStore(days.filter((d) => d.day !== "2026-03-02"));
    const { lines } = await printed(without, { ...o, groups: true }, await setsWritten());
    const rollup = lines.find((l) => l.startsWith("2026-03-02"));
    expect(rollup?.split(/\s+/).slice(1)).toEqual(Array(7).fill(BLANK));
    const text = prose(lines);
    expect(text).toContain(
      "2026-03-02: not computed yet; the rollup computes it: npx webhook rollup --app app-1 --from 2026-03-02 --to 2026-03-02",
    );
    expect(text).toContain("— 2026-03-05: not closed yet: closes at 2026-03-06T02:00:00Z");
    expect(text).not.toContain("active users");
  });
});
