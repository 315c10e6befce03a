import { AthenaClient } from "@aws-sdk/client-athena";
import type { Context } from "aws-lambda";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { archiveExpirySweep } from "../../shared/analytics/archive-expiry";
import { athenaCompactor } from "../../shared/analytics/engines/athena-compactor";
import { athenaEngine } from "../../shared/analytics/engines/athena-sql-engine";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { s3UserSets } from "../../shared/analytics/user-sets";
import { loadRollupConfig } from "../../shared/config/function-config";
import { ROLLUP_DEADLINE_MARGIN_MS } from "../../shared/platform/constants";
import { dynamoClient } from "../../shared/platform/dynamo-client";
import { errorSummary } from "../../shared/platform/errors";
import { countOutcome, observability, putSilentApps } from "../../shared/platform/observability";
import { s3Client } from "../../shared/platform/s3-client";
import { silenceLogFields } from "../../shared/watchdog/log-fields";
import { type WatchedRollupReport, watchedRollup } from "../../shared/watchdog/scheduled";

// Cold start: configuration and clients are built once per container.
const config = loadRollupConfig(process.env);
const { logger, metrics } = observability("rollup");
const s3 = s3Client(config.aws);
const athena = new AthenaClient({});
const activityDoc = documentClient(dynamoClient(config.aws));
const store = dynamoActivityStore(activityDoc, config.activityTable);
// A final pass (the day sets) and a compaction never run while an erasure (`webhook forget`) or a
// repair rewrites the archive.
const lock = archiveLease({ doc: activityDoc, tableName: config.activityTable }, Date.now);
const ledger = blobRollupLedger(s3BlobStore(s3, config.dataBucket));
// With a retention, what expired by the day in its key is swept once a day (a rewrite resets S3's
// lifecycle clock, not the key's day).
const expirySweep =
  config.archiveDays === undefined
    ? undefined
    : archiveExpirySweep(s3, config.dataBucket, config.archiveDays);

/**
 * Schedule (EventBridge) → recompute yesterday (until final) and today of every app in the
 * archive, one query a day for every app (`scheduledRollup`), and compact yesterday to Parquet
 * once final (Athena CTAS); a compacted day is read from its Parquet (`archive` of the engine);
 * then, once a day, sweep the archive of what expired by the day in its keys. A day that fails is counted
 * (`ActivityRollups` failed: the alarm) and left as it was; the run then fails too, so Lambda's
 * Errors metric shows it. A failure around the days (reading the archive or the ledger) is counted
 * the same way. No query runs past the invocation's remaining time less a margin (the Athena
 * engine stops it): a slow cycle fails its last days, counted, instead of being killed by the
 * timeout with nothing said. Then the apps silent now: the `SilentApps` metric (alarmed) and a
 * WARN line 'apps silent' naming them, since when and for how long.
 */
export const handler = async (_event: unknown, context: Pick<Context, "getRemainingTimeInMillis">) => {
  const athenaOptions = {
    client: athena,
    workGroup: config.athenaWorkGroup,
    database: config.glueDatabase,
    deadline: Date.now() + context.getRemainingTimeInMillis() - ROLLUP_DEADLINE_MARGIN_MS,
  };
  const engine = athenaEngine({ ...athenaOptions, archive: { s3, bucket: config.dataBucket } });
  const deps = {
    engine,
    store,
    now: Date.now,
    graceMs: config.graceMs,
    ledger,
    // A CTAS still running at the deadline is left to run and adopted by a later tick.
    compactor: athenaCompactor({ ...athenaOptions, s3, bucket: config.dataBucket }),
    archiveLock: lock,
    userSets: s3UserSets(s3, config.dataBucket),
    ...(expirySweep ? { expirySweep } : {}),
  };
  let report: WatchedRollupReport;
  try {
    report = await watchedRollup(deps);
  } catch (error) {
    countOutcome(metrics, "rollup", "failed");
    logger.error("rollup failed", { outcome: "failed", error: errorSummary(error) });
    throw error;
  }
  for (const pass of report.passes) {
    const { rollups, failures, ...summary } = pass;
    logger.info("rollup pass", { ...summary, apps: rollups.length, failed: failures.length });
    for (const r of rollups) {
      countOutcome(metrics, "rollup", r.outcome);
      if (r.outcome !== "unchanged") logger.info("rollup", { ...r });
    }
  }
  // The watchdog (#52): one value a tick (0 clears the alarm), which apps and since when in one line.
  if (report.silence) {
    putSilentApps(metrics, report.silence.silent.length);
    if (report.silence.silent.length) logger.warn("apps silent", silenceLogFields(report.silence));
  }
  // An erasure, a repair or a replay held the archive: those days wait for a later tick (not a failure).
  for (const day of report.passesDeferred)
    logger.info("pass deferred: the archive is being rewritten", { day, outcome: "deferred" });
  for (const day of report.compactionsDeferred)
    logger.info("compaction deferred: the archive is being rewritten", { day, outcome: "deferred" });
  for (const day of report.sweepsDeferred)
    logger.info("expiry sweep deferred: the archive is being rewritten", { day, outcome: "deferred" });
  if (report.sweep)
    logger.info("expiry sweep", {
      swept: report.sweep.swept.length,
      objectsDeleted: report.sweep.objectsDeleted,
      importRecordsCarried: report.sweep.carried,
      requests: report.sweep.requests,
    });
  for (const c of report.compactions)
    logger.info("compacted", {
      day: c.day,
      parquet: c.parquet.length,
      sources: c.sources.length,
      bytes: c.bytes,
    });
  for (const f of report.failures) {
    countOutcome(metrics, "rollup", "failed");
    logger.error("rollup failed", {
      appId: f.appId,
      day: f.day,
      outcome: "failed",
      error: errorSummary(f.error),
    });
  }
  if (report.failures.length) throw new Error(`${report.failures.length} day(s) could not be recomputed`);
};
