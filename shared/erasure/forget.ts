import { randomBytes } from "node:crypto";
import { archiveLease, withArchiveLease } from "../adapters/archive-lease";
import { objectText } from "../contracts/bucket-layout";
import { deleteObject, getBytes, putText } from "./bucket";
import {
  clearPendingErasure,
  type ErasureRecord,
  type PendingErasure,
  pendingErasure,
  savePendingErasure,
  writeErasureRecord,
} from "./erasure-state";
import { findPlan } from "./find";
import { planItems } from "./find-items";
import {
  type ErasurePlan,
  erasurePlanKey,
  type ForgetDependencies,
  type ForgetReport,
  type ForgetRequest,
  zeroCounts,
} from "./plan";
import { recompact, recomputeDays } from "./recompute";
import type { Redaction } from "./redact";
import { eraseAppItems, eraseItems } from "./rewrite-items";
import { rewriteObjects } from "./rewrite-objects";
import { unreachedQueues } from "./unreached";

/*
 * The erasure (#34): `forget` runs its steps, each in a module of its own under shared/erasure/:
 * find (`find.ts`: the archive `find-objects.ts`, the tables `find-items.ts`), plan (`plan.ts`:
 * what it is given, finds and reports), rewrite objects (`rewrite-objects.ts`), rewrite items
 * (`rewrite-items.ts`), recompute (`recompute.ts`); what it cannot reach (`unreached.ts`); its
 * state (`erasure-state.ts`) and the redaction itself (`redact.ts`).
 */

export { SEARCH_CHUNK_BYTES } from "./find-objects";
export type { ErasurePlan, ForgetDependencies, ForgetReport, ForgetRequest } from "./plan";
export { erasurePlanKey } from "./plan";

const randomId = () => randomBytes(8).toString("hex");

/**
 * Erases one user of an app (or, without `uid`, the whole app) from everything the deployment
 * keeps, leaving every figure exact (docs/personal-data.md):
 * 1. takes the archive's rewrite lock and the erasure under way (a re-run resumes it: same id and
 *    pseudonym);
 * 2. finds (`findPlan`) and saves the plan before the first change;
 * 3. rewrites each archive, quarantine and oversize object that holds the user, their lines
 *    redacted (`redact.ts`: one random pseudonym for their uid and names, their free text removed,
 *    `erasure` stamped) and every other line byte for byte as it was, one PUT per object (atomic),
 *    then deletes the object's old versions; a whole app: its lines removed;
 * 4. deletes their presence and memberships, redacts the sessions and groups naming them;
 * 5. deletes their recordings (unless `keepRecordings`), rewrites the compacted days' Parquet
 *    from the redacted NDJSON, recomputes the days touched;
 * 6. writes the erasure record, removes the plan and the erasure under way, releases the lock.
 * Each step is idempotent: a crash anywhere leaves a state a re-run completes; a second run after
 * the first ends finds nothing. With `dryRun`, only step 2's finding, and nothing is written.
 *
 * @example await forget(deps, { appId: "app1", uid: "u7", requestedBy: "ops" }) // { counts: { objectsRewritten: 12, … }, … }
 */
export async function forget(deps: ForgetDependencies, request: ForgetRequest): Promise<ForgetReport> {
  const newId = deps.newId ?? randomId;
  const { appId, uid } = request;
  const scope = uid === undefined ? "app" : "user";
  const existing = await pendingErasure(deps.state, appId, uid);
  const pending: PendingErasure = existing ?? {
    erasureId: newId(),
    pseudonym: `erased-${newId()}`,
    startedAt: deps.now(),
    names: [],
  };
  const redaction: Redaction | undefined =
    uid === undefined
      ? undefined
      : { uid, names: pending.names, pseudonym: pending.pseudonym, erasureId: pending.erasureId };
  const counts = zeroCounts();
  const base = {
    erasureId: pending.erasureId,
    appId,
    scope,
    ...(redaction ? { pseudonym: pending.pseudonym } : {}),
    requestedBy: request.requestedBy,
    startedAt: pending.startedAt,
    keepRecordings: request.keepRecordings ?? false,
  } as const;
  if (request.dryRun) {
    const { plan, searched } = await findPlan(deps, request, redaction);
    counts.objectsSearched = searched;
    counts.bytesScanned = plan.bytesScanned;
    return { ...base, dryRun: true, counts, unreached: await unreachedQueues(deps), plan };
  }
  // The erasure under way first: a crash after it leaves the lock to this erasure's re-run.
  if (!existing) await savePendingErasure(deps.state, appId, uid, pending);
  const holder = `erasure ${pending.erasureId}`;
  const outer = deps;
  // Every step runs under the archive lease, renewed before a step once a third of it has passed.
  return withArchiveLease(archiveLease(outer.state, outer.now), holder, outer.now, async (renew) => {
    const deps: ForgetDependencies = {
      ...outer,
      checkpoint: async (step) => {
        await renew();
        await outer.checkpoint?.(step);
      },
    };
    const planKey = erasurePlanKey(pending.erasureId);
    const saved = await getBytes(deps, planKey);
    let plan: ErasurePlan;
    let names = pending.names;
    if (saved) {
      // A re-run: the items are found again (their keys hold the uid, so the plan does not).
      const persisted = JSON.parse(objectText(saved)) as Omit<ErasurePlan, "items">;
      const items = redaction
        ? await planItems(
            deps,
            appId,
            { ...redaction, names },
            { groups: new Set(persisted.groups), sessions: new Set(persisted.sessions) },
          )
        : { items: [] };
      plan = { ...persisted, items: items.items };
    } else {
      const found = await findPlan(deps, request, redaction);
      plan = found.plan;
      names = found.names;
      counts.objectsSearched = found.searched;
      await deps.checkpoint?.("save plan");
      await savePendingErasure(deps.state, appId, uid, { ...pending, names });
      const { items: _items, ...persisted } = plan;
      await putText(deps, planKey, JSON.stringify(persisted), false);
    }
    counts.bytesScanned = plan.bytesScanned;
    const full = redaction && { ...redaction, names };
    await rewriteObjects(deps, request, plan, full, counts);
    if (full) await eraseItems(deps, plan, full, counts);
    else await eraseAppItems(deps, appId, counts);
    for (const key of plan.recordings) {
      if (request.keepRecordings) {
        counts.recordingsKept++;
        continue;
      }
      await deps.checkpoint?.(`recording ${key}`);
      counts.versionsDeleted += await deleteObject(deps, key);
      counts.recordingsDeleted++;
    }
    const uncompacted = await recompact(deps, plan, counts);
    await recomputeDays(deps, appId, plan, counts);
    const unreached = [
      ...(await unreachedQueues(deps)),
      ...uncompacted.map(
        (day) =>
          `${day}: its compacted Parquet was not rewritten (no compactor): run webhook compact --day ${day}`,
      ),
    ];
    const record: ErasureRecord = { ...base, finishedAt: deps.now(), counts, unreached };
    await deps.checkpoint?.("record");
    await writeErasureRecord(deps.state, record);
    await deleteObject(deps, planKey);
    await clearPendingErasure(deps.state, appId, uid);
    return { ...record, dryRun: false, plan };
  });
}
