import { compactDayPrefix, compactManifestKey } from "../analytics/compaction";
import { rollupDay } from "../analytics/rollup";
import { deleteObject, getBytes, keysUnder } from "./bucket";
import type { ErasureCounts } from "./erasure-state";
import type { ErasurePlan, ForgetDependencies } from "./plan";

/*
 * The erasure's step "recompute": the compacted days rewritten from their redacted NDJSON, then
 * the days touched recomputed (their top lists then show the pseudonym).
 */

/**
 * Rewrites a compacted day's Parquet from its redacted NDJSON: the manifest goes first (readers
 * then take the NDJSON), then every object of the day's compaction and its old versions, then the
 * day is compacted again (Athena's CTAS refuses a location that holds files).
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
    const manifest = compactManifestKey(day);
    if (await getBytes(deps, manifest)) counts.versionsDeleted += await deleteObject(deps, manifest);
    for (const key of await keysUnder(deps, compactDayPrefix(day)))
      counts.versionsDeleted += await deleteObject(deps, key);
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
