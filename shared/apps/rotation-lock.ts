import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import {
  holdingLease,
  type LeaseItem,
  leaseEnd,
  releaseLease,
  renewLease,
  takeLease,
} from "../adapters/table-lease";
import { CredentialRotationError } from "../platform/errors";

/**
 * One credential rotation at a time (#50, defect 5). A rotation reads the deployment's credential
 * list, and writes it whole, twice (the new credentials added, then the old ones removed); Secrets
 * Manager's PutSecretValue has no condition, and neither has the local stack's file. Two rotations
 * at once would each write the list it read: the second's write drops the credential the first
 * added while the first points its apps at it (401, then lost deliveries). So a rotation (and a
 * `--restore`) holds a lease, one item of the apps table (`appId` `_lock`, `record` `rotation`:
 * no app record, so no reader of the apps lists it), taken with a conditional write before the
 * store is read and renewed, only as its holder, before each write; a second rotation is refused
 * at once, naming the first and until when its lease runs (a rotation takes minutes: waiting for
 * it, then rotating again what it just rotated, is not what was asked). A rotation killed midway
 * leaves the lease to lapse (`ROTATION_LEASE_MS`) and its half-way state to the next run, which
 * resumes it.
 */

/** The lease's item in the apps table. */
export const ROTATION_LOCK_KEY = { appId: "_lock", record: "rotation" } as const;

/** How long the lease holds without its holder renewing it (a killed rotation's lapses). */
export const ROTATION_LEASE_MS = 15 * 60_000;

/** Another rotation of the same deployment's credentials holds the lease: this one changes nothing. */
export class RotationLockedError extends CredentialRotationError {
  override name = "RotationLockedError";
  constructor(
    readonly holder: string,
    readonly until: number,
  ) {
    super(
      `another rotation of this deployment's credentials is under way (${holder}, its lease running until ${leaseEnd(until)} unless renewed): nothing was changed; run again once it ends (a rotation that was stopped lets its lease lapse then, and the next run resumes what it left)`,
    );
  }
}

/** The rotation lease, as a rotation holds it. */
export interface RotationLock {
  /** Takes it for `holder`, or throws `RotationLockedError`. */
  take(holder: string): Promise<void>;
  /** Renews it, only as `holder`, or throws a `CredentialRotationError` (it lapsed and another took it). */
  renew(holder: string): Promise<void>;
  /** Releases it if `holder` still holds it. */
  release(holder: string): Promise<void>;
  /** A run's id, appended to its name. @default 8 random hex digits (a test passes seeded ones) */
  runId?: () => string;
}

/**
 * The rotation lease in the apps table (DynamoDB: deployed, or DynamoDB Local for the local stack).
 *
 * @example const lock = dynamoRotationLock(documentClient(dynamo), appsTable)
 */
export function dynamoRotationLock(
  doc: DynamoDBDocumentClient,
  tableName: string,
  now: () => number = Date.now,
): RotationLock {
  const item: LeaseItem = { doc, tableName, key: { ...ROTATION_LOCK_KEY } };
  return {
    async take(holder) {
      const held = await takeLease(item, holder, now(), ROTATION_LEASE_MS);
      if (held) throw new RotationLockedError(held.holder, held.expiresAt);
    },
    async renew(holder) {
      const lost = await renewLease(item, holder, now(), ROTATION_LEASE_MS);
      if (lost !== undefined)
        throw new CredentialRotationError(
          `the rotation lease of ${holder} lapsed (not renewed for ${ROTATION_LEASE_MS / 60_000} minutes) and ${lost ? `is held by ${lost.holder}` : "was taken by another rotation meanwhile"}: stopped before writing the credential store; run again to resume`,
        );
    },
    release: (holder) => releaseLease(item, holder),
  };
}

/**
 * Runs `work` holding the rotation lease as this run (`name` and a run id: `holdingLease`),
 * releasing it after; `work` gets `renew`, to call before each write of the credential store and
 * as it waits (it renews once a third of the lease has passed).
 *
 * @example await withRotationLock(lock, "rotate-credentials", Date.now, async (renew) => { await renew(); await store.write(list) })
 * @throws RotationLockedError, before `work` starts, when another rotation holds it
 */
export function withRotationLock<T>(
  lock: RotationLock,
  name: string,
  now: () => number,
  work: (renew: () => Promise<void>) => Promise<T>,
): Promise<T> {
  return holdingLease(lock, name, now, ROTATION_LEASE_MS, work);
}
