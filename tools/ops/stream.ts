/**
 * The stream's operations (#41): `replay --to-stream` publishes archived deliveries again (same
 * ids), `redrive --stream` publishes the facts the projector kept unpublished.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { type ArchiveLease, withArchiveLease } from "../../shared/adapters/archive-lease";
import { parseEventBody } from "../../shared/events/parse-body";
import type { BlobStore } from "../../shared/ports/blob-store";
import {
  deliveryEnvelope,
  deliveryId,
  isPublishable,
  parseStreamMessage,
  streamMessage,
} from "../../shared/stream/envelope";
import { publishableMessage } from "../../shared/stream/projector-stream";
import {
  type PublishOutcome,
  packPublishBatches,
  planCost,
  type StreamMessage,
  type StreamPublisher,
} from "../../shared/stream/publish-batches";
import { count } from "../cli/format";
import { archiveDays, archiveLines, dayObjects } from "./archive-scan";

/** Messages published at once by a replay: bounded memory, full `PublishBatch` requests. */
const REPLAY_CHUNK = 500;

export interface StreamReplayOptions {
  appId?: string;
  /** First and last receipt day, YYYY-MM-DD. */
  from?: string;
  to?: string;
  triggers?: readonly string[];
  /** Count what would be published and what it would bill; publish nothing. */
  dryRun?: boolean;
}

export interface StreamReplayReport {
  dryRun?: boolean;
  objects: number;
  /** Deliveries published (or that would be). */
  deliveries: number;
  /** Lines read twice (a batch archived twice) and published once. */
  duplicates: number;
  /** Refused deliveries (quarantined when received): never on the stream. */
  refused: number;
  /** Ids that could not be published. */
  failed: string[];
  requests: number;
  chunks: number;
}

/**
 * What `replay --to-stream` prints of its report: what it published (or would), the requests and
 * chunks they bill, and what it skipped, one thing a line (a single line ran to 150 columns).
 *
 * @example streamReplayLines({ objects: 16, deliveries: 6, duplicates: 0, refused: 0, failed: [], requests: 1, chunks: 1 })
 * // ["published 6 deliveries from 16 archive objects to the stream", "  in 1 request (1 billed 64 KiB chunk)", "  skipped: 0 duplicate lines, 0 refused (quarantined) deliveries"]
 */
export function streamReplayLines(report: StreamReplayReport): string[] {
  const published = report.deliveries - report.failed.length;
  return [
    `${report.dryRun ? "would publish" : "published"} ${count(published, "delivery", "deliveries")} from ${count(report.objects, "archive object")} to the stream`,
    `  in ${count(report.requests, "request")} (${count(report.chunks, "billed 64 KiB chunk")})`,
    `  skipped: ${count(report.duplicates, "duplicate line")}, ${count(report.refused, "refused (quarantined) delivery", "refused (quarantined) deliveries")}`,
  ];
}

/**
 * The warning of a replay or redrive to a topic nothing is subscribed to: what it publishes
 * reaches no one (a dry run says so before the run does it).
 *
 * @example nobodySubscribedLines("arn:aws:sns:…:stream", true)[1] // "  published now, they would reach no one: start `npx webhook listen` or …"
 */
export function nobodySubscribedLines(topicArn: string, dryRun: boolean | undefined): string[] {
  return [
    `warning: nothing is subscribed to ${topicArn}`,
    dryRun
      ? "  published now, they would reach no one: start `npx webhook listen` or declare streamSubscribers"
      : "  they reached no one: start `npx webhook listen` or declare streamSubscribers, then run it again",
  ];
}

/**
 * Publishes the archived deliveries of a window again, object by object (day, hour, batch: nothing
 * is ordered across deliveries, on the stream or here), with memory bounded by a day's delivery
 * ids: each line once per delivery id (`<eventId>@<receivedAt>`, the id the projector published it with),
 * every accepted one (a refused line is skipped: it was quarantined, never published), a redacted
 * line as the erasure left it (`erasure` set). A body over SNS's limit goes as a pointer
 * (`publishableMessage`). The tables are not touched.
 *
 * It holds the archive lease (`lease`, renewed per chunk): it reads the objects an erasure
 * rewrites and publishes what it read, so a chunk read before an erasure's rewrite and published
 * after its notice would reach every subscriber after the notice that told it to erase the user,
 * and nothing would tell it again. Under the lease the erasure waits for it (or is refused) and
 * its notice comes after the replay's last publish. A dry run publishes nothing and takes no lease.
 *
 * @example await replayToStream(s3, archive, publisher, lease, { appId: "app1", from: "2026-01-01", to: "2026-01-02" })
 * @throws ArchiveLockedError, with nothing published, when another rewrite holds the lease (after the lease's wait)
 */
