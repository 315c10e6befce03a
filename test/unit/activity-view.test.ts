import { describe, expect, it } from "vitest";
import { FIGURE_NAMES, type Figures } from "../../shared/analytics/figures";
import type { ActivityStore, StoredDay } from "../../shared/analytics/store/activity-store";
import { type UserSetStore, writeDaySets } from "../../shared/analytics/user-sets";
import { encodeImportedUsers, importDayKey } from "../../shared/contracts/import-records";
import type { BlobStore } from "../../shared/ports/blob-store";
import type { BlankNote } from "../../tools/analytics/activity-view/blank-days";
import type { ActivityViewOptions } from "../../tools/analytics/activity-view/options";
import { BLANK } from "../../tools/analytics/activity-view/text";
import { activityView } from "../../tools/analytics/activity-view/view";
import { TERMINAL_COLUMNS, tableLines } from "../../tools/cli/format";

// `query activity`'s output as a person reads it: its text, from stored days in memory (the
// DynamoDB adapter and the day sets on S3 are read by test/e2e/activity and
// test/integration/users-over-time; here, what is printed of them).

const APP = "app-1";

const figures = (values: Partial<Figures>): Figures =>
  ({ ...Object.fromEntries(FIGURE_NAMES.map((f) => [f, 0])), ...values }) as Figures;

/** A day as the rollup stores it: busy figures (wide numbers), computed at noon the next day. */
function storedDay(day: string, final: boolean, values: Partial<Figures> = {}): StoredDay {
  return {
    appId: APP,
    day,
    figures: figures({
      messages: 1_234_567,
      active_users: 45_678,
      active_senders: 40_000,
      peak_online: 12_345,
      calls_audio: 3_456,
      calls_video: 789,
      calls_started: 3_900,
      call_seconds: 9_876_543,
      meeting_seconds: 1_234_567,
      recordings: 321,
      calls_ended: 17,
      meetings_ended: 21,
      sessions_ended: 38,
      sessions_under_1m: 15,
      sessions_1_5m: 19,
      sessions_5_15m: 4,
      call_participants: 10,
      meeting_participants: 48,
      peak_calls: 1_234,
      first_responses: 62,
      first_response_p50_ms: 1_083_000,
      read_latencies: 175,
      read_latency_p99_ms: 4_474_000,
      ...values,
    }),
    messageKinds: {},
    platforms: { javascript: 30_000, web: 29_000, ios: 28_000, android: 27_000 },
    computedAt: Date.parse(`${day}T12:00:00Z`) + 86_400_000,
    final,
    bytesScanned: 1,
  };
}

/** The activity table in memory: these days, each hour with the day's figures (`begun`: a day's hours stored, 24 unless said). */
function memoryStore(days: StoredDay[], begun: Record<string, number> = {}): ActivityStore {
  return {
    day: async (_app, day) => days.find((d) => d.day === day),
    days: async (_app, from, to) => days.filter((d) => d.day >= from && d.day <= to),
    hours: async (_app, day) => {
      const d = days.find((x) => x.day === day);
      return d
        ? Array.from({ length: begun[day] ?? 24 }, (_, hour) => ({
            hour,
            figures: { ...d.figures, peak_online: 100 * hour + 7 },
          }))
        : [];
    },
    topGroups: async () => [{ groupId: "group-with-a-long-id-1", messages: 9, activeMembers: 3 }],
    topUsers: async () => [{ uid: "user-1", messages: 9 }],
    replace: async () => true,
  };
}

/** The data bucket's day sets in memory, read back through the same encoding. */
function memorySets(): UserSetStore {
  const objects = new Map<string, Uint8Array>();
  const missing = (key: string) => Object.assign(new Error(`no ${key}`), { name: "NoSuchKey" });
  const blobs: BlobStore = {
    bucket: "memory",
    put: async (key, body) => {
      const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
      objects.set(key, bytes);
      return { bucket: "memory", key, size: bytes.length };
    },
    getBytes: async (key) => {
      const bytes = objects.get(key);
      if (!bytes) throw missing(key);
      return bytes;
    },
    getText: async (key) => {
      const bytes = objects.get(key);
      if (!bytes) throw missing(key);
      return new TextDecoder().decode(bytes);
    },
  };
  return { blobs, list: async (prefix) => [...objects.keys()].filter((k) => k.startsWith(prefix)).sort() };
}

