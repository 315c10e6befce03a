import { listObjects } from "../../../../shared/adapters/s3-listing";
import { S3_PREFIX } from "../../../../shared/platform/constants";
import { replayQuarantine } from "../../../../tools/ops/archive-repair";
import type { Uid } from "../../../support/writers-model/cast";
import { drainEvents, leaseOf, type Wiring } from "../../../support/writers-model/cores";
import type { Model, OpSpec } from "../../../support/writers-model/model";
import { drainRecordings } from "../../../support/writers-model/recorder";
import { APPS, type AppId } from "../../../support/writers-model/world";

/*
 * The writers model's operations on the bucket's side objects (issue #50): `replay --quarantine`
 * (the command's core, `tools/commands/replay.ts`, then the projector drains what it put back) and
 * the recorder draining the recordings queue (its core as functions/recorder/handler.ts wires it).
 * The facts that reach them (a refused join, a message over the inline limit, a call with its
 * recording) are drawn as deliveries (`cast.ts`, `SIDE_FACT_KINDS`).
 */

/** `replay --quarantine [--app]`: what today's schemas accept goes back on the events queue, which the projector then drains. */
export async function replayQuarantined(
  w: Wiring,
  o: Extract<OpSpec, { op: "replayQuarantine" }>,
): Promise<string> {
  const report = await replayQuarantine(
    { s3: w.clients.s3, sqs: w.clients.sqs },
    { bucket: w.site.bucket, queueUrl: w.site.queueUrl },
    leaseOf(w),
    { appId: o.app, now: () => w.site.clock.now },
  );
  const resent = Object.values(report.resent).reduce((a, b) => a + b, 0);
  const drained = await drainEvents(w);
  return `${report.records} record(s), ${resent} put back, ${drained.handled} handled`;
}

/**
 * The recorder drains the recordings queue; the model notes each recording then stored, and
 * whether its app or a user of its session was being erased (a recording archived meanwhile is
 * the report's `unreached`, not an invariant's).
 */
export async function record(m: Model, w: Wiring): Promise<string> {
  const drained = await drainRecordings(w);
  const known = new Set(m.recorded.map((r) => r.key));
  for (const { key } of await listObjects(w.clients.s3, w.site.bucket, S3_PREFIX.recordings)) {
    const where = recordingOf(key);
    if (!where || known.has(key)) continue;
    const duringErasure =
      m.forgettingApps.has(where.app) ||
      m.forgottenApps.has(where.app) ||
      sessionUids(m, where.app, where.session).some((u) => m.requested.has(`${where.app}/${u}`));
    m.recorded.push({ key, ...where, duringErasure });
  }
  return `${drained.handled} job(s), ${drained.failed} failed`;
}

/**
 * The app and session of a recording's key (`recordings/<app>/<yyyy>/<mm>/<dd>/<session>/<start>.<ext>`);
 * none for another object (a manifest).
 */
export function recordingOf(key: string): { app: AppId; session: string } | undefined {
  const parts = key.slice(S3_PREFIX.recordings.length).split("/");
  const app = APPS.find((a) => a === parts[0]);
  if (!app || parts.length !== 6 || key.endsWith(".manifest.json")) return undefined;
  return { app, session: parts[4] ?? "" };
}

/** The users a session is tied to: those a delivered line of it names by uid (its initiator and receiver). */
export function sessionUids(m: Model, app: AppId, session: string): Uid[] {
  const tied = new Set<Uid>();
  for (const d of m.delivered)
    if (d.app === app && d.body.includes(`"${session}"`)) for (const u of d.uids) tied.add(u);
  return [...tied];
}
