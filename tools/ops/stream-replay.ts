/**
 * Replays of the archive onto the stream (#41, #51): `replay --to-stream` publishes archived
 * deliveries to the topic again (every subscriber receives them), `replay --to-subscriber`
 * sends them to one subscriber's queue only, through its own subscription's filter policy. Both
 * send the envelope, id and attributes the projector published, under the archive lease.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import type { SNSClient } from "@aws-sdk/client-sns";
import { GetQueueUrlCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { deliveryId } from "@webhook-backend/stream";
import { parseEventBody } from "@webhook-backend/stream/events/parse-body";
import { type FilterPolicy, parseFilterPolicy, policyAdmits } from "@webhook-backend/stream/filter-policy";
import { closest } from "fastest-levenshtein";
import { type ArchiveLease, withArchiveLease } from "../../shared/adapters/archive-lease";
import { quarantineKey, type RawArchiveLine } from "../../shared/contracts/bucket-layout";
import { StreamPublishError } from "../../shared/platform/errors";
import type { BlobStore } from "../../shared/ports/blob-store";
import { factEnvelope, isPublishable } from "../../shared/stream/envelope";
import { publishableMessage } from "../../shared/stream/projector-stream";
import {
  type PublishOutcome,
  packPublishBatches,
  planCost,
  type StreamMessage,
  type StreamPublisher,
} from "../../shared/stream/publish-batches";
import { queueStreamPublisher } from "../../shared/stream/queue-publisher";
import { triggerFilter } from "../../shared/stream/subscribers";
import { LISTENER_QUEUE_PREFIX, queueArnOf, subscriptionOf } from "../../shared/stream/subscriptions";
import { UsageError, UserFacingError } from "../cli/program";
import { archiveDays, archiveLines, dayObjects, quarantineKeys, reconcileObjects } from "./archive-scan";

/** Messages sent at once by a replay: bounded memory, full batch requests. */
const REPLAY_CHUNK = 500;

/** One delivery, as `listen` names it: its event id (or a prefix of at least 12 hex characters) and receipt. */
export interface DeliveryRef {
  eventId: string;
  receivedAt: number;
}

export interface StreamReplayOptions {
  appId?: string;
  /** First and last receipt day, YYYY-MM-DD. */
  from?: string;
  to?: string;
  /** Trigger forms (`triggerFilter`: names, `group:*`, `group_member_*`). */
  triggers?: readonly string[];
  /** Only this delivery (its receipt day is the window). */
  delivery?: DeliveryRef;
  /** Count what would be sent and what it would bill; send nothing. */
  dryRun?: boolean;
}

export interface StreamReplayReport {
  dryRun?: boolean;
  objects: number;
  /** Deliveries sent (or that would be). */
  deliveries: number;
  /** Facts reconcile applied sent (or that would be), `kind: "reconcile"` (#57). */
  reconcileFacts?: number;
  /** Lines read twice (a batch archived twice) and sent once. */
  duplicates: number;
  /** Deliveries the projector refused (quarantined: their schema, or a key DynamoDB cannot hold): never on the stream. */
  refused: number;
  /** To one subscriber: the deliveries its filter policy keeps from it (the topic would not have delivered them). */
  filtered?: number;
  /** Ids that could not be sent. */
  failed: string[];
  /**
   * Of those, how many the destination refused for the message itself (a sender fault: sent again,
   * refused again), and the first failure's reason; absent when none failed.
   */
  refusedForGood?: number;
  firstFailure?: string;
  requests: number;
  chunks: number;
}

/** Where a replay sends: the topic (every subscriber), or one subscriber's queue through its filter policy. */
export interface ReplayDestination {
  /** How the lease names the replay: `replay --to-stream`, `replay --to-subscriber crm`. */
  holder: string;
  publisher: StreamPublisher;
  /** One subscriber's queue, and its subscription's filter policy (none: every message); the topic's subscribers filter for themselves. */
  subscriber?: { policy?: FilterPolicy };
}

/**
 * Publishes the archived deliveries of a window to the topic again (`replayArchived`).
 *
 * @example await replayToStream(s3, archive, publisher, lease, { appId: "app1", from: "2026-01-01", to: "2026-01-02" })
 * @throws ArchiveLockedError, with nothing published, when another rewrite holds the lease (after the lease's wait)
 */
export function replayToStream(
  s3: S3Client,
  archive: BlobStore,
  publisher: StreamPublisher,
  lease: ArchiveLease,
  options: StreamReplayOptions = {},
): Promise<StreamReplayReport> {
  return replayArchived(s3, archive, { holder: "replay --to-stream", publisher }, lease, options);
}