/** What the CLI prints of a view: its text lines (before #42, the rows as one table). */
async function printed(store: ActivityStore, o: Partial<ActivityViewOptions>, sets?: UserSetStore) {
  const view = await activityView(
    store,
    { app: APP, from: "2026-03-02", to: "2026-03-03", limit: 10, ...o },
    sets,
  );
  return { view, lines: (view as { lines?: string[] }).lines ?? tableLines(view.rows) };
}

const width = (line: string) => [...line].length;

/** The text as one line of words: sentences wrapped at the terminal's width read whole. */
const prose = (lines: readonly string[]) => lines.join(" ").replace(/\s+/g, " ");

describe("query activity fits a terminal (#42 item 2)", () => {
  const store = memoryStore([storedDay("2026-03-02", true), storedDay("2026-03-03", false)]);
  const views: Array<Partial<ActivityViewOptions>> = [
    {},
    { hourly: true },
    { calls: true },
    { latency: true },
    { heatmap: true },
    { top: "groups" },
    { groups: true },
    { users: true },
    { retention: true },
  ];

  it.each(views)(
    "%o: every line within 100 columns; --wide shows every figure; --json the same either way",
    async (o) => {
      const sets = memorySets();
      const narrow = await printed(store, o, sets);
      const wide = await printed(store, { ...o, wide: true }, sets);

      expect(narrow.lines.length).toBeGreaterThan(0);
      expect(narrow.lines.filter((l) => width(l) > 100)).toEqual([]);
      expect(TERMINAL_COLUMNS).toBe(100);
      expect(wide.view.json).toEqual(narrow.view.json);
      // --wide: the whole table, every column the rows have.
      const columns = Object.keys(wide.view.rows[0] ?? {});
      const header = wide.lines[wide.lines.findIndex((l) => /^-+( +-+)*$/.test(l)) - 1] ?? "";
      for (const c of columns) expect(header.split(/\s+/)).toContain(c);
    },
  );

  it("the days: the figures a person reads first, each day's finality, a day not computed as — with the command that computes it", async () => {
    const { lines } = await printed(store, { from: "2026-03-01", to: "2026-03-03" });
    expect(lines[0]).toBe(
      "day         messages  active_users  peak_online  calls_started  call_minutes  meeting_minutes  final",
    );
    expect(lines[2]?.split(/\s+/)).toEqual(["2026-03-01", ...Array(7).fill(BLANK)]);
    expect(lines[3]?.split(/\s+/)).toEqual([
      "2026-03-02",
      "1234567",
      "45678",
      "12345",
      "3900",
      "164609.05",
      "20576.12",
      "true",
    ]);
    expect(lines.join("\n")).toContain(
      "2026-03-01: not computed yet; the rollup computes it:\n    npx webhook rollup --app app-1 --from 2026-03-01 --to 2026-03-01",
    );
  });
});

describe("query activity --top of a day with no message (#42, walk)", () => {
  it("says there is nothing to rank, where it printed nothing at all (exit code 0)", async () => {
    const quiet: ActivityStore = {
      ...memoryStore([storedDay("2026-03-02", true), storedDay("2026-03-03", false)]),
      topGroups: async () => [],
      topUsers: async () => [],
    };
    for (const top of ["users", "groups"] as const) {
      const { lines } = await printed(quiet, { top });
      const what = top === "groups" ? "a group" : "";
      expect(prose(lines)).toContain(
        `2026-03-02 … 2026-03-03: no message${what ? ` to ${what}` : ""}, so no ${top.slice(0, -1)} to rank.`,
      );
    }
  });
});

describe("query activity --latency of a day with nothing measured (#42, walk)", () => {
  it("leaves the percentiles blank, where it printed 0 s", async () => {
    const store = memoryStore([
      storedDay("2026-03-02", true, { first_responses: 0, first_response_p50_ms: 0 }),
    ]);
    const { lines } = await printed(store, { latency: true, from: "2026-03-02", to: "2026-03-02" });
    const row = (measure: string) =>
      lines
        .find((l) => l.startsWith(`2026-03-02  ${measure} `))
        ?.trim()
        .split(/\s+/);
    expect(row("first_response")).toEqual(["2026-03-02", "first_response", "0"]);
    expect(row("read")).toEqual(["2026-03-02", "read", "175", "0", "0", "4474"]);
  });
});

