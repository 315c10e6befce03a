// The console page: four views over the console's JSON endpoints (tools/console/api.ts), charts by
// Chart.js (served from the package). Everything shown is set as text, never as HTML.

const $ = (id) => document.getElementById(id);
const state = {
  app: "",
  apps: [],
  // The app the per-app views show while none is chosen (the busiest), and when it was asked.
  shown: undefined,
  shownAskedAt: 0,
  view: "flow",
  busy: false,
  charts: {},
  openEvent: undefined,
  // Whether a day was chosen in the Day picker: until then it follows today (or yesterday, while today has nothing).
  dayChosen: false,
  openWhere: undefined,
  refreshMs: 2000,
};
const OUTCOMES = ["projected", "stale", "archived-only", "quarantined", "failed"];
const COLORS = {
  accepted: "#2f6fde",
  rejected: "#8a5cd1",
  projected: "#2e9d5b",
  stale: "#9aa3b1",
  "archived-only": "#d99a21",
  quarantined: "#c7362f",
  failed: "#7a1f1a",
};

/** GET (or POST) one endpoint; a non-2xx answer throws its `error`. */
async function api(path, params = {}, init = {}) {
  const query = new URLSearchParams(
    Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ""),
  ).toString();
  const response = await fetch(`/api/${path}${query ? `?${query}` : ""}`, {
    ...init,
    headers: { "x-webhook-console": "1", ...init.headers },
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? response.statusText);
  return body;
}

const iso = (ms) => (ms === undefined || ms === null ? "" : new Date(ms).toISOString().replace(".000Z", "Z"));
/** A time to the second, ISO 8601 UTC: the one format of every time on the page. */
const isoSeconds = (ms) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
/** What a figure shows where it has no value yet and a note below says why (never a 0). */
const BLANK = "—";
const short = (id) => (id ?? "").slice(0, 16);
const minutes = (seconds) => Math.round(((seconds ?? 0) / 60) * 100) / 100;
const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10);
/** Whether `value` is a calendar day as every day on the page is written, YYYY-MM-DD (2026-02-30 is not). */
const isDay = (value) =>
  /^\d{4}-\d{2}-\d{2}$/.test(value) && utcDay(Date.parse(`${value}T00:00:00Z`) || 0) === value;
/** The day `n` days after `day` (UTC). */
const addDays = (day, n) => utcDay(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000);

/**
 * Fills a table: `columns` are [key, label, format?]; each row gets `data-key` (and is clickable
 * when `onClick` is given). An empty list shows one muted row.
 */
function fillTable(table, columns, rows, { key, onClick, empty = "nothing yet" } = {}) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const [, label] of columns) {
    const th = document.createElement("th");
    th.textContent = label;
    head.append(th);
  }
  const body = table.createTBody();
  if (rows.length === 0) {
    const cell = body.insertRow().insertCell();
    cell.colSpan = columns.length;
    cell.className = "muted";
    cell.textContent = empty;
  }
  for (const row of rows) {
    const tr = body.insertRow();
    if (key) tr.dataset.key = key(row);
    for (const [name, , format] of columns) {
      const cell = tr.insertCell();
      const value = format ? format(row[name], row) : row[name];
      cell.textContent = value === undefined || value === null ? "" : String(value);
      cell.dataset.column = name;
      if (name === "outcome") cell.className = `outcome-${value}`;
    }
    if (onClick) tr.addEventListener("click", () => onClick(row));
  }
}

/** Cards of figures: [{ id, label, value, bad }]; each card is `data-card=<id>`. */
function fillCards(container, cards) {
  container.replaceChildren(
    ...cards.map(({ id, label, value, bad }) => {
      const card = document.createElement("div");
      card.className = `card${bad && value > 0 ? " bad" : ""}`;
      card.dataset.card = id;
      const v = document.createElement("div");
      v.className = "value";
      v.textContent = String(value);
      const l = document.createElement("div");
      l.className = "label";
      l.textContent = label;
      card.append(v, l);
      return card;
    }),
  );
}

/**
 * The notes under a table (`query activity`'s `blank`): why a figure shows "—", when its day
 * closes and the command to run, each a line; none hides the box.
 */
function fillNotes(box, notes = []) {
  box.hidden = notes.length === 0;
  box.replaceChildren(
    ...notes.map((n) => {
      const line = document.createElement("div");
      line.dataset.from = n.from;
      line.textContent = `${BLANK} ${n.text}`;
      if (n.run) {
        const code = document.createElement("code");
        code.textContent = n.run;
        line.append(" ", code);
      }
      return line;
    }),
  );
}

