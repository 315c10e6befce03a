import {
  GetSubscriptionAttributesCommand,
  ListSubscriptionsByTopicCommand,
  type SNSClient,
  SubscribeCommand,
  UnsubscribeCommand,
} from "@aws-sdk/client-sns";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  QueueDoesNotExist,
  SetQueueAttributesCommand,
  type SQSClient,
  TagQueueCommand,
} from "@aws-sdk/client-sqs";

/**
 * Queues subscribed to the stream's topic, made by the SDK: the local stack's subscribers (as the
 * CDK app makes them deployed) and the temporary queue of `webhook listen`, which a crash may
 * leave behind: it is tagged with an expiry that its session renews, and whatever has expired is
 * removed by the next `listen` and by the local stack's start (`removeExpiredListeners`).
 */

/** The name every temporary listener's queue starts with (its IAM scope: `…:webhook-listen-*`). */
export const LISTENER_QUEUE_PREFIX = "webhook-listen-";

/** The tag that says when a listener's queue may be removed (epoch ms). */
export const LISTENER_EXPIRES_TAG = "webhook-listen-expires";

/** How long a listener's queue outlives its last renewal (a crashed session's is removed after). */
export const LISTENER_QUEUE_TTL_MS = 10 * 60_000;

export interface SubscribedQueue {
  queueUrl: string;
  queueArn: string;
  subscriptionArn: string;
}

/** The policy that lets the topic, and nothing else, send to the queue (`aws:SourceArn`). */
function topicOnlyPolicy(queueArn: string, topicArn: string): string {
  return JSON.stringify({
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "TheStreamTopicOnly",
        Effect: "Allow",
        Principal: { Service: "sns.amazonaws.com" },
        Action: "sqs:SendMessage",
        Resource: queueArn,
        Condition: { ArnEquals: { "aws:SourceArn": topicArn } },
      },
    ],
  });
}

/**
 * The ARN of a queue, by its URL.
 *
 * @example await queueArnOf(sqs, queueUrl) // "arn:aws:sqs:us-east-1:000000000000:stream-crm"
 */
export async function queueArnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }),
  );
  return out.Attributes?.QueueArn ?? "";
}

/**
 * A queue (created if missing, then set to these attributes: SQS-managed encryption, a policy
 * bound to the topic) subscribed to the topic with a filter policy (none: every message) and raw
 * delivery or not. A subscription of the queue made before with other attributes is replaced.
 *
 * @example await subscribeQueue(sns, sqs, { topicArn, queueName: "crm-sync", filterPolicy, rawDelivery: true })
 */
export async function subscribeQueue(
  sns: SNSClient,
  sqs: SQSClient,
  options: {
    topicArn: string;
    queueName: string;
    filterPolicy?: Record<string, unknown>;
    rawDelivery: boolean;
    attributes?: Record<string, string>;
    tags?: Record<string, string>;
  },
): Promise<SubscribedQueue> {
  const created = await sqs.send(
    new CreateQueueCommand({ QueueName: options.queueName, ...(options.tags ? { tags: options.tags } : {}) }),
  );
  const queueUrl = created.QueueUrl ?? "";
  const queueArn = await queueArnOf(sqs, queueUrl);
  await sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: queueUrl,
      Attributes: {
        SqsManagedSseEnabled: "true",
        Policy: topicOnlyPolicy(queueArn, options.topicArn),
        ...options.attributes,
      },
    }),
  );
  const attributes: Record<string, string> = {
    RawMessageDelivery: String(options.rawDelivery),
    ...(options.filterPolicy ? { FilterPolicy: JSON.stringify(options.filterPolicy) } : {}),
  };
  const subscribe = () =>
    sns.send(
      new SubscribeCommand({
        TopicArn: options.topicArn,
        Protocol: "sqs",
        Endpoint: queueArn,
        ReturnSubscriptionArn: true,
        Attributes: attributes,
      }),
    );
  let subscribed: Awaited<ReturnType<typeof subscribe>>;
  try {
    subscribed = await subscribe();
  } catch (error) {
    // SNS refuses to subscribe the same queue again with other attributes: replace the old one.
    if (!/already exists/i.test((error as Error).message)) throw error;
    for (const s of await subscriptionsOf(sns, options.topicArn))
      if (s.endpoint === queueArn) await sns.send(new UnsubscribeCommand({ SubscriptionArn: s.arn }));
    subscribed = await subscribe();
  }
  return { queueUrl, queueArn, subscriptionArn: subscribed.SubscriptionArn ?? "" };
}

