/**
 * The scheduled rollup (`scheduledRollup`, the rollup function's tick): yesterday's pass (final
 * once the grace period is over) and today's, each under the archive lease, then the steps run
 * once a day after yesterday's final pass: its compaction to Parquet and the expiry sweep.
 */
import { ArchiveLockedError, withArchiveLease } from "../../adapters/archive-lease";
import { utcDay } from "../../contracts/bucket-layout";
import { CompactionPendingError } from "../../platform/errors";
import type { ExpirySweepReport } from "../archive-expiry";
import type { CompactionManifest } from "../compaction";
import { type DayPassReport, passDay, rollupDayAllApps } from "./day-pass";
import { DAY_MS, isFinal } from "./days";
import type { RollupDependencies } from "./dependencies";

/** The days a scheduled run recomputes at `now`: yesterday (until final) and today. */
export function scheduledDays(now: number): string[] {
  return [utcDay(now - DAY_MS), utcDay(now)];
}

/** A scheduled run's report: each day's pass, the days compacted, and the days (or apps' days) that failed with why. */
export interface ScheduledRollupReport {
  passes: DayPassReport[];
  /**
   * Days whose pass waited for another rewrite of the archive (an erasure, a repair, a replay) to
   * release the lease (`archiveLock`): passed at a later tick (the day keeps its figures, and
   * stays not final, meanwhile).
   */
  passesDeferred: string[];
  compactions: CompactionManifest[];
  /**
   * Days whose compaction waited: for an erasure or a repair to release the archive
   * (`archiveLock`), or for its Athena CTAS, still running, to end (adopted at a later tick).
   */
  compactionsDeferred: string[];
  /** What the day's expiry sweep deleted (`expirySweep`: once a day, at the tick after yesterday's final pass). */
  sweep?: ExpirySweepReport;
  /** Days whose sweep waited for another rewrite of the archive to release the lease: swept at a later tick. */
  sweepsDeferred: string[];
  failures: Array<{ appId?: string; day: string; error: unknown }>;
}

/**
 * The scheduled rollup: yesterday (unless its last pass was final) and today, every app in one
 * pass a day (`rollupDayAllApps`): two engine queries a run at most, whatever the number of
 * apps. A day that fails is reported and left as it was; the other day still runs.
 */
export async function scheduledRollup(deps: RollupDependencies): Promise<ScheduledRollupReport> {
  const report: ScheduledRollupReport = {
    passes: [],
    passesDeferred: [],
    compactions: [],
    compactionsDeferred: [],
    sweepsDeferred: [],
    failures: [],
  };
  const days = scheduledDays(deps.now());
  for (const day of days) {
    try {
      const pass = await scheduledPass(day, deps);
      report.passes.push(pass);
      report.failures.push(...pass.failures);
    } catch (error) {
      // An erasure (or a repair) is rewriting the archive: the day's final pass waits for a later tick.
      if (error instanceof ArchiveLockedError) report.passesDeferred.push(day);
      else report.failures.push({ day, error });
    }
  }
  const yesterday = days[0] as string;
  const { compactor, expirySweep } = deps;
  if (compactor)
    await oncePerFinalDay(yesterday, deps, report, {
      mark: "compactedAt",
      holder: `compaction ${yesterday}`,
      deferred: report.compactionsDeferred,
      run: async () => {
        report.compactions.push(await compactor.compactDay(yesterday));
      },
    });
  if (expirySweep)
    await oncePerFinalDay(yesterday, deps, report, {
      mark: "sweptAt",
      holder: `expiry sweep ${yesterday}`,
      deferred: report.sweepsDeferred,
      run: async (renew) => {
        report.sweep = await expirySweep(deps.now(), renew);
      },
    });
  return report;
}

/**
 * One day's pass of the schedule. Every pass that writes figures runs whole (its read of the
 * archive and its writes) under the archive lease (`archiveLock`), the one rule without exception
 * (#40): a final pass writes the day sets, which an erasure rewrites, and any pass writes figures
 * and a ledger entry, which a whole-app erasure deletes; a pass that read the archive before an
 * erasure's rewrite could otherwise write them back after it. Held by another, it throws
 * `ArchiveLockedError` at once (the schedule never waits) and the day waits for a later tick: its
 * figures pause while an erasure runs. A day whose last pass was final is skipped without the
 * lease (nothing is read or written). The clock is read once: whether the pass is final, and its
 * `computedAt`, are the same reading.
 */
async function scheduledPass(day: string, deps: RollupDependencies): Promise<DayPassReport> {
  const at = deps.now();
  const pinned: RollupDependencies = { ...deps, now: () => at };
  const previous = await deps.ledger?.pass(day);
  const { archiveLock } = deps;
  if (previous?.final || !archiveLock) return passDay(day, pinned, previous, { skipFinal: true });
  const holder = `${isFinal(day, at, deps) ? "final pass" : "pass"} ${day}`;
  return withArchiveLease(archiveLock, holder, deps.now, (renew) =>
    // The ledger read again under the lease: another run may have passed the day meanwhile.
    rollupDayAllApps(
      day,
      {
        ...pinned,
        checkpoint: async (step) => {
          await renew();
          await deps.checkpoint?.(step);
        },
      },
      { skipFinal: true },
    ),
  );
}

/** A step the schedule runs once a day (`oncePerFinalDay`). */
interface DailyStep {
  /** The field of the ledger's pass that records it. */
  mark: "compactedAt" | "sweptAt";
  holder: string;
  /** Where the day goes when the step waits (the lease held, a CTAS still running). */
  deferred: string[];
  run: (renew: () => Promise<void>) => Promise<void>;
}

/**
 * Runs a step of yesterday once its last pass is final and the step is not recorded on it
 * (`mark`: compacting it to Parquet, `compactedAt`; sweeping what expired, `sweptAt`), then
 * records it: once a day, at the first tick after the grace period. It runs under the archive
 * lease, and is recorded on the ledger's pass as it is under the lease (a whole-app erasure may
 * have rewritten it since). A failed step is a failure of the run (counted, alarmed) and is tried
 * again at the next tick, until it is done or the day stops being yesterday (then `webhook
 * compact` compacts it; the next day's sweep covers every expired day). The lease held by another
 * rewrite, or the day's CTAS still running (adopted once it ends), defer it to a later tick.
 * Nothing is lost either way: the NDJSON stays the source of truth.
 */
async function oncePerFinalDay(
  day: string,
  deps: RollupDependencies,
  report: ScheduledRollupReport,
  step: DailyStep,
) {
  // A day whose pass failed this tick is counted once, for that.
  if (!deps.ledger || report.failures.some((f) => f.day === day)) return;
  const { ledger } = deps;
  try {
    const pass = await ledger.pass(day);
    if (!pass?.final || pass[step.mark] !== undefined) return;
    const run = async (renew: () => Promise<void>) => {
      const current = (await ledger.pass(day)) ?? pass;
      await step.run(renew);
      await ledger.record({ ...current, [step.mark]: deps.now() });
    };
    if (deps.archiveLock) await withArchiveLease(deps.archiveLock, step.holder, deps.now, run);
    else await run(async () => {});
  } catch (error) {
    if (error instanceof ArchiveLockedError || error instanceof CompactionPendingError)
      step.deferred.push(day);
    else report.failures.push({ day, error });
  }
}
