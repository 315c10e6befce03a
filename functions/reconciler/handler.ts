import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import { documentClient, dynamoItemStore } from "../../shared/adapters/dynamo-item-store";
import { lazyMessageQueue } from "../../shared/adapters/lazy-adapters";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { loadReconcilerConfig } from "../../shared/config/function-config";
import { secretsClient } from "../../shared/platform/aws-clients";
import { dynamoClient } from "../../shared/platform/dynamo-client";
import { errorSummary } from "../../shared/platform/errors";
import { countOutcome, observability } from "../../shared/platform/observability";
import { s3Client } from "../../shared/platform/s3-client";
import { snsClient } from "../../shared/platform/sns-client";
import { sqsClient } from "../../shared/platform/sqs-client";
import { PRESENCE_TABLE } from "../../shared/platform/tables";
import { reconcileAll } from "../../shared/reconcile/run";
import { recordingApiKeySource } from "../../shared/recorder/secret-api-keys";
import { dynamoListenerUntil, listenerSwitch } from "../../shared/stream/listener-switch";
import { lazyStreamPublisher } from "../../shared/stream/publish-batches";
import { reconcileFactSink } from "../../shared/stream/reconcile-facts";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";

// Cold start: configuration and clients are built once per container.
const config = loadReconcilerConfig(process.env);
const { logger, metrics } = observability("reconciler");
const dynamo = dynamoClient(config.aws);
const doc = documentClient(dynamo);
const { dataBucket, stream } = config;
// Its changes reach the stream (#57 item 4): archived under reconcile/, published as the
// projector publishes (a scheduled function: its SNS and SQS clients are in its bundle, built
// with the first fact that changed an item).
const facts =
  dataBucket === undefined
    ? undefined
    : reconcileFactSink({
        dataStore: s3BlobStore(s3Client(config.aws), dataBucket),
        ...(stream && {
          stream: {
            isOn: stream.alwaysOn
              ? async () => true
              : listenerSwitch(dynamoListenerUntil(dynamo, stream.appsTable ?? ""), {
                  cacheMs: stream.switchCacheMs,
                }),
            publisher: lazyStreamPublisher(async () =>
              snsStreamPublisher(snsClient(config.aws), stream.topicArn),
            ),
            unpublished: lazyMessageQueue(async () =>
              sqsMessageQueue(sqsClient(config.aws), stream.unpublishedQueueUrl),
            ),
          },
        }),
      });
const deps = {
  doc,
  presenceTable: config.presenceTable,
  presence: dynamoItemStore<PresenceState>(doc, PRESENCE_TABLE, config.presenceTable),
  apiKeyFor: recordingApiKeySource(
    { kind: "secret", secretId: config.apiKeysSecretId, cacheSeconds: 300 },
    secretsClient,
  ),
  now: Date.now,
  ...(facts && { facts }),
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
