import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { z } from "zod";
import { countOutcome } from "./observability";
import type { BatchObservability } from "./projector-batch";
import { archiveRecording, type RecorderDependencies } from "./recorder/archive";

/** A recording job as the projector sends it. */
export const recordingJobSchema = z.object({
  appId: z.string().min(1),
  sessionId: z.string().min(1),
  startTime: z.string().regex(/^\d+$/),
  recordingDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  recordingUrl: z.string().min(1),
  eventId: z.string(),
});

/** A transient failure: the record goes back to the queue (and to the DLQ after max receives). */
export class RetryableRecordingError extends Error {
  override name = "RetryableRecordingError";
}

/**
 * One SQS batch of the recordings queue, one job at a time (each may stream gigabytes).
 * A job that fails permanently is recorded on the session and acknowledged; a transient failure
 * is recorded too, then reported in `batchItemFailures` so SQS retries it.
 */
export async function recordSqsBatch(
  event: SQSEvent,
  context: Context | undefined,
  deps: RecorderDependencies,
  { logger, metrics }: BatchObservability,
): Promise<SQSBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord) => {
    let json: unknown;
    try {
      json = JSON.parse(record.body);
    } catch {
      json = undefined;
    }
    const job = recordingJobSchema.safeParse(json);
    if (!job.success) {
      // Nothing to retry: a malformed job never becomes valid. Logged and counted, not lost silently.
      countOutcome(metrics, "RecorderJobs", "invalid-job");
      logger.error("invalid recording job", { messageId: record.messageId, error: job.error.message });
      return "invalid-job";
    }
    const attempt = Number(record.attributes.ApproximateReceiveCount) || 1;
    const result = await archiveRecording(job.data, attempt, deps);
    const fields = {
      appId: job.data.appId,
      sessionId: job.data.sessionId,
      startTime: job.data.startTime,
      attempt,
    };
    if (result.status === "archived") {
      countOutcome(metrics, "RecorderJobs", result.skipped ? "already-archived" : "archived");
      logger.info("recording archived", {
        ...fields,
        key: result.key,
        size: result.size,
        skipped: result.skipped,
      });
      return "archived";
    }
    countOutcome(metrics, "RecorderJobs", `failed-${result.reason}`);
    logger.warn("recording failed", {
      ...fields,
      reason: result.reason,
      detail: result.detail,
      retry: result.retry,
    });
    if (result.retry) throw new RetryableRecordingError(`${result.reason}: ${result.detail}`);
    return "failed";
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
