import type { S3Client } from "@aws-sdk/client-s3";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { rollupDayAllApps } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
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
 * archive is recomputed with DuckDB, every app in one query (one run at a time). A failed run is shown as a WARN line,
 * like a function's. Returns a stop that waits for a run in progress.
 */
export function startLocalRollups(options: LocalRollupOptions): () => Promise<void> {
  const now = options.now ?? Date.now;
  const deps = {
    engine: duckDbEngine({ s3: options.s3, bucket: options.bucket }),
    store: dynamoActivityStore(options.doc, options.activityTable),
    now,
    graceMs: options.graceMs,
    ledger: blobRollupLedger(s3BlobStore(options.s3, options.bucket)),
  };
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = running.then(async () => {
      try {
        const pass = await rollupDayAllApps(utcDay(now()), deps);
        if (pass.failures[0]) throw pass.failures[0].error;
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