/**
 * Sends the archived deliveries of a window again, object by object (day, hour, batch: nothing
 * is ordered across deliveries, on the stream or here), with memory bounded by a day's delivery
 * ids: each line once per delivery id (`<eventId>@<receivedAt>`, the id the projector published it
 * with), every accepted one (a line the projector refused is skipped: its body's schema, or a
 * quarantine record of its receipt, as for a key DynamoDB cannot hold: it was never published), a
 * redacted line as the erasure left it (`erasure` set). A body over SNS's limit goes as a pointer
 * (`publishableMessage`). To one subscriber, only what its filter policy admits, as SNS would
 * have delivered it. The tables are not touched. A dry run counts the same messages, pointers and
 * requests, and sends and writes nothing.
 *
 * It holds the archive lease (`lease`, renewed per chunk): it reads the objects an erasure
 * rewrites and sends what it read, so a chunk read before an erasure's rewrite and sent after its
 * notice would give the user back after the notice that told the consumer to erase them. Under
 * the lease the erasure waits for it (or is refused) and its notice comes after the replay's last
 * message. A dry run takes no lease.
 *
 * @example await replayArchived(s3, archive, { holder: "replay --to-subscriber crm", publisher, subscriber: { policy } }, lease, { from: "2026-01-01", to: "2026-01-01" })
 * @throws ArchiveLockedError, with nothing sent, when another rewrite holds the lease (after the lease's wait)
 */
export async function replayArchived(
  s3: S3Client,
  archive: BlobStore,
  destination: ReplayDestination,
  lease: ArchiveLease,
  options: StreamReplayOptions = {},
): Promise<StreamReplayReport> {
  if (options.dryRun) return sendArchived(s3, archive, destination, options, async () => {});
  const holder = `${destination.holder} ${options.appId ?? "(every app)"} ${options.from ?? "…"}..${options.to ?? "…"}`;
  return withArchiveLease(lease, holder, Date.now, (renew) =>
    sendArchived(s3, archive, destination, options, renew),
  );
}

/** The receipt days a replay reads: the window, or the day of its one delivery. */
function windowOf(options: StreamReplayOptions): { from?: string; to?: string } {
  if (!options.delivery) return { from: options.from, to: options.to };
  const day = new Date(options.delivery.receivedAt).toISOString().slice(0, 10);
  return { from: day, to: day };
}

/** `replayArchived`'s work, `renew` called before each chunk is sent. */
async function sendArchived(
  s3: S3Client,
  archive: BlobStore,
  destination: ReplayDestination,
  options: StreamReplayOptions,
  renew: () => Promise<void>,
): Promise<StreamReplayReport> {
  const report: StreamReplayReport = {
    ...(options.dryRun ? { dryRun: true } : {}),
    objects: 0,
    deliveries: 0,
    duplicates: 0,
    refused: 0,
    ...(destination.subscriber ? { filtered: 0 } : {}),
    failed: [],
    requests: 0,
    chunks: 0,
  };
  const window = windowOf(options);
  const wanted = triggerFilter(options.triggers);
  const { delivery } = options;
  const days = await archiveDays(s3, archive.bucket, window);
  const inWindow = new Set(days);
  const quarantined = await quarantineKeys(s3, archive.bucket, options.appId, (day) => inWindow.has(day));
  const seen = new Set<string>();
  let pending: StreamMessage[] = [];
  const flush = async () => {
    const messages = pending;
    pending = [];
    if (messages.length === 0) return;
    await renew();
    const outcome: PublishOutcome = options.dryRun
      ? { failed: new Map(), ...planCost(packPublishBatches(messages)) }
      : await destination.publisher.publish(messages);
    report.requests += outcome.requests;
    report.chunks += outcome.chunks;
    for (const [id, error] of outcome.failed) {
      report.failed.push(id);
      report.firstFailure ??= error instanceof Error ? error.message : String(error);
      if (error instanceof StreamPublishError && !error.retryable)
        report.refusedForGood = (report.refusedForGood ?? 0) + 1;
    }
  };
  /** Sends one archived line (a delivery, or a fact reconcile applied: `kind`) unless it is filtered out. */
  const send = async (line: RawArchiveLine, kind: "delivery" | "reconcile") => {
    if (options.appId !== undefined && line.appId !== options.appId) return;
    if (!wanted(line.trigger)) return;
    if (delivery && (line.receivedAt !== delivery.receivedAt || !line.eventId.startsWith(delivery.eventId)))
      return;
    const id = deliveryId(line.eventId, line.receivedAt);
    if (seen.has(id)) {
      report.duplicates++;
      return;
    }
    seen.add(id);
    const parsed = parseEventBody(line.body);
    if (!isPublishable(parsed) || quarantined.has(quarantineKey(line.appId, line.receivedAt, line.eventId))) {
      report.refused++;
      return;
    }
    const message = await publishableMessage(factEnvelope(kind, line, { parsed }), line, archive, {
      write: !options.dryRun,
    });
    if (destination.subscriber && !policyAdmits(destination.subscriber.policy, message.attributes)) {
      report.filtered = (report.filtered ?? 0) + 1;
      return;
    }
    pending.push(message);
    if (kind === "reconcile") report.reconcileFacts = (report.reconcileFacts ?? 0) + 1;
    else report.deliveries++;
    if (pending.length >= REPLAY_CHUNK) await flush();
  };
  // The facts reconcile applied, by receipt (fetch) day, beside the day's deliveries (#57).
  const facts = new Map<string, string[]>();
  for (const { key, day } of await reconcileObjects(s3, archive.bucket, options.appId, (d) =>
    inWindow.has(d),
  ))
    facts.set(day, [...(facts.get(day) ?? []), key]);
  for (const day of days) {
    // A delivery id holds its receipt time, so both copies of a line are under one receipt day:
    // the ids seen are a day's at most.
    seen.clear();
    for (const { key } of await dayObjects(s3, archive.bucket, day, delivery?.receivedAt)) {
      report.objects++;
      for (const line of await archiveLines(s3, archive.bucket, key)) await send(line, "delivery");
    }
    for (const key of facts.get(day) ?? []) {
      report.objects++;
      for (const line of await archiveLines(s3, archive.bucket, key)) await send(line, "reconcile");
    }
  }
  await flush();
  return report;
}

