import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import type { ForgetDependencies } from "./plan";

/*
 * What the erasure cannot reach: the messages of the queues (SQS cannot edit a message). An event
 * that names the user and is still queued, or in flight in a projector, when the erasure begins is
 * projected and archived after its writes, as an event that arrives after it is: the report says
 * so, with how many messages were queued when it began and when it ended, and never calls the
 * user gone while any was.
 */

/** How many messages each queue holds (waiting and in flight), by its name in the report. */
export type QueueDepths = Map<string, number>;

/**
 * Each queue's messages, waiting and in flight (one GetQueueAttributes a queue).
 *
 * @example await queueDepths(deps) // Map { "events queue" => 3, "events dead-letter queue" => 0 }
 */
export async function queueDepths(deps: ForgetDependencies): Promise<QueueDepths> {
  const depths: QueueDepths = new Map();
  if (!deps.queues) return depths;
  for (const [name, url] of Object.entries(deps.queues.urls)) {
    if (!url) continue;
    const attributes = await deps.queues.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    depths.set(
      name,
      Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    );
  }
  return depths;
}

/**
 * What the queues held that the erasure could not search, in words: each queue that held a
 * message when the erasure began or when it ended (a dry run: now), but those `reached` (the
 * queues the projector processes, when it redacts the erased user in flight: `ForgetDependencies.erased`).
 *
 * @example unreachedQueues(new Map([["events queue", 2]]), new Map([["events queue", 0]])) // ["events queue: 2 message(s) when the erasure began, 0 when it ended, …"]
 */
export function unreachedQueues(
  atStart: QueueDepths,
  atEnd?: QueueDepths,
  reached: ReadonlySet<string> = new Set(),
): string[] {
  const out: string[] = [];
  for (const name of new Set([...atStart.keys(), ...(atEnd?.keys() ?? [])])) {
    if (reached.has(name)) continue;
    const [began, ended] = [atStart.get(name) ?? 0, atEnd?.get(name) ?? 0];
    if (began + ended === 0) continue;
    const held = atEnd
      ? `${began} message(s) when the erasure began, ${ended} when it ended`
      : `${began} message(s) now`;
    out.push(
      `${name}: ${held}, not searched (SQS cannot edit a message): any that names the user is projected and archived once processed or redriven, after the erasure's writes, as an event that arrives after it is; run forget again then`,
    );
  }
  return out;
}

/**
 * What the erasure's own steps left, in words: the items that named the user again after their
 * rewrite (an event applied meanwhile: erased again), and the compacted days it could not rewrite
 * (no compactor given).
 *
 * @example unreachedSteps([], ["2026-01-02"]) // ["2026-01-02: its compacted Parquet was not rewritten (no compactor): run webhook compact --from 2026-01-02 --to 2026-01-02"]
 */
export function unreachedSteps(again: readonly unknown[], uncompacted: readonly string[]): string[] {
  return [
    ...(again.length
      ? [
          `${again.length} item(s) named the user again after their rewrite (an event applied meanwhile): erased again`,
        ]
      : []),
    ...uncompacted.map(
      (day) =>
        `${day}: its compacted Parquet was not rewritten (no compactor): run webhook compact --from ${day} --to ${day}`,
    ),
  ];
}
