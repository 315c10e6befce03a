import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import type { ForgetDependencies } from "./plan";

/**
 * What the queues hold that the erasure cannot change (SQS messages cannot be edited).
 *
 * @example await unreachedQueues(deps) // ["events queue: 3 message(s) not yet processed, …"]
 */
export async function unreachedQueues(deps: ForgetDependencies): Promise<string[]> {
  if (!deps.queues) return [];
  const out: string[] = [];
  for (const [name, url] of Object.entries(deps.queues.urls)) {
    if (!url) continue;
    const attributes = await deps.queues.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    const n =
      Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
    if (n > 0)
      out.push(
        `${name}: ${n} message(s) not yet processed, not searched (SQS cannot edit a message): once processed or redriven they are archived, and a second forget erases them`,
      );
  }
  return out;
}