export async function replayToStream(
  s3: S3Client,
  archive: BlobStore,
  publisher: StreamPublisher,
  lease: ArchiveLease,
  options: StreamReplayOptions = {},
): Promise<StreamReplayReport> {
  if (options.dryRun) return publishArchived(s3, archive, publisher, options, async () => {});
  const holder = `replay --to-stream ${options.appId ?? "(every app)"} ${options.from ?? "…"}..${options.to ?? "…"}`;
  return withArchiveLease(lease, holder, Date.now, (renew) =>
    publishArchived(s3, archive, publisher, options, renew),
  );
}

/** `replayToStream`'s work, `renew` called before each chunk is published. */
async function publishArchived(
  s3: S3Client,
  archive: BlobStore,
  publisher: StreamPublisher,
  options: StreamReplayOptions,
  renew: () => Promise<void>,
): Promise<StreamReplayReport> {
  const report: StreamReplayReport = {
    ...(options.dryRun ? { dryRun: true } : {}),
    objects: 0,
    deliveries: 0,
    duplicates: 0,
    refused: 0,
    failed: [],
    requests: 0,
    chunks: 0,
  };
  const seen = new Set<string>();
  let pending: StreamMessage[] = [];
  const flush = async () => {
    const messages = pending;
    pending = [];
    if (messages.length === 0) return;
    await renew();
    const outcome: PublishOutcome = options.dryRun
      ? { failed: new Map(), ...planCost(packPublishBatches(messages)) }
      : await publisher.publish(messages);
    report.requests += outcome.requests;
    report.chunks += outcome.chunks;
    report.failed.push(...outcome.failed.keys());
  };
  for (const day of await archiveDays(s3, archive.bucket, options)) {
    // A delivery id holds its receipt time, so both copies of a line are under one receipt day:
    // the ids seen are a day's at most.
    seen.clear();
    for (const { key } of await dayObjects(s3, archive.bucket, day)) {
      report.objects++;
      for (const line of await archiveLines(s3, archive.bucket, key)) {
        if (options.appId !== undefined && line.appId !== options.appId) continue;
        if (options.triggers?.length && !options.triggers.includes(line.trigger)) continue;
        const id = deliveryId(line.eventId, line.receivedAt);
        if (seen.has(id)) {
          report.duplicates++;
          continue;
        }
        seen.add(id);
        const parsed = parseEventBody(line.body);
        if (!isPublishable(parsed)) {
          report.refused++;
          continue;
        }
        const envelope = deliveryEnvelope(line, { parsed });
        pending.push(
          options.dryRun ? streamMessage(envelope) : await publishableMessage(envelope, line, archive),
        );
        report.deliveries++;
        if (pending.length >= REPLAY_CHUNK) await flush();
      }
    }
  }
  await flush();
  return report;
}

export interface StreamRedriveReport {
  /** Facts published from the unpublished queue. */
  moved: number;
  /** Facts left in the queue: their publish failed again (retried by the next redrive). */
  failed: number;
}

/**
 * Publishes the facts the projector kept in the stream's unpublished queue (their envelopes, as
 * they would have been published) and deletes each one published; one that fails again stays for
 * the next redrive. A message that is not a stream envelope is left where it is and counted as
 * failed. (A dry run counts the queue's messages: `queueDepth`.)
 *
 * @example await redriveUnpublished(sqs, unpublishedUrl, publisher) // { moved: 3, failed: 0 }
 */
export async function redriveUnpublished(
  sqs: SQSClient,
  queueUrl: string,
  publisher: StreamPublisher,
): Promise<StreamRedriveReport> {
  const report: StreamRedriveReport = { moved: 0, failed: 0 };
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        // What is not published stays invisible for the rest of this redrive: it ends.
        VisibilityTimeout: 120,
        MessageAttributeNames: ["All"],
      }),
    );
    const received = out.Messages ?? [];
    if (received.length === 0) return report;
    const messages = received.flatMap((m) => {
      try {
        return [{ receipt: m.ReceiptHandle, message: streamMessage(parseStreamMessage(m.Body ?? "")) }];
      } catch {
        report.failed++;
        return [];
      }
    });
    const { failed } = await publisher.publish(messages.map((m) => m.message));
    const done = messages.filter((m) => !failed.has(m.message.id));
    report.moved += done.length;
    report.failed += messages.length - done.length;
    if (done.length > 0)
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.receipt })),
        }),
      );
  }
}