/**
 * The triggers whose quarantine rate is a spike over the window (more than 5% of at least 20
 * events: the alarm's rule), highlighted above the flow: a platform payload change shows here.
 */
function showSpikes(spikes) {
  const box = $("quarantine-spikes");
  box.hidden = spikes.length === 0;
  box.replaceChildren(
    ...spikes.map((s) => {
      const line = document.createElement("div");
      line.className = "spike";
      line.dataset.trigger = s.trigger;
      line.textContent = `${s.trigger}: ${s.quarantined} of ${s.events} events quarantined (${s.share}%) in the last 15 minutes: has the platform changed this payload? See the recent events' stories.`;
      return line;
    }),
  );
}

/** A chart on a canvas, made once and then updated in place. */
function chart(id, config) {
  const existing = state.charts[id];
  if (existing) {
    existing.data.labels = config.data.labels;
    existing.data.datasets.forEach((d, i) => {
      d.data = config.data.datasets[i].data;
      d.label = config.data.datasets[i].label;
    });
    existing.update("none");
    return existing;
  }
  state.charts[id] = new window.Chart($(id), {
    ...config,
    options: { responsive: true, maintainAspectRatio: false, animation: false, ...config.options },
  });
  return state.charts[id];
}

// ---- Live flow ----------------------------------------------------------------------------

async function refreshFlow() {
  const [overview, flow] = await Promise.all([
    api("overview", { app: state.app }),
    api("flow", { app: state.app }),
  ]);
  updateApps(overview);
  // A batch lands in one second: per-second bars would be spikes. The chart shows events per
  // second averaged over 5 s (locally) or a minute (CloudWatch's resolution).
  const group = flow.resolutionSeconds === 1 ? 5 : 1;
  const seconds = group * flow.resolutionSeconds;
  $("flow-resolution").textContent =
    flow.resolutionSeconds === 1
      ? "events per second (5 s averages), last 15 minutes"
      : `events per second (${flow.resolutionSeconds} s averages, CloudWatch), last 15 minutes, all apps`;
  fillCards($("flow-cards"), [
    { id: "accepted", label: "accepted (15 min)", value: flow.totals.accepted },
    ...OUTCOMES.map((o) => ({
      id: o,
      label: o,
      value: flow.totals[o],
      bad: o === "quarantined" || o === "failed",
    })),
    { id: "rejected", label: "rejected by the edge", value: flow.totals.rejected, bad: true },
  ]);
  showSpikes(flow.spikes ?? []);
  const rate = (values) =>
    Array.from({ length: Math.ceil(values.length / group) }, (_, i) => {
      const sum = values.slice(i * group, (i + 1) * group).reduce((a, b) => a + b, 0);
      return Math.round((sum / seconds) * 100) / 100;
    });
  const labels = rate(flow.series.accepted).map((_, i) => iso(flow.from + i * seconds * 1000).slice(11, 19));
  chart("flow-chart", {
    type: "bar",
    data: {
      labels,
      datasets: [
        ...OUTCOMES.map((o) => ({
          label: o,
          data: rate(flow.series[o]),
          backgroundColor: COLORS[o],
          stack: "out",
        })),
        {
          type: "line",
          label: "accepted",
          data: rate(flow.series.accepted),
          borderColor: COLORS.accepted,
          pointRadius: 0,
          borderWidth: 1.5,
        },
      ],
    },
    options: {
      scales: { x: { stacked: true, ticks: { maxTicksLimit: 15 } }, y: { stacked: true, beginAtZero: true } },
    },
  });
  const q = overview.queues;
  fillTable(
    $("queues"),
    [
      ["queue", "queue"],
      ["depth", "messages"],
      ["deadLetters", "dead-lettered"],
    ],
    q ? ["events", "recordings"].map((name) => ({ queue: name, ...q[name] })) : [],
    { key: (r) => r.queue, empty: "no queues on this target" },
  );
  const rows = [
    ...Object.entries(overview.stats.items).map(([what, count]) => ({
      what: `items: ${what}`,
      key: `items.${what}`,
      count,
    })),
    ...Object.entries(overview.stats.outcomes).flatMap(([service, counts]) =>
      Object.entries(counts).map(([outcome, count]) => ({
        what: `${service}: ${outcome}`,
        key: `${service}.${outcome}`,
        count,
      })),
    ),
  ];
  fillTable(
    $("stats"),
    [
      ["what", "what"],
      ["count", "count"],
    ],
    rows,
    { key: (r) => r.key },
  );
}

/** Views that show one app: they offer no "All apps", and open on the busiest app. */
const PER_APP = new Set(["activity", "now"]);

