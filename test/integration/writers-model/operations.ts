import { withArchiveLease } from "../../../shared/adapters/archive-lease";
import { s3ImportRecords } from "../../../shared/adapters/import-records";
import { s3BlobStore } from "../../../shared/adapters/s3-blob-store";
import { sweepExpiredDays } from "../../../shared/analytics/archive-expiry";
import { daysInRange, rollupDays, scheduledRollup } from "../../../shared/analytics/rollup";
import { dynamoAppRegistry } from "../../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../../shared/apps/management-api";
import { rotateCredentials } from "../../../shared/apps/rotate";
import { dynamoRotationLock } from "../../../shared/apps/rotation-lock";
import { isExpired, utcDay } from "../../../shared/contracts/bucket-layout";
import { forget } from "../../../shared/erasure/forget";
import { USERS_IMPORT } from "../../../shared/imports/kinds";
import { runImport } from "../../../shared/imports/run-import";
import { usersLedger } from "../../../shared/imports/users-ledger";
import { ingestWebhook } from "../../../shared/ingest/core";
import { decodeBasicAuthorization } from "../../../shared/ingest/credentials";
import { secretCredentialStore } from "../../../tools/ops/app-connection";
import { rederiveArchive } from "../../../tools/ops/archive-repair";
import { ingestProbe } from "../../../tools/ops/ingest-probe";
import { resendById } from "../../../tools/ops/inspect";
import { replayArchive } from "../../../tools/ops/operations";
import { ERASABLE, eventIdOf, factBodies, USERS } from "../../support/writers-model/cast";
import {
  drainEvents,
  forgetDeps,
  gatedCompactor,
  ingestDeps,
  leaseOf,
  post,
  projectorDeps,
  RETAIN_DAYS,
  rollupDeps,
  type Wiring,
} from "../../support/writers-model/cores";
import { newActor, type Releaser, type RequestGate } from "../../support/writers-model/gate";
import {
  deliverable,
  describeOp,
  knownUser,
  type Model,
  type OpSpec,
} from "../../support/writers-model/model";
import { type AppId, actorClients, type Site, WEBHOOK, webhookPair } from "../../support/writers-model/world";
import { usersOverTimeOf } from "./invariants";

/*
 * The writers model's operations (issue #50): each runs a command's real core over the run's
 * world, through an actor's gated clients (`support/writers-model/gate.ts`), and tells the model
 * what it changed. Found held, the archive lease is an answer, not a failure: the operation
 * changed nothing (a command says who holds it).
 */

const MANAGEMENT = { key: "wm-key", secret: "wm-secret" };
const DAY_MS = 86_400_000;

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
  const done = run(m, w, o).then(
    (outcome) => ({ outcome }),
    (error: unknown) => ({ error }),
  );
  const ended = await Promise.race([done, actor.crashed.then(() => ({ crashed: true as const }))]);
  if ("crashed" in ended) {
    m.log.push(`${describeOp(o)}: crashed at its request ${actor.steps}`);
    if (o.op === "deliver" || o.op === "resend") m.inFlightUnknown = true;
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
      m.erasures = m.erasures.filter((e) => !(e.app === o.app && e.uid === o.uid));
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
      const { report } = await resendById(
        { s3: w.clients.s3, sqs: w.clients.sqs },
        { bucket: site.bucket, queueUrl: site.queueUrl },
        target.eventId,
        { appId: target.app, date: utcDay(target.receivedAt) },
      );
      await drainEvents(w);
      return report ? `resent ${target.trigger} ${target.eventId.slice(0, 8)}` : "not found";
    }
    case "rollup": {
      const days = factDays(m, now());
      if (!days.length) return "no day";
      const report = await rollupDays(days, rollupDeps(w), o.app ? { app: o.app } : {});
      if (report.failures.length) throw new Error(`rollup failed: ${String(report.failures[0]?.error)}`);
      return `${report.rollups.length} day(s) of apps`;
    }
    case "tick": {
      const report = await scheduledRollup(rollupDeps(w, true));
      if (report.failures.length)
        throw new Error(`the schedule failed: ${String(report.failures[0]?.error)}`);
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
    case "advance":
      site.clock.now += o.hours * 3_600_000;
      return utcDay(now());
    case "lapse":
      await w.gate.pause(w.actor, "clock jump");
      site.clock.now += 16 * 60_000;
      return "jumped";
  }
}

