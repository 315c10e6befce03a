import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Logger } from "@aws-lambda-powertools/logger";
import type { Metrics } from "@aws-lambda-powertools/metrics";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { countOutcome } from "./observability";
import {
  archiveBatch,
  decodeRecord,
  handleQueuedEvent,
  type ProjectorDependencies,
  type QueuedEvent,
} from "./projector";

export interface BatchObservability {
  logger: Logger;
  metrics: Metrics;
}

/**
 * One SQS batch of the events queue:
 * 1. decode every record (resolving oversize pointers);
 * 2. archive the decoded events raw to S3 (one object per app and day) — if that fails the
 *    whole batch fails and SQS redelivers it: nothing is projected that is not archived;
 * 3. handle each record through Powertools' BatchProcessor: a record that throws (a transient
 *    DynamoDB/S3/SQS failure) is reported in `batchItemFailures` and only it is retried.
 *    Records are handled one after the other: records of one batch often touch the same item (a
 *    group and its members), and in parallel they would fail each other's conditional writes,
 *    each failure a billed write (bench:projector: 8% more writes). Lambda's concurrency across
 *    batches supplies the parallelism.
 *
 * @example export const handler = (event, context) => projectSqsBatch(event, context, deps, obs)
 */
export async function projectSqsBatch(
  event: SQSEvent,
  context: Context | undefined,
  deps: ProjectorDependencies,
  { logger, metrics }: BatchObservability,
): Promise<SQSBatchResponse> {
  const decoded = new Map<string, QueuedEvent>();
  const decodeErrors = new Map<string, unknown>();
  await Promise.all(
    event.Records.map(async (record) => {
      try {
        decoded.set(record.messageId, await decodeRecord(record, deps.dataStore));
      } catch (error) {
        decodeErrors.set(record.messageId, error);
      }
    }),
  );
  if (decoded.size > 0) await archiveBatch([...decoded.values()], deps.dataStore);

  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord) => {
    const queued = decoded.get(record.messageId);
    if (!queued) {
      countOutcome(metrics, "ProjectorEvents", "failed");
      logger.error("record could not be decoded", {
        messageId: record.messageId,
        error: decodeErrors.get(record.messageId),
      });
      throw decodeErrors.get(record.messageId) ?? new Error("record was not decoded");
    }
    try {
      const outcome = await handleQueuedEvent(queued, deps);
      countOutcome(metrics, "ProjectorEvents", outcome);
      logger.info("event", {
        trigger: queued.trigger,
        appId: queued.appId,
        eventId: queued.eventId,
        outcome,
      });
      return outcome;
    } catch (error) {
      countOutcome(metrics, "ProjectorEvents", "failed");
      logger.warn("event failed; SQS will retry it", {
        trigger: queued.trigger,
        appId: queued.appId,
        eventId: queued.eventId,
        error,
      });
      throw error;
    }
  };
  try {
    return await processPartialResponse(event, recordHandler, processor, {
      context,
      processInParallel: false,
      throwOnFullBatchFailure: false,
    });
  } finally {
  }
}