/** The app selector: "All apps" only where a view shows all apps; the app shown selected. */
function renderAppSelect() {
  const perApp = PER_APP.has(state.view);
  const select = $("app");
  const options = perApp ? [] : [new Option("All apps", "")];
  select.replaceChildren(...options, ...state.apps.map((a) => new Option(a, a)));
  select.value = perApp ? state.app || state.shown || state.apps[0] || "" : state.app;
}

/** The app list (from the archive) in the selector, keeping the choice. */
function updateApps(overview) {
  $("target").textContent = overview.target === "local" ? "local stack" : `stack ${overview.stack ?? ""}`;
  state.refreshMs = overview.refreshSeconds * 1000;
  if (JSON.stringify(overview.apps) === JSON.stringify(state.apps)) return;
  state.apps = overview.apps;
  renderAppSelect();
}

// ---- Recent events ------------------------------------------------------------------------

async function refreshEvents() {
  const events = await api("events", { app: state.app, trigger: $("trigger").value.trim(), limit: 20 });
  const triggers = new Set([...$("triggers").options].map((o) => o.value));
  for (const e of events)
    if (!triggers.has(e.trigger)) {
      triggers.add(e.trigger);
      $("triggers").append(new Option(e.trigger, e.trigger));
    }
  fillTable(
    $("events-table"),
    [
      ["eventId", "event", short],
      ["receivedAt", "received", iso],
      ["trigger", "trigger"],
      ["appId", "app"],
      ["outcome", "outcome"],
    ],
    events,
    {
      key: (e) => e.eventId,
      onClick: (e) => openStory(e.eventId, { app: e.appId, at: e.receivedAt }),
      empty: "no events yet",
    },
  );
}

// `where`: the app and receipt time of a listed event, so that its lookup reads that hour only.
async function openStory(eventId, where = {}) {
  state.openEvent = eventId;
  state.openWhere = where;
  $("story-id").textContent = short(eventId);
  $("story-message").textContent = "";
  $("confirm").hidden = true;
  $("resend").hidden = true;
  fillTable($("story-fields"), [["k", ""]], [{ k: "loading…" }]);
  $("story-items").replaceChildren();
  if (!$("story").open) $("story").showModal();
  try {
    const t = await api(`events/${eventId}`, where);
    const r = t.recording;
    const fields = [
      ["event", t.eventId],
      ["trigger", t.trigger],
      ["app", t.appId],
      ["received", iso(t.receivedAt)],
      ["outcome", t.outcome],
      ["error", t.error],
      ["note", t.note],
      ["erased", t.erasure && `redacted by erasure ${t.erasure}: the erased user is a pseudonym`],
      ["object", t.key],
      [
        "recording",
        r &&
          (r.status === "archived"
            ? `archived ${r.key} (${r.size} bytes)`
            : r.status === "failed"
              ? `failed: ${r.failureReason} after ${r.attempts} attempt(s)`
              : "pending"),
      ],
    ].filter(([, v]) => v !== undefined && v !== "");
    fillTable(
      $("story-fields"),
      [
        ["k", "field"],
        ["v", "value"],
      ],
      fields.map(([k, v]) => ({ k, v })),
      { key: (f) => f.k },
    );
    fillTable(
      $("story-items"),
      [
        ["table", "table"],
        ["key", "item", (k) => `${k.pk}${k.sk ? ` / ${k.sk}` : ""}`],
        ["state", "state"],
      ],
      t.items ?? [],
      { empty: "none: it writes no table" },
    );
    $("resend").hidden = !(t.outcome === "quarantined" || t.outcome === "dead-lettered");
  } catch (error) {
    $("story-message").textContent = error.message;
  }
}

