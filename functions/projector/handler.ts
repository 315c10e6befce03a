import type { Context, SQSEvent } from "aws-lambda";
import { lazyMessageQueue } from "../../shared/adapters/lazy-adapters";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { loadProjectorConfig } from "../../shared/config/function-config";
import { dynamoClient } from "../../shared/platform/dynamo-client";
import { observability } from "../../shared/platform/observability";
import { s3Client } from "../../shared/platform/s3-client";
import { projectSqsBatch } from "../../shared/projector/batch";
import type { ProjectorDependencies } from "../../shared/projector/core";
import { projectionStores } from "../../shared/projector/stores";

// Cold start: configuration and clients are built once per container.
const config = loadProjectorConfig(process.env);
const obs = observability("projector");
// What the tables' reads and writes consumed (ReturnConsumedCapacity), for the batch's metrics.
const capacity = { writeUnits: 0, readUnits: 0 };
const deps: ProjectorDependencies = {
  stores: projectionStores(dynamoClient(config.aws), config.tables, {
    onCapacity: (units) => {
      capacity.writeUnits += units.writeUnits;
      capacity.readUnits += units.readUnits;
    },
  }),
  dataStore: s3BlobStore(s3Client(config.aws), config.dataBucket),
  itemExpiryDays: config.itemExpiryDays,
  // Only a recording_generated event needs SQS: its client loads with the first recording job.
  recordingJobs: lazyMessageQueue(async () => {
    const [{ sqsMessageQueue }, { sqsClient }] = await Promise.all([
      import("../../shared/adapters/sqs-message-queue"),
      import("../../shared/platform/sqs-client"),
    ]);
    return sqsMessageQueue(sqsClient(config.aws), config.recordingsQueueUrl);
  }),
  now: Date.now,
};

/** Events queue (SQS batches) → projections, raw archive, quarantine, recording jobs. */
export const handler = (event: SQSEvent, context: Context) =>
  projectSqsBatch(event, context, deps, obs, capacity);
