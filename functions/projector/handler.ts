import type { Context, SQSEvent } from "aws-lambda";
import { s3BlobStore } from "../../shared/adapters/blob-store";
import { sqsMessageQueue } from "../../shared/adapters/event-queue";
import { dynamoClient, s3Client, sqsClient } from "../../shared/aws-clients";
import { loadProjectorConfig } from "../../shared/config";
import { observability } from "../../shared/observability";
import type { ProjectorDependencies } from "../../shared/projector";
import { projectSqsBatch } from "../../shared/projector-batch";
import { projectionStores } from "../../shared/stores";

// Cold start: configuration and clients are built once per container.
const config = loadProjectorConfig(process.env);
const obs = observability("projector");
const deps: ProjectorDependencies = {
  stores: projectionStores(dynamoClient(config.aws), config.tables),
  dataStore: s3BlobStore(s3Client(config.aws), config.dataBucket),
  recordingJobs: sqsMessageQueue(sqsClient(config.aws), config.recordingsQueueUrl),
  now: Date.now,
};

/** Events queue (SQS batches) → projections, raw archive, quarantine, recording jobs. */
export const handler = (event: SQSEvent, context: Context) => projectSqsBatch(event, context, deps, obs);