/** Every subscription of a topic (all pages). */
async function subscriptionsOf(sns: SNSClient, topicArn: string) {
  const all: Array<{ arn: string; endpoint: string }> = [];
  let token: string | undefined;
  do {
    const page = await sns.send(
      new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken: token }),
    );
    for (const s of page.Subscriptions ?? [])
      if (s.SubscriptionArn && s.Endpoint) all.push({ arn: s.SubscriptionArn, endpoint: s.Endpoint });
    token = page.NextToken;
  } while (token);
  return all;
}

/** A queue's subscription to the topic, as SNS holds it: what a replay to that one queue must honour. */
export interface QueueSubscription {
  subscriptionArn: string;
  /** SNS delivers the envelope itself (true), or its own signed notification JSON around it. */
  rawDelivery: boolean;
  /** The subscription's `FilterPolicy` (its JSON text), when it has one. */
  filterPolicy?: string;
  /** What the policy applies to: `MessageAttributes` (SNS's default) or `MessageBody`. */
  filterPolicyScope: string;
}

/**
 * The subscription of a queue (by its ARN) to the topic, with its attributes; `undefined` when
 * the topic does not deliver to that queue.
 *
 * @example (await subscriptionOf(sns, topicArn, queueArn))?.filterPolicy // '{"appId":["app1"]}'
 */
export async function subscriptionOf(
  sns: SNSClient,
  topicArn: string,
  queueArn: string,
): Promise<QueueSubscription | undefined> {
  const found = (await subscriptionsOf(sns, topicArn)).find((s) => s.endpoint === queueArn);
  if (!found) return undefined;
  const { Attributes: attributes = {} } = await sns.send(
    new GetSubscriptionAttributesCommand({ SubscriptionArn: found.arn }),
  );
  return {
    subscriptionArn: found.arn,
    rawDelivery: attributes.RawMessageDelivery === "true",
    ...(attributes.FilterPolicy ? { filterPolicy: attributes.FilterPolicy } : {}),
    filterPolicyScope: attributes.FilterPolicyScope || "MessageAttributes",
  };
}

/**
 * How many queues the topic delivers to (a replay to nobody is worth a warning).
 *
 * @example if ((await subscriptionCount(sns, topicArn)) === 0) console.error("nothing is subscribed")
 */
export async function subscriptionCount(sns: SNSClient, topicArn: string): Promise<number> {
  return (await subscriptionsOf(sns, topicArn)).length;
}

/**
 * Unsubscribes a queue and deletes it (a queue already gone is fine).
 *
 * @example await removeSubscribedQueue(sns, sqs, listener)
 */
export async function removeSubscribedQueue(
  sns: SNSClient,
  sqs: SQSClient,
  queue: Pick<SubscribedQueue, "queueUrl" | "subscriptionArn">,
): Promise<void> {
  if (queue.subscriptionArn)
    await sns.send(new UnsubscribeCommand({ SubscriptionArn: queue.subscriptionArn }));
  try {
    await sqs.send(new DeleteQueueCommand({ QueueUrl: queue.queueUrl }));
  } catch (error) {
    if (!isQueueGone(error)) throw error;
  }
}

/**
 * Sets when a listener's queue expires (now + `LISTENER_QUEUE_TTL_MS`): its session renews it
 * every minute, so only a crashed session's queue ever expires.
 *
 * @example await renewListenerQueue(sqs, listener.queueUrl)
 */
