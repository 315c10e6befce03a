import { s3BlobStore } from "../adapters/s3-blob-store";
import { blobRollupLedger, type RollupLedger } from "../analytics/store/rollup-ledger";
import { S3_PREFIX } from "../platform/constants";
import { keysUnder } from "./bucket";
import type { ErasureCounts } from "./erasure-state";
import type { ForgetDependencies } from "./plan";

/*
 * A whole app's erasure and the rollup ledger (`rollup/date=<day>.json`): each day's pass keeps
 * every app's digest and headline totals, which the console ranks apps by. The erased app leaves
 * them, so it is no longer ranked, counted or listed.
 */

/** The ledger the rollup keeps: the one it is given, else the bucket's. */
function ledgerOf(deps: ForgetDependencies): RollupLedger {
  return deps.rollup.ledger ?? blobRollupLedger(s3BlobStore(deps.s3, deps.bucket));
}

/**
 * The days whose ledger pass holds the app (its digest or its totals): one LIST, one GET a day.
 *
 * @example await ledgerDaysOf(deps, "app1") // ["2026-03-01", "2026-03-02"]
 */
export async function ledgerDaysOf(deps: ForgetDependencies, appId: string): Promise<string[]> {
  const ledger = ledgerOf(deps);
  const days: string[] = [];
  for (const key of await keysUnder(deps, S3_PREFIX.rollup)) {
    const day = /date=(\d{4}-\d{2}-\d{2})\.json$/.exec(key)?.[1];
    const pass = day && (await ledger.pass(day));
    if (day && pass && (appId in pass.apps || appId in (pass.totals ?? {}))) days.push(day);
  }
  return days.sort();
}

/**
 * Removes the app from each day's ledger pass (its digest and totals), everything else of the
 * pass as it was. Runs under the archive lease, which a final pass takes too.
 *
 * @example await forgetAppInLedger(deps, "app1", ["2026-03-01"], counts) // counts.ledgerPassesRewritten: 1
 */
export async function forgetAppInLedger(
  deps: ForgetDependencies,
  appId: string,
  days: readonly string[],
  counts: ErasureCounts,
): Promise<void> {
  const ledger = ledgerOf(deps);
  for (const day of days) {
    const pass = await ledger.pass(day);
    if (!pass || !(appId in pass.apps || appId in (pass.totals ?? {}))) continue;
    await deps.checkpoint?.(`ledger ${day}`);
    const { [appId]: _digest, ...apps } = pass.apps;
    const { [appId]: _totals, ...totals } = pass.totals ?? {};
    await ledger.record({ ...pass, apps, ...(pass.totals ? { totals } : {}) });
    counts.ledgerPassesRewritten++;
  }
}
