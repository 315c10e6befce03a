import { ContractViolationError } from "@webhook-backend/stream/errors";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { parseJsonContract, type RecordingJob, recordingJobSchema } from "../contracts/queue-messages";
import { RecordingFetchError } from "../platform/errors";
import { countOutcome, type Observability } from "../platform/observability";
import type { RecorderOutcome } from "../platform/outcomes";
import { processSqsBatch } from "../platform/sqs-batch";
import { archiveRecording, type RecorderDependencies } from "./archive";

/**
 * One SQS batch of the recordings queue, one job at a time (each may stream gigabytes).
 * A job that breaks its contract is logged, counted and acknowledged (it never becomes valid);
 * a job that fails permanently is recorded on the session and acknowledged; a transient failure
 * is recorded too, then reported in `batchItemFailures` so SQS retries it.
 *
 * @example export const handler = (event, context) => recordSqsBatch(event, context, deps, obs)
 */
export async function recordSqsBatch(
  event: SQSEvent,
  context: Context | undefined,
  deps: RecorderDependencies,
  { logger, metrics }: Observability,
): Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord): Promise<RecorderOutcome> => {
    let job: RecordingJob;
    try {
      job = parseJsonContract(recordingJobSchema, record.body, "recording job");
    } catch (error) {
      if (!(error instanceof ContractViolationError)) throw error;
      countOutcome(metrics, "recorder", "invalid-job");
      logger.error("invalid recording job", {
        messageId: record.messageId,
        outcome: "invalid-job",
        error: error.message,
      });
      return "invalid-job";
    }
    const attempt = Number(record.attributes.ApproximateReceiveCount) || 1;
    const result = await archiveRecording(job, attempt, deps);
    const fields = { appId: job.appId, sessionId: job.sessionId, startTime: job.startTime, attempt };
    if (result.status === "archived") {
      const outcome = result.skipped ? "already-archived" : "archived";
      countOutcome(metrics, "recorder", outcome);
      logger.info("recording archived", { ...fields, outcome, key: result.key, size: result.size });
      return outcome;
    }
    const outcome = `failed-${result.reason}` as const;
    countOutcome(metrics, "recorder", outcome);
    logger.warn("recording failed", {
      ...fields,
      outcome,
      reason: result.reason,
      detail: result.detail,
      retry: result.retry,
    });
    if (result.retry) throw new RecordingFetchError(result.reason, result.detail, true);
    return outcome;
  };
  return processSqsBatch(event, context, recordHandler, logger);
}
