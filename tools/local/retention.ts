import { readFileSync } from "node:fs";
import { DeleteObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { type DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { itemExpiryDays, readDeploymentConfig } from "../../infra/config";
import { rewriteItem } from "../../shared/adapters/dynamo-item-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { dayOfKey } from "../../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../../shared/platform/constants";
import { keyOfItem, PROJECTION_TABLES, type TableNames } from "../../shared/platform/tables";
import { EXPIRES_AT } from "../../shared/projector/expiry";

/**
 * The deployment's retention windows as the local stack applies them (#34): the same context
 * keys as `cdk deploy` (cdk.json's context), so that a laptop keeps data as long as the stack
 * it stands for. S3 and DynamoDB do this deployed (lifecycle rules, TTL); fauxqs and DynamoDB
 * Local do neither, so `applyRetention` does, on start and every hour.
 */
export interface RetentionWindows {
  /** Days per bucket prefix (absent: kept). */
  prefixes: Partial<
    Record<
      "raw/" | "edge/" | "compact/" | "users/" | "imports/" | "quarantine/" | "oversize/" | "recordings/",
      number
    >
  >;
  /** Days a closed item of each table stays: items carry their `expiresAt` (the projector sets it). */
  items: Partial<Record<keyof TableNames, number>>;
}

/**
 * The windows of a deployment's context (cdk.json's `context`, the `-c` keys), validated as a
 * deployment validates them.
 *
 * @example retentionWindows({ retainArchiveDays: 400 }).prefixes["raw/"] // 400
 */
export function retentionWindows(context: Record<string, unknown>): RetentionWindows {
  const c = readDeploymentConfig(context);
  return {
    prefixes: {
      [S3_PREFIX.raw]: c.retainArchiveDays,
      [S3_PREFIX.edge]: c.retainArchiveDays,
      [S3_PREFIX.compact]: c.retainArchiveDays,
      [S3_PREFIX.users]: c.retainArchiveDays,
      [S3_PREFIX.imports]: c.retainArchiveDays,
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

/**
 * The day a key is dated by: `date=<yyyy-mm-dd>/` (archive, edges, Parquet, quarantine) or
 * `/<yyyy>/<mm>/<dd>/` (oversize bodies, recordings).
 */
export function keyDay(key: string): string | undefined {
  const hive = dayOfKey(key);
  if (hive) return hive;
  const path = /\/(\d{4})\/(\d{2})\/(\d{2})\//.exec(key);
  return path ? `${path[1]}-${path[2]}-${path[3]}` : undefined;
}

/**
 * Whether S3's lifecycle would have expired an object dated `day` by `now` after `days`: at the
 * first midnight (UTC) after its day plus the window, as S3 rounds.
 */
export function isExpired(day: string, days: number, now: number): boolean {
  return Date.parse(`${day}T00:00:00Z`) + (days + 1) * 86_400_000 <= now;
}

export interface RetentionReport {
  objectsDeleted: number;
  itemsDeleted: number;
}

/**
 * Deletes what the windows say is past keeping: the bucket's objects by the day in their key,
 * the tables' items whose `expiresAt` has passed (one Scan per table that has a window: the local
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
