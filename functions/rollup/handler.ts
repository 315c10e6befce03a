import { AthenaClient } from "@aws-sdk/client-athena";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { athenaEngine } from "../../shared/analytics/engines/athena-sql-engine";
import { scheduledRollup } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { loadRollupConfig } from "../../shared/config/function-config";
import { dynamoClient } from "../../shared/platform/aws-clients";
import { errorSummary } from "../../shared/platform/errors";
import { countOutcome, observability } from "../../shared/platform/observability";
import { s3Client } from "../../shared/platform/s3-client";

// Cold start: configuration and clients are built once per container.
const config = loadRollupConfig(process.env);
const { logger, metrics } = observability("rollup");
const s3 = s3Client(config.aws);
const deps = {
  engine: athenaEngine({
    client: new AthenaClient({}),
    workGroup: config.athenaWorkGroup,
    database: config.glueDatabase,
  }),
  store: dynamoActivityStore(documentClient(dynamoClient(config.aws)), config.activityTable),
  now: Date.now,
  graceMs: config.graceMs,
  ledger: blobRollupLedger(s3BlobStore(s3, config.dataBucket)),
};

/**
 * Schedule (EventBridge) → recompute yesterday (until final) and today of every app in the
 * archive, one query a day for every app (`scheduledRollup`). A day that fails is counted
 * (`ActivityRollups` failed: the alarm) and left as it was; the run then fails too, so Lambda's
 * Errors metric shows it.
 */
export const handler = async () => {
  const report = await scheduledRollup(deps);
  for (const pass of report.passes) {
    const { rollups, failures, ...summary } = pass;
    logger.info("rollup pass", { ...summary, apps: rollups.length, failed: failures.length });
    for (const r of rollups) {
      countOutcome(metrics, "rollup", r.outcome);
      if (r.outcome !== "unchanged") logger.info("rollup", { ...r });
    }
  }
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
