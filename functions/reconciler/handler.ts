import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import { documentClient, dynamoItemStore } from "../../shared/adapters/dynamo-item-store";
import { loadReconcilerConfig } from "../../shared/config/function-config";
import { secretsClient } from "../../shared/platform/aws-clients";
import { dynamoClient } from "../../shared/platform/dynamo-client";
import { errorSummary } from "../../shared/platform/errors";
import { countOutcome, observability } from "../../shared/platform/observability";
import { PRESENCE_TABLE } from "../../shared/platform/tables";
import { reconcileAll } from "../../shared/reconcile/run";
import { recordingApiKeySource } from "../../shared/recorder/secret-api-keys";

// Cold start: configuration and clients are built once per container.
const config = loadReconcilerConfig(process.env);
const { logger, metrics } = observability("reconciler");
const doc = documentClient(dynamoClient(config.aws));
const deps = {
  doc,
  presenceTable: config.presenceTable,
  presence: dynamoItemStore<PresenceState>(doc, PRESENCE_TABLE, config.presenceTable),
  apiKeyFor: recordingApiKeySource(
    { kind: "secret", secretId: config.apiKeysSecretId, cacheSeconds: 300 },
    secretsClient,
  ),
  now: Date.now,
};

/** Schedule (EventBridge) → reconcile the presence of every configured app with the platform's listing. */
export const handler = async () => {
  for (const { appId, summary, error } of await reconcileAll(config.apps, deps)) {
    if (!summary) {
      countOutcome(metrics, "reconciler", "failed");
      logger.error("reconcile failed", { appId, outcome: "failed", error: errorSummary(error) });
      continue;
    }
    countOutcome(metrics, "reconciler", "set-online", summary.setOnline);
    countOutcome(metrics, "reconciler", "set-offline", summary.setOffline);
    countOutcome(metrics, "reconciler", "unchanged", summary.unchanged);
    countOutcome(metrics, "reconciler", "skipped", summary.skipped);
    if (!summary.complete) {
      countOutcome(metrics, "reconciler", "incomplete");
      logger.warn("listing incomplete: nobody was set offline for being absent", {
        ...summary,
        outcome: "incomplete",
      });
    } else logger.info("reconciled", { ...summary });
  }
};
