import type { SessionState } from "@webhook-backend/stream/projections/sessions";
import type { Context, SQSEvent } from "aws-lambda";
import { documentClient, dynamoItemStore } from "../../shared/adapters/dynamo-item-store";
import { loadRecorderConfig } from "../../shared/config/function-config";
import { secretsClient } from "../../shared/platform/aws-clients";
import { dynamoClient } from "../../shared/platform/dynamo-client";
import { observability } from "../../shared/platform/observability";
import { s3Client } from "../../shared/platform/s3-client";
import { SESSIONS_TABLE } from "../../shared/platform/tables";
import type { RecorderDependencies } from "../../shared/recorder/archive";
import { recordSqsBatch } from "../../shared/recorder/batch";
import { systemResolver } from "../../shared/recorder/safe-fetch";
import { recordingApiKeySource } from "../../shared/recorder/secret-api-keys";

// Cold start: configuration and clients are built once per container.
const config = loadRecorderConfig(process.env);
const obs = observability("recorder");
const deps: RecorderDependencies = {
  s3: s3Client(config.aws),
  bucket: config.dataBucket,
  sessions: dynamoItemStore<SessionState>(
    documentClient(dynamoClient(config.aws)),
    SESSIONS_TABLE,
    config.sessionsTable,
  ),
  apiKeyFor: recordingApiKeySource(config.apiKeys, secretsClient),
  resolver: systemResolver,
  allowHttp: config.allowHttp,
  allowedHosts: config.allowedHosts,
  apiKeyHosts: config.apiKeyHosts,
  limits: config.limits,
  now: Date.now,
};

/** Recordings queue (SQS) → stream each recording into S3 and record the outcome on the session. */
export const handler = (event: SQSEvent, context: Context) => recordSqsBatch(event, context, deps, obs);
