import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Logger } from "@aws-lambda-powertools/logger";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";

/**
 * Runs one SQS batch through Powertools' BatchProcessor with partial batch failure: a record whose
 * handler throws is reported in `batchItemFailures`, and only it goes back to the queue. Records
 * are handled one after the other (records of one batch often touch the same item, and in
 * parallel they would fail each other's conditional writes). The logger carries the Lambda
 * context (request id, cold start) on every line of the batch.
 *
 * A batch whose every record fails is reported like any other, not thrown: Lambda then deletes
 * nothing, retries each record on its own, and the DLQ takes what keeps failing.
 *
 * @example export const handler = (event, context) => processSqsBatch(event, context, recordHandler, logger)
 */
export async function processSqsBatch(
  event: SQSEvent,
  context: Context | undefined,
  recordHandler: (record: SQSRecord) => Promise<unknown>,
  logger: Logger,
): Promise<SQSBatchResponse> {
  if (context) logger.addContext(context);
  return processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
    context,
    processInParallel: false,
    throwOnFullBatchFailure: false,
  });
}
