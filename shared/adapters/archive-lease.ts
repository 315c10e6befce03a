import { setTimeout as delay } from "node:timers/promises";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { holdingLease, type LeaseItem, leaseEnd, releaseLease, renewLease, takeLease } from "./table-lease";

/**
 * The archive lease: the one rule that every rewrite of stored objects follows
 * (docs/design-and-limits.md, "Writers meet").
 *
 * The projector only adds objects (a batch's archive object, its edges, a quarantine record), each
 * under a key made from its batch: it never rewrites another writer's object, so it takes no lease
 * (a batch it retries puts its own key again, with its lines as received: an erasure counts the
 * events still queued as what it could not reach). Everything that rewrites, replaces or deletes an
 * object that already exists under `raw/`, `edge/`, `compact/`, `users/` or `imports/` (an erasure,
 * a compaction, a pass's day sets, a repair or a migration of the archive, an import's fold, the
 * expiry sweep), writes figures (every pass of the rollup), or re-applies archived lines (a replay)
 * does it inside `withArchiveLease`, so that no two of them interleave. The lease is one item of the activity table (pk `_lock`, sk `archive`):
 * one conditional write to take it, one to renew it, one to release it (`table-lease.ts`). A holder
 * that crashes leaves a lease that lapses after `ARCHIVE_LEASE_MS`; a long holder renews it as it
 * goes, and only as its holder: a holder whose lease lapsed and was taken by another meanwhile
 * learns it at its next renewal (`ArchiveLeaseLostError`), before its next change.
 *
 * Each run holds it under a name of its own (`compaction 2026-01-02 1f3a9c0e`: the run id appended
 * by `withArchiveLease`, `holdingLease`), so that two runs of the same command never both "hold" it and the first
 * to end never releases the other's. An erasure too (`erasure <id> <run>`): two runs of one erasure
 * never run at once; its re-run after a crash waits for the crashed run's lease to lapse.
 *
 * Table items follow the other half of the rule: every writer of a projection item, the erasure
 * included, writes it conditionally on the `rev` it read and bumps it (`dynamo-item-store.ts`).
 */
const LEASE_KEY = { pk: "_lock", sk: "archive" };

/** How long the lease holds without its holder renewing it (a crashed holder's lease lapses). */
export const ARCHIVE_LEASE_MS = 15 * 60_000;

