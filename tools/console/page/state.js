// The page's state (the app chosen, the view shown, the charts made, the event open) and its one
// way to the console's JSON endpoints (tools/console/api.ts): every view reads and writes both.

export const state = {
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

/** GET (or POST) one endpoint; a non-2xx answer throws its `error`. */
export async function api(path, params = {}, init = {}) {
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