/** One subscriber a replay can send to: its queue, and the filter policy of its subscription. */
export interface ReplaySubscriber {
  name: string;
  queueUrl: string;
  policy?: FilterPolicy;
}

/**
 * Finds one subscriber of the topic by name, for a replay to it alone: a declared subscriber
 * (`declared`: name → queue URL, the stack's outputs or the local stack's state) or a running
 * `webhook listen` session's queue (`webhook-listen-…`, as `listen` prints it), with the filter
 * policy its subscription holds now (read from SNS, not from the declaration: what SNS applies).
 *
 * @example await findSubscriber({ sns, sqs }, topicArn, "crm", { crm: queueUrl }) // { name: "crm", queueUrl, policy: { appId: ["app1"] } }
 * @throws UsageError when no subscriber has that name (naming the closest); UserFacingError when
 * its queue is not subscribed to the topic, when its subscription wraps each message in SNS's
 * signed notification (no raw delivery: a replay cannot forge SNS's signature), or when its
 * policy is one the replay cannot evaluate
 */
export async function findSubscriber(
  { sns, sqs }: { sns: SNSClient; sqs: SQSClient },
  topicArn: string,
  name: string,
  declared: Readonly<Record<string, string>>,
): Promise<ReplaySubscriber> {
  const queueUrl =
    declared[name] ??
    (name.startsWith(LISTENER_QUEUE_PREFIX)
      ? await sqs
          .send(new GetQueueUrlCommand({ QueueName: name }))
          .then((out) => out.QueueUrl)
          .catch(() => undefined)
      : undefined);
  if (!queueUrl) {
    const names = Object.keys(declared);
    throw new UsageError(
      name.startsWith(LISTENER_QUEUE_PREFIX)
        ? `no listener queue ${name}: is its \`webhook listen\` still running?`
        : `no subscriber "${name}"${names.length ? ` (did you mean "${closest(name, names)}"? declared: ${names.join(", ")})` : " (none is declared: streamSubscribers in cdk.json)"}`,
    );
  }
  const subscription = await subscriptionOf(sns, topicArn, await queueArnOf(sqs, queueUrl));
  if (!subscription)
    throw new UserFacingError(
      `the queue of "${name}" is not subscribed to ${topicArn}: nothing would reach it`,
    );
  if (!subscription.rawDelivery)
    throw new UserFacingError(
      `"${name}" takes SNS's notification JSON (rawDelivery off), which SNS signs with its own key: a replay cannot write one its consumer would verify. Replay to every subscriber with --to-stream, or turn rawDelivery on for it`,
    );
  if (subscription.filterPolicy && subscription.filterPolicyScope !== "MessageAttributes")
    throw new UserFacingError(
      `"${name}"'s filter policy applies to the message body (${subscription.filterPolicyScope}): this replay evaluates policies on the attributes only; use --to-stream`,
    );
  return {
    name,
    queueUrl,
    ...(subscription.filterPolicy ? { policy: parseFilterPolicy(subscription.filterPolicy) } : {}),
  };
}

/**
 * Sends the archived deliveries of a window to one subscriber's queue (`replayArchived`), those
 * its filter policy admits, as SNS delivers them with raw delivery: no other subscriber receives
 * anything.
 *
 * @example await replayToSubscriber(s3, sqs, archive, await findSubscriber(…), lease, { from, to })
 */
export function replayToSubscriber(
  s3: S3Client,
  sqs: SQSClient,
  archive: BlobStore,
  subscriber: ReplaySubscriber,
  lease: ArchiveLease,
  options: StreamReplayOptions = {},
): Promise<StreamReplayReport> {
  return replayArchived(
    s3,
    archive,
    {
      holder: `replay --to-subscriber ${subscriber.name}`,
      publisher: queueStreamPublisher(sqs, subscriber.queueUrl),
      subscriber: { policy: subscriber.policy },
    },
    lease,
    options,
  );
}
