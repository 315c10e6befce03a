import { randomBytes } from "node:crypto";
import { pseudonymOf } from "@webhook-backend/stream/projections/own-items";
import { archiveLease, withArchiveLease } from "../adapters/archive-lease";
import { objectText } from "../contracts/bucket-layout";
import { deleteObject, getBytes, putText } from "./bucket";
import {
  clearPendingErasure,
  type ErasureCounts,
  type ErasureRecord,
  erasureSubject,
  type PendingErasure,
  pendingErasure,
  savePendingErasure,
  writeErasureRecord,
} from "./erasure-state";
import { type Found, findAdded, findPlan } from "./find";
import { planItems } from "./find-items";
import { erasedMark } from "./in-flight";
import { forgetAppInLedger } from "./ledger";
import {
  type ErasurePlan,
  erasurePlanKey,
  type ForgetDependencies,
  type ForgetReport,
  type ForgetRequest,
  type PlannedItem,
  zeroCounts,
} from "./plan";
import { recompact, recomputeDays, rewriteTopLists } from "./recompute";
import type { Redaction } from "./redact";
import { countAppItems, eraseAppItems, eraseItems } from "./rewrite-items";
import { rewriteObjects } from "./rewrite-objects";
import { queueDepths, unreachedQueues, unreachedSteps } from "./unreached";

/*
 * The erasure (#34): `forget` runs its steps, each in a module of its own under shared/erasure/:
 * find (`find.ts`: the archive `find-objects.ts`, the tables `find-items.ts`), plan (`plan.ts`:
 * what it is given, finds and reports), rewrite objects (`rewrite-objects.ts`), rewrite items
 * (`rewrite-items.ts`), recompute (`recompute.ts`, and a whole app's ledger `ledger.ts`); what it
 * cannot reach (`unreached.ts`); its state (`erasure-state.ts`) and the redaction itself (`redact.ts`).
 */

export { SEARCH_CHUNK_BYTES } from "./find-objects";
export type {
  ErasureNotice,
  ErasurePlan,
  ForgetDependencies,
  ForgetReport,
  ForgetRequest,
  PlannedItem,
} from "./plan";
export { erasurePlanKey } from "./plan";

const randomId = () => randomBytes(8).toString("hex");

/** A plan saved by an earlier run of the same erasure, with what this run found since (a re-run after a crash). */
function mergePlans(saved: Partial<ErasurePlan>, found: ErasurePlan): ErasurePlan {
  const union = (a: readonly string[] | undefined, b: readonly string[]) =>
    [...new Set([...(a ?? []), ...b])].sort();
  const days = union(saved.days, found.days);
  return {
    objects: union(saved.objects, found.objects),
    days,
    topListDays: union(saved.topListDays, found.topListDays).filter((d) => !days.includes(d)),
    compactDays: union(saved.compactDays, found.compactDays),
    ledgerDays: union(saved.ledgerDays, found.ledgerDays),
    items: found.items,
    groups: union(saved.groups, found.groups),
    sessions: union(saved.sessions, found.sessions),
    recordings: union(saved.recordings, found.recordings),
    bytesScanned: (saved.bytesScanned ?? 0) + found.bytesScanned,
  };
}

/** What the run would count (a dry run's report): from the plan and the objects' rewrites the search evaluated. */
async function expectedCounts(
  deps: ForgetDependencies,
  request: ForgetRequest,
  found: Found,
): Promise<ErasureCounts> {
  const { plan } = found;
  const items = request.uid === undefined ? undefined : plan.items;
  return {
    ...zeroCounts(),
    ...found.objectCounts,
    objectsSearched: found.searched,
    itemsDeleted: items
      ? items.filter((i) => i.action === "delete").length
      : await countAppItems(deps, request.appId),
    itemsRedacted: items ? items.filter((i) => i.action === "redact").length : 0,
    recordingsDeleted: request.keepRecordings ? 0 : plan.recordings.length,
    recordingsKept: request.keepRecordings ? plan.recordings.length : 0,
    daysRecompacted: deps.compactor ? plan.compactDays.length : 0,
    daysRecomputed: plan.days.length,
    topListsRewritten: plan.topListDays.length,
    ledgerPassesRewritten: plan.ledgerDays.length,
    bytesScanned: plan.bytesScanned,
  };
}

