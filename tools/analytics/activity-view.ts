import { derivedFigures, type Figures, HOURLY_FIGURES } from "../../shared/analytics/figures";
import { daysInRange } from "../../shared/analytics/rollup";
import type { ActivityStore } from "../../shared/analytics/store/activity-store";
import {
  groupsOverTime,
  USER_SETS_PREFIX,
  type UserSetStore,
  usersOverTime,
} from "../../shared/analytics/user-sets";
import { dayOfKey } from "../../shared/contracts/bucket-layout";

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
}

type Row = Record<string, unknown>;

/** The figures shown in a day's row of the readable table (all of them are in `--json`). */
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

/** `--calls`: the sessions that ended, by duration, and their participants. */
const CALL_COLUMNS: ReadonlyArray<keyof Figures> = [
  "calls_ended",
  "meetings_ended",
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

const ratioText = (x: number | null) => (x === null ? "" : x.toFixed(2));

/** Users per client platform, most first: `javascript 12, ios 3`. */
export const platformsText = (platforms: Record<string, number>) =>
  Object.entries(platforms)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([p, n]) => `${p} ${n}`)
    .join(", ");

const minutes = (seconds: number) => Math.round((seconds / 60) * 100) / 100;

/**
 * `query activity`: an app's days in a range (one Query), or one day's hours or top groups/users
 * per day (one Query each), as `--json` and as table rows. Every day says when it was computed
 * and whether it is final; a day the rollup has not computed yet is listed as missing.
 */
export async function activityView(
  store: ActivityStore,
  o: ActivityViewOptions,
  sets?: UserSetStore,
): Promise<{ json: unknown; rows: Row[] }> {
  if ((o.users || o.retention) && sets) return usersView(sets, o);
  const days = await store.days(o.app, o.from, o.to);
  if (o.groups && sets) return groupsView(days, sets, o);
  if (o.heatmap)
    return onlineHeatmap(
      store,
      o.app,
      days.map((d) => d.day),
    );
  const stamp = (d: (typeof days)[number]) => ({
    computedAt: new Date(d.computedAt).toISOString(),
    final: d.final,
  });
  if (o.hourly || o.top) {
    const json = [];
    const rows: Row[] = [];
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
        top.forEach((t, i) => {
          rows.push({ day: d.day, rank: i + 1, ...t, final: d.final });
        });
      }
    }
    return { json, rows };
  }
  const known = new Set(days.map((d) => d.day));
  const missing = daysInRange(o.from, o.to).filter((d) => !known.has(d));
  return {
    json: {
      days: days.map((d) => ({ ...d, derived: derivedFigures(d.figures) })),
      ...(missing.length ? { notComputed: missing } : {}),
    },
    rows: [
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
            per_call: ratioText(derived.participants_per_call),
            per_meeting: ratioText(derived.participants_per_meeting),
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
      ...missing.map((day) => ({ day, computedAt: "(not computed: npx webhook rollup)" })),
    ].sort((a, b) => String(a.day).localeCompare(String(b.day))),
  };
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;

/**
 * The concurrency heatmaps: per weekday (UTC) and hour, the most users online at once
 * (`peak_online`) and the most calls in progress at once (`peak_calls`) in that hour on any of the
 * days, from each stored hour (the transitions in the order of facts); one Query per day.
 * Weekdays without a computed day are left out.
 */
async function onlineHeatmap(
  store: ActivityStore,
  app: string,
  days: readonly string[],
): Promise<{ json: unknown; rows: Row[] }> {
  const grids = { online: new Map<number, number[]>(), calls: new Map<number, number[]>() };
  for (const day of days) {
    const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
    const hours = await store.hours(app, day);
    for (const [what, figure] of [
      ["online", "peak_online"],
      ["calls", "peak_calls"],
    ] as const) {
      const row = grids[what].get(weekday) ?? Array.from({ length: 24 }, () => 0);
      for (const h of hours) row[h.hour] = Math.max(row[h.hour] ?? 0, h.figures[figure]);
      grids[what].set(weekday, row);
    }
  }
  const weekdays = [...grids.online.keys()].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7));
  const byWeekday = (grid: Map<number, number[]>) =>
    Object.fromEntries(weekdays.map((w) => [WEEKDAYS[w], grid.get(w)]));
  return {
    json: { days: days.length, peakOnline: byWeekday(grids.online), peakCalls: byWeekday(grids.calls) },
    rows: (["online", "calls"] as const).flatMap((what) =>
      weekdays.map((w) => ({
        peak: what,
        weekday: WEEKDAYS[w],
        ...Object.fromEntries(
          (grids[what].get(w) ?? []).map((v, hour) => [String(hour).padStart(2, "0"), v]),
        ),
      })),
    ),
  };
}

