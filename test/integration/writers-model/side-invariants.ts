import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import { S3_PREFIX } from "../../../shared/platform/constants";
import type { Erasure, Model } from "../../support/writers-model/model";
import type { Snapshot } from "../../support/writers-model/snapshot";
import { recordingOf, sessionUids } from "./operations/side";

/*
 * The writers model's invariants on the bucket's side objects (issue #50), beside `invariants.ts`
 * (which already finds an erased uid in any object, `quarantine/` and `oversize/` included):
 * - every acknowledged delivery the projector refuses is in `quarantine/` (unless its app was
 *   erased); a record that names a user whose erasure ended carries its erasure mark;
 * - no recording of a session tied to a user whose erasure ended (complete) remains; a recording
 *   of a session tied to nobody asked to be erased stays; an erased app has no recording left.
 */

/** Whether an erasure still binds: complete, its app not erased whole since. */
const binding = (m: Model, e: Erasure) =>
  e.complete && !m.forgottenApps.has(e.app) && !m.forgettingApps.has(e.app);

/** The violations of the side objects' invariants in the stored state. */
export function sideViolations(m: Model, snapshot: Snapshot): string[] {
  return [...quarantineViolations(m, snapshot), ...recordingViolations(m, snapshot)];
}

function quarantineViolations(m: Model, { objects }: Snapshot): string[] {
  const found: string[] = [];
  const records = new Map<string, { key: string; erasure: unknown }>();
  for (const object of objects.filter((o) => o.key.startsWith(S3_PREFIX.quarantine))) {
    const record = JSON.parse(object.lines.join("\n")) as { eventId?: unknown; erasure?: unknown };
    if (typeof record.eventId === "string")
      records.set(record.eventId, { key: object.key, erasure: record.erasure });
  }
  for (const d of m.delivered) {
    if (d.pending || m.forgottenApps.has(d.app) || m.forgettingApps.has(d.app)) continue;
    if (refusalOf(parseEventBody(d.body)) === undefined) continue;
    const record = records.get(d.eventId);
    if (!record) {
      found.push(`refused ${d.trigger} of ${d.app} ${d.eventId.slice(0, 8)} is not in quarantine/`);
      continue;
    }
    const erased = m.erasures.filter((e) => binding(m, e) && e.app === d.app && d.uids.includes(e.uid));
    if (erased.length && typeof record.erasure !== "string")
      found.push(
        `${record.key}: the quarantine record named ${erased.map((e) => e.uid).join(", ")} and has no erasure mark`,
      );
  }
  return found;
}

function recordingViolations(m: Model, { objects }: Snapshot): string[] {
  const found: string[] = [];
  const stored = new Set<string>();
  for (const { key } of objects) {
    const where = recordingOf(key);
    if (!where) continue;
    stored.add(key);
    const tied = sessionUids(m, where.app, where.session);
    for (const e of m.erasures.filter((x) => binding(m, x) && x.app === where.app && tied.includes(x.uid)))
      found.push(`${key}: a recording of a session tied to ${e.uid} remains after their erasure`);
    const kept = m.recorded.find((r) => r.key === key);
    if (m.forgottenApps.has(where.app) && kept && !kept.duringErasure)
      found.push(`${key}: a recording of ${where.app} remains after the app's erasure`);
  }
  for (const r of m.recorded) {
    if (r.duringErasure || stored.has(r.key) || m.forgottenApps.has(r.app) || m.forgettingApps.has(r.app))
      continue;
    if (sessionUids(m, r.app, r.session).some((u) => m.requested.has(`${r.app}/${u}`))) continue;
    found.push(`${r.key}: a recording of a session tied to nobody erased is gone`);
  }
  return found;
}
