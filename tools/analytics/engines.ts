import { AthenaClient } from "@aws-sdk/client-athena";
import {
  type ArchiveLease,
  ArchiveLeaseLostError,
  ArchiveLockedError,
  archiveLease,
  COMMAND_LEASE_WAIT,
  type LeaseWait,
} from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { leaseEnd } from "../../shared/adapters/table-lease";
import type { ArchiveCompactor, ArchiveRewriter } from "../../shared/analytics/compaction";
import { athenaCompactor } from "../../shared/analytics/engines/athena-compactor";
import { athenaEngine } from "../../shared/analytics/engines/athena-sql-engine";
import { duckDbCompactor } from "../../shared/analytics/engines/duckdb-compactor";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import type { ActivityStore } from "../../shared/analytics/store/activity-store";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { s3UserSets, type UserSetStore } from "../../shared/analytics/user-sets";
import { UserFacingError } from "../cli/program";
import type { Target } from "../target";

/** SQL over the target's archive: DuckDB over the local stack's bucket, Athena for a deployed stack. */
export function sqlEngineFor(target: Target): SqlEngine {
  if (target.kind === "local") {
    if (!target.bucket) throw new UserFacingError("the local stack has no data bucket");
    return duckDbEngine({ s3: target.s3, bucket: target.bucket });
  }
  if (!target.athena) throw new UserFacingError("the stack has no Athena workgroup (deployed before #20?)");
  return athenaEngine({ client: new AthenaClient({}), ...target.athena });
}

/** The target's activity table. */
export function activityStoreFor(target: Target): ActivityStore {
  if (!target.activityTable)
    throw new UserFacingError("the target has no activity table (deployed before #20?)");
  return dynamoActivityStore(documentClient(target.dynamo), target.activityTable);
}

/** The target's user sets (users over time), in its data bucket. */
export function userSetsFor(target: Target): UserSetStore {
  if (!target.bucket) throw new UserFacingError("the target has no data bucket");
  return s3UserSets(target.s3, target.bucket);
}

/**
 * How a command waits for the archive lease (`COMMAND_LEASE_WAIT`: every 2 s, for 5 minutes or
 * until the lease it found lapses, whichever is later), saying once on stderr who holds it and
 * until when: the schedule holds it for seconds every tick, so a command never fails for that
 * alone, and a holder that was killed is waited out.
 *
 * @example await forget({ ...deps, leaseWait: commandLeaseWait() }, request)
 */
export function commandLeaseWait(): LeaseWait {
  return {
    ...COMMAND_LEASE_WAIT,
    onHeld: (holder, until) => console.error(leaseWaitNote(holder, until)),
  };
}

/**
 * What a command says when it finds the archive lease held: who holds it, until when unless
 * renewed, and how long it waits.
 *
 * @example leaseWaitNote("erasure 3f… 1a2b3c4d", Date.parse("2026-01-02T10:15:00Z")) // "waiting for the archive: erasure 3f… 1a2b3c4d holds it until 2026-01-02T10:15:00Z unless it renews it (…)"
 */
export function leaseWaitNote(holder: string, until: number | undefined): string {
  const every = `trying every ${COMMAND_LEASE_WAIT.everyMs / 1000} s`;
  return until === undefined
    ? `waiting for the archive: ${holder} holds it (${every} for up to ${COMMAND_LEASE_WAIT.forMs / 60_000} minutes)`
    : `waiting for the archive: ${holder} holds it until ${leaseEnd(until)} unless it renews it (${every} for ${COMMAND_LEASE_WAIT.forMs / 60_000} minutes, or until then if later: a run that was stopped lets its lease lapse then)`;
}

/**
 * The archive lease of the target (in its activity table), which every rewriter of the archive
 * holds, as a command takes it: found held, it waits (`commandLeaseWait`).
 *
 * @example await withArchiveLease(archiveLeaseFor(target), "compact 2026-01-02..2026-01-02", Date.now, work)
 */
export function archiveLeaseFor(target: Target): ArchiveLease {
  if (!target.activityTable)
    throw new UserFacingError("the target has no activity table (deployed before #20?)");
  return archiveLease(
    { doc: documentClient(target.dynamo), tableName: target.activityTable },
    Date.now,
    commandLeaseWait(),
  );
}

/**
 * The target's compactor of closed days: DuckDB over the local stack's bucket, Athena (CTAS) for a deployed stack.
 *
 * @example await compactorFor(target).compactDay("2026-01-02")
 */
export function compactorFor(target: Target): ArchiveCompactor {
  if (!target.bucket) throw new UserFacingError("the target has no data bucket");
  if (target.kind === "local") return duckDbCompactor({ s3: target.s3, bucket: target.bucket });
  if (!target.athena) throw new UserFacingError("the stack has no Athena workgroup (deployed before #20?)");
  return athenaCompactor({
    client: new AthenaClient({}),
    ...target.athena,
    s3: target.s3,
    bucket: target.bucket,
  });
}

/**
 * What a rewrite of the target's archive in place holds and uses (`rewriteArchive`): its lease and its compactor.
 *
 * @example await rederiveArchive(target.s3, archive, { from: "2026-01-01" }, archiveRewriterFor(target))
 */
export function archiveRewriterFor(target: Target): ArchiveRewriter {
  return { lease: archiveLeaseFor(target), compactor: compactorFor(target), now: Date.now };
}

/**
 * A command's answer when another rewrite holds the archive lease: one line that says who, and to
 * try again when it ends (a `UserFacingError`); any other error as it is.
 *
 * @example await rederiveArchive(…).catch(sayWhoHoldsTheArchive)
 */
export function sayWhoHoldsTheArchive(error: unknown): never {
  if (error instanceof ArchiveLockedError || error instanceof ArchiveLeaseLostError)
    throw new UserFacingError(error.message);
  throw error;
}
