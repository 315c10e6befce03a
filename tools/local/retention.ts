import { readFileSync } from "node:fs";
import { DeleteObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { type DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { EXPIRES_AT } from "@webhook-backend/stream/projections/registry";
import { itemExpiryDays, readDeploymentConfig } from "../../infra/config";
import { rewriteItem } from "../../shared/adapters/dynamo-item-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { isExpired, keyDay } from "../../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../../shared/platform/constants";
import { keyOfItem, PROJECTION_TABLES, type TableNames } from "../../shared/platform/tables";

/**
 * The deployment's retention windows as the local stack applies them (#34): the same context
 * keys as `cdk deploy` (cdk.json's context), so that a laptop keeps data as long as the stack
 * it stands for. S3 and DynamoDB do this deployed (lifecycle rules, TTL); fauxqs and DynamoDB
 * Local do neither, so `applyRetention` does, on start and every hour; and the archive, as
 * deployed, is swept by the day in its keys by the rollup timer's schedule, under the archive
 * lease (`archiveDays`: `shared/analytics/archive-expiry.ts`, the same function as deployed).
 */
export interface RetentionWindows {
  /**
   * Days the archive and what is dated with it (raw/, edge/, compact/, users/, imports/) are
   * kept (absent: kept): swept once a day by the rollup timer (`startLocalRollups`), as the
   * deployed schedule sweeps them; with the timer off (`--activity-every 0`), not swept.
   */
  archiveDays?: number;
  /** Days per bucket prefix keyed by app first (absent: kept): deleted by `applyRetention`. */
  prefixes: Partial<Record<"quarantine/" | "oversize/" | "recordings/", number>>;
  /** Days a closed item of each table stays: items carry their `expiresAt` (the projector sets it). */
  items: Partial<Record<keyof TableNames, number>>;
}

/**
 * The windows of a deployment's context (cdk.json's `context`, the `-c` keys), validated as a
 * deployment validates them.
 *
 * @example retentionWindows({ retainArchiveDays: 400 }).archiveDays // 400
 */
export function retentionWindows(context: Record<string, unknown>): RetentionWindows {
  const c = readDeploymentConfig(context);
  return {
    archiveDays: c.retainArchiveDays,
    prefixes: {
      [S3_PREFIX.quarantine]: c.retainQuarantineDays,
      [S3_PREFIX.oversize]: c.retainOversizeDays,
      [S3_PREFIX.recordings]: c.retainRecordingsDays,
    },
    items: itemExpiryDays(c),
  };
}

/** The windows cdk.json's context sets (the project's own, or `path`'s). */
export function cdkJsonWindows(path = new URL("../../cdk.json", import.meta.url)): RetentionWindows {
  const json = JSON.parse(readFileSync(path, "utf8")) as { context?: Record<string, unknown> };
  return retentionWindows(json.context ?? {});
}

export interface RetentionReport {
  objectsDeleted: number;
  itemsDeleted: number;
}

/**
 * Deletes what the windows say is past keeping: the objects of the prefixes keyed by app first by
 * the day in their key (`keyDay`; the archive is the rollup timer's sweep), the tables' items whose `expiresAt` has passed (one Scan per table that has a window: the local
 * stack's tables are small, and DynamoDB Local never deletes by TTL itself), each on the `rev` it
 * read and only if still expired then (`rewriteItem`).
 */
export async function applyRetention(
  deps: { s3: S3Client; bucket: string; doc: DynamoDBDocumentClient; tables: TableNames },
  windows: RetentionWindows,
  now: number,
): Promise<RetentionReport> {
  const report: RetentionReport = { objectsDeleted: 0, itemsDeleted: 0 };
  for (const [prefix, days] of Object.entries(windows.prefixes)) {
    if (days === undefined) continue;
    for (const { key } of await listObjects(deps.s3, deps.bucket, prefix)) {
      const day = keyDay(key);
      if (!day || !isExpired(day, days, now)) continue;
      await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key }));
      report.objectsDeleted++;
    }
  }
  const nowSeconds = Math.floor(now / 1000);
  for (const table of Object.keys(windows.items) as Array<keyof TableNames>) {
    const def = PROJECTION_TABLES[table];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const out = await deps.doc.send(
        new ScanCommand({
          TableName: deps.tables[table],
          FilterExpression: "#e < :now",
          ExpressionAttributeNames: { "#e": EXPIRES_AT },
          ExpressionAttributeValues: { ":now": nowSeconds },
          ExclusiveStartKey,
        }),
      );
      // Each deleted as every writer of an item writes (`rewriteItem`: on the `rev` read, read
      // again on a conflict) and only while still past its expiry, as DynamoDB's TTL checks it: an
      // item the projector opened again since the Scan (a user back online) is kept.
      for (const item of out.Items ?? []) {
        const outcome = await rewriteItem(
          deps.doc,
          def,
          deps.tables[table],
          keyOfItem(def, item),
          (current) => (Number(current[EXPIRES_AT]) < nowSeconds ? null : undefined),
        );
        if (outcome === "deleted") report.itemsDeleted++;
      }
      ExclusiveStartKey = out.LastEvaluatedKey;
    } while (ExclusiveStartKey);
  }
  return report;
}
