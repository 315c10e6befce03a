import { importedUsersOf } from "../../shared/adapters/import-records";
import { derivedFigures, type Figures, HOURLY_FIGURES } from "../../shared/analytics/figures";
import { dayStart, daysInRange } from "../../shared/analytics/rollup";
import type { ActivityStore, StoredDay } from "../../shared/analytics/store/activity-store";
import {
  groupsOverTime,
  MEMBERS_PREFIX,
  USER_SETS_PREFIX,
  type UserSetStore,
  type UsersDay,
  usersOverTime,
} from "../../shared/analytics/user-sets";
import { addDays, dayOfKey, utcDay } from "../../shared/contracts/bucket-layout";
import { fittedTableLines, isoTime, leftOutNote, TERMINAL_COLUMNS, tableLines } from "../cli/format";

export interface ActivityViewOptions {
  app: string;
  from: string;
  to: string;
  hourly?: boolean;
  top?: "groups" | "users";
  /** The calls and meetings that ended: by duration, and their participants (#33). */
  calls?: boolean;
  /** First-response, delivery and read times: counts and percentiles, in seconds (#33). */
  latency?: boolean;
  /** The most users online, and calls in progress, at once per weekday and hour over the range (#33). */
  heatmap?: boolean;
  /** DAU, WAU, MAU, stickiness and new users per day, from the closed days' user sets (#33). */
  users?: boolean;
  /** New users' D+1, D+7, D+30 retention per day, and the weekly cohorts (#33). */
  retention?: boolean;
  /** Groups created and deleted, members in and out, members at the start and end, churn, average size (#33). */
  groups?: boolean;
  limit: number;
  /** Every figure in one table per view, however wide (the text output; `json` is the same either way). */
  wide?: boolean;
  /** Now (ms): what is closed yet. Default: the clock. */
  now?: number;
  /** The rollup's grace period: a day closes this long after its end (default `DEFAULT_GRACE_MINUTES`). */
  graceMinutes?: number;
  /** What the commands a note suggests need to reach the same stack (` --stack prod`); default none. */
  targetArgs?: string;
}

/** What `query activity` prints: its `--json` value, the table's rows (`--wide`), and the text lines. */
export interface ActivityViewResult {
  json: unknown;
  rows: Row[];
  lines: string[];
}

type Row = Record<string, unknown>;

const DAY_MS = 86_400_000;

export { TERMINAL_COLUMNS };

/**
 * The rollup's grace period unless a deployment chose another (`activityGraceMinutes`,
 * `rollup --grace-minutes`, the local stack's timer): a day is final, and its day sets written,
 * this long after its end.
 */
export const DEFAULT_GRACE_MINUTES = 120;

/** What a figure with no value shows where the reason is given in a note below: never a 0. */
export const BLANK = "—";

/** The figures shown in a day's row of the wide table (all of them are in `--json`). */
const DAY_COLUMNS: ReadonlyArray<keyof Figures> = [
  "messages",
  "active_users",
  "active_senders",
  "peak_online",
  "groups_created",
  "member_joins",
  "calls_audio",
  "calls_video",
  "calls_started",
  "call_seconds",
  "meeting_seconds",
  "recordings",
];

/** The figures a person reads first, in the table that fits `TERMINAL_COLUMNS`. */
const DAY_COLUMNS_FIRST = [
  "day",
  "messages",
  "active_users",
  "peak_online",
  "calls_started",
  "call_minutes",
  "meeting_minutes",
  "final",
];

/** `--hourly`'s first figures. */
const HOUR_COLUMNS_FIRST = [
  "day",
  "hour",
  "messages",
  "active_users",
  "peak_online",
  "calls_started",
  "peak_calls",
  "final",
];

/** `--calls`: the sessions that ended, by duration, and their participants. */
const CALL_COLUMNS: ReadonlyArray<keyof Figures> = [
  "calls_ended",
  "meetings_ended",
  "sessions_ended",
  "sessions_under_1m",
  "sessions_1_5m",
  "sessions_5_15m",
  "sessions_15_60m",
  "sessions_over_60m",
  "call_participants",
  "meeting_participants",
  "chat_to_call",
  "peak_calls",
];

/** The duration buckets of the calls and meetings that ended, and their short names. */
const DURATIONS = [
  ["sessions_under_1m", "under_1m"],
  ["sessions_1_5m", "1_5m"],
  ["sessions_5_15m", "5_15m"],
  ["sessions_15_60m", "15_60m"],
  ["sessions_over_60m", "over_60m"],
] as const satisfies ReadonlyArray<readonly [keyof Figures, string]>;