async function resend() {
  $("confirm").hidden = true;
  try {
    const report = await api(`events/${state.openEvent}/resend`, state.openWhere ?? {}, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    $("story-message").textContent =
      `resent ${short(report.eventId)} from the ${report.source}: it is back on the events queue (a payload still invalid is quarantined again); reopen the event to see what became of it`;
    $("resend").hidden = true;
  } catch (error) {
    $("story-message").textContent = `resend failed: ${error.message}`;
  }
}

// ---- Activity -----------------------------------------------------------------------------

/**
 * The app the per-app views show: the chosen one, else the busiest of the last 7 days (asked once
 * it has data; until then again at most every minute), else the first in the archive.
 */
async function appForViews(hint) {
  if (!state.app && !state.shown && Date.now() - state.shownAskedAt > 60_000) {
    state.shownAskedAt = Date.now();
    const busiest = await api("busiest", {
      from: utcDay(Date.now() - 6 * 86_400_000),
      to: utcDay(Date.now()),
    });
    if (busiest.withData) state.shown = busiest.app;
  }
  const app = state.app || state.shown || state.apps[0];
  $(hint).textContent = app
    ? state.app
      ? ""
      : state.shown
        ? `Showing ${app}, the busiest app of the last 7 days: choose another above.`
        : `Showing ${app}: no app has activity figures in the last 7 days yet; choose another above.`
    : "No app has sent an event yet.";
  renderAppSelect();
  return app;
}

async function refreshActivity() {
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

/** Whether a day's hours (`/api/activity/hours`) hold nothing yet: not computed, or no message and no active user. */
const nothingIn = (hours) =>
  !hours || hours.hours.every((h) => !h.figures.messages && !h.figures.active_users);

/**
 * The day the Day picker shows: the one chosen, else today, unless today has nothing yet (just
 * after midnight UTC) and yesterday has: then yesterday, said beside the picker.
 */
async function dayToShow(app) {
  if (state.dayChosen) return { day: $("day").value, hours: undefined };
  const today = utcDay(Date.now());
  let shown = { day: today, hours: await api("activity/hours", { app, day: today }) };
  let hint = "";
  if (nothingIn(shown.hours)) {
    const yesterday = utcDay(Date.now() - 86_400_000);
    const before = await api("activity/hours", { app, day: yesterday });
    if (!nothingIn(before)) {
      shown = { day: yesterday, hours: before };
      hint = `Today (${today}) has nothing yet: showing yesterday; choose another day.`;
    }
  }
  // A day typed meanwhile (the answers above took a while) is the person's: keep it.
  if (state.dayChosen) return { day: $("day").value, hours: undefined };
  $("day").value = shown.day;
  $("day-hint").textContent = hint;
  return shown;
}

/** A top list's answer for a day not computed: the rollup to run (`/api/activity/top`'s `notComputed`). */
const notComputedText = (answer) =>
  answer?.notComputed ? `${answer.notComputed.text} ${answer.notComputed.run}` : "not computed for this day";

async function refreshDay(app) {
  if (!$("day").value) return;
  const shown = await dayToShow(app);
  const day = shown.day;
  const [hours, groups, users] = await Promise.all([
    shown.hours === undefined ? api("activity/hours", { app, day }) : shown.hours,
    api("activity/top", { app, day, what: "groups" }),
    api("activity/top", { app, day, what: "users" }),
  ]);
  const byHour = new Map((hours?.hours ?? []).map((h) => [h.hour, h.figures]));
  // An hour not begun when the day was computed (today's later hours) has no figure: a gap, not 0.
  const hourly = (name) => Array.from({ length: 24 }, (_, h) => byHour.get(h)?.[name] ?? null);
  chart("chart-hours", {
    type: "bar",
    data: {
      labels: Array.from({ length: 24 }, (_, h) => `${String(h).padStart(2, "0")}:00`),
      datasets: [
        { label: `messages on ${day}`, data: hourly("messages"), backgroundColor: "#2f6fde" },
        { type: "line", label: "active users", data: hourly("active_users"), borderColor: "#2e9d5b" },
        { type: "line", label: "peak online", data: hourly("peak_online"), borderColor: "#d99a21" },
        { type: "line", label: "calls started", data: hourly("calls_started"), borderColor: "#8a5cd1" },
      ],
    },
  });
  fillTable(
    $("top-groups"),
    [
      ["groupId", "group"],
      ["messages", "messages"],
      ["activeMembers", "active members"],
    ],
    groups?.groups ?? [],
    {
      key: (g) => g.groupId,
      empty: groups?.groups ? "no group messages on this day" : notComputedText(groups),
    },
  );
  fillTable(
    $("top-users"),
    [
      ["uid", "user"],
      ["messages", "messages sent"],
    ],
    users?.users ?? [],
    { key: (u) => u.uid, empty: users?.users ? "no messages on this day" : notComputedText(users) },
  );
}

// ---- Now ----------------------------------------------------------------------------------

async function refreshNow() {
  const app = await appForViews("now-hint");
  if (!app) return;
  const now = await api("now", { app });
  fillCards($("now-cards"), [
    { id: "online", label: "users online", value: now.online.length },
    { id: "in-progress", label: "sessions in progress", value: now.inProgress.length },
    { id: "recordings-archived", label: "recordings archived", value: now.recordings.archived },
    { id: "recordings-pending", label: "recordings pending", value: now.recordings.pending },
    { id: "recordings-failed", label: "recordings failed", value: now.recordings.failed, bad: true },
  ]);
  fillTable(
    $("online"),
    [
      ["uid", "user"],
      ["name", "name"],
      ["platform", "platform"],
      ["since", "since", iso],
    ],
    now.online,
    { key: (p) => p.uid, empty: "nobody online" },
  );
  fillTable(
    $("in-progress"),
    [
      ["sessionId", "session"],
      ["kind", "kind"],
      ["initiator", "initiator"],
      ["startedAt", "started", (v, s) => iso(v ?? s.initiatedAt ?? s.sessionTime)],
      ["participants", "participants", (p) => Object.keys(p ?? {}).length],
    ],
    now.inProgress,
    { key: (s) => s.sessionId, empty: "no session in progress" },
  );
  fillTable(
    $("recordings"),
    [
      ["sessionId", "session"],
      ["startTime", "started", (v) => iso(v * 1000)],
      ["status", "status"],
      ["key", "object"],
      ["failureReason", "failure"],
    ],
    now.recordings.list,
    { key: (r) => `${r.sessionId}/${r.startTime}`, empty: "no recordings" },
  );
}

// ---- Views and the refresh loop ------------------------------------------------------------

const REFRESH = { flow: refreshFlow, events: refreshEvents, activity: refreshActivity, now: refreshNow };

async function refresh() {
  // A change made while a refresh runs (a date, the app) is shown by one more refresh after it.
  if (state.busy) {
    state.again = true;
    return;
  }
  state.busy = true;
  state.again = false;
  try {
    if (state.view !== "flow") updateApps(await api("overview", { app: state.app }));
    await REFRESH[state.view]();
    $("updated").textContent = `updated ${isoSeconds(Date.now())}`;
    $("updated").classList.remove("error");
  } catch (error) {
    $("updated").textContent = `error: ${error.message} (the figures below are from before)`;
    $("updated").classList.add("error");
  } finally {
    state.busy = false;
    if (state.again) void refresh();
  }
}

function show(view) {
  // An event's story belongs to the view it was opened from: a change of view closes it.
  if ($("story").open) $("story").close();
  state.view = REFRESH[view] ? view : "flow";
  for (const section of document.querySelectorAll("main section"))
    section.hidden = section.dataset.view !== state.view;
  for (const link of document.querySelectorAll("nav a"))
    link.classList.toggle("active", link.dataset.view === state.view);
  document.body.dataset.view = state.view;
  renderAppSelect();
  void refresh();
}

function init() {
  const today = Date.now();
  $("to").value = utcDay(today);
  $("from").value = utcDay(today - 6 * 86_400_000);
  $("day").value = utcDay(today);
  $("app").addEventListener("change", (e) => {
    state.app = e.target.value;
    void refresh();
  });
  $("trigger").addEventListener("change", () => void refresh());
  // Typing in the Day picker is a choice: no refresh moves it to today (or yesterday) meanwhile.
  $("day").addEventListener("input", () => {
    state.dayChosen = true;
  });
  // A day is typed as ISO (YYYY-MM-DD, UTC); one that is not a day is marked, and asks nothing.
  for (const id of ["from", "to", "day"])
    $(id).addEventListener("change", () => {
      const input = $(id);
      input.value = input.value.trim();
      input.setCustomValidity(isDay(input.value) ? "" : "a day, YYYY-MM-DD (UTC)");
      if (!input.reportValidity()) return;
      if (id === "day") {
        state.dayChosen = true;
        $("day-hint").textContent = "";
      }
      void refresh();
    });
  for (const [id, n] of [
    ["day-before", -1],
    ["day-after", 1],
  ])
    $(id).addEventListener("click", () => {
      if (!isDay($("day").value)) return;
      $("day").value = addDays($("day").value, n);
      $("day").dispatchEvent(new Event("change"));
    });
  $("resend").addEventListener("click", () => {
    $("confirm").hidden = false;
    $("resend").hidden = true;
  });
  $("cancel-resend").addEventListener("click", () => {
    $("confirm").hidden = true;
    $("resend").hidden = false;
  });
  $("confirm-resend").addEventListener("click", () => void resend());
  $("close-story").addEventListener("click", () => $("story").close());
  window.addEventListener("hashchange", () => show(location.hash.slice(1)));
  show(location.hash.slice(1));
  // The live views follow by themselves; activity changes only when a rollup runs.
  let last = Date.now();
  setInterval(() => {
    if (state.view === "activity" || $("story").open || Date.now() - last < state.refreshMs) return;
    last = Date.now();
    void refresh();
  }, 1000);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
