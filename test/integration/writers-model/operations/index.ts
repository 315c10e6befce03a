import { withArchiveLease } from "../../../../shared/adapters/archive-lease";
import { s3BlobStore } from "../../../../shared/adapters/s3-blob-store";
import { rollupDays, scheduledRollup } from "../../../../shared/analytics/rollup";
import { utcDay } from "../../../../shared/contracts/bucket-layout";
import { forget } from "../../../../shared/erasure/forget";
import { rederiveArchive } from "../../../../tools/ops/archive-repair";
import { resendById } from "../../../../tools/ops/inspect";
import { replayArchive } from "../../../../tools/ops/operations";
import { ERASABLE } from "../../../support/writers-model/cast";
import {
  drainEvents,
  forgetDeps,
  gatedCompactor,
  leaseOf,
  projectorDeps,
  rollupDeps,
  type Wiring,
} from "../../../support/writers-model/cores";
import { newActor, type Releaser, type RequestGate } from "../../../support/writers-model/gate";
import { describeOp, knownUser, type Model, type OpSpec } from "../../../support/writers-model/model";
import { actorClients, type Site } from "../../../support/writers-model/world";

import { deliver, factDays } from "./deliver";
import { expireOldest } from "./expire";
import { importUsers, noteSweep, sweep } from "./imports";
import { rotate } from "./rotate";
import { record, replayQuarantined } from "./side";
import { beforeTimePasses, runStreamOp } from "./stream";

/*
 * The writers model's operations (issue #50): each runs a command's real core over the run's
 * world, through an actor's gated clients (`support/writers-model/gate.ts`), and tells the model
 * what it changed. Found held, the archive lease is an answer, not a failure: the operation
 * changed nothing (a command says who holds it).
 */

/**
 * Errors an operation may end with by design, each a refusal that changed nothing it should not
 * have: the archive lease held by another, or lost to another after a lapse (the holder stops
 * before its next change: #50 defect 4's fix); a rotation not confirmed in time, or refused while
 * another holds the rotation lease (defect 5's fix); a resend of a line an erasure redacted
 * (defect 3's fix).
 */
const EXPECTED = new Set([
  "ArchiveLockedError",
  "ArchiveLeaseLostError",
  "CredentialRotationError",
  "RotationLockedError",
  "RedactedEventError",
  "InjectedFaultError",
  "CompactionPendingError",
]);

/** The run: its world, its gate, its model. */
export interface Real {
  site: Site;
  gate: RequestGate;
  /** Releases the waiting requests (`runner.ts`, `drive`); none: each goes at once. */
  scheduler?: Releaser;
}

/**
 * Runs one operation to its end (or its crash: its promise is abandoned at the chosen request and
 * the step goes on without it), then tells the model what it did.
 */
export async function perform(m: Model, r: Real, o: OpSpec, index: number): Promise<void> {
  const actor = newActor(`${index}:${o.op}`, o.crashAt);
  const clients = actorClients(r.site, r.gate, actor);
  const w: Wiring = { site: r.site, gate: r.gate, actor, clients };
  // "Days later": the clock first moves as `advance` moves it, then the operation runs.
  const later = o.laterHours ? run(m, w, { op: "advance", hours: o.laterHours }) : Promise.resolve(undefined);
  const done = later
    .then(() => run(m, w, o))
    .then(
      (outcome) => ({ outcome }),
      (error: unknown) => ({ error }),
    );
  const ended = await Promise.race([done, actor.crashed.then(() => ({ crashed: true as const }))]);
  if ("crashed" in ended) {
    m.log.push(`${describeOp(o)}: crashed at its request ${actor.steps}`);
    if (o.op === "deliver" || o.op === "resend" || o.op === "queue") m.inFlightUnknown = true;
    if (o.op === "forgetApp") m.forgettingApps.add(o.app);
    return;
  }
  clients.destroy();
  if ("error" in ended) {
    const name = ended.error instanceof Error ? ended.error.name : "";
    if (!EXPECTED.has(name)) throw ended.error;
    m.log.push(`${describeOp(o)}: ${String(ended.error)}`);
    return;
  }
  m.log.push(`${describeOp(o)}: ${ended.outcome ?? "done"}`);
}

/** Marks `<app>/<uid>` asked for erasure before the run starts, when the operation is one. */
export function announce(m: Model, o: OpSpec): OpSpec {
  if (o.op === "forgetApp") m.forgettingApps.add(o.app);
  if (o.op !== "forget") return o;
  const resolved = { ...o, uid: knownUser(m, o.app, o.uid, ERASABLE) };
  m.requested.add(`${resolved.app}/${resolved.uid}`);
  return resolved;
}

