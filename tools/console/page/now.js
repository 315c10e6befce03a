// The now view: users online, sessions in progress and the recordings, as the queries print them.

import { appForViews } from "./apps.js";
import { iso } from "./format.js";
import { api } from "./state.js";
import { $, fillCards, fillTable } from "./widgets.js";

export async function refreshNow() {
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
