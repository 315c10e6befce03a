import type { S3Client } from "@aws-sdk/client-s3";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { listArchiveApps } from "../../shared/adapters/s3-listing";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { rollupDay } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { errorSummary } from "../../shared/platform/errors";

export interface LocalRollupOptions {
  s3: S3Client;
  bucket: string;
  doc: DynamoDBDocumentClient;
  activityTable: string;
  everyMs: number;
  graceMs: number;
  now?: () => number;
}

/**
 * `npm start`'s stand-in for the deployed schedule: every `everyMs`, today of every app in the
 * archive is recomputed with DuckDB (one run at a time). A failed run is shown as a WARN line,
 * like a function's. Returns a stop that waits for a run in progress.
 */
export function startLocalRollups(options: LocalRollupOptions): () => Promise<void> {
  const now = options.now ?? Date.now;
  const deps = {
    engine: duckDbEngine({ s3: options.s3, bucket: options.bucket }),
    store: dynamoActivityStore(options.doc, options.activityTable),
    now,
    graceMs: options.graceMs,
  };
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = running.then(async () => {
      try {
        for (const appId of await listArchiveApps(options.s3, options.bucket))
          await rollupDay(appId, utcDay(now()), deps);
      } catch (error) {
        console.error(
          JSON.stringify({
            level: "WARN",
            service: "rollup",
            message: "local rollup failed; the next run recomputes the day",
            outcome: "failed",
            timestamp: new Date().toISOString(),
            error: errorSummary(error),
          }),
        );
      }
    });
  };
  const timer = setInterval(tick, options.everyMs);
  return async () => {
    clearInterval(timer);
    await running;
  };
}
