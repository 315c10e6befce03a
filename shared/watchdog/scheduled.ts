/**
 * The rollup's tick with the watchdog after it (#52): the scheduled passes (`scheduledRollup`),
 * then the apps silent now, judged from the ledger those passes wrote (`silenceFromLedger`:
 * fifteen reads, whatever the number of apps). What the rollup function and `npm start` run.
 */
import { type RollupDependencies, type ScheduledRollupReport, scheduledRollup } from "../analytics/rollup";
import { utcDay } from "../contracts/bucket-layout";
import { silenceFromLedger } from "./ledger-history";
import type { SilenceReport } from "./silence";

export interface WatchedRollupReport extends ScheduledRollupReport {
  /** The apps silent after this run's passes; absent without a ledger (or when it could not be read: a failure). */
  silence?: SilenceReport;
}

/**
 * A scheduled rollup, then the watchdog. A ledger that cannot be read is a failure of the run
 * (counted and alarmed as the rollup's are).
 *
 * @example const report = await watchedRollup(deps) // report.silence.silent: [{ appId: "app1", … }]
 */
export async function watchedRollup(deps: RollupDependencies): Promise<WatchedRollupReport> {
  const report: WatchedRollupReport = await scheduledRollup(deps);
  if (!deps.ledger) return report;
  const now = deps.now();
  try {
    report.silence = await silenceFromLedger(deps.ledger, now);
  } catch (error) {
    report.failures.push({ day: utcDay(now), error });
  }
  return report;
}
