/**
 * The stream's operations (#41): `redrive --stream` publishes the facts the projector kept
 * unpublished; what `replay --to-stream` and `--to-subscriber` print (the replays themselves:
 * `stream-replay.ts`).
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { parseStreamMessage, streamMessage } from "../../shared/stream/envelope";
import type { StreamPublisher } from "../../shared/stream/publish-batches";
import { count } from "../cli/format";
import type { StreamReplayReport } from "./stream-replay";

/**
 * What `replay --to-stream` (or `--to-subscriber`) prints of its report: what it sent (or would),
 * and where, the requests and chunks they bill, and what it skipped, one thing a line (a single
 * line ran to 150 columns).
 *
 * @example streamReplayLines({ objects: 16, deliveries: 6, duplicates: 0, refused: 0, failed: [], requests: 1, chunks: 1 })
 * // ["published 6 deliveries from 16 archive objects to the stream", "  in 1 request (1 billed 64 KiB chunk)", "  skipped: 0 duplicate lines, 0 refused (quarantined) deliveries"]
 * @example streamReplayLines(report, "crm")[0] // "sent 6 deliveries from 16 archive objects to subscriber crm's queue only"
 */
export function streamReplayLines(report: StreamReplayReport, subscriber?: string): string[] {
  const sent = report.deliveries - report.failed.length;
  const verb = subscriber
    ? report.dryRun
      ? "would send"
      : "sent"
    : report.dryRun
      ? "would publish"
      : "published";
  return [
    `${verb} ${count(sent, "delivery", "deliveries")} from ${count(report.objects, "archive object")} ${subscriber ? `to subscriber ${subscriber}'s queue only` : "to the stream"}`,
    `  in ${count(report.requests, "request")} (${count(report.chunks, "billed 64 KiB chunk")})`,
    `  skipped: ${count(report.duplicates, "duplicate line")}, ${count(report.refused, "refused (quarantined) delivery", "refused (quarantined) deliveries")}`,
    ...(report.filtered === undefined
      ? []
      : [
          `  not for it: ${count(report.filtered, "delivery", "deliveries")} its filter policy keeps from it`,
        ]),
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