/** `--latency`: first responses, deliveries and reads: how many, and their percentiles (shown in seconds). */
const LATENCY_COLUMNS: ReadonlyArray<keyof Figures> = [
  "first_responses",
  "first_response_p50_ms",
  "first_response_p90_ms",
  "delivery_latencies",
  "delivery_latency_p50_ms",
  "delivery_latency_p90_ms",
  "delivery_latency_p99_ms",
  "read_latencies",
  "read_latency_p50_ms",
  "read_latency_p90_ms",
  "read_latency_p99_ms",
];

/** `--latency`'s three measures: the count figure and the percentile figures of each. */
const LATENCY_MEASURES = [
  ["first_response", "first_responses", "first_response_p"],
  ["delivery", "delivery_latencies", "delivery_latency_p"],
  ["read", "read_latencies", "read_latency_p"],
] as const;

const ratioText = (x: number | null) => (x === null ? "" : x.toFixed(2));

/** Users per client platform, most first: `javascript 12, ios 3`. */
export const platformsText = (platforms: Record<string, number>) =>
  Object.entries(platforms)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([p, n]) => `${p} ${n}`)
    .join(", ");

const minutes = (seconds: number) => Math.round((seconds / 60) * 100) / 100;

/** `--calls`' participants: what they are, and what the ratios divide them by. */
const PARTICIPANTS_NOTE =
  "Participants: the distinct names on each end's roster (all_occupants). per_call_ended and per_meeting_ended divide them by every call (meeting) that ended: one that ended with nobody on its roster (never answered, or everyone had left) counts, so per_call_ended can be under 1.";

/** `--calls`' duration buckets: what they count, and what they add up to. */
const DURATIONS_NOTE =
  "Calls and meetings that ended, by duration (destroyed_at − created_at): the five buckets add up to sessions_ended = calls_ended + meetings_ended.";

/** A note below the tables: a sentence, and the command it suggests, printed whole on a line of its own. */
export interface Note {
  text: string;
  run?: string;
}

/** A section of the text output: a title, and a table whose columns come in this order. */
interface Section {
  title?: string;
  columns: readonly string[];
  rows: Row[];
}

/**
 * Text wrapped at `width` on spaces, the lines after the first indented by two.
 *
 * @example wrapText("a b c", 3) // ["a b", "  c"]
 */
function wrapText(text: string, width = TERMINAL_COLUMNS): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const next = line ? `${line} ${word}` : word;
    if (next.length > width && line.trim()) {
      lines.push(line);
      line = `  ${word}`;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * The text output: each section's title and table, then the notes (why a figure shows `—`, and
 * what to run), every line within `TERMINAL_COLUMNS` unless `wide`. Nothing at all when no
 * section has a row and there is no note (the runner says "nothing found").
 */
function textLines(sections: Section[], notes: readonly Note[], wide = false): string[] {
  const out: string[] = [];
  let dropped = 0;
  const shown = sections.filter((s) => s.rows.length > 0);
  for (const s of shown) {
    if (out.length) out.push("");
    if (s.title) out.push(...(wide ? [s.title] : wrapText(s.title)));
    const table = wide
      ? { lines: tableLines(s.rows, s.columns), dropped: 0 }
      : fittedTableLines(s.rows, s.columns);
    dropped += table.dropped;
    out.push(...table.lines);
  }
  const all: readonly Note[] = dropped ? [...notes, { text: leftOutNote(dropped) }] : notes;
  if (all.length > 0 && out.length > 0) out.push("");
  for (const note of all) {
    out.push(...(wide ? [note.text] : wrapText(note.text)));
    // A command stays whole, to be copied.
    if (note.run) out.push(`    ${note.run}`);
  }
  return out;
}

/** A row of `—` for a day with nothing to show (its reason is a note). */
const blankRow = (columns: readonly string[], day: string): Row =>
  Object.fromEntries(columns.map((c) => [c, c === "day" ? day : BLANK]));

/** Consecutive days as ranges: `[["2026-01-01", "2026-01-03"], …]` (sorted input). */
function dayRanges(days: readonly string[]): Array<[string, string]> {
  const ranges: Array<[string, string]> = [];
  for (const day of days) {
    const last = ranges.at(-1);
    if (last && addDays(last[1], 1) === day) last[1] = day;
    else ranges.push([day, day]);
  }
  return ranges;
}

const rangeText = ([from, to]: readonly [string, string]) => (from === to ? from : `${from} … ${to}`);

