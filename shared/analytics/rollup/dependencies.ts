/**
 * What a rollup is given (`RollupDependencies`: the engine, the store, the clock, the ledger, the
 * lease, the set store…), how a day is recomputed (`RollupOptions`) and what it did for one day
 * (`DayRollup`): the types every pass of the rollup shares.
 */
import type { ArchiveLease } from "../../adapters/archive-lease";
import type { ExpirySweep } from "../archive-expiry";
import type { ArchiveCompactor } from "../compaction";
import type { SqlEngine } from "../engines/sql-engine";
import type { ActivityStore } from "../store/activity-store";
import type { RollupLedger } from "../store/rollup-ledger";
import type { UserSetStore } from "../user-sets";

export interface RollupDependencies {
  engine: SqlEngine;
  store: ActivityStore;
  /** Injected clock (ms). */
  now: () => number;
  /** How long after a day's end late events are still awaited: a day computed later is final. */
  graceMs: number;
  /** Where passes over every app are remembered (`rollupDayAllApps`): none, every app is written. */
  ledger?: RollupLedger;
  /** Apps written at once by a pass over every app. @default 16 */
  writeConcurrency?: number;
  /**
   * Compacts a receipt day to Parquet once its pass is final (`scheduledRollup`, with a ledger):
   * DuckDB locally, Athena deployed. None: days stay NDJSON.
   */
  compactor?: ArchiveCompactor;
  /**
   * Deletes what expired by the day in its key (`archive-expiry.ts`: the deployment's
   * `retainArchiveDays`), once a day (`scheduledRollup`, under the archive lease, with a ledger).
   * None: only S3's lifecycle expires the archive (by each object's last write).
   */
  expirySweep?: ExpirySweep;
  /**
   * The archive lease (`adapters/archive-lease.ts`) that every rewriter of stored data holds.
   * `scheduledRollup` takes it for each day's pass (its figures, ledger entry and, final, day sets)
   * and for a compaction, `rollupDays` for its range, so that none interleaves with an erasure, a
   * repair or a replay (held: the schedule's day waits for a later tick; a command's lease waits).
   */
  archiveLock?: ArchiveLease;
  /**
   * Where a final pass writes each closed day's sets (`user-sets/`: users over time, the
   * conversations started, the membership history). None: not written.
   *
   * The sets, like the figures, are rewritten by an erasure too, so they are written only under
   * the archive lease: `scheduledRollup` and `rollupDays` take it before they pass a day;
   * `rollupDay` and `rollupDayAllApps` do not take it and expect their caller to hold it (an
   * erasure calls `rollupDay` inside its own lease).
   */
  userSets?: UserSetStore;
  /**
   * Called between a pass's steps: after the archive is read (`read`), after the figures are
   * written (`figures`), after the day sets are written (`sets`). Under the archive lease it
   * renews it (`scheduledRollup`); a test runs another writer there.
   */
  checkpoint?: (step: "read" | "figures" | "sets") => Promise<void>;
}

/** What a rollup did for one day. */
export interface DayRollup {
  appId: string;
  day: string;
  /**
   * written; superseded (a run computed later had written it); skipped (already final, not
   * forced); unchanged (a pass over every app found the same figures as its last pass wrote).
   */
  outcome: "written" | "superseded" | "skipped" | "unchanged";
  final: boolean;
  computedAt: number;
  bytesScanned: number;
  /**
   * What a one-app pass of a closed day did to its day sets (users over time, `rollupDay` with
   * `userSets`): merged the app's entry, or wrote every app's (the day had none yet). Absent: none
   * written (the day is not final, or no set store).
   */
  daySets?: "merged" | "written";
}

/** How a day is recomputed. */
export interface RollupOptions {
  /** Leave a final day as it is, without reading the archive (the schedule). */
  skipFinal?: boolean;
  /** Read the neighbouring receipt days too (`receiptDaysOf`): days archived before edge objects. */
  neighbours?: boolean;
  /**
   * A pass over every app writes every app, even one whose figures the ledger's last pass wrote
   * (`webhook rollup`: a recompute on demand); the pass is still recorded in the ledger.
   */
  rewrite?: boolean;
}
