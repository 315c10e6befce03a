/**
 * What the rollup ledger keeps of an app's day (`store/rollup-ledger.ts`): a digest of what its
 * write stored, so that a pass over every app rewrites only the apps whose figures moved, and its
 * headline totals, so that the console ranks apps without a query per app.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../../projections/canonical-json";
import type { DayActivity } from "../figures";

/** A digest of what a day's write stores for an app: a pass rewrites the app when it differs. */
export function activityDigest(activity: DayActivity, final: boolean): string {
  return createHash("sha256").update(canonicalJson({ activity, final })).digest("base64url").slice(0, 16);
}

/**
 * An app's day in three numbers, `[messages, active users, every figure summed]`, kept in the
 * ledger (`DayPass.totals`) so that the console ranks apps without a query per app.
 *
 * @example headlineTotals(activity) // [9257, 30, 48211]
 */
export function headlineTotals(activity: Pick<DayActivity, "figures">): number[] {
  const figures = activity.figures as Record<string, number>;
  return [
    figures.messages ?? 0,
    figures.active_users ?? 0,
    Object.values(figures).reduce((a, b) => a + b, 0),
  ];
}
