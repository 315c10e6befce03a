import type { Context, SQSEvent } from "aws-lambda";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { lazyMessageQueue, onFirstUse } from "../../shared/adapters/lazy-adapters";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { loadProjectorConfig } from "../../shared/config/function-config";
import { listErasedSubjects } from "../../shared/erasure/erased-subjects";
import { erasedInFlight } from "../../shared/erasure/in-flight";
import { dynamoClient } from "../../shared/platform/dynamo-client";
import { errorSummary } from "../../shared/platform/errors";
import { observability } from "../../shared/platform/observability";
import { s3Client } from "../../shared/platform/s3-client";
import { type BatchDependencies, projectSqsBatch } from "../../shared/projector/batch";
import { switchedFactStream } from "../../shared/projector/fact-stream";
import { projectionStores } from "../../shared/projector/stores";
import { dynamoListenerUntil, listenerSwitch } from "../../shared/stream/listener-switch";

// Cold start: configuration and clients are built once per container.
const config = loadProjectorConfig(process.env);
const obs = observability("projector");
// What the tables' reads and writes consumed (ReturnConsumedCapacity), for the batch's metrics.
const capacity = { writeUnits: 0, readUnits: 0 };
const dynamo = dynamoClient(config.aws);
const dataStore = s3BlobStore(s3Client(config.aws), config.dataBucket);
// Only a recording job or an unpublished fact needs SQS: its client loads with the first of them.
const sqs = onFirstUse(async () => {
  const [{ sqsMessageQueue }, { sqsClient }] = await Promise.all([
    import("../../shared/adapters/sqs-message-queue"),
    import("../../shared/platform/sqs-client"),
  ]);
  const client = sqsClient(config.aws);
  return (url: string) => sqsMessageQueue(client, url);
});
const stream = config.stream;
// The erased subjects (#50): one Query of the apps table per cache period, nothing per batch.
const erased = config.erasedSubjects;
const deps: BatchDependencies = {
  stores: projectionStores(dynamo, config.tables, {
    onCapacity: (units) => {
      capacity.writeUnits += units.writeUnits;
      capacity.readUnits += units.readUnits;
    },
  }),
  dataStore,
  itemExpiryDays: config.itemExpiryDays,
  recordingJobs: lazyMessageQueue(async () => (await sqs())(config.recordingsQueueUrl)),
  now: Date.now,
  ...(erased && {
    redactErased: erasedInFlight(listErasedSubjects(documentClient(dynamo), erased.appsTable), {
      cacheMs: erased.cacheMs,
      now: Date.now,
      onReadError: (error) =>
        obs.logger.warn("erased subjects not read; the last list read is kept", {
          error: errorSummary(error),
        }),
    }),
  }),
  // The stream of facts (#41): nothing of it loads until the first publish, which happens only
  // when subscribers are declared or a listener turned the switch on; its SNS client is a bundle
  // of its own (stream-publisher.lazy.mjs), out of the start-up code.
  ...(stream && {
    stream: switchedFactStream(
      stream.alwaysOn
        ? async () => true
        : listenerSwitch(dynamoListenerUntil(dynamo, stream.appsTable ?? ""), {
            cacheMs: stream.switchCacheMs,
          }),
      async () => {
        const [{ projectorStream }, { streamPublisher }] = await Promise.all([
          import("../../shared/stream/projector-stream"),
          import("./stream-publisher.lazy.mjs"),
        ]);
        return projectorStream({
          publisher: streamPublisher(config.aws, stream.topicArn),
          unpublished: lazyMessageQueue(async () => (await sqs())(stream.unpublishedQueueUrl)),
          dataStore,
          maxReceiveCount: config.maxReceiveCount,
          ...observability("stream"),
        });
      },
    ),
  }),
};

/** Events queue (SQS batches) → projections, raw archive, quarantine, recording jobs, the stream. */
export const handler = (event: SQSEvent, context: Context) =>
  projectSqsBatch(event, context, deps, obs, capacity);