/** A value as one word of a shell command (an app id with spaces or quotes is quoted). */
const shellWord = (value: string) =>
  /^[\w.@:/+-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;

/**
 * What to say of an app's days the rollup has not computed (sorted): a note per run of days,
 * with the rollup that computes them for the app (`query activity`'s notes, the console's).
 *
 * @example notComputedNotes("a1", ["2026-01-01", "2026-01-02"])[0]
 *   // { from: "2026-01-01", to: "2026-01-02", text: "2026-01-01 … 2026-01-02: not computed yet; the rollup computes them:", run: "npx webhook rollup --app a1 --from 2026-01-01 --to 2026-01-02" }
 */
export function notComputedNotes(
  app: string,
  missing: readonly string[],
  targetArgs = "",
): Array<Note & { from: string; to: string }> {
  return dayRanges(missing).map((r) => ({
    from: r[0],
    to: r[1],
    text: `${rangeText(r)}: not computed yet; the rollup computes ${r[0] === r[1] ? "it" : "them"}:`,
    // For this app: a day without its events is then written as zeros, where a pass over every
    // app writes nothing for it, and this note would come back after the command it gave.
    run: `npx webhook rollup --app ${shellWord(app)} --from ${r[0]} --to ${r[1]}${targetArgs}`,
  }));
}

/**
 * `query activity`: an app's days in a range (one Query), or one day's hours or top groups/users
 * per day (one Query each), as `--json`, as the wide table's rows and as text lines that fit
 * `TERMINAL_COLUMNS` (the figures a person reads first; every one with `wide`). Every day says
 * when it was computed and whether it is final; a day the rollup has not computed yet is listed
 * as missing, and what to run is said.
 */
export async function activityView(
  store: ActivityStore,
  o: ActivityViewOptions,
  sets?: UserSetStore,
): Promise<ActivityViewResult> {
  if ((o.users || o.retention) && sets) return usersView(store, sets, o);
  const days = await store.days(o.app, o.from, o.to);
  const known = new Set(days.map((d) => d.day));
  const missing = daysInRange(o.from, o.to).filter((d) => !known.has(d));
  const notComputed = notComputedNotes(o.app, missing, o.targetArgs);
  if (o.groups && sets) return groupsView(store, days, sets, o, notComputed);
  if (o.heatmap)
    return onlineHeatmap(
      store,
      o,
      days.map((d) => d.day),
      notComputed,
    );
  const stamp = (d: StoredDay) => ({
    computedAt: new Date(d.computedAt).toISOString(),
    final: d.final,
  });
  if (o.hourly || o.top) {
    const json = [];
    const rows: Row[] = [];
    // Computed days with nothing to rank: said, rather than printing nothing at all.
    const unranked: string[] = [];
    for (const d of days) {
      if (o.hourly) {
        const hours = await store.hours(o.app, d.day);
        json.push({ day: d.day, ...stamp(d), hours });
        for (const h of hours)
          rows.push({
            day: d.day,
            hour: String(h.hour).padStart(2, "0"),
            ...Object.fromEntries(HOURLY_FIGURES.map((f) => [f, h.figures[f]])),
            final: d.final,
          });
      } else {
        const top =
          o.top === "groups"
            ? await store.topGroups(o.app, d.day, o.limit)
            : await store.topUsers(o.app, d.day, o.limit);
        json.push({ day: d.day, ...stamp(d), [o.top === "groups" ? "groups" : "users"]: top });
        if (top.length === 0) unranked.push(d.day);
        top.forEach((t, i) => {
          rows.push({ day: d.day, rank: i + 1, ...t, final: d.final });
        });
      }
    }
    const columns = o.wide || o.top ? [...new Set(rows.flatMap((r) => Object.keys(r)))] : HOUR_COLUMNS_FIRST;
    const nothingToRank = dayRanges(unranked).map((r) => ({
      text: `${rangeText(r)}: no message${o.top === "groups" ? " to a group" : ""}, so no ${o.top === "groups" ? "group" : "user"} to rank.`,
    }));
    return { json, rows, lines: textLines([{ columns, rows }], [...notComputed, ...nothingToRank], o.wide) };
  }
  const rows = [
    ...days.map((d) => {
      const derived = derivedFigures(d.figures);
      if (o.latency)
        return {
          day: d.day,
          ...Object.fromEntries(
            LATENCY_COLUMNS.map((f) =>
              f.endsWith("_ms") ? [f.replace(/_ms$/, "_s"), d.figures[f] / 1000] : [f, d.figures[f]],
            ),
          ),
          ...stamp(d),
        };
      if (o.calls)
        return {
          day: d.day,
          ...Object.fromEntries(CALL_COLUMNS.map((f) => [f, d.figures[f]])),
          per_call_ended: ratioText(derived.participants_per_call),
          per_meeting_ended: ratioText(derived.participants_per_meeting),
          ...stamp(d),
        };
      return {
        day: d.day,
        ...Object.fromEntries(
          DAY_COLUMNS.map((f) => [
            f.replace("_seconds", "_minutes"),
            f.endsWith("_seconds") ? minutes(d.figures[f]) : d.figures[f],
          ]),
        ),
        answer_rate: ratioText(derived.answer_rate),
        platforms: platformsText(d.platforms),
        ...stamp(d),
      };
    }),
    // A day not computed: its note below says the rollup to run.
    ...missing.map((day) => ({ day, computedAt: "— (not computed)" })),
  ].sort((a, b) => String(a.day).localeCompare(String(b.day)));
  const json = {
    days: days.map((d) => ({ ...d, derived: derivedFigures(d.figures) })),
    ...(missing.length ? { notComputed: missing } : {}),
  };
  const sections = o.wide
    ? [{ columns: [...new Set(rows.flatMap((r) => Object.keys(r)))], rows }]
    : o.latency
      ? latencySections(days, missing)
      : o.calls
        ? callSections(days, missing)
        : [
            {
              columns: DAY_COLUMNS_FIRST,
              rows: rows.map((r) => ("final" in r ? r : blankRow(DAY_COLUMNS_FIRST, String(r.day)))),
            },
          ];
  return { json, rows, lines: textLines(sections, notComputed, o.wide) };
}

/** Each day's rows of the range, oldest first: `row(d)` for a computed day, `—` for one missing. */
function byDay(days: readonly StoredDay[], missing: readonly string[], columns: readonly string[]) {
  return (row: (d: StoredDay) => Row[]): Row[] =>
    [...days.flatMap((d) => row(d)), ...missing.map((day) => blankRow(columns, day))].sort((a, b) =>
      String(a.day).localeCompare(String(b.day)),
    );
}

/**
 * `--calls` in sections that fit: the sessions that ended by duration (with what they add up
 * to), their participants (per call and per meeting that ended, said so), and the concurrency.
 */
function callSections(days: readonly StoredDay[], missing: readonly string[]): Section[] {
  const durations = [
    "day",
    "calls_ended",
    "meetings_ended",
    "sessions_ended",
    ...DURATIONS.map(([, short]) => short),
  ];
  const participants = [
    "day",
    "call_participants",
    "per_call_ended",
    "meeting_participants",
    "per_meeting_ended",
  ];
  const atOnce = ["day", "peak_calls", "chat_to_call"];
  return [
    {
      title: DURATIONS_NOTE,
      columns: durations,
      rows: byDay(
        days,
        missing,
        durations,
      )((d) => [
        {
          day: d.day,
          calls_ended: d.figures.calls_ended,
          meetings_ended: d.figures.meetings_ended,
          sessions_ended: d.figures.sessions_ended,
          ...Object.fromEntries(DURATIONS.map(([f, short]) => [short, d.figures[f]])),
        },
      ]),
    },
    {
      title: PARTICIPANTS_NOTE,
      columns: participants,
      rows: byDay(
        days,
        missing,
        participants,
      )((d) => {
        const derived = derivedFigures(d.figures);
        return [
          {
            day: d.day,
            call_participants: d.figures.call_participants,
            per_call_ended: ratioText(derived.participants_per_call),
            meeting_participants: d.figures.meeting_participants,
            per_meeting_ended: ratioText(derived.participants_per_meeting),
          },
        ];
      }),
    },
    {
      title:
        "The most calls in progress at once; users who sent a 1:1 message to someone and later that day called that person.",
      columns: atOnce,
      rows: byDay(
        days,
        missing,
        atOnce,
      )((d) => [{ day: d.day, peak_calls: d.figures.peak_calls, chat_to_call: d.figures.chat_to_call }]),
    },
  ];
}

/** `--latency` a row per day and measure: how many, and the percentiles in seconds. */
function latencySections(days: readonly StoredDay[], missing: readonly string[]): Section[] {
  const columns = ["day", "measure", "count", "p50_s", "p90_s", "p99_s"];
  const figures = (d: StoredDay) => d.figures as Record<string, number | undefined>;
  const seconds = (ms: number | undefined) => (ms === undefined ? "" : ms / 1000);
  return [
    {
      title:
        "First response (1:1 replies), delivery and read times, in seconds: nearest-rank percentiles of the day's messages, blank when there is none to measure (first responses: no p99).",
      columns,
      rows: byDay(
        days,
        missing,
        columns,
      )((d) =>
        LATENCY_MEASURES.map(([measure, count, p]) => {
          // A percentile of nothing measured is no time at all, not 0 s.
          const of = (ms: number | undefined) => (figures(d)[count] ? seconds(ms) : "");
          return {
            day: d.day,
            measure,
            count: figures(d)[count],
            p50_s: of(figures(d)[`${p}50_ms`]),
            p90_s: of(figures(d)[`${p}90_ms`]),
            p99_s: of(figures(d)[`${p}99_ms`]),
          };
        }),
      ),
    },
  ];
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const weekdayName = (w: number): string => WEEKDAYS[w] ?? "";
const HOURS = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, "0"));

