// The app selector and the app the per-app views show: "All apps" only where a view shows all
// apps; the per-app views (activity, now) open on the busiest app of the last 7 days.

import { utcDay } from "./format.js";
import { api, state } from "./state.js";
import { $ } from "./widgets.js";

/** Views that show one app: they offer no "All apps", and open on the busiest app. */
const PER_APP = new Set(["activity", "now"]);

/** The app selector: "All apps" only where a view shows all apps; the app shown selected. */
export function renderAppSelect() {
  const perApp = PER_APP.has(state.view);
  const select = $("app");
  const options = perApp ? [] : [new Option("All apps", "")];
  select.replaceChildren(...options, ...state.apps.map((a) => new Option(a, a)));
  select.value = perApp ? state.app || state.shown || state.apps[0] || "" : state.app;
}

/** The app list (from the archive) in the selector, keeping the choice. */
export function updateApps(overview) {
  $("target").textContent = overview.target === "local" ? "local stack" : `stack ${overview.stack ?? ""}`;
  state.refreshMs = overview.refreshSeconds * 1000;
  if (JSON.stringify(overview.apps) === JSON.stringify(state.apps)) return;
  state.apps = overview.apps;
  renderAppSelect();
}

/**
 * The app the per-app views show: the chosen one, else the busiest of the last 7 days (asked once
 * it has data; until then again at most every minute), else the first in the archive.
 */
export async function appForViews(hint) {
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
