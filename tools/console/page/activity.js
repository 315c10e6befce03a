// The activity view over a range of days: the daily figures' charts and tables (messages, calls,
// users and retention, cohorts, groups), the weekday × hour heatmaps, then the day below (day.js).

import { appForViews } from "./apps.js";
import { refreshDay } from "./day.js";
import { BLANK, iso, minutes } from "./format.js";
import { api } from "./state.js";
import { $, chart, fillNotes, fillTable } from "./widgets.js";

export async function refreshActivity() {
  const app = await appForViews("activity-hint");
  if (!app) return;
  const from = $("from").value;
  const to = $("to").value;
  const { days, notComputed = [], notComputedNotes = [] } = await api("activity", { app, from, to });
  // Every day of the range on the charts, oldest first; a day not computed yet is a gap.
  const byDay = new Map(days.map((d) => [d.day, d]));
  const labels = [...days.map((d) => d.day), ...notComputed].sort();
  const f = (name) => labels.map((day) => byDay.get(day)?.figures[name] ?? null);
  const m = (name) => labels.map((day) => (byDay.has(day) ? minutes(byDay.get(day).figures[name]) : null));
  chart("chart-messages", {
    type: "bar",
    data: {
      labels,
      datasets: [
        { label: "messages", data: f("messages"), backgroundColor: "#2f6fde" },
        { type: "line", label: "active users", data: f("active_users"), borderColor: "#2e9d5b" },
        { type: "line", label: "peak online", data: f("peak_online"), borderColor: "#d99a21" },
      ],
    },
  });
  chart("chart-calls", {
    type: "bar",
    data: {
      labels,
      datasets: [
        { label: "audio calls", data: f("calls_audio"), backgroundColor: "#8a5cd1", stack: "c" },
        { label: "video calls", data: f("calls_video"), backgroundColor: "#c86bb1", stack: "c" },
        {
          type: "line",
          label: "call minutes",
          data: m("call_seconds"),
          borderColor: "#2f6fde",
          yAxisID: "minutes",
        },
        {
          type: "line",
          label: "meeting minutes",
          data: m("meeting_seconds"),
          borderColor: "#2e9d5b",
          yAxisID: "minutes",
        },
      ],
    },
    options: {
      scales: { y: { stacked: true, beginAtZero: true }, minutes: { position: "right", beginAtZero: true } },
    },
  });
  fillTable(
    $("activity-days"),
    [
      ["day", "day"],
      ["messages", "messages"],
      ["active_users", "active users"],
      ["peak_online", "peak online"],
      ["calls_started", "calls started"],
      ["call_minutes", "call minutes"],
      ["meeting_minutes", "meeting minutes"],
      ["answer_rate", "answer rate"],
      ["platforms", "users by client"],
      ["computedAt", "computed", iso],
      ["final", "final", (v) => (v === undefined ? "" : v ? "yes" : "no")],
    ],
    labels.map((day) => {
      const d = byDay.get(day);
      if (!d) return { day, messages: "(not computed)" };
      return {
        day,
        ...d.figures,
        call_minutes: minutes(d.figures.call_seconds),
        meeting_minutes: minutes(d.figures.meeting_seconds),
        answer_rate: d.derived.answer_rate === null ? "" : d.derived.answer_rate.toFixed(2),
        platforms: Object.entries(d.platforms ?? {})
          .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
          .map(([p, n]) => `${p} ${n}`)
          .join(", "),
        computedAt: d.computedAt,
        final: d.final,
      };
    }),
    { key: (d) => d.day },
  );
  // A day not computed: `query activity`'s note, with the rollup that computes it.
  fillNotes($("activity-days-note"), notComputedNotes);
  const seconds = (ms) => (ms === undefined || ms === null ? "" : String(ms / 1000));
  // A percentile of nothing measured (no reply, delivery or read that day) is blank, not 0 s.
  const percentile = (count) => (ms, row) => (row[count] ? seconds(ms) : "");
  const ratio = (x) => (x === null || x === undefined ? "" : x.toFixed(2));
  fillTable(
    $("activity-calls"),
    [
      ["day", "day"],
      ["calls_ended", "calls ended"],
      ["meetings_ended", "meetings ended"],
      ["sessions_ended", "calls + meetings ended"],
      ["durations", "calls + meetings by duration: < 1 / 1–5 / 5–15 / 15–60 / ≥ 60 min"],
      ["per_call", "participants per call ended (of all calls ended)", ratio],
      ["peak_calls", "most at once"],
      ["chat_to_call", "chat then call"],
      ["first_response_p50_ms", "reply p50 (s)", percentile("first_responses")],
      ["first_response_p90_ms", "reply p90 (s)", percentile("first_responses")],
      ["delivery_latency_p50_ms", "delivered p50 (s)", percentile("delivery_latencies")],
      ["delivery_latency_p90_ms", "delivered p90 (s)", percentile("delivery_latencies")],
      ["delivery_latency_p99_ms", "delivered p99 (s)", percentile("delivery_latencies")],
      ["read_latency_p50_ms", "read p50 (s)", percentile("read_latencies")],
      ["read_latency_p90_ms", "read p90 (s)", percentile("read_latencies")],
      ["read_latency_p99_ms", "read p99 (s)", percentile("read_latencies")],
    ],
    days.map((d) => ({
      day: d.day,
      ...d.figures,
      durations: [
        "sessions_under_1m",
        "sessions_1_5m",
        "sessions_5_15m",
        "sessions_15_60m",
        "sessions_over_60m",
      ]
        .map((k) => d.figures[k])
        .join(" / "),
      per_call: d.derived.participants_per_call,
    })),
    { key: (d) => d.day, empty: "no day computed in the range" },
  );
  const users = await api("activity/users", { app, from, to });
  // A figure of a day not closed yet, or closed without its day sets, is "—" (the note says why), never 0.
  const share = (n, of) =>
    n === null || n === undefined || of === null ? BLANK : !of ? "" : (n / of).toFixed(2);
  const orBlank = (format) => (v, row) => (row.blank ? BLANK : format ? format(v, row) : v);
  // The rollup's own figures of a blank day: as computed, "—" where there are none.
  const rollupFigure = (v, row) => (v === null || v === "" ? (row.blank ? BLANK : "") : v);
  fillTable(
    $("activity-users"),
    [
      ["day", "day"],
      ["dau", "DAU", orBlank()],
      ["wau", "WAU", orBlank()],
      ["mau", "MAU", orBlank()],
      ["stickiness", "DAU / MAU", orBlank(ratio)],
      ["newUsers", "new users", orBlank()],
      ["d1", "back D+1", orBlank()],
      ["d7", "back D+7", orBlank()],
      ["d30", "back D+30", orBlank()],
      ["conversationsStarted", "conversations started", orBlank()],
    ],
    users.days.map((d) => ({
      ...d,
      d1: share(d.retainedD1, d.newUsers),
      d7: share(d.retainedD7, d.newUsers),
      d30: share(d.retainedD30, d.newUsers),
    })),
    { key: (d) => d.day, empty: "no day in the range" },
  );
  fillNotes($("activity-users-note"), users.blank);
  fillTable(
    $("activity-cohorts"),
    [["week", "week of"], ["users", "new users"], ...[1, 2, 3, 4].map((k) => [`w${k}`, `week +${k}`])],
    users.weeks.map((w) => ({
      week: w.week,
      users: w.users ?? BLANK,
      ...Object.fromEntries(w.active.map((a, i) => [`w${i + 1}`, share(a, w.users)])),
    })),
    { key: (w) => w.week, empty: "no week starts in the range" },
  );
  const groups = await api("activity/groups", { app, from, to });
  fillTable(
    $("activity-groups"),
    [
      ["day", "day"],
      ["groups_created", "created", rollupFigure],
      ["groups_deleted", "deleted", rollupFigure],
      ["active_groups", "with messages", rollupFigure],
      ["member_joins", "joined", rollupFigure],
      ["out", "left / kicked / banned", rollupFigure],
      ["membersAtStart", "members at start", orBlank()],
      ["membersAtEnd", "members at end", orBlank()],
      ["churn", "churn", orBlank((x) => (x === null || x === undefined ? "" : x.toFixed(3)))],
      ["groups", "groups with members", orBlank()],
      ["averageGroupSize", "average size", orBlank(ratio)],
    ],
    groups.days.map((d) => ({
      ...d,
      out: d.member_leaves === null ? "" : [d.member_leaves, d.member_kicks, d.member_bans].join(" / "),
    })),
    { key: (d) => d.day, empty: "no day in the range" },
  );
  fillNotes($("activity-groups-note"), groups.blank);
  const heatmap = await api("activity/heatmap", { app, from, to });
  for (const [id, grid] of [
    ["heatmap-online", heatmap.peakOnline],
    ["heatmap-calls", heatmap.peakCalls],
  ])
    fillHeatmap($(id), id === "heatmap-online" ? "users online" : "calls", grid);
  await refreshDay(app);
}

/** A weekday × hour table of peaks, each cell shaded by its share of the table's highest. */
function fillHeatmap(table, what, grid) {
  const hours = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, "0"));
  fillTable(
    table,
    [["weekday", what], ...hours.map((h) => [h, h])],
    Object.entries(grid).map(([weekday, values]) => ({
      weekday,
      ...Object.fromEntries(values.map((v, h) => [hours[h], v ?? ""])),
    })),
    { key: (r) => r.weekday, empty: "no day computed in the range" },
  );
  const top = Math.max(1, ...Object.values(grid).flat());
  for (const cell of table.querySelectorAll("td[data-column]")) {
    if (cell.dataset.column === "weekday") continue;
    cell.style.background = `rgba(47, 111, 222, ${(Number(cell.textContent) / top) * 0.8})`;
  }
}
