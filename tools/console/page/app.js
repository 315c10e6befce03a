// The console page: four views over the console's JSON endpoints (tools/console/api.ts), charts by
// Chart.js (served from the package). Everything shown is set as text, never as HTML.
// This module holds the views' switch and the refresh loop; each view is a module of its own.

import { refreshActivity } from "./activity.js";
import { renderAppSelect, updateApps } from "./apps.js";
import { refreshEvents, resend } from "./events.js";
import { refreshFlow } from "./flow.js";
import { addDays, isDay, isoSeconds, utcDay } from "./format.js";
import { refreshNow } from "./now.js";
import { api, state } from "./state.js";
import { $ } from "./widgets.js";

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