/**
 * The concurrency heatmaps: per weekday (UTC) and hour, the most users online at once
 * (`peak_online`) and the most calls in progress at once (`peak_calls`) in that hour on any of the
 * days, from each stored hour (the transitions in the order of facts); one Query per day.
 * Weekdays without a computed day are left out; an hour none of a weekday's days had begun when
 * computed (today's later hours) is blank (null in the JSON), not 0. The text: an hour a row, a weekday a column
 * (it fits whatever the peaks); `wide`, a weekday a row and the hours 00 to 23 as columns.
 */
async function onlineHeatmap(
  store: ActivityStore,
  o: ActivityViewOptions,
  days: readonly string[],
  notes: Note[],
): Promise<ActivityViewResult> {
  // An hour no day of the weekday has measured (today's hours not begun when it was computed) stays null: blank, not 0.
  const grids = {
    online: new Map<number, Array<number | null>>(),
    calls: new Map<number, Array<number | null>>(),
  };
  for (const day of days) {
    const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
    const hours = await store.hours(o.app, day);
    for (const [what, figure] of [
      ["online", "peak_online"],
      ["calls", "peak_calls"],
    ] as const) {
      const row = grids[what].get(weekday) ?? Array.from({ length: 24 }, () => null);
      for (const h of hours) row[h.hour] = Math.max(row[h.hour] ?? 0, h.figures[figure]);
      grids[what].set(weekday, row);
    }
  }
  const weekdays = [...grids.online.keys()].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7));
  const byWeekday = (grid: Map<number, Array<number | null>>) =>
    Object.fromEntries(weekdays.map((w) => [WEEKDAYS[w], grid.get(w)]));
  // Hours as keys are integer-like ("10"…"23"): an object lists them first, so the order is given.
  const rows = (["online", "calls"] as const).flatMap((what) =>
    weekdays.map((w) => ({
      peak: what,
      weekday: WEEKDAYS[w],
      ...Object.fromEntries((grids[what].get(w) ?? []).map((v, hour) => [HOURS[hour], v ?? ""])),
    })),
  );
  const titles = {
    online: "The most users online at once, by hour (UTC) and weekday: the highest of the range's days.",
    calls: "The most calls in progress at once, by hour (UTC) and weekday: the highest of the range's days.",
  };
  const sections: Section[] = o.wide
    ? [{ columns: ["peak", "weekday", ...HOURS], rows }]
    : (["online", "calls"] as const).map((what) => ({
        title: titles[what],
        columns: ["hour", ...weekdays.map(weekdayName)],
        rows:
          weekdays.length === 0
            ? []
            : HOURS.map((hour, h) => ({
                hour,
                ...Object.fromEntries(weekdays.map((w) => [weekdayName(w), grids[what].get(w)?.[h] ?? ""])),
              })),
      }));
  return {
    json: { days: days.length, peakOnline: byWeekday(grids.online), peakCalls: byWeekday(grids.calls) },
    rows,
    lines: textLines(sections, notes, o.wide),
  };
}