describe("query activity --heatmap's hours (#42 item 3)", () => {
  const store = memoryStore([storedDay("2026-03-02", true), storedDay("2026-03-03", false)]);
  const hours = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, "0"));

  it("prints an hour a row, 00 to 23 in order, a weekday a column; --wide a weekday a row, the hours 00 to 23 in order", async () => {
    const { lines } = await printed(store, { heatmap: true });
    const rows = lines.filter((l) => /^\d\d\s/.test(l));
    // Two grids (users online, calls in progress), each 00 … 23.
    expect(rows.map((l) => l.slice(0, 2))).toEqual([...hours, ...hours]);
    expect(lines).toContain("hour  Mon   Tue");
    // The peak of hour h on both days (the store's hours: 100 h + 7).
    expect(rows[23]?.split(/\s+/)).toEqual(["23", "2307", "2307"]);

    const wide = await printed(store, { heatmap: true, wide: true });
    expect(wide.lines[0]?.split(/\s+/)).toEqual(["peak", "weekday", ...hours]);
    expect(wide.lines[2]?.split(/\s+/)).toEqual([
      "online",
      "Mon",
      ...hours.map((_, h) => String(100 * h + 7)),
    ]);
  });
});

describe("query activity --wide with a day not computed (#42)", () => {
  it("marks the day '— (not computed)' and says under the table the rollup to run for it, with the app and the day", async () => {
    // Prepare: the 3rd computed, the 2nd not.
    const store = memoryStore([storedDay("2026-03-03", false)]);

    // Act
    const { lines } = await printed(store, { wide: true });

    // Assess
    expect(lines.find((l) => l.startsWith("2026-03-02"))).toContain("— (not computed)");
    expect(prose(lines)).toContain(`npx webhook rollup --app ${APP} --from 2026-03-02 --to 2026-03-02`);
  });
});

describe("query activity --heatmap of today (#42, walk-2)", () => {
  it("leaves blank the hours today had not begun when computed, where it printed 0 (or the level carried forward)", async () => {
    // Prepare: Monday the 2nd over; Tuesday the 3rd computed at 04:xx (hours 00 to 04 stored).
    const store = memoryStore([storedDay("2026-03-02", true), storedDay("2026-03-03", false)], {
      "2026-03-03": 5,
    });

    // Act
    const { lines, view } = await printed(store, { heatmap: true });

    // Assess
    const row = (hour: string) =>
      lines
        .find((l) => l.startsWith(`${hour}  `))
        ?.trim()
        .split(/\s+/);
    expect(row("04")).toEqual(["04", "407", "407"]);
    expect(row("05")).toEqual(["05", "507"]);
    expect(
      (view.json as { peakOnline: Record<string, Array<number | null>> }).peakOnline.Tue?.slice(3, 7),
    ).toEqual([307, 407, null, null]);
  });
});

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

describe("call figures that read as what they are (#42 item 7)", () => {
  const store = memoryStore([storedDay("2026-03-02", true)]);

  it("--calls: the duration buckets say they count calls and meetings and add up to sessions_ended; participants per call say of all calls that ended", async () => {
    const { view, lines } = await printed(store, { calls: true, from: "2026-03-02", to: "2026-03-02" });
    const text = prose(lines);
    expect(text).toMatch(/the five buckets add up to\s+sessions_ended = calls_ended \+ meetings_ended/);
    const table = (first: string) => {
      const at = lines.findIndex((l) => l.startsWith(first));
      const header = lines[at]?.split(/\s+/) ?? [];
      const cells = lines[at + 2]?.split(/\s+/) ?? [];
      return Object.fromEntries(header.map((h, i) => [h, cells[i]]));
    };
    const durations = table("day         calls_ended");
    expect(durations).toEqual({
      day: "2026-03-02",
      calls_ended: "17",
      meetings_ended: "21",
      sessions_ended: "38",
      under_1m: "15",
      "1_5m": "19",
      "5_15m": "4",
      "15_60m": "0",
      over_60m: "0",
    });
    const participants = table("day         call_participants");
    expect(participants.per_call_ended).toBe("0.59");
    expect(text).toMatch(/divide them by every call \(meeting\) that ended/);
    expect(text).toMatch(/nobody on its roster \(never answered, or everyone had left\) counts/);
    // --json as before: the stored figures and the derived ratio.
    expect(
      (view.json as { days: Array<{ derived: { participants_per_call: number } }> }).days[0]?.derived
        .participants_per_call,
    ).toBeCloseTo(10 / 17);
  });
});
