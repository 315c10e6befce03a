import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";

/**
 * The archive lease: the one rule that every rewrite of stored objects follows
 * (docs/design-and-limits.md, "Writers meet").
 *
 * The projector only ever adds objects (a batch's archive object, its edges, a quarantine record):
 * it never rewrites one, so it takes no lease. Everything that rewrites or replaces an object that
 * already exists under `raw/`, `edge/`, `compact/` or `users/` (an erasure, a compaction, a final
 * pass's day sets, a repair or a migration of the archive) does it inside `withArchiveLease`, so that
 * no two of them interleave. The lease is one item of the activity table (pk `_lock`, sk `archive`):
 * one conditional write to take it, one to renew it, one to release it. A holder that crashes
 * leaves a lease that lapses after `ARCHIVE_LEASE_MS`; a long holder renews it as it goes.
 *
 * Table items follow the other half of the rule: every writer of a projection item, the erasure
 * included, writes it conditionally on the `rev` it read and bumps it (`dynamo-item-store.ts`).
 */
const LEASE_KEY = { pk: "_lock", sk: "archive" };

/** How long the lease holds without its holder renewing it (a crashed holder's lease lapses). */
export const ARCHIVE_LEASE_MS = 15 * 60_000;

/** The lease is held by another rewrite of the archive (an erasure, a compaction, a final pass…). */
export class ArchiveLockedError extends Error {
  constructor(readonly holder: string) {
    super(`the archive is being rewritten by ${holder}: try again when it ends`);
    this.name = "ArchiveLockedError";
  }
}

/** Where the lease lives: the activity table. */
export interface LeaseTable {
  doc: DynamoDBDocumentClient;
  tableName: string;
}

/** The archive lease, as every rewriter takes it. */
export interface ArchiveLease {
  /** Takes (or renews) it for `holder`, or throws `ArchiveLockedError` (held by another). */
  acquire(holder: string): Promise<void>;
  /** Releases it if `holder` still holds it. */
  release(holder: string): Promise<void>;
}

/**
 * Takes the lease for `holder` (`erasure <id>`, `compaction <day>`): free, lapsed
 * (`ARCHIVE_LEASE_MS`) or already this holder's (a renewal, or a re-run of the same erasure),
 * else `ArchiveLockedError`. One conditional write.
 */
export async function acquireArchiveLease(table: LeaseTable, holder: string, now: number): Promise<void> {
  try {
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...LEASE_KEY, holder, expiresAt: now + ARCHIVE_LEASE_MS },
        ConditionExpression: "attribute_not_exists(pk) OR expiresAt < :now OR holder = :holder",
        ExpressionAttributeValues: { ":now": now, ":holder": holder },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const current = await table.doc.send(new GetCommand({ TableName: table.tableName, Key: LEASE_KEY }));
    throw new ArchiveLockedError(String(current.Item?.holder ?? "another rewrite"));
  }
}

/** Releases the lease if `holder` still holds it. */
export async function releaseArchiveLease(table: LeaseTable, holder: string): Promise<void> {
  try {
    await table.doc.send(
      new DeleteCommand({
        TableName: table.tableName,
        Key: LEASE_KEY,
        ConditionExpression: "holder = :holder",
        ExpressionAttributeValues: { ":holder": holder },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/**
 * The archive lease in the activity table.
 *
 * @example const lease = archiveLease(table, Date.now); await withArchiveLease(lease, "compaction 2026-01-02", Date.now, work)
 */
export function archiveLease(table: LeaseTable, now: () => number): ArchiveLease {
  return {
    acquire: (holder) => acquireArchiveLease(table, holder, now()),
    release: (holder) => releaseArchiveLease(table, holder),
  };
}

/**
 * Runs `work` holding the lease for `holder`, and releases it after (also when `work` throws).
 * `work` is given `renew`, to call between its steps: it renews the lease once a third of it has
 * passed, so a long rewrite keeps it (and a lease lost meanwhile, to a lapse, throws there before
 * the next change). Throws `ArchiveLockedError` without running `work` when another holds it.
 *
 * @example await withArchiveLease(lease, `erasure ${id}`, Date.now, async (renew) => { for (const step of steps) { await renew(); await step(); } })
 */
export async function withArchiveLease<T>(
  lease: ArchiveLease,
  holder: string,
  now: () => number,
  work: (renew: () => Promise<void>) => Promise<T>,
): Promise<T> {
  await lease.acquire(holder);
  let leasedAt = now();
  const renew = async () => {
    if (now() - leasedAt <= ARCHIVE_LEASE_MS / 3) return;
    await lease.acquire(holder);
    leasedAt = now();
  };
  try {
    return await work(renew);
  } finally {
    await lease.release(holder);
  }
}