// ---- Figures from the day sets: blank until a day is closed and its sets written -------------

/**
 * Why a day shows no figure from the day sets: not closed yet, closed without its sets, or
 * before the first day the sets hold (nothing is known of it: the archive begins later, or its
 * retention has expired it).
 */
export type BlankReason = "not closed" | "not written" | "before the archive";

/** The blank days of a range (`blankDays`), and the first day the sets hold. */
interface Blanks {
  reasons: Map<string, BlankReason>;
  firstWritten?: string;
}

/** A run of days blank for one reason, with what a person can do about it (the JSON's `blank`). */
export interface BlankNote extends Note {
  from: string;
  to: string;
  reason: BlankReason;
  /** When the first of the days closes (not closed) or closed (not written): its end plus the grace period, ISO UTC. */
  closesAt: string;
}

/**
 * The days of `days` whose figures from the day sets (under `prefix`) are not there, and why:
 * not closed (now is before the day's end plus the grace period), or closed but its sets not
 * written for this app (no set object for the day, or the app's stored day is not final: no final
 * pass covered the app), or before the first set written (nothing known of it: blank, but it
 * empties no return or cohort of later days). One listing of the sets and one Query of the app's days.
 */
async function blankDays(
  store: ActivityStore,
  sets: UserSetStore,
  prefix: string,
  o: ActivityViewOptions,
  days: readonly string[],
): Promise<Blanks> {
  const blank = new Map<string, BlankReason>();
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined) return { reasons: blank };
  const now = o.now ?? Date.now();
  const written = new Set((await sets.list(prefix)).flatMap((k) => dayOfKey(k) ?? []));
  const firstWritten = [...written].sort()[0];
  const stored = new Map((await store.days(o.app, first, last)).map((d) => [d.day, d.final]));
  for (const day of days) {
    const beforeArchive = firstWritten !== undefined && day < firstWritten;
    if (now < closesAt(day, o)) blank.set(day, "not closed");
    else if (beforeArchive) blank.set(day, "before the archive");
    else if (!written.has(day) || stored.get(day) === false) blank.set(day, "not written");
  }
  return { reasons: blank, firstWritten };
}

