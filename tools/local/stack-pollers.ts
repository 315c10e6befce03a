/**
 * The local stack's two SQS pollers, which play Lambda's event source mappings for the projector
 * and the recorder: their batching, receive counts, dead-letter line and their own faults' lines.
 */
import type { SQSClient } from "@aws-sdk/client-sqs";
import { errorSummary } from "../../shared/platform/errors";
import { EVENTS_QUEUE, type QueueDefinition, RECORDINGS_QUEUE } from "../../shared/platform/queues";
import { LOCAL_REGION } from "./emulators";
import { type SqsHandler, SqsPoller } from "./poller";
import type { LocalQueue, LocalResources } from "./stack-resources";

/**
 * The two pollers that play Lambda's event source mappings. One batch at a time for events: a
 * batch of 100 is ~1,000 events/s, plenty here, and the queue's order stays the order of receipt,
 * so the simulator's duplicates (sent a few ms after their original, where a platform retry comes
 * 10 s after) never overtake it. Two downloads at once.
 */
export function startPollers(
  sqs: SQSClient,
  { events, recordings }: LocalResources,
  handlers: { projector: SqsHandler; recorder: SqsHandler },
): SqsPoller[] {
  const pollers = [
    poller(sqs, EVENTS_QUEUE, events, handlers.projector, "projector", 1),
    poller(sqs, RECORDINGS_QUEUE, recordings, handlers.recorder, "recorder", 2),
  ];
  for (const p of pollers) p.start();
  return pollers;
}

/** A queue's poller, with its function's batching, receive counts and dead-letter line. */
function poller(
  sqs: SQSClient,
  definition: QueueDefinition,
  queue: LocalQueue,
  handler: SqsHandler,
  functionName: "projector" | "recorder",
  concurrency: number,
): SqsPoller {
  return new SqsPoller({
    sqs,
    queueUrl: queue.url,
    queueArn: queue.arn,
    region: LOCAL_REGION,
    handler,
    functionName,
    batchSize: definition.batchSize,
    batchingWindowMs: definition.batchingWindowSeconds * 1000,
    concurrency,
    onError: pollerError(functionName),
    maxReceiveCount: definition.maxReceiveCount,
    onDeadLetter: (message, receives) =>
      console.error(
        JSON.stringify({
          level: "WARN",
          service: functionName,
          message: `dead-lettered after ${receives} failed receives (npm run redrive brings it back)`,
          timestamp: new Date().toISOString(),
          reason: "dead-lettered",
          ...Object.fromEntries(
            ["trigger", "appId", "eventId"].map((k) => [k, message.MessageAttributes?.[k]?.StringValue]),
          ),
        }),
      ),
  });
}

/** A poller's own fault (a delete or a receive that failed), shown like a function's WARN line. */
const pollerError = (functionName: string) => (error: unknown) =>
  console.error(
    JSON.stringify({
      level: "WARN",
      service: functionName,
      message: "poller: a receive or delete failed; the messages will be received again",
      timestamp: new Date().toISOString(),
      error: errorSummary(error),
    }),
  );