/** How a command waits for a lease held by another (`COMMAND_LEASE_WAIT`): the schedule never waits. */
export interface LeaseWait {
  /** How often it tries again (ms). */
  everyMs: number;
  /**
   * How long it waits at least (ms, on the clock `withArchiveLease` is given): longer while the
   * lease it first found has not lapsed yet (a holder that was stopped frees it then, at most
   * `ARCHIVE_LEASE_MS` later), then `ArchiveLockedError`.
   */
  forMs: number;
  /** Told once, the first time the lease is found held, who holds it and until when unless renewed (a command prints it). */
  onHeld?: (holder: string, until?: number) => void;
  /** How it waits between tries. @default node's timers/promises `setTimeout` */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A command's wait: every 2 s, for 5 minutes or until the lease it found lapses, whichever is
 * later (at most 15 minutes and a try: a holder that was killed, or a run of the same erasure
 * stopped by Ctrl-C, lets its lease lapse by then, and the command proceeds). Long enough for the
 * schedule's passes and compactions, which hold the lease for seconds to minutes every tick; an
 * erasure or a repair that holds it longer, renewing it, is named, and the command ends with the
 * clear error.
 */
export const COMMAND_LEASE_WAIT: LeaseWait = { everyMs: 2_000, forMs: 5 * 60_000 };

/** The lease is held by another rewrite of the archive (an erasure, a compaction, a final pass…). */
export class ArchiveLockedError extends Error {
  /**
   * `waitedMs`: how long a command waited for it (`LeaseWait`) before giving up; `until`: when the
   * holder's lease ends unless it renews it (epoch ms).
   */
  constructor(
    readonly holder: string,
    readonly waitedMs?: number,
    readonly until?: number,
  ) {
    const ends = until === undefined ? "" : `, whose lease runs until ${leaseEnd(until)} unless renewed`;
    super(
      waitedMs === undefined
        ? `the archive is being rewritten by ${holder}${ends}: try again when it ends`
        : `the archive is still being rewritten by ${holder} after ${Math.round(waitedMs / 1000)} s of waiting${ends}: try again when it ends`,
    );
    this.name = "ArchiveLockedError";
  }
}

/**
 * A holder's lease lapsed (not renewed for `ARCHIVE_LEASE_MS`) and another rewrite took it
 * meanwhile: the holder stops before its next change (its renewal throws this), since what it
 * read may have been rewritten since. Run it again.
 */
export class ArchiveLeaseLostError extends Error {
  /** `now`: who holds it now (absent: taken and released by another meanwhile). */
  constructor(
    readonly holder: string,
    readonly now?: string,
  ) {
    super(
      `the archive lease of ${holder} lapsed (not renewed for ${ARCHIVE_LEASE_MS / 60_000} minutes) and ${now ? `is held by ${now}` : "was taken by another rewrite meanwhile"}: stopped before its next change; run it again`,
    );
    this.name = "ArchiveLeaseLostError";
  }
}

/** Where the lease lives: the activity table. */
export interface LeaseTable {
  doc: DynamoDBDocumentClient;
  tableName: string;
}

/** The archive lease, as every rewriter takes it. */
export interface ArchiveLease {
  /** Takes it for `holder` (free or lapsed), or throws `ArchiveLockedError` (held by another). */
  acquire(holder: string): Promise<void>;
  /** Renews it, only as `holder`, or throws `ArchiveLeaseLostError` (it lapsed and another took it). */
  renew(holder: string): Promise<void>;
  /** Releases it if `holder` still holds it. */
  release(holder: string): Promise<void>;
  /** How `withArchiveLease` waits when it finds it held (a command's lease). None: it does not wait (the schedule). */
  wait?: LeaseWait;
  /** A run's id, appended to its name. @default 8 random hex digits (a test passes seeded ones) */
  runId?: () => string;
}

const leaseItem = (table: LeaseTable): LeaseItem => ({ ...table, key: LEASE_KEY });

/**
 * Takes the lease for `holder` (`erasure <id> <run>`, `compaction <day> <run>`): free or lapsed
 * (`ARCHIVE_LEASE_MS`), else `ArchiveLockedError` naming who holds it and until when. One
 * conditional write.
 */
export async function acquireArchiveLease(table: LeaseTable, holder: string, now: number): Promise<void> {
  const held = await takeLease(leaseItem(table), holder, now, ARCHIVE_LEASE_MS);
  if (held) throw new ArchiveLockedError(held.holder, undefined, held.expiresAt);
}

/**
 * Renews the lease of `holder` for `ARCHIVE_LEASE_MS` from `now`, only if it still holds it (one
 * conditional write), else `ArchiveLeaseLostError`: never takes back a lease that lapsed and
 * another took meanwhile.
 */
export async function renewArchiveLease(table: LeaseTable, holder: string, now: number): Promise<void> {
  const lost = await renewLease(leaseItem(table), holder, now, ARCHIVE_LEASE_MS);
  if (lost !== undefined) throw new ArchiveLeaseLostError(holder, lost?.holder);
}

/** Releases the lease if `holder` still holds it. */
export async function releaseArchiveLease(table: LeaseTable, holder: string): Promise<void> {
  await releaseLease(leaseItem(table), holder);
}

/**
 * The archive lease in the activity table; with `wait`, a command's (`COMMAND_LEASE_WAIT`): found
 * held, `withArchiveLease` tries again until it gets it or the wait ends.
 *
 * @example const lease = archiveLease(table, Date.now); await withArchiveLease(lease, "compaction 2026-01-02", Date.now, work)
 * @example const lease = archiveLease(table, Date.now, { ...COMMAND_LEASE_WAIT, onHeld: (h) => console.error(`waiting for ${h}`) })
 */
export function archiveLease(table: LeaseTable, now: () => number, wait?: LeaseWait): ArchiveLease {
  return {
    acquire: (holder) => acquireArchiveLease(table, holder, now()),
    renew: (holder) => renewArchiveLease(table, holder, now()),
    release: (holder) => releaseArchiveLease(table, holder),
    ...(wait ? { wait } : {}),
  };
}

/**
 * Takes the lease for `holder`; held by another and `lease.wait` set, tries again every
 * `everyMs` (telling `onHeld` who holds it and until when, once) until it gets it, or throws
 * `ArchiveLockedError` (with how long it waited) once `forMs` has passed and the lease it first
 * found has lapsed: a holder that was stopped is waited out, one that renews is named.
 */
async function takeWaiting(lease: ArchiveLease, holder: string, now: () => number): Promise<void> {
  const { wait } = lease;
  const since = now();
  let firstUntil: number | undefined;
  let told = false;
  for (;;) {
    try {
      await lease.acquire(holder);
      return;
    } catch (error) {
      if (!(error instanceof ArchiveLockedError) || !wait) throw error;
      if (!told) firstUntil = error.until;
      const waited = now() - since;
      // The lease first found lapses at `firstUntil` unless its holder renews it: waited out.
      const bound = Math.max(wait.forMs, (firstUntil ?? since) - since + wait.everyMs);
      if (waited >= bound) throw new ArchiveLockedError(error.holder, waited, error.until);
      if (!told) wait.onHeld?.(error.holder, error.until);
      told = true;
      await (wait.sleep ?? delay)(wait.everyMs);
    }
  }
}

/**
 * Runs `work` holding the lease as this run (`name` and a run id of its own: `holdingLease`), and
 * releases it after (also when `work` throws). `work` is given `renew`, to call between its
 * steps (and as a long step goes, a search): it renews the lease once a third of it has passed,
 * only as this run (`ArchiveLease.renew`), so a long rewrite keeps it, and a lease lost meanwhile
 * (it lapsed and another took it) throws `ArchiveLeaseLostError` there, before the next change.
 * Held by another, it waits as the lease says (`lease.wait`: a command), else throws
 * `ArchiveLockedError` without running `work`.
 *
 * @example await withArchiveLease(lease, "compaction 2026-01-02", Date.now, async (renew) => { for (const step of steps) { await renew(); await step(); } })
 */
export function withArchiveLease<T>(
  lease: ArchiveLease,
  name: string,
  now: () => number,
  work: (renew: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const held = {
    take: (holder: string) => takeWaiting(lease, holder, now),
    renew: (holder: string) => lease.renew(holder),
    release: (holder: string) => lease.release(holder),
    ...(lease.runId ? { runId: lease.runId } : {}),
  };
  return holdingLease(held, name, now, ARCHIVE_LEASE_MS, work);
}