/** When a day closes: its end plus the grace period (ms). */
const closesAt = (day: string, o: ActivityViewOptions) =>
  dayStart(day) + DAY_MS + (o.graceMinutes ?? DEFAULT_GRACE_MINUTES) * 60_000;

/**
 * What to say of the blank days of the range: a note per run of days with one reason, naming
 * when they close (UTC) and what to run to see them now: a day over but within its grace period
 * can be closed now (`rollup --grace-minutes 0`); today cannot, but its active users so far are
 * the day's `active_users`; a closed day without its sets gets them from a rollup.
 *
 * @example blankNotes({ reasons: new Map([["2026-01-02", "not written"]]) }, o)[0].run // "npx webhook rollup --from 2026-01-02 --to 2026-01-02"
 */
function blankNotes(
  { reasons: blank, firstWritten }: Blanks,
  o: ActivityViewOptions,
  todaySoFar = true,
): BlankNote[] {
  const now = o.now ?? Date.now();
  const args = o.targetArgs ?? "";
  const today = utcDay(now);
  const period = `its end plus the ${o.graceMinutes ?? DEFAULT_GRACE_MINUTES}-minute grace period, UTC`;
  // The runs: one reason, and (not closed) all over already or all still to end.
  const kind = (day: string) => {
    const reason = blank.get(day);
    if (reason !== "not closed") return reason;
    return dayStart(day) + DAY_MS <= now ? "closing" : "open";
  };
  const inRange = [...blank.keys()].filter((d) => d >= o.from && d <= o.to).sort();
  const notes: BlankNote[] = [];
  for (const k of ["before the archive", "not written", "closing", "open"] as const)
    for (const range of dayRanges(inRange.filter((d) => kind(d) === k))) {
      const [from, to] = range;
      const at = isoTime(closesAt(from, o));
      const one = from === to;
      // One day: when it closes; several: the first's time, the rule for the others.
      const when = one ? `at ${at} (${period})` : `each at ${period}; the first at ${at}`;
      const base = { from, to, reason: blank.get(from) as BlankReason, closesAt: at };
      if (k === "before the archive")
        notes.push({
          ...base,
          text: `${rangeText(range)}: before the first closed day the day sets hold (${firstWritten}): nothing is known of ${one ? "it" : "them"} (the archive begins later, or its retention expired ${one ? "it" : "them"}).`,
        });
      else if (k === "not written")
        notes.push({
          ...base,
          text: `${rangeText(range)}: closed (${one ? `at ${at}, ${period}` : when}), but ${one ? "its" : "their"} day sets are not written; a rollup writes them:`,
          run: `npx webhook rollup --from ${from} --to ${to}${args}`,
        });
      else if (k === "closing")
        notes.push({
          ...base,
          text: `${rangeText(range)}: not closed yet: ${one ? "closes" : "close"} ${when}. To close ${one ? "it" : "them"} now (a fact that arrives later then needs another rollup):`,
          run: `npx webhook rollup --from ${from} --to ${to} --grace-minutes 0${args}`,
        });
      else
        notes.push({
          ...base,
          text: `${rangeText(range)}: not closed yet: ${one ? "closes" : "close"} ${when}.${
            todaySoFar && from <= today && today <= to
              ? " Today's active users so far are its active_users:"
              : ""
          }`,
          ...(todaySoFar && from <= today && today <= to
            ? {
                run: `npx webhook query activity --app ${shellWord(o.app)} --from ${today} --to ${today}${args}`,
              }
            : {}),
        });
    }
  return notes.sort((a, b) => a.from.localeCompare(b.from));
}

/** `—` for a blank day's figure, the value otherwise (`""` for none: a ratio whose divisor is 0). */
const shownOr = (blank: boolean, value: unknown) => (blank ? BLANK : (value ?? ""));

