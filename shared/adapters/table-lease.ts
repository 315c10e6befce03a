import { randomBytes } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";

/**
 * A lease as one item of a DynamoDB table (`holder`, `expiresAt` epoch ms): the archive lease
 * (`archive-lease.ts`, the activity table's `_lock`/`archive`) and the credential rotation's
 * (`shared/apps/rotation-lock.ts`, the apps table's `_lock`/`rotation`). Three conditional writes:
 * take it (free or lapsed), renew it (only as its holder), release it (only as its holder).
 *
 * Renewing is not taking: a holder whose lease lapsed and was taken by another (then perhaps
 * released) must learn it before its next change, not take it back as if nothing happened. The
 * item names its holder; a holder's renewal is conditional on that name, so it succeeds exactly
 * when no other run took the lease since this one's last write (taking it rewrites the name,
 * releasing it deletes the item).
 */

/** Where a lease lives: a table and the key of its item. */
export interface LeaseItem {
  doc: DynamoDBDocumentClient;
  tableName: string;
  key: Record<string, string>;
}

/** Who holds a lease, and until when unless renewed (epoch ms). */
export interface LeaseState {
  holder: string;
  expiresAt: number;
}

/** The lease as it stands (a consistent read), or undefined when free. */
export async function readLease(item: LeaseItem): Promise<LeaseState | undefined> {
  const out = await item.doc.send(
    new GetCommand({ TableName: item.tableName, Key: item.key, ConsistentRead: true }),
  );
  const holder = out.Item?.holder;
  if (typeof holder !== "string") return undefined;
  const expiresAt = out.Item?.expiresAt;
  return { holder, expiresAt: typeof expiresAt === "number" ? expiresAt : 0 };
}

/**
 * Takes the lease for `holder` for `ms` from `now` when it is free or lapsed: undefined when
 * taken, else who holds it (and until when). One conditional write (and a read when refused).
 *
 * @example await takeLease(item, "compaction 2026-01-02 1f3a9c0e", Date.now(), 900_000) // undefined: taken
 */
export async function takeLease(
  item: LeaseItem,
  holder: string,
  now: number,
  ms: number,
): Promise<LeaseState | undefined> {
  try {
    await item.doc.send(
      new PutCommand({
        TableName: item.tableName,
        Item: { ...item.key, holder, expiresAt: now + ms },
        ConditionExpression: "attribute_not_exists(holder) OR expiresAt < :now",
        ExpressionAttributeValues: { ":now": now },
      }),
    );
    return undefined;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // Released between the write and this read: say who held it as "another run".
    return (await readLease(item)) ?? { holder: "another run", expiresAt: now };
  }
}

/**
 * Renews the lease for `ms` from `now`, only if `holder` still holds it (lapsed or not: a lapsed
 * lease that still names its holder was taken by no one since). Undefined when renewed; else the
 * lease as it stands (another holder's), or null when it is free (taken and released meanwhile).
 *
 * @example await renewLease(item, holder, Date.now(), 900_000) // undefined: renewed
 */
export async function renewLease(
  item: LeaseItem,
  holder: string,
  now: number,
  ms: number,
): Promise<LeaseState | null | undefined> {
  try {
    await item.doc.send(
      new UpdateCommand({
        TableName: item.tableName,
        Key: item.key,
        UpdateExpression: "SET expiresAt = :until",
        ConditionExpression: "holder = :holder",
        ExpressionAttributeValues: { ":until": now + ms, ":holder": holder },
      }),
    );
    return undefined;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return (await readLease(item)) ?? null;
  }
}

/** Releases the lease if `holder` still holds it (another's is left as it is). */
export async function releaseLease(item: LeaseItem, holder: string): Promise<void> {
  try {
    await item.doc.send(
      new DeleteCommand({
        TableName: item.tableName,
        Key: item.key,
        ConditionExpression: "holder = :holder",
        ExpressionAttributeValues: { ":holder": holder },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** `2026-01-02T03:04:05Z`: a lease's end as a message says it. */
export function leaseEnd(at: number): string {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A lease as a run holds it: take, renew (only as its holder), release. */
export interface HeldLease {
  /** Takes it for `holder`, or throws (held by another). */
  take(holder: string): Promise<void>;
  /** Renews it, only as `holder`, or throws (it lapsed and another took it). */
  renew(holder: string): Promise<void>;
  release(holder: string): Promise<void>;
  /** A run's id, appended to its name. @default 8 random hex digits (a test passes seeded ones) */
  runId?: () => string;
}

/**
 * Runs `work` holding `lease` as this run (`name` and 8 random hex digits: two runs of one
 * command never both hold it, and the first to end never releases the other's), and releases it
 * after (also when `work` throws). `work` gets `renew`, to call before each change and as a long
 * step goes: it renews the lease once a third of `ms` has passed since the last renewal (before
 * that, the lease cannot have lapsed), so a lost lease throws there, before the next change.
 *
 * @example await holdingLease(lease, "rotate-credentials", Date.now, 900_000, async (renew) => { await renew(); await write() })
 */
export async function holdingLease<T>(
  lease: HeldLease,
  name: string,
  now: () => number,
  ms: number,
  work: (renew: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const holder = `${name} ${lease.runId?.() ?? randomBytes(4).toString("hex")}`;
  await lease.take(holder);
  let renewedAt = now();
  const renew = async () => {
    if (now() - renewedAt <= ms / 3) return;
    await lease.renew(holder);
    renewedAt = now();
  };
  try {
    return await work(renew);
  } finally {
    await lease.release(holder);
  }
}
