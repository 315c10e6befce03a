import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";

/**
 * The messages a queue holds: waiting, in flight and delayed (SQS's approximate counts, one
 * GetQueueAttributes request).
 */
export async function queueDepth(sqs: SQSClient, url: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ],
    }),
  );
  const a = out.Attributes ?? {};
  return (
    Number(a.ApproximateNumberOfMessages ?? 0) +
    Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}

/** A queue's depth and its dead-letter queue's. */
export interface QueueDepths {
  depth: number;
  deadLetters: number;
}

/** The depths of the events and recordings queues and their DLQs (four requests). */
export async function queueDepths(
  sqs: SQSClient,
  queues: Record<"events" | "recordings", { url: string; deadLetterUrl: string }>,
): Promise<Record<"events" | "recordings", QueueDepths>> {
  const of = async (q: { url: string; deadLetterUrl: string }) => {
    const [depth, deadLetters] = await Promise.all([
      queueDepth(sqs, q.url),
      queueDepth(sqs, q.deadLetterUrl),
    ]);
    return { depth, deadLetters };
  };
  const [events, recordings] = await Promise.all([of(queues.events), of(queues.recordings)]);
  return { events, recordings };
}