/** A `UsersDay` with every figure null (blank), marked with why. */
function blanked(d: UsersDay, reason: BlankReason): UsersDay & { blank: BlankReason } {
  const nulls = Object.fromEntries(Object.keys(d).map((k) => [k, null]));
  return { ...(nulls as unknown as UsersDay), day: d.day, blank: reason };
}

const share = (n: number | null, of: number | null) =>
  n === null || of === null ? BLANK : of ? (n / of).toFixed(2) : "";

/**
 * `--users` / `--retention`: users over time from the closed days' user sets (the last closed day:
 * the newest set). A day not closed yet, or closed but without its sets written for the app, is
 * blank (null; `—` in text) with a note saying when it closes and what to run; so is a D+k
 * return whose day is blank, and a weekly cohort whose week (or week after) has a blank day.
 */
async function usersView(
  store: ActivityStore,
  sets: UserSetStore,
  o: ActivityViewOptions,
): Promise<ActivityViewResult> {
  const closedThrough = await closedThroughOf(sets);
  const imported = await importedUsersOf(sets, o.app);
  const computed = await usersOverTime(sets, o.app, o.from, o.to, closedThrough, imported);
  // Every day a figure of the range reads: from the Monday of the first week (its cohort) to
  // D+30 of the last day and the 4 weeks after the last week.
  const monday = addDays(o.from, -((new Date(`${o.from}T00:00:00Z`).getUTCDay() + 6) % 7));
  const reach = daysInRange(monday, addDays(o.to, 34));
  const blanks = await blankDays(store, sets, USER_SETS_PREFIX, o, reach);
  const blank = blanks.reasons;
  // A return or a cohort waits for a day not closed or without its sets, not for one before the archive.
  const isBlank = (day: string) => blank.get(day) === "not closed" || blank.get(day) === "not written";
  const days = computed.days.map((d) => {
    const reason = blank.get(d.day);
    // Before the archive nothing of the day is known but, for an app that imported its users
    // (#43), who was created then: the import says when each existed from.
    if (reason === "before the archive" && imported.size > 0)
      return { ...blanked(d, reason), createdUsers: d.createdUsers };
    if (reason) return blanked(d, reason);
    const back = (k: number, v: number | null) => (isBlank(addDays(d.day, k)) ? null : v);
    return {
      ...d,
      retainedD1: back(1, d.retainedD1),
      retainedD7: back(7, d.retainedD7),
      retainedD30: back(30, d.retainedD30),
    };
  });
  const weekBlank = (start: string) => daysInRange(start, addDays(start, 6)).some(isBlank);
  const weeks = computed.weeks.map((w) => ({
    week: w.week,
    users: weekBlank(w.week) ? null : w.users,
    active: w.active.map((a, k) => (weekBlank(addDays(w.week, 7 * (k + 1))) ? null : a)),
  }));
  const notes = blankNotes(blanks, o);
  const json = {
    closedThrough: closedThrough || null,
    days,
    weeks,
    ...(notes.length ? { blank: notes } : {}),
  };
  const explain = [
    ...notes.map((n) => ({ ...n, text: `${BLANK} ${n.text}` })),
    ...(o.retention && reach.some(isBlank)
      ? [
          {
            text: `${BLANK} in d1, d7, d30, w1…w4 and a week's new_users: a day it reads (the cohort's day + 1, 7 or 30; a day of the week) is not closed yet, or its sets are not written; a day closes at its end plus the ${o.graceMinutes ?? DEFAULT_GRACE_MINUTES}-minute grace period, UTC.`,
          },
        ]
      : []),
  ];
  if (o.retention) {
    const rows = [
      ...days.map((d) => {
        const b = "blank" in d;
        return {
          cohort: d.day,
          new_users: shownOr(b, d.newUsers),
          d1: b ? BLANK : share(d.retainedD1, d.newUsers),
          d7: b ? BLANK : share(d.retainedD7, d.newUsers),
          d30: b ? BLANK : share(d.retainedD30, d.newUsers),
        };
      }),
      ...weeks.map((w) => ({
        cohort: `week of ${w.week}`,
        new_users: w.users ?? BLANK,
        ...Object.fromEntries(w.active.map((a, i) => [`w${i + 1}`, share(a, w.users)])),
      })),
    ];
    const columns = ["cohort", "new_users", "d1", "d7", "d30", "w1", "w2", "w3", "w4"];
    return { json, rows, lines: textLines([{ columns, rows }], explain, o.wide) };
  }
  const rows = days.map((d) => {
    const b = "blank" in d;
    return {
      day: d.day,
      dau: shownOr(b, d.dau),
      wau: shownOr(b, d.wau),
      mau: shownOr(b, d.mau),
      stickiness: b ? BLANK : d.stickiness === null ? "" : d.stickiness.toFixed(2),
      new_users: shownOr(b, d.newUsers),
      created_users: shownOr(b && d.createdUsers === null, d.createdUsers),
      conversations_started: shownOr(b, d.conversationsStarted),
    };
  });
  return {
    json,
    rows,
    lines: textLines([{ columns: Object.keys(rows[0] ?? { day: "" }), rows }], explain, o.wide),
  };
}