/** The days the facts were received on, to today. */
function factDays(m: Model, now: number): string[] {
  const first = m.delivered.reduce((min, d) => Math.min(min, d.receivedAt), now);
  return daysInRange(utcDay(first), utcDay(now));
}

/** The platform delivers the facts (each body once, or with a retry of it), then the projector drains the queue. */
async function deliver(m: Model, w: Wiring, o: Extract<OpSpec, { op: "deliver" }>): Promise<string> {
  let acked = 0;
  for (const spec of o.facts) {
    if (!deliverable(m, spec)) continue;
    for (const body of factBodies(spec, w.site.clock.now, `${m.nextFact++}`)) {
      for (let attempt = 0; attempt < (o.retry ? 2 : 1); attempt++) {
        w.site.clock.now += 1_000;
        const answer = await post(w, body.body, webhookPair(w.site, body.appId));
        if (answer.status !== 200) {
          m.log.push(`  ${body.trigger} of ${body.appId}: ${answer.status} (not acknowledged)`);
          continue;
        }
        acked++;
        m.delivered.push({
          eventId: eventIdOf(body.body),
          trigger: body.trigger,
          app: body.appId,
          body: body.body,
          uids: body.uids,
          receivedAt: w.site.clock.now,
          pending: true,
        });
      }
    }
  }
  const drained = await drainEvents(w);
  return `${acked} acknowledged, ${drained.handled} handled, ${drained.failed} failed`;
}

/** `import users`: the platform confirms every user; then the fold (as the command runs it). */
async function importUsers(m: Model, w: Wiring, o: Extract<OpSpec, { op: "import" }>): Promise<string> {
  const uids = o.uids.filter((uid) => !m.requested.has(`${o.app}/${uid}`));
  if (!uids.length || m.forgottenApps.has(o.app) || m.forgettingApps.has(o.app)) return "nothing to import";
  const createdAt = Math.floor((w.site.clock.now - o.createdDaysAgo * DAY_MS) / 1000);
  const records = s3ImportRecords(w.clients.s3, w.site.bucket);
  const api = {
    requests: 0,
    send: async <T extends { [key: string]: unknown }>(_kind: unknown, entries: readonly T[]) => {
      await w.gate.pause(w.actor, "platform import");
      return entries.map((e) => ({ id: String(e.uid), result: "imported" as const }));
    },
  };
  const summary = await runImport({
    app: o.app,
    kind: USERS_IMPORT,
    entries: uids.map((uid, i) => ({ at: `line ${i + 1}`, value: { uid, name: USERS[uid], createdAt } })),
    api,
    ledger: usersLedger(records),
    batchSize: 2,
    now: () => w.site.clock.now,
  });
  const importedAt = Math.floor(w.site.clock.now / 1000);
  for (const uid of uids) m.imported.push({ app: o.app, uid, createdAt, importedAt });
  if (o.fold) await records.fold(leaseOf(w), () => w.site.clock.now);
  return `${summary.imported} imported${o.fold ? ", folded" : ""}`;
}

/** The retention sweep under the lease; a retained day's users over time must not change (its own check). */
async function sweep(m: Model, w: Wiring): Promise<string> {
  const now = w.site.clock.now;
  const before = await usersOverTimeOf(w, now);
  const report = await withArchiveLease(
    leaseOf(w),
    "expiry sweep",
    () => w.site.clock.now,
    (renew) => sweepExpiredDays(w.clients.s3, w.site.bucket, RETAIN_DAYS, now, renew),
  );
  noteSweep(m, now);
  const after = await usersOverTimeOf(w, now);
  for (const [key, figures] of before)
    if (after.get(key) !== figures)
      m.violations.push(
        `the retention sweep changed a retained day's users over time: ${key} ${figures} -> ${after.get(key)}`,
      );
  return `swept ${report.swept.length} folder(s)`;
}