/** An erasure's redaction (none: a whole app) and the fields of its record, from the erasure under way. */
function described(pending: PendingErasure, request: ForgetRequest) {
  const { uid } = request;
  const scope: ErasureRecord["scope"] = uid === undefined ? "app" : "user";
  const redaction: Redaction | undefined =
    uid === undefined
      ? undefined
      : { uid, names: pending.names, pseudonym: pending.pseudonym, erasureId: pending.erasureId };
  const base = {
    erasureId: pending.erasureId,
    appId: request.appId,
    scope,
    ...(redaction ? { pseudonym: pending.pseudonym } : {}),
    requestedBy: request.requestedBy,
    startedAt: pending.startedAt,
    keepRecordings: request.keepRecordings ?? false,
  } as const;
  return { redaction, base, scope };
}

/**
 * Erases one user of an app (or, without `uid`, the whole app) from everything the deployment
 * keeps, leaving every figure exact (docs/personal-data.md). The steps, each in its module:
 * 1. the archive lease taken (`withArchiveLease`, as this run: a second run of the same erasure
 *    waits for it), then the erasure under way read and written (a re-run resumes it: same id and
 *    pseudonym), the user marked for the projector (`deps.erased`: a delivery naming them is
 *    redacted in flight from then on, `in-flight.ts`), and the queues' messages counted;
 * 2. find (`find.ts`): the archive by SQL, the side objects, the tables on their own, the stored
 *    top lists; the plan is saved before the first change (a re-run searches again and adds what
 *    it finds to the saved plan);
 * 3. rewrite objects (`rewrite-objects.ts`): each object that holds the user, their lines redacted
 *    (`redact.ts`: one random pseudonym for their uid, and for their names where a name is a
 *    person's, their free text removed, `erasure` stamped) and every other line byte for byte, one
 *    PUT per object (atomic), then its old versions deleted; a whole app: its lines removed;
 * 4. rewrite items (`rewrite-items.ts`): their presence and memberships deleted, the items naming
 *    them redacted, each conditional on the `rev` it read (`rewriteItem`): a projector that read
 *    before re-applies its update over the change; a whole app: every item of it deleted;
 * 5. once every projector redacts them (`settle`), the objects the projector added since the
 *    search, looked at and rewritten too (the lease does not cover the projector);
 * 6. their recordings deleted (unless `keepRecordings`); recompute (`recompute.ts`): the compacted
 *    days' Parquet rewritten, the days touched recomputed, the top lists of days whose archive has
 *    expired rewritten in place; a whole app: its totals removed from the rollup ledger;
 * 7. the user's items looked at again, and erased again if an event applied meanwhile named them;
 * 8. the record written (what it could not reach: the messages the queues held when it began or
 *    ended), the mark given the erasure's end (deliveries received before it are redacted in
 *    flight for `ERASED_MARK_DAYS`), `onErased` told, the plan and the erasure under way deleted,
 *    the lease released.
 * Each step is idempotent: a crash anywhere leaves a state a re-run completes; a second run after
 * the first ends finds nothing. With `dryRun`, only step 2, and the counts the run would report.
 *
 * @example await forget(deps, { appId: "app1", uid: "u7", requestedBy: "ops" }) // { counts: { objectsRewritten: 12, … }, … }
 */