export async function renewListenerQueue(sqs: SQSClient, queueUrl: string, now = Date.now()): Promise<void> {
  await sqs.send(
    new TagQueueCommand({
      QueueUrl: queueUrl,
      Tags: { [LISTENER_EXPIRES_TAG]: String(now + LISTENER_QUEUE_TTL_MS) },
    }),
  );
}

/** When a listener's queue expires (its tag), or `undefined` when it has none or is gone. */
async function listenerExpiry(sqs: SQSClient, queueUrl: string): Promise<number | undefined> {
  try {
    const tags = (await sqs.send(new ListQueueTagsCommand({ QueueUrl: queueUrl }))).Tags ?? {};
    const expires = Number(tags[LISTENER_EXPIRES_TAG]);
    return Number.isFinite(expires) ? expires : undefined;
  } catch (error) {
    if (isQueueGone(error)) return undefined;
    throw error;
  }
}

/** The URL of a queue by its name, or `undefined` when it does not exist. */
async function queueUrlOf(sqs: SQSClient, name: string): Promise<string | undefined> {
  try {
    return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (error) {
    if (isQueueGone(error)) return undefined;
    throw error;
  }
}

const isQueueGone = (error: unknown) =>
  error instanceof QueueDoesNotExist ||
  ["QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"].includes(
    (error as { name?: string }).name ?? "",
  );

/**
 * Removes what crashed listeners left: every `webhook-listen-*` queue whose expiry tag has passed
 * (or that has none), with its subscription to the topic, and any subscription of the topic to a
 * `webhook-listen-*` queue that no longer exists. Returns how many queues or subscriptions it removed.
 *
 * Another `listen` may open while this one runs: it creates its queue (tagged at creation) and
 * then subscribes it. So the subscriptions are listed before the queues (a subscription listed
 * has its queue already made, tagged live), and a subscription whose queue the listing does not
 * show (a listing is eventually consistent in SQS) is judged by its queue's own tag, asked
 * directly: only a queue that is gone or expired loses its subscription.
 *
 * @example await removeExpiredListeners(sns, sqs, topicArn) // 1
 */
export async function removeExpiredListeners(
  sns: SNSClient,
  sqs: SQSClient,
  topicArn: string,
  now = Date.now(),
): Promise<number> {
  const subscriptions = (await subscriptionsOf(sns, topicArn)).filter(({ endpoint }) =>
    (endpoint.split(":").pop() ?? "").startsWith(LISTENER_QUEUE_PREFIX),
  );
  const urls: string[] = [];
  let token: string | undefined;
  do {
    const page = await sqs.send(
      new ListQueuesCommand({ QueueNamePrefix: LISTENER_QUEUE_PREFIX, NextToken: token }),
    );
    urls.push(...(page.QueueUrls ?? []));
    token = page.NextToken;
  } while (token);
  const live = new Set<string>();
  const expired: string[] = [];
  for (const url of urls) {
    const expires = await listenerExpiry(sqs, url);
    if (expires !== undefined && expires > now) live.add(url.split("/").pop() ?? "");
    else expired.push(url);
  }
  let removed = 0;
  for (const { arn, endpoint } of subscriptions) {
    const name = endpoint.split(":").pop() ?? "";
    if (live.has(name)) continue;
    const listed = urls.some((url) => url.endsWith(`/${name}`));
    if (!listed) {
      // Not in the listing: asked directly, a live queue keeps its subscription.
      const url = await queueUrlOf(sqs, name);
      const expires = url === undefined ? undefined : await listenerExpiry(sqs, url);
      if (expires !== undefined && expires > now) continue;
    }
    await sns.send(new UnsubscribeCommand({ SubscriptionArn: arn }));
    removed++;
  }
  for (const url of expired) {
    await removeSubscribedQueue(sns, sqs, { queueUrl: url, subscriptionArn: "" });
    removed++;
  }
  return removed;
}
