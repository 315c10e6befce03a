import { createHash } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { daysInRange, rollupDays } from "../../shared/analytics/rollup";
import type { ActivityStore } from "../../shared/analytics/store/activity-store";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { commandLeaseWait } from "../analytics/engines";
import { emulatorClients } from "../local/clients";
import { localActivityTableName } from "../local/provision";
import type { LocalStackInfo } from "../local/state";
import { scanArchive } from "../ops/archive-scan";
import { checkActivity } from "./check";
import { expectedActivity } from "./expected-activity";
import type { GeneratedHistory } from "./generator";

/**
 * After a simulation against the local stack: recomputes the days of the history (DuckDB) and
 * checks the activity table against what the history implies. Each event's first receipt is
 * read from the archive (the edge stamps it; membership events fall on it).
 */
export async function rollupAndCheckActivity(
  stack: LocalStackInfo,
  history: GeneratedHistory,
): Promise<string[]> {
  const { s3, dynamo, destroy } = emulatorClients(stack.endpoints);
  try {
    const receivedAt = await firstReceipts(s3, stack.bucket, history);
    const days = new Set<string>();
    for (const appDays of expectedActivity(history.events, receivedAt).values())
      for (const day of appDays.keys()) days.add(day);
    const { store } = await rollupDaysOf(stack, [...days].sort(), { s3, dynamo });
    return await checkActivity(history, store, receivedAt);
  } finally {
    destroy();
  }
}

/**
 * After a simulation of days (`--days`): its days, from its first event's to today, rolled up over
 * every app as `webhook rollup --from … --to today` does (its passes recorded in the rollup's
 * ledger: what the watchdog judges silence from). The days it rolled up.
 */
export async function rollupHistory(
  stack: LocalStackInfo,
  history: GeneratedHistory,
): Promise<{ from: string; to: string }> {
  const first = Math.min(...history.events.map((e) => e.at));
  const days = daysInRange(utcDay(first), utcDay(Date.now()));
  const { s3, dynamo, destroy } = emulatorClients(stack.endpoints);
  try {
    await rollupDaysOf(stack, days, { s3, dynamo });
    return { from: days[0] as string, to: days.at(-1) as string };
  } finally {
    destroy();
  }
}

/** Each event's first receipt, read from the archive (`NaN` for one not archived). */
async function firstReceipts(s3: S3Client, bucket: string, history: GeneratedHistory) {
  const firstReceipt = new Map<string, number>();
  await scanArchive(s3, bucket, {}, "oldest", (line) => {
    if (line.appId !== undefined && history.expected.has(line.appId))
      firstReceipt.set(line.eventId, Math.min(firstReceipt.get(line.eventId) ?? Infinity, line.receivedAt));
  });
  return (e: { body: string }) =>
    firstReceipt.get(createHash("sha256").update(e.body).digest("hex")) ?? Number.NaN;
}

/** Days rolled up over every app, one pass a day as the schedule runs it, its ledger written; the first failure thrown. */
async function rollupDaysOf(
  stack: LocalStackInfo,
  days: string[],
  { s3, dynamo }: { s3: S3Client; dynamo: DynamoDBClient },
): Promise<{ store: ActivityStore }> {
  const doc = documentClient(dynamo);
  const tableName = stack.activityTable ?? localActivityTableName("local");
  const store = dynamoActivityStore(doc, tableName);
  const report = await rollupDays(days, {
    engine: duckDbEngine({ s3, bucket: stack.bucket }),
    store,
    now: Date.now,
    graceMs: 2 * 3_600_000,
    // Its figures meet the stack's own writers (its rollup timer, an erasure): under the lease, as a command.
    archiveLock: archiveLease({ doc, tableName }, Date.now, commandLeaseWait()),
    ledger: blobRollupLedger(s3BlobStore(s3, stack.bucket)),
  });
  if (report.failures[0]) throw report.failures[0].error;
  return { store };
}