const share = (n: number | null, of: number) => (n === null ? "" : of ? (n / of).toFixed(2) : "");

/**
 * `--users` / `--retention`: users over time from the closed days' user sets (the last closed day:
 * the newest set); a window reaching past it is left empty.
 */
async function usersView(
  sets: UserSetStore,
  o: ActivityViewOptions,
): Promise<{ json: unknown; rows: Row[] }> {
  const closedThrough = await closedThroughOf(sets);
  const { days, weeks } = await usersOverTime(sets, o.app, o.from, o.to, closedThrough);
  const json = { closedThrough: closedThrough || null, days, weeks };
  if (o.retention)
    return {
      json,
      rows: [
        ...days.map((d) => ({
          cohort: d.day,
          new_users: d.newUsers ?? "",
          d1: share(d.retainedD1, d.newUsers ?? 0),
          d7: share(d.retainedD7, d.newUsers ?? 0),
          d30: share(d.retainedD30, d.newUsers ?? 0),
        })),
        ...weeks.map((w) => ({
          cohort: `week of ${w.week}`,
          new_users: w.users,
          ...Object.fromEntries(w.active.map((a, i) => [`w${i + 1}`, share(a, w.users)])),
        })),
      ],
    };
  return {
    json,
    rows: days.map((d) => ({
      day: d.day,
      dau: d.dau ?? "",
      wau: d.wau ?? "",
      mau: d.mau ?? "",
      stickiness: d.stickiness === null ? "" : d.stickiness.toFixed(2),
      new_users: d.newUsers ?? "",
      created_users: d.createdUsers ?? "",
      conversations_started: d.conversationsStarted ?? "",
    })),
  };
}

/** The last closed day: the newest user set (a final pass writes every day set at once). */
async function closedThroughOf(sets: UserSetStore): Promise<string> {
  const closed = (await sets.list(USER_SETS_PREFIX)).map((k) => dayOfKey(k) ?? "").sort();
  return closed.at(-1) ?? "";
}

/** `--groups`: each day's group figures (the rollup's), and the membership history's members, churn and sizes. */
const GROUP_COLUMNS: ReadonlyArray<keyof Figures> = [
  "groups_created",
  "groups_deleted",
  "active_groups",
  "member_joins",
  "member_leaves",
  "member_kicks",
  "member_bans",
];

async function groupsView(
  days: Awaited<ReturnType<ActivityStore["days"]>>,
  sets: UserSetStore,
  o: ActivityViewOptions,
): Promise<{ json: unknown; rows: Row[] }> {
  const closedThrough = await closedThroughOf(sets);
  const history = await groupsOverTime(sets, o.app, o.from, o.to, closedThrough);
  const figures = new Map(days.map((d) => [d.day, d.figures]));
  const figuresOf = (day: string) =>
    Object.fromEntries(GROUP_COLUMNS.map((f) => [f, figures.get(day)?.[f] ?? null]));
  return {
    json: { closedThrough: closedThrough || null, days: history.map((h) => ({ ...h, ...figuresOf(h.day) })) },
    rows: history.map((d) => ({
      day: d.day,
      ...Object.fromEntries(Object.entries(figuresOf(d.day)).map(([f, v]) => [f, v ?? ""])),
      members_at_start: d.membersAtStart ?? "",
      members_at_end: d.membersAtEnd ?? "",
      churn: d.churn === null ? "" : d.churn.toFixed(3),
      groups: d.groups ?? "",
      average_size: ratioText(d.averageGroupSize),
    })),
  };
}