/** The last closed day: the newest user set (a final pass writes every day set at once). */
async function closedThroughOf(sets: UserSetStore): Promise<string> {
  const closed = (await sets.list(USER_SETS_PREFIX)).map((k) => dayOfKey(k) ?? "").sort();
  return closed.at(-1) ?? "";
}

/** `--groups`: each day's group figures (the rollup's), and the membership history's members, churn and sizes. */
const GROUP_COLUMNS = [
  "groups_created",
  "groups_deleted",
  "active_groups",
  "member_joins",
  "member_leaves",
  "member_kicks",
  "member_bans",
] as const satisfies ReadonlyArray<keyof Figures>;

/** `--groups`' rollup figures by their short names in the text that fits. */
const GROUP_SHORT: Record<(typeof GROUP_COLUMNS)[number], string> = {
  groups_created: "created",
  groups_deleted: "deleted",
  active_groups: "with_messages",
  member_joins: "joined",
  member_leaves: "left",
  member_kicks: "kicked",
  member_bans: "banned",
};

async function groupsView(
  store: ActivityStore,
  days: readonly StoredDay[],
  sets: UserSetStore,
  o: ActivityViewOptions,
  notComputed: readonly Note[],
): Promise<ActivityViewResult> {
  const closedThrough = await closedThroughOf(sets);
  const history = await groupsOverTime(sets, o.app, o.from, o.to, closedThrough);
  const blanks = await blankDays(store, sets, MEMBERS_PREFIX, o, daysInRange(o.from, o.to));
  const blank = blanks.reasons;
  const figures = new Map(days.map((d) => [d.day, d.figures]));
  const figuresOf = (day: string) =>
    Object.fromEntries(GROUP_COLUMNS.map((f) => [f, figures.get(day)?.[f] ?? null]));
  // Today's group figures so far are the rollup's, in the same view: no other command to give.
  const notes = blankNotes(blanks, o, false);
  const json = {
    closedThrough: closedThrough || null,
    days: history.map((h) => {
      const reason = blank.get(h.day);
      const members = reason
        ? {
            membersAtStart: null,
            membersAtEnd: null,
            churned: null,
            churn: null,
            groups: null,
            averageGroupSize: null,
            blank: reason,
          }
        : {};
      return { ...h, ...members, ...figuresOf(h.day) };
    }),
    ...(notes.length ? { blank: notes } : {}),
  };
  const rows: Row[] = json.days.map((d) => {
    const b = "blank" in d;
    return {
      day: d.day,
      // A day the rollup has not computed for the app is `—` too, its note below.
      ...Object.fromEntries(
        Object.entries(figuresOf(d.day)).map(([f, v]) => [f, v ?? (b || !figures.has(d.day) ? BLANK : "")]),
      ),
      members_at_start: shownOr(b, d.membersAtStart),
      members_at_end: shownOr(b, d.membersAtEnd),
      churn: b ? BLANK : d.churn === null ? "" : d.churn.toFixed(3),
      groups: shownOr(b, d.groups),
      average_size: b ? BLANK : ratioText(d.averageGroupSize),
    };
  });
  const members = ["day", "members_at_start", "members_at_end", "churn", "groups", "average_size"];
  const sections: Section[] = o.wide
    ? [{ columns: Object.keys(rows[0] ?? { day: "" }), rows }]
    : [
        {
          title:
            "Groups created, deleted and with messages; members joined, left, kicked and banned (the rollup's figures of the day).",
          columns: ["day", ...GROUP_COLUMNS.map((f) => GROUP_SHORT[f])],
          rows: rows.map((r) => ({
            day: r.day,
            ...Object.fromEntries(GROUP_COLUMNS.map((f) => [GROUP_SHORT[f], r[f]])),
          })),
        },
        {
          title:
            "Members at the start and end of the day, churn, groups with members and their average size (the membership history of the closed days).",
          columns: members,
          rows,
        },
      ];
  return {
    json,
    rows,
    lines: textLines(
      sections,
      [...notComputed, ...notes.map((n) => ({ ...n, text: `${BLANK} ${n.text}` }))],
      o.wide,
    ),
  };
}
