import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { ContractViolationError, errorSummary } from "../platform/errors";
import { countOutcome, type Observability } from "../platform/observability";
import type { ProjectorOutcome } from "../platform/outcomes";
import { processSqsBatch } from "../platform/sqs-batch";
import { handleQueuedEvent, type ProjectorDependencies } from "./core";
import { decodeRecord, type QueuedEvent, undecodableRecord } from "./queued-event";
import { archiveBatch, quarantine } from "./raw-archive";

type Decoded =
  | { event: QueuedEvent }
  | { violation: QueuedEvent; error: ContractViolationError }
  | { error: unknown };

/** Decodes every record at once (oversize bodies are read from S3 in parallel). */
async function decodeAll(records: readonly SQSRecord[], deps: ProjectorDependencies) {
  const decoded = new Map<string, Decoded>();
  await Promise.all(
    records.map(async (record) => {
      try {
        decoded.set(record.messageId, { event: await decodeRecord(record, deps.dataStore) });
      } catch (error) {
        decoded.set(
          record.messageId,
          error instanceof ContractViolationError
            ? { violation: undecodableRecord(record), error }
            : { error },
        );
      }
    }),
  );
  return decoded;
}

/**
 * One SQS batch of the events queue:
 * 1. decode every record (resolving oversize pointers); a message that breaks its contract is
 *    quarantined (it will never become valid), a body that cannot be read yet is retried;
 * 2. archive the decoded events raw to S3 (one object per app and day) — if that fails the
 *    whole batch fails and SQS redelivers it: nothing is projected that is not archived;
 * 3. handle each record (`processSqsBatch`): a record that throws (a transient DynamoDB/S3/SQS
 *    failure) is reported in `batchItemFailures` and only it is retried.
 *
 * @example export const handler = (event, context) => projectSqsBatch(event, context, deps, obs)
 */
export async function projectSqsBatch(
  event: SQSEvent,
  context: Context | undefined,
  deps: ProjectorDependencies,
  { logger, metrics }: Observability,
): Promise<SQSBatchResponse> {
  const decoded = await decodeAll(event.Records, deps);
  const events = [...decoded.values()].flatMap((d) => ("event" in d ? [d.event] : []));
  if (events.length > 0) await archiveBatch(events, deps.dataStore);

  const handle = async (record: SQSRecord): Promise<ProjectorOutcome> => {
    const entry = decoded.get(record.messageId) ?? { error: new Error("record was not decoded") };
    if ("violation" in entry) {
      await quarantine(entry.violation, entry.error.message, deps.dataStore, deps.now);
      return "quarantined";
    }
    if ("error" in entry) throw entry.error;
    return handleQueuedEvent(entry.event, deps);
  };
  const recordHandler = async (record: SQSRecord) => {
    const entry = decoded.get(record.messageId);
    // An undecoded record is still filed under what its attributes say (unchecked: for the log only).
    const queued = entry && "event" in entry ? entry.event : undecodableRecord(record);
    const fields = {
      trigger: queued?.trigger,
      appId: queued?.appId,
      eventId: queued?.eventId,
      messageId: record.messageId,
    };
    try {
      const outcome = await handle(record);
      countOutcome(metrics, "projector", outcome);
      logger.info("event", { ...fields, outcome });
      return outcome;
    } catch (error) {
      countOutcome(metrics, "projector", "failed");
      logger.warn("event failed; SQS will retry it", {
        ...fields,
        outcome: "failed",
        error: errorSummary(error),
      });
      throw error;
    }
  };
  return processSqsBatch(event, context, recordHandler, logger);
}
