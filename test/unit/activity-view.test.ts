import { describe, expect, it } from "vitest";
import type { ActivityStore } from "../../shared/analytics/store/activity-store";
import type { ActivityViewOptions } from "../../tools/analytics/activity-view/options";
import { BLANK } from "../../tools/analytics/activity-view/text";
import { TERMINAL_COLUMNS } from "../../tools/cli/format";
import { APP, memorySets, memoryStore, printed, prose, storedDay, width } from "../support/activity-view";

// `query activity`'s output as a person reads it: its text, from stored days in memory (the
// DynamoDB adapter and the day sets on S3 are read by test/e2e/activity and
// test/integration/users-over-time; here, what is printed of them).

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
