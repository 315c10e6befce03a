// The recent events view: the newest events with their outcomes, filtered by trigger; a click
// opens an event's story, from which a quarantined or dead-lettered event is resent once confirmed.

import { iso, short } from "./format.js";
import { api, state } from "./state.js";
import { $, fillTable } from "./widgets.js";

export async function refreshEvents() {
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

export async function resend() {
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
