import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { lazyBlobStore, onFirstUse } from "../../shared/adapters/lazy-adapters";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { loadIngestConfig } from "../../shared/config/function-config";
import { fromHttpApiEvent, type IngestDependencies, ingestWebhook } from "../../shared/ingest/core";
import type { CredentialSource } from "../../shared/ingest/credential-source";
import { staticCredentialSource } from "../../shared/ingest/credentials";
import { fileCredentialSource } from "../../shared/ingest/file-credentials";
import { secretCredentialSource } from "../../shared/ingest/secret-credentials";
import { secretsClient } from "../../shared/platform/aws-clients";
import { errorSummary } from "../../shared/platform/errors";
import { lineObservability } from "../../shared/platform/log-lines";
import { sqsClient } from "../../shared/platform/sqs-client";
import { REFUSAL_LINE } from "../../shared/watchdog/refusal-rule";

// Cold start: configuration, clients and credential cache are built once per container.
const config = loadIngestConfig(process.env);
// Powertools' log and metric lines, written without it (see log-lines.ts: its cold-start cost).
const { logger, countOutcome } = lineObservability("ingest");
/** After a miss, the credentials are re-read at most this often (a flood of bad passwords reads nothing more). */
const MIN_REFRESH_INTERVAL_MS = 5_000;

function credentialSource(): CredentialSource {
  const c = config.credentials;
  if (c.kind === "secret")
    return secretCredentialSource({
      secretId: c.secretId,
      maxAgeSeconds: c.cacheSeconds,
      minRefreshIntervalMs: MIN_REFRESH_INTERVAL_MS,
      client: secretsClient(),
    });
  if (c.kind === "file")
    return fileCredentialSource({
      path: c.path,
      maxAgeSeconds: c.cacheSeconds,
      minRefreshIntervalMs: MIN_REFRESH_INTERVAL_MS,
    });
  return staticCredentialSource(c.credentials);
}

const deps: IngestDependencies = {
  credentials: credentialSource(),
  queue: sqsMessageQueue(sqsClient(config.aws), config.eventsQueueUrl),
  // Only an oversize body (or one SQS refuses) needs S3: its client loads with the first such request.
  oversizeStore: lazyBlobStore(config.dataBucket, async () =>
    (await import("./oversize-store.lazy.mjs")).oversizeStore(config.aws, config.dataBucket),
  ),
  limits: {
    maxBodyBytes: config.maxBodyBytes,
    inlineBodyLimitBytes: config.inlineBodyLimitBytes,
    maxJsonDepth: config.maxJsonDepth,
  },
  allowedApps: allowedApps(),
};

/**
 * The apps table's allowlist, when the deployment restricts apps: its module (the DynamoDB client)
 * starts loading now, during init, and the first request waits for it if it has to.
 */
function allowedApps(): IngestDependencies["allowedApps"] {
  const settings = config.allowedApps;
  if (!settings) return undefined;
  const load = onFirstUse(async () =>
    (await import("./app-allowlist")).appAllowlist(config.aws, settings.tableName, settings.cacheSeconds),
  );
  load().catch(() => undefined); // a failed load is retried by the first request, which answers 503 if it fails again
  return { allows: async (appId) => (await load()).allows(appId) };
}

/**
 * API Gateway HTTP API → ingest core. Logs a line per request at DEBUG (the access log has one at
 * INFO), and at ERROR when the event could not be stored; never the body or credentials.
 */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const result = await ingestWebhook(fromHttpApiEvent(event), deps);
  const { outcome, detail, eventId, trigger, appId, error, username, usernameKnown } = result;
  const fields = { outcome, detail, eventId, trigger, appId, status: result.response.statusCode };
  if (outcome === "enqueue-failed")
    logger.error("event not stored", { ...fields, error: errorSummary(error) });
  // A refused credential names no app (the body is not read): its username, as the logs keep it,
  // says whose it is (`npx webhook apps --refused`), and whether the deployment knows it is what
  // the Contributor Insights rule filters on (`REFUSAL_RULE`). A WARN line per refusal only.
  else if (username !== undefined)
    logger.warn(REFUSAL_LINE.message, {
      ...fields,
      username,
      [REFUSAL_LINE.knownField]: usernameKnown ? "yes" : "no",
    });
  else logger.debug("webhook", fields);
  // An accepted event is counted by the events queue's NumberOfMessagesSent (free): a metric line
  // per accepted request would be ~250 billed log bytes per event.
  if (outcome !== "accepted") countOutcome(outcome);
  return result.response;
};