async function run(m: Model, w: Wiring, o: OpSpec): Promise<string | undefined> {
  const { site } = w;
  const now = () => site.clock.now;
  switch (o.op) {
    case "deliver":
      return deliver(m, w, o);
    case "forget": {
      const report = await forget(forgetDeps(w), { appId: o.app, uid: o.uid, requestedBy: "model" });
      // A re-run of one erasure (after a crash) keeps its id; a second erasure of the user finds
      // nothing and leaves the first's pseudonym standing: both kept, the first's first.
      m.erasures = m.erasures.filter((e) => e.erasureId !== report.erasureId);
      m.erasures.push({
        app: o.app,
        uid: o.uid,
        pseudonym: report.pseudonym ?? "",
        erasureId: report.erasureId,
        complete: report.unreached.length === 0,
      });
      return `erased as ${report.pseudonym}${report.unreached.length ? ` (unreached: ${report.unreached.join("; ")})` : ""}`;
    }
    case "forgetApp": {
      await forget(forgetDeps(w), { appId: o.app, requestedBy: "model" });
      m.forgottenApps.add(o.app);
      m.forgettingApps.delete(o.app);
      return "app erased";
    }
    case "rederive": {
      const report = await rederiveArchive(
        w.clients.s3,
        s3BlobStore(w.clients.s3, site.bucket),
        { appId: o.app },
        { lease: leaseOf(w), compactor: gatedCompactor(w), now },
      );
      return `${report.changed} line(s) changed`;
    }
    case "replay": {
      const report = await replayArchive(
        w.clients.s3,
        s3BlobStore(w.clients.s3, site.bucket),
        projectorDeps(w),
        leaseOf(w),
        { appId: o.app },
      );
      return `${report.events} replayed, ${report.redacted} redacted skipped`;
    }
    case "resend": {
      const redacted = m.delivered.filter((d) => d.uids.some((u) => m.requested.has(`${d.app}/${u}`)));
      const among = o.redacted && redacted.length ? redacted : m.delivered;
      const target = among[o.pick % Math.max(1, among.length)];
      if (!target) return "nothing to resend";
      // Erasures that ended before it, of a user the line names: its archived line is redacted.
      const redactedBy = m.erasures.filter(
        (e) =>
          e.complete && e.app === target.app && target.uids.includes(e.uid) && !m.forgottenApps.has(e.app),
      );
      const { report } = await resendById(
        { s3: w.clients.s3, sqs: w.clients.sqs },
        { bucket: site.bucket, queueUrl: site.queueUrl },
        target.eventId,
        { appId: target.app, date: utcDay(target.receivedAt) },
      );
      // The issue's expected behaviour (defect 3): resend refuses a line an erasure redacted, and says so.
      if (report && redactedBy.length)
        m.violations.push(
          `resend sent ${target.trigger} ${target.eventId.slice(0, 8)}, a line ${redactedBy.map((e) => e.uid).join(", ")}'s erasure redacted (it must refuse it and say so)`,
        );
      await drainEvents(w);
      return report ? `resent ${target.trigger} ${target.eventId.slice(0, 8)}` : "not found";
    }
    case "rollup": {
      const days = factDays(m, now());
      if (!days.length) return "no day";
      const report = await rollupDays(days, rollupDeps(w), o.app ? { app: o.app } : {});
      // A failure thrown as it is: a lease lost to a lapse (the model's clock jump) is a refusal by design.
      if (report.failures.length) throw failureOf(report.failures[0]?.error, "rollup failed");
      return `${report.rollups.length} day(s) of apps`;
    }
    case "tick": {
      const report = await scheduledRollup(rollupDeps(w, true));
      if (report.failures.length) throw failureOf(report.failures[0]?.error, "the schedule failed");
      if (report.sweep) noteSweep(m, now());
      return `passes ${report.passes.length}, deferred ${report.passesDeferred.length}, compacted ${report.compactions.length}${report.sweep ? `, swept ${report.sweep.swept.length}` : ""}`;
    }
    case "compact": {
      const closed = factDays(m, now()).filter((d) => d < utcDay(now()));
      if (!closed.length) return "no closed day";
      const compactor = gatedCompactor(w);
      if (o.fault && site.athena) site.faults.ctasMarker = true;
      if (o.running) site.athena?.behaviours.push("run");
      await withArchiveLease(leaseOf(w), `compact ${closed[0]}..${closed.at(-1)}`, now, async (renew) => {
        for (const day of closed) {
          await renew();
          await compactor.compactDay(day);
        }
      });
      return `compacted ${closed.length} day(s)`;
    }
    case "ctasEnd":
      return `${(await site.athena?.endRunning()) ?? 0} query(ies) ended`;
    case "import":
      return importUsers(m, w, o);
    case "sweep":
      return sweep(m, w);
    case "rotate":
      return rotate(m, w, o);
    case "advance": {
      const before = await beforeTimePasses(w, o.hours);
      site.clock.now += o.hours * 3_600_000;
      return `${utcDay(now())}${before}`;
    }
    case "expire":
      return expireOldest(m, w, failureOf, (hours) => beforeTimePasses(w, hours));
    case "lapse":
      for (let i = 0; i < (o.after ?? 1); i++) await w.gate.pause(w.actor, "clock jump");
      site.clock.now += 16 * 60_000;
      return "jumped";
    case "replayQuarantine":
      return replayQuarantined(w, o);
    case "record":
      return record(m, w);
    default:
      return runStreamOp(m, w, o);
  }
}

/** A rollup's reported failure as an error to throw: the error itself (its name says whether it is expected). */
function failureOf(error: unknown, what: string): Error {
  return error instanceof Error ? error : new Error(`${what}: ${String(error)}`);
}

export { deliver, factDays } from "./deliver";
export { importUsers, noteSweep, sweep } from "./imports";
export { rotate } from "./rotate";
export { record, replayQuarantined } from "./side";