export async function forget(deps: ForgetDependencies, request: ForgetRequest): Promise<ForgetReport> {
  const newId = deps.newId ?? randomId;
  const { appId, uid } = request;
  const fresh = (): PendingErasure => ({
    erasureId: newId(),
    pseudonym: pseudonymOf(newId()),
    startedAt: deps.now(),
    names: [],
  });
  const existing = await pendingErasure(deps.state, appId, uid);
  const planned = existing ?? fresh();
  if (request.dryRun) {
    const { redaction, base } = described(planned, request);
    const depths = await queueDepths(deps);
    const found = await findPlan(deps, request, redaction, { countObjects: true });
    const counts = await expectedCounts(deps, request, found);
    const reached = new Set(deps.erased && uid !== undefined ? (deps.queues?.projected ?? []) : []);
    return {
      ...base,
      dryRun: true,
      ...(existing ? {} : { drawnForDryRun: true as const }),
      counts,
      unreached: unreachedQueues(depths, undefined, reached),
      plan: found.plan,
    };
  }
  const outer = deps;
  // Every step runs under the archive lease, renewed before a step (and as the search goes) once
  // a third of it has passed, only as this run: one run of an erasure at a time (a second run of
  // it waits, a re-run after a crash waits for the crashed run's lease to lapse), and a run whose
  // lease lapsed and was taken meanwhile stops before its next change.
  const lease = archiveLease(outer.state, outer.now, outer.leaseWait);
  return withArchiveLease(lease, `erasure ${planned.erasureId}`, outer.now, async (renew) => {
    const deps: ForgetDependencies = {
      ...outer,
      checkpoint: async (step) => {
        await renew();
        await outer.checkpoint?.(step);
      },
    };
    // The erasure under way as it stands under the lease (a re-run after a crash resumes it: same
    // id and pseudonym); one that a run this one waited for ended meanwhile: a new erasure, which
    // finds what is left (a second run after the first ends finds nothing).
    const current = await pendingErasure(deps.state, appId, uid);
    const pending = current ?? (existing ? fresh() : planned);
    if (!current) await savePendingErasure(deps.state, appId, uid, pending);
    const { redaction, base, scope } = described(pending, request);
    const counts = zeroCounts();
    // Marked before the search: from then on (once the projectors' caches have it) every delivery
    // naming them is redacted in flight; the last look below waits for that (`settle`).
    const marked = uid === undefined ? undefined : await markErased(deps, appId, uid, pending);
    const queuedAtStart = await queueDepths(deps);
    const { found, plan: searched, full } = await searchAndSave(deps, request, redaction, pending, counts);
    const { plan, uncompacted, again } = await rewrite(deps, request, searched, found, full, counts, marked);
    counts.bytesScanned = plan.bytesScanned;
    // With the user marked, what the projector takes off its queues is redacted as it is projected.
    const reached = new Set(marked === undefined ? [] : (deps.queues?.projected ?? []));
    const unreached = [
      ...unreachedQueues(queuedAtStart, await queueDepths(deps), reached),
      ...unreachedSteps(again, uncompacted),
    ];
    const record: ErasureRecord = { ...base, finishedAt: deps.now(), counts, unreached };
    await deps.checkpoint?.("record");
    await writeErasureRecord(deps.state, record);
    if (uid !== undefined) await markErased(deps, appId, uid, pending, record.finishedAt);
    await deps.onErased?.({
      appId,
      erasureId: record.erasureId,
      ...(record.pseudonym ? { pseudonym: record.pseudonym } : {}),
      ...(uid === undefined ? {} : { subject: erasureSubject(appId, uid) }),
      scope,
      days: [...plan.days].sort(),
      finishedAt: record.finishedAt,
    });
    await deleteObject(deps, erasurePlanKey(pending.erasureId));
    await clearPendingErasure(deps.state, appId, uid);
    return { ...record, dryRun: false, plan };
  });
}

/**
 * Steps 2 and 3 (under the lease): the search, merged with the plan an earlier run of the same
 * erasure saved (a re-run after a crash searches again, with the groups and sessions the first run
 * found: their lines may be redacted already); the names learnt and the plan saved.
 */
async function searchAndSave(
  deps: ForgetDependencies,
  request: ForgetRequest,
  redaction: Redaction | undefined,
  pending: PendingErasure,
  counts: ErasureCounts,
): Promise<{ found: Found; plan: ErasurePlan; full: Redaction | undefined }> {
  const planKey = erasurePlanKey(pending.erasureId);
  const saved = await getBytes(deps, planKey);
  const persisted: Partial<ErasurePlan> = saved ? JSON.parse(objectText(saved)) : {};
  const found = await findPlan(deps, request, redaction, {
    known: { groups: persisted.groups ?? [], sessions: persisted.sessions ?? [] },
  });
  const plan = saved ? mergePlans(persisted, found.plan) : found.plan;
  const names = [...new Set([...pending.names, ...found.names])];
  counts.objectsSearched = found.searched;
  await deps.checkpoint?.("save plan");
  await savePendingErasure(deps.state, request.appId, request.uid, { ...pending, names });
  const { items: _items, ...toSave } = plan;
  await putText(deps, planKey, JSON.stringify(toSave), false);
  return { found, plan, full: redaction && { ...redaction, names, sessions: plan.sessions } };
}

