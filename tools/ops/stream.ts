/**
 * The stream's operations (#41): `redrive --stream` publishes the facts the projector kept
 * unpublished; what `replay --to-stream` and `--to-subscriber` print (the replays themselves:
 * `stream-replay.ts`).
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { isFact, parseStreamMessage, type StreamEnvelope } from "@webhook-backend/stream";
import { listErasedSubjects } from "../../shared/erasure/erased-subjects";
import { erasedInFlight, type InFlightDelivery } from "../../shared/erasure/in-flight";
import { factEnvelope, streamMessage } from "../../shared/stream/envelope";
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
    ...(report.reconcileFacts
      ? [`  and ${count(report.reconcileFacts, "fact")} reconcile applied (kind reconcile)`]
      : []),
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
 * What a replay says when deliveries could not be sent (#61): running it again sends every
 * delivery again under the same ids (a consumer that deduplicates by id takes each once), which
 * helps only where the failure was passing (a throttle, a timeout); a message the destination
 * refused for itself is refused again, and the line says so.
 *
 * @example replayFailureLine({ failed: ["a"], refusedForGood: 1, firstFailure: "SQS failed the entry: InvalidMessageContents: …" })
 * // "1 delivery refused by the destination (SQS failed the entry: InvalidMessageContents: …): sent again, it would be refused again"
 */
export function replayFailureLine(
  report: Pick<StreamReplayReport, "failed" | "refusedForGood" | "firstFailure">,
): string {
  const failed = report.failed.length;
  const forGood = report.refusedForGood ?? 0;
  const why = report.firstFailure ? ` (${report.firstFailure})` : "";
  if (forGood === failed)
    return `${count(failed, "delivery", "deliveries")} refused by the destination${why}: sent again, ${failed === 1 ? "it" : "they"} would be refused again`;
  return `${count(failed, "delivery", "deliveries")} could not be sent${why}: run it again (ids are stable: a consumer deduplicating by id takes each once)${forGood ? `; ${forGood} of them refused by the destination, which running again does not change` : ""}`;
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
 * The redaction of deliveries naming an erased user, as the projector's (`erasedInFlight` over the
 * marks in the apps table, `shared/erasure/in-flight.ts`).
 */
export type UnpublishedRedaction = <T extends InFlightDelivery>(deliveries: readonly T[]) => Promise<T[]>;

/**
 * The projector's redaction over the marks in the apps table (`listErasedSubjects`), read afresh
 * for each batch a redrive publishes (`cacheMs` 0: a mark written while it runs is seen by its
 * next batch).
 *
 * @example await redriveUnpublished(sqs, url, publisher, erasedMarksRedaction(documentClient(dynamo), appsTable))
 */
export function erasedMarksRedaction(
  doc: DynamoDBDocumentClient,
  appsTable: string,
  now: () => number = Date.now,
): UnpublishedRedaction {
  return erasedInFlight(listErasedSubjects(doc, appsTable), { cacheMs: 0, now });
}

/**
 * Unpublished envelopes as they may be published now: a delivery (or a reconcile fact, #57) that names a user erased since
 * it was received (`redact`: the projector's marks, read once for them all) redacted as the
 * projector would have redacted it (its uid as the erasure's pseudonym, their free text removed,
 * the erasure's id set), its envelope made again from the redacted body (its natural key may hold
 * a conversation id); any other as it was kept. A body kept as a pointer (`bodyObject`, over SNS's
 * limit) is the bucket's object, which the erasure rewrites itself.
 *
 * @example await redactedEnvelopes([envelope], redact) // [the envelope, its body redacted and `erasure` set]
 */
export async function redactedEnvelopes(
  envelopes: readonly StreamEnvelope[],
  redact: UnpublishedRedaction | undefined,
): Promise<StreamEnvelope[]> {
  const deliveries = envelopes.flatMap((envelope) =>
    isFact(envelope) && envelope.body !== undefined
      ? [
          {
            envelope,
            body: envelope.body,
            receivedAt: envelope.receivedAt,
            appId: envelope.appId,
            ...(envelope.erasure ? { erasure: envelope.erasure } : {}),
          },
        ]
      : [],
  );
  if (!redact || deliveries.length === 0) return [...envelopes];
  const redacted = new Map<StreamEnvelope, StreamEnvelope>();
  (await redact(deliveries)).forEach((after, i) => {
    const before = deliveries[i];
    if (!before || after === before || !isFact(before.envelope)) return;
    const { eventId, receivedAt, appId, trigger, kind } = before.envelope;
    const outcome = before.envelope.kind === "delivery" ? before.envelope.outcome : undefined;
    const { erasure } = after;
    redacted.set(
      before.envelope,
      factEnvelope(
        kind,
        { eventId, receivedAt, appId, trigger, body: after.body, ...(erasure ? { erasure } : {}) },
        outcome ? { outcome } : {},
      ),
    );
  });
  return envelopes.map((e) => redacted.get(e) ?? e);
}

/**
 * Publishes the facts the projector kept in the stream's unpublished queue (their envelopes, as
 * they would have been published, each redacted first when it names a user erased since:
 * `redactedEnvelopes`, #50: an SQS message cannot be rewritten, so what is sent from it after the
 * erasure is redacted) and deletes each one published; one that fails again stays for the next
 * redrive. A message that is not a stream envelope is left where it is and counted as failed. (A
 * dry run counts the queue's messages: `queueDepth`.)
 *
 * @example await redriveUnpublished(sqs, unpublishedUrl, publisher, redact) // { moved: 3, failed: 0 }
 */
export async function redriveUnpublished(
  sqs: SQSClient,
  queueUrl: string,
  publisher: StreamPublisher,
  redact?: UnpublishedRedaction,
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
    const parsed = received.flatMap((m) => {
      try {
        return [{ receipt: m.ReceiptHandle, envelope: parseStreamMessage(m.Body ?? "") }];
      } catch {
        report.failed++;
        return [];
      }
    });
    const envelopes = await redactedEnvelopes(
      parsed.map((p) => p.envelope),
      redact,
    );
    const messages = parsed.map(({ receipt, envelope }, i) => ({
      receipt,
      message: streamMessage(envelopes[i] ?? envelope),
    }));
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
