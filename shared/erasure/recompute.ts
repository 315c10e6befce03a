import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import { compactDayPrefix, dropCompaction } from "../analytics/compaction";
import { TOP_LIMIT } from "../analytics/figures";
import { rollupDay } from "../analytics/rollup";
import type { ErasureCounts } from "./erasure-state";
import type { ErasurePlan, ForgetDependencies } from "./plan";
import { type Redaction, replaceUid } from "./redact";

/*
 * The erasure's step "recompute": the compacted days rewritten from their redacted NDJSON, then
 * the days touched recomputed (their top lists then show the pseudonym).
 */

/**
 * Rewrites a compacted day's Parquet from its redacted NDJSON: its compaction dropped
 * (`dropCompaction`: a CTAS still running stopped first, then the manifest, so that readers take
 * the NDJSON, then every object of it), its old versions deleted, then the day compacted again
 * (Athena's CTAS refuses a location that holds files).
 *
 * @example await recompact(deps, plan, counts) // [] (every compacted day rewritten)
 */
export async function recompact(
  deps: ForgetDependencies,
  plan: ErasurePlan,
  counts: ErasureCounts,
): Promise<string[]> {
  const left: string[] = [];
  for (const day of plan.compactDays) {
    if (!deps.compactor) {
      left.push(day);
      continue;
    }
    await deps.checkpoint?.(`compact ${day}`);
    await dropCompaction(deps.s3, deps.bucket, day, deps.compactor);
    counts.versionsDeleted += await deps.versions.purge(compactDayPrefix(day), { all: true });
    await deps.compactor.compactDay(day);
    counts.daysRecompacted++;
  }
  return left;
}

/**
 * Recomputes each day of the plan from the archive (`rollupDay`): its figures are unchanged, its
 * top lists name the pseudonym.
 *
 * @example await recomputeDays(deps, "app1", plan, counts) // counts.daysRecomputed === plan.days.length
 */
export async function recomputeDays(
  deps: ForgetDependencies,
  appId: string,
  plan: ErasurePlan,
  counts: ErasureCounts,
): Promise<void> {
  for (const day of plan.days) {
    await deps.checkpoint?.(`rollup ${day}`);
    await rollupDay(appId, day, deps.rollup);
    counts.daysRecomputed++;
  }
}

/**
 * Rewrites in place the top lists of stored days whose raw archive has expired (a recompute would
 * read nothing): the uid in a busiest user's id (or a busiest group's) becomes the pseudonym,
 * every figure and rank as it was, through the store's own replace (one transaction on the day's
 * version, so a rollup writing the same day meanwhile is a conflict, never a mix).
 *
 * @example await rewriteTopLists(deps, "app1", ["2025-06-01"], redaction, counts) // counts.topListsRewritten: 1
 */
export async function rewriteTopLists(
  deps: ForgetDependencies,
  appId: string,
  days: readonly string[],
  redaction: Pick<Redaction, "uid" | "pseudonym">,
  counts: ErasureCounts,
): Promise<void> {
  const { store } = deps.rollup;
  for (const day of days) {
    const stored = await store.day(appId, day);
    if (!stored) continue;
    const [hours, users, groups] = await Promise.all([
      store.hours(appId, day),
      store.topUsers(appId, day, TOP_LIMIT),
      store.topGroups(appId, day, TOP_LIMIT),
    ]);
    const topUsers = users.map((u) => ({ ...u, uid: replaceUid(u.uid, redaction) }));
    const topGroups = groups.map((g) => ({ ...g, groupId: replaceUid(g.groupId, redaction) }));
    if (canonicalJson([topUsers, topGroups]) === canonicalJson([users, groups])) continue;
    await deps.checkpoint?.(`top lists ${day}`);
    const { figures, messageKinds, platforms, computedAt, final, bytesScanned } = stored;
    await store.replace({
      appId,
      day,
      figures,
      messageKinds,
      platforms,
      hours,
      topUsers,
      topGroups,
      computedAt,
      final,
      bytesScanned,
    });
    counts.topListsRewritten++;
  }
}