/**
 * Steps 4 to 7 (under the lease): the objects and items rewritten, then the objects the projector
 * added since the search; the recordings deleted; the days recompacted and recomputed, and the top
 * lists of expired days (or a whole app's ledger entries); last, the user's items looked at again
 * (an event in flight may have named them after their rewrite). Returns the plan with what was
 * added, the days left uncompacted and the items erased again.
 */
async function rewrite(
  deps: ForgetDependencies,
  request: ForgetRequest,
  searched: ErasurePlan,
  found: Found,
  full: Redaction | undefined,
  counts: ErasureCounts,
  marked: number | undefined,
): Promise<{ plan: ErasurePlan; uncompacted: string[]; again: PlannedItem[] }> {
  const { appId } = request;
  await rewriteObjects(deps, appId, searched.objects, full, counts);
  if (full) await eraseItems(deps, searched.items, full, counts);
  else await eraseAppItems(deps, appId, counts);
  await settle(deps, marked);
  const added = await findAdded(deps, appId, full, found.listing);
  await rewriteObjects(deps, appId, added.objects, full, counts);
  const plan = {
    ...searched,
    objects: [...searched.objects, ...added.objects],
    days: [...new Set([...searched.days, ...added.days])].sort(),
    compactDays: [...new Set([...searched.compactDays, ...added.compactDays])].sort(),
  };
  await deleteRecordings(deps, plan.recordings, request.keepRecordings ?? false, counts);
  const uncompacted = await recompact(deps, plan, counts);
  await recomputeDays(deps, appId, plan, counts);
  if (full) await rewriteTopLists(deps, appId, plan.topListDays, full, counts);
  else await forgetAppInLedger(deps, appId, plan.ledgerDays, counts);
  const again = full ? (await planItems(deps, appId, full, plan, { sweep: false })).items : [];
  if (full) await eraseItems(deps, again, full, counts);
  return { plan, uncompacted, again };
}

/**
 * The erased subject marked for the projector (`deps.erased`): while the erasure runs (`until`
 * absent), or with its end; at the end, the marks past their time deleted. Returns when it was
 * marked (nothing without `deps.erased`).
 */
async function markErased(
  deps: ForgetDependencies,
  appId: string,
  uid: string,
  pending: PendingErasure,
  until?: number,
): Promise<number | undefined> {
  if (!deps.erased) return undefined;
  const at = deps.now();
  const { erasureId, pseudonym } = pending;
  await deps.erased.subjects.mark(erasedMark({ appId, uid, erasureId, pseudonym }, at, until));
  if (until !== undefined) await deps.erased.subjects.sweep(at);
  return at;
}

/**
 * Waits until every projector redacts the erased subject (`settleMs` after it was marked: their
 * cache of the apps table and a batch under way that read it before): what the projector writes
 * after that names them no more, and what it wrote before is in the last look that follows.
 */
async function settle(deps: ForgetDependencies, marked: number | undefined): Promise<void> {
  if (marked === undefined || !deps.erased) return;
  const wait = marked + deps.erased.settleMs - deps.now();
  if (wait > 0) await (deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(wait);
}

/** The recordings of the user's sessions deleted, every version (or kept and counted, `--keep-recordings`). */
async function deleteRecordings(
  deps: ForgetDependencies,
  keys: readonly string[],
  keep: boolean,
  counts: ErasureCounts,
): Promise<void> {
  for (const key of keys) {
    if (keep) {
      counts.recordingsKept++;
      continue;
    }
    await deps.checkpoint?.(`recording ${key}`);
    counts.versionsDeleted += await deleteObject(deps, key);
    counts.recordingsDeleted++;
  }
}
