import type { S3Client } from "@aws-sdk/client-s3";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { archiveExpirySweep } from "../../shared/analytics/archive-expiry";
import { duckDbCompactor } from "../../shared/analytics/engines/duckdb-compactor";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { s3UserSets } from "../../shared/analytics/user-sets";
import { errorSummary } from "../../shared/platform/errors";
import { duration, silenceLogFields } from "../../shared/watchdog/log-fields";
import { watchedRollup } from "../../shared/watchdog/scheduled";
import type { SilenceReport } from "../../shared/watchdog/silence";

export interface LocalRollupOptions {
  s3: S3Client;
  bucket: string;
  doc: DynamoDBDocumentClient;
  activityTable: string;
  everyMs: number;
  graceMs: number;
  /** Days the archive is kept (`retainArchiveDays`): swept by the day in its keys once a day. None: kept. */
  archiveDays?: number;
  now?: () => number;
  /** Each run's silent apps (the status line's `silent N`). */
  onSilence?: (report: SilenceReport) => void;
}

/** The local rollup's line of the silent apps, in the functions' JSON form (the log tap shows its `detail`). */
export function silenceLine(report: SilenceReport): Record<string, unknown> {
  const [first, ...rest] = report.silent;
  return {
    level: first ? "WARN" : "INFO",
    service: "rollup",
    message: first ? "apps silent" : "no app is silent any more",
    timestamp: new Date(report.at).toISOString(),
    ...silenceLogFields(report),
    ...(first
      ? {
          detail: `${first.appId} silent for ${duration(first.silentForMs)} (since ${new Date(first.lastSeenAt).toISOString().slice(11, 16)}Z)${rest.length ? ` and ${rest.length} more` : ""}: npx webhook apps --silent`,
        }
      : {}),
  };
}

/**
 * `npm start`'s stand-in for the deployed schedule (`scheduledRollup`): every `everyMs`, today
 * and yesterday (until final) of every app in the archive are recomputed with DuckDB, every app
 * in one query a day (one run at a time), and yesterday, once final, is compacted to Parquet and
 * the archive swept of what expired by the day in its keys (`archiveDays`). A failed run is shown as a WARN line,
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
    compactor: duckDbCompactor({ s3: options.s3, bucket: options.bucket }),
    archiveLock: archiveLease({ doc: options.doc, tableName: options.activityTable }, now),
    userSets: s3UserSets(options.s3, options.bucket),
    ...(options.archiveDays === undefined
      ? {}
      : { expirySweep: archiveExpirySweep(options.s3, options.bucket, options.archiveDays) }),
  };
  let running: Promise<void> = Promise.resolve();
  let silentBefore = "";
  const tick = () => {
    running = running.then(async () => {
      try {
        const report = await watchedRollup(deps);
        // The watchdog (#52): a WARN line when the silent apps change (as the deployed rollup's
        // 'apps silent' line), and one when none is silent any more; the status line shows how many.
        if (report.silence) {
          const silent = report.silence.silent.map((s) => s.appId).join(",");
          if (silent !== silentBefore) console.error(JSON.stringify(silenceLine(report.silence)));
          silentBefore = silent;
          options.onSilence?.(report.silence);
        }
        if (report.failures[0]) throw report.failures[0].error;
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
