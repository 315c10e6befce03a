// The activity view's one day: the Day picker (today, or yesterday while today has nothing yet),
// the day's hours on a chart, and its top groups and users (or the rollup to run).

import { utcDay } from "./format.js";
import { api, state } from "./state.js";
import { $, chart, fillTable } from "./widgets.js";

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

export async function refreshDay(app) {
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