/** What the sweep removed by design: the receipt days past the window. */
function noteSweep(m: Model, now: number): void {
  let day = utcDay(now - RETAIN_DAYS * DAY_MS - DAY_MS);
  while (isExpired(day, RETAIN_DAYS, now)) day = utcDay(Date.parse(`${day}T00:00:00Z`) + DAY_MS);
  if (!m.keptFrom || day > m.keptFrom) m.keptFrom = day;
}

/**
 * `rotate-credentials` of the apps' credentials, its waits steps on the run's clock, its probe the
 * command's (`ingestProbe`) against the ingest core in process; with `fault`, the ingest answers 503
 * to every probe once the rotation removed an old pair (a deploy under way, a throttled secret).
 * Its own check: an old credential reported refused was answered 401 (only a 401 is a refusal).
 */
async function rotate(m: Model, w: Wiring, o: Extract<OpSpec, { op: "rotate" }>): Promise<string> {
  const registry = dynamoAppRegistry(w.clients.doc, w.site.appsTable);
  const connected = [...(await registry.list())].flatMap(([appId, app]) =>
    app.webhook ? [{ appId, triggers: app.webhook.triggers, username: app.webhook.username }] : [],
  );
  const chosen = connected.filter((a) => o.apps.includes(a.appId as AppId)).map((a) => a.username);
  const answered401 = new Set<string>();
  const putsBefore = w.site.secret.puts;
  const ingest: typeof fetch = async (_url, init) => {
    const headers = new Headers(init?.headers);
    if (o.fault && w.site.secret.puts > putsBefore + 1)
      return new Response('{"error":"unavailable"}', { status: 503 });
    const result = await ingestWebhook(
      {
        method: "POST",
        headers: { authorization: headers.get("authorization") ?? undefined },
        body: String(init?.body ?? ""),
        isBase64Encoded: false,
        receivedAt: w.site.clock.now,
      },
      ingestDeps(w),
    );
    const status = result.response.statusCode ?? 500;
    const decoded = decodeBasicAuthorization(headers.get("authorization") ?? undefined);
    if (status === 401 && typeof decoded === "object") answered401.add(decoded.username);
    return new Response(result.response.body ?? "", { status });
  };
  const busyFetch: typeof fetch = (input, init) =>
    w.gate.busy(w.actor, "management API", () => fetch(input, init));
  const sleep = async (ms: number) => {
    await w.gate.pause(w.actor, "rotation wait");
    w.site.clock.now += ms;
  };
  const report = await rotateCredentials({
    store: storeOf(w),
    api: managementApi({ url: w.site.management.url, ...MANAGEMENT, fetch: busyFetch, sleep }),
    registry,
    apps: connected,
    webhook: WEBHOOK,
    credentials: chosen,
    fresh: (old) => ({
      username: `${old.username.replace(/-\d+$/, "")}-${w.site.newId().slice(0, 6)}`,
      password: `pw-${w.site.newId()}`,
    }),
    probe: ingestProbe("http://ingest.model/webhook", ingest),
    // The command's lock: the apps table's lease, through the actor's client, on the run's clock.
    lock: dynamoRotationLock(w.clients.doc, w.site.appsTable, () => w.site.clock.now),
    waits: {
      probeEveryMs: 1_000,
      acceptWithinMs: 5_000,
      retireAfterMs: 45_000,
      cacheMs: 1_000,
      refuseWithinMs: 5_000,
    },
    sleep,
    now: () => w.site.clock.now,
  });
  for (const c of report.credentials) {
    if (c.outcome !== "rotated") continue;
    m.retired.push({ username: c.from, password: "" });
    if (!answered401.has(c.from))
      m.violations.push(
        `rotate-credentials reported ${c.from} refused (rotated) though the ingest never answered it 401`,
      );
  }
  return `${report.outcome}: ${report.credentials.map((c) => `${c.from}->${c.to} ${c.outcome}`).join(", ")}`;
}

/** The credentials secret as the command's store (`secretCredentialStore`), through the actor's client. */
const storeOf = (w: Wiring) => secretCredentialStore(w.clients.secrets, w.site.secretId);
