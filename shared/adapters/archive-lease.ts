import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";

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
 * one conditional write to take it, one to renew it, one to release it. A holder that crashes
 * leaves a lease that lapses after `ARCHIVE_LEASE_MS`; a long holder renews it as it goes.
 *
 * Each run holds it under a name of its own (`compaction 2026-01-02 1f3a9c0e`: the run id appended
 * by `withArchiveLease`), so that two runs of the same command never both "hold" it and the first
 * to end never releases the other's. Only an erasure keeps its name as given (`resumable`): its
 * re-run after a crash resumes the lease its first run left.
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
  /** How long it waits at most (ms, on the clock `withArchiveLease` is given), then `ArchiveLockedError`. */
  forMs: number;
  /** Told once, the first time the lease is found held, who holds it (a command prints it). */
  onHeld?: (holder: string) => void;
  /** How it waits between tries. @default node's timers/promises `setTimeout` */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A command's wait: every 2 s, up to 5 minutes. Long enough for the schedule's passes and
 * compactions, which hold the lease for seconds to minutes every tick; an erasure or a repair that
 * holds it longer is named, and the command ends with the clear error.
 */
export const COMMAND_LEASE_WAIT: LeaseWait = { everyMs: 2_000, forMs: 5 * 60_000 };

/** The lease is held by another rewrite of the archive (an erasure, a compaction, a final pass…). */
export class ArchiveLockedError extends Error {
  /** `waitedMs`: how long a command waited for it (`LeaseWait`) before giving up. */
  constructor(
    readonly holder: string,
    readonly waitedMs?: number,
  ) {
    super(
      waitedMs === undefined
        ? `the archive is being rewritten by ${holder}: try again when it ends`
        : `the archive is still being rewritten by ${holder} after ${Math.round(waitedMs / 1000)} s of waiting: try again when it ends`,
    );
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
  /** How `withArchiveLease` waits when it finds it held (a command's lease). None: it does not wait (the schedule). */
  wait?: LeaseWait;
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
 * The archive lease in the activity table; with `wait`, a command's (`COMMAND_LEASE_WAIT`): found
 * held, `withArchiveLease` tries again until it gets it or the wait ends.
 *
 * @example const lease = archiveLease(table, Date.now); await withArchiveLease(lease, "compaction 2026-01-02", Date.now, work)
 * @example const lease = archiveLease(table, Date.now, { ...COMMAND_LEASE_WAIT, onHeld: (h) => console.error(`waiting for ${h}`) })
 */
export function archiveLease(table: LeaseTable, now: () => number, wait?: LeaseWait): ArchiveLease {
  return {
    acquire: (holder) => acquireArchiveLease(table, holder, now()),
    release: (holder) => releaseArchiveLease(table, holder),
    ...(wait ? { wait } : {}),
  };
}

/** A run's own holder name: `holder` and 8 hex digits (`compaction 2026-01-02 1f3a9c0e`). */
export function runHolder(holder: string): string {
  return `${holder} ${randomBytes(4).toString("hex")}`;
}

/**
 * Takes the lease for `holder`; held by another and `lease.wait` set, tries again every
 * `everyMs` (telling `onHeld` who holds it, once) until it gets it, or throws
 * `ArchiveLockedError` (with how long it waited) once `forMs` has passed.
 */
async function takeLease(lease: ArchiveLease, holder: string, now: () => number): Promise<void> {
  const { wait } = lease;
  const since = now();
  let told = false;
  for (;;) {
    try {
      await lease.acquire(holder);
      return;
    } catch (error) {
      if (!(error instanceof ArchiveLockedError) || !wait) throw error;
      const waited = now() - since;
      if (waited >= wait.forMs) throw new ArchiveLockedError(error.holder, waited);
      if (!told) wait.onHeld?.(error.holder);
      told = true;
      await (wait.sleep ?? delay)(wait.everyMs);
    }
  }
}

/**
 * Runs `work` holding the lease as this run (`holder` and a run id of its own, `runHolder`; with
 * `resumable`, `holder` as given: an erasure, whose re-run resumes its lease), and releases it
 * after (also when `work` throws). `work` is given `renew`, to call between its steps: it renews
 * the lease once a third of it has passed, so a long rewrite keeps it (and a lease lost
 * meanwhile, to a lapse, throws there before the next change). Held by another, it waits as the
 * lease says (`lease.wait`: a command), else throws `ArchiveLockedError` without running `work`.
 *
 * @example await withArchiveLease(lease, "compaction 2026-01-02", Date.now, async (renew) => { for (const step of steps) { await renew(); await step(); } })
 * @example await withArchiveLease(lease, `erasure ${id}`, Date.now, work, { resumable: true })
 */
export async function withArchiveLease<T>(
  lease: ArchiveLease,
  name: string,
  now: () => number,
  work: (renew: () => Promise<void>) => Promise<T>,
  { resumable = false }: { resumable?: boolean } = {},
): Promise<T> {
  const holder = resumable ? name : runHolder(name);
  await takeLease(lease, holder, now);
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
