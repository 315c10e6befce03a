import { readFileSync } from "node:fs";
import {
  CreateTopicCommand,
  ListSubscriptionsByTopicCommand,
  type SNSClient,
  UnsubscribeCommand,
} from "@aws-sdk/client-sns";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { readDeploymentConfig } from "../../infra/config";
import { EVENTS_QUEUE } from "../../shared/platform/queues";
import { filterPolicyOf, type StreamSubscriber } from "../../shared/stream/subscribers";
import {
  LISTENER_QUEUE_PREFIX,
  removeExpiredListeners,
  subscribeQueue,
} from "../../shared/stream/subscriptions";

/**
 * The stream of facts on the local stack (#41), as the CDK app makes it deployed: the topic, the
 * stream's unpublished queue (its own dead-letter queue), and for each subscriber declared in
 * cdk.json's `streamSubscribers` a queue with its dead-letter queue, subscribed with its filter
 * policy and raw delivery or not. fauxqs keeps subscriptions across restarts: a subscriber no
 * longer declared is unsubscribed (its queue is kept, with whatever it holds), and what crashed
 * `webhook listen` sessions left is removed.
 */

/** The local topic's name. */
export const LOCAL_STREAM_TOPIC = "stream";

/** A subscriber's local queue: `stream-<name>`, and its dead-letter queue `stream-<name>-dlq`. */
export const subscriberQueueName = (name: string) => `stream-${name}`;

/** What the local stream is: written to stack.json for `listen`, `replay --to-stream` and `redrive --stream`. */
export interface LocalStream {
  topicArn: string;
  unpublished: { url: string };
  subscribers: Record<string, { url: string; deadLetterUrl: string }>;
}

async function queue(sqs: SQSClient, name: string, attributes: Record<string, string> = {}) {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  const url = out.QueueUrl ?? "";
  const arn =
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] })))
      .Attributes?.QueueArn ?? "";
  return { url, arn };
}

/**
 * Creates (or finds) the local stream and brings its subscriptions in line with `subscribers`.
 *
 * @example const stream = await provisionStream(sns, sqs, [{ name: "crm", apps: ["app1"] }])
 */
export async function provisionStream(
  sns: SNSClient,
  sqs: SQSClient,
  subscribers: readonly StreamSubscriber[],
): Promise<LocalStream> {
  const topicArn = (await sns.send(new CreateTopicCommand({ Name: LOCAL_STREAM_TOPIC }))).TopicArn ?? "";
  const fortnight = { MessageRetentionPeriod: String(14 * 86400) };
  const unpublished = await queue(sqs, "stream-unpublished", fortnight);
  const declared: LocalStream["subscribers"] = {};
  const endpoints = new Set<string>();
  for (const s of subscribers) {
    const dlq = await queue(sqs, `${subscriberQueueName(s.name)}-dlq`, fortnight);
    const subscribed = await subscribeQueue(sns, sqs, {
      topicArn,
      queueName: subscriberQueueName(s.name),
      filterPolicy: filterPolicyOf(s),
      rawDelivery: s.rawDelivery ?? true,
      attributes: {
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlq.arn,
          maxReceiveCount: String(EVENTS_QUEUE.maxReceiveCount),
        }),
      },
    });
    declared[s.name] = { url: subscribed.queueUrl, deadLetterUrl: dlq.url };
    endpoints.add(subscribed.queueArn);
  }
  await unsubscribeUndeclared(sns, topicArn, endpoints);
  await removeExpiredListeners(sns, sqs, topicArn);
  return { topicArn, unpublished: { url: unpublished.url }, subscribers: declared };
}

/** Unsubscribes the topic's subscribers that are neither declared nor a `webhook listen` session. */
async function unsubscribeUndeclared(sns: SNSClient, topicArn: string, declared: ReadonlySet<string>) {
  let token: string | undefined;
  do {
    const page = await sns.send(
      new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken: token }),
    );
    for (const s of page.Subscriptions ?? []) {
      const name = s.Endpoint?.split(":").pop() ?? "";
      if (
        s.SubscriptionArn &&
        s.Endpoint &&
        !declared.has(s.Endpoint) &&
        !name.startsWith(LISTENER_QUEUE_PREFIX)
      )
        await sns.send(new UnsubscribeCommand({ SubscriptionArn: s.SubscriptionArn }));
    }
    token = page.NextToken;
  } while (token);
}

/**
 * The subscribers the local stack provisions: cdk.json's `streamSubscribers` (the project's own,
 * or `path`'s), validated as a deployment validates them, or, to try a consumer without editing
 * cdk.json, `LOCAL_STREAM_SUBSCRIBERS` (the same JSON, as `-c streamSubscribers=…` takes it).
 *
 * @example LOCAL_STREAM_SUBSCRIBERS='[{"name":"crm","apps":["app1"]}]' npm start
 */
export function localStreamSubscribers(
  env: Readonly<Record<string, string | undefined>> = process.env,
  path = new URL("../../cdk.json", import.meta.url),
): StreamSubscriber[] {
  const json = JSON.parse(readFileSync(path, "utf8")) as { context?: Record<string, unknown> };
  const override = env.LOCAL_STREAM_SUBSCRIBERS?.trim();
  return readDeploymentConfig({ ...json.context, ...(override ? { streamSubscribers: override } : {}) })
    .streamSubscribers;
}
