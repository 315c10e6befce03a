import { SecretsProvider } from "@aws-lambda-powertools/parameters/secrets";
import type { Context, SQSEvent } from "aws-lambda";
import { documentClient, dynamoItemStore } from "../../shared/adapters/item-store";
import { dynamoClient, s3Client, secretsClient } from "../../shared/aws-clients";
import { loadRecorderConfig } from "../../shared/config";
import { observability } from "../../shared/observability";
import type { SessionState } from "../../shared/projections/sessions";
import type { RecorderDependencies } from "../../shared/recorder/archive";
import { systemResolver } from "../../shared/recorder/safe-fetch";
import { recordSqsBatch } from "../../shared/recorder-batch";
import { SESSIONS_TABLE } from "../../shared/tables";

// Cold start: configuration and clients are built once per container.
const config = loadRecorderConfig(process.env);
const obs = observability("recorder");
const apiKeys = config.apiKeys;
const secrets =
  apiKeys.kind === "secret" ? new SecretsProvider({ awsSdkV3Client: secretsClient() }) : undefined;

const deps: RecorderDependencies = {
  s3: s3Client(config.aws),
  bucket: config.dataBucket,
  sessions: dynamoItemStore<SessionState>(
    documentClient(dynamoClient(config.aws)),
    SESSIONS_TABLE,
    config.sessionsTable,
  ),
  async apiKeyFor(appId) {
    if (apiKeys.kind === "static") return apiKeys.keys[appId];
    const keys = await secrets?.get(apiKeys.secretId, { maxAge: apiKeys.cacheSeconds, transform: "json" });
    const value = (keys as Record<string, unknown> | undefined)?.[appId];
    return typeof value === "string" ? value : undefined;
  },
  resolver: systemResolver,
  allowHttp: config.allowHttp,
  allowedHosts: config.allowedHosts,
  limits: config.limits,
  now: Date.now,
};

/** Recordings queue (SQS) → stream each recording into S3 and record the outcome on the session. */
export const handler = (event: SQSEvent, context: Context) => recordSqsBatch(event, context, deps, obs);
