import type { Logger } from "@aws-lambda-powertools/logger";
import type { Metrics } from "@aws-lambda-powertools/metrics";
import type { DeliveryEnvelope, FactEnvelope, StreamEnvelope } from "@webhook-backend/stream";
import { oversizeKey } from "../contracts/bucket-layout";
import { messageGroupOf } from "../contracts/queue-messages";
import { errorSummary, StreamPublishError } from "../platform/errors";
import { countOutcome } from "../platform/observability";
import type { BlobStore } from "../ports/blob-store";
import type { MessageQueue } from "../ports/message-queue";
import type { AcceptedRecord, FactStream, FactStreamResult } from "../projector/fact-stream";
import { type AcceptedDelivery, deliveryEnvelope, streamMessage } from "./envelope";
import { fitsSns, type StreamMessage, type StreamPublisher } from "./publish-batches";

export interface ProjectorStreamOptions {
  /** The topic's publisher (the projector's loads its SNS client with the first publish). */
  publisher: StreamPublisher;
  /** The stream's own dead-letter queue (`STREAM_UNPUBLISHED_QUEUE_URL`). */
  unpublished: MessageQueue;
  /** The data bucket: a body too large for SNS is published as a pointer to its object there. */
  dataStore: BlobStore;
  /** The events queue's receives before its DLQ: the last receive keeps an unpublished fact instead of failing it. */
  maxReceiveCount: number;
  /** The stream's logger and metrics (service `stream`). */
  logger: Logger;
  metrics: Metrics;
}

/**
 * The message of an envelope as it can be published: as it is when it fits SNS's 256 KiB, else
 * with its body replaced by the object holding it (`bodyKey`: the ingest's, for a body it put in
 * the bucket; else written now at the ingest's key for it, `oversize/…`, which a retry or a
 * replay rewrites with the same bytes). The projector's publish and `replay --to-stream` share it;
 * a dry run (`write: false`) gets the same message and writes nothing, so that it bills the
 * pointer the run sends.
 *
 * @example await publishableMessage(envelope, { ...queued }, dataStore) // { id, body, attributes }
 */
export async function publishableMessage(
  envelope: FactEnvelope,
  delivery: Pick<AcceptedDelivery, "appId" | "receivedAt" | "eventId" | "body"> & { bodyKey?: string },
  dataStore: Pick<BlobStore, "bucket" | "put">,
  { write = true }: { write?: boolean } = {},
): Promise<StreamMessage> {
  const message = streamMessage(envelope);
  if (fitsSns(message)) return message;
  const key = delivery.bodyKey ?? oversizeKey(delivery.appId, delivery.receivedAt, delivery.eventId);
  if (!delivery.bodyKey && write)
    await dataStore.put(key, delivery.body, { contentType: "application/json" });
  const { body: _inline, ...rest } = envelope;
  return streamMessage({
    ...rest,
    bodyObject: { bucket: dataStore.bucket, key, size: Buffer.byteLength(delivery.body) },
  });
}

/**
 * The message the stream's dead-letter queue keeps for a fact: the envelope, as it would have
 * been published, with its attributes, in its app's message group.
 *
 * @example await unpublished.send(unpublishedMessage(message, envelope))
 */
export function unpublishedMessage(message: StreamMessage, envelope: Pick<StreamEnvelope, "appId">) {
  return { body: message.body, attributes: message.attributes, groupId: messageGroupOf(envelope.appId) };
}

/**
 * The projector's publish step (`FactStream`; `switchedFactStream` calls it only while something
 * listens, and loads it with the first publish): each accepted record's
 * envelope (`deliveryEnvelope`, advisory outcome included) is published, the batch's envelopes
 * packed into as few `PublishBatch` requests and 64 KiB chunks as they fit. A record whose publish
 * failed (after the publisher's retries) fails, unless this is its last receive: then its envelope
 * goes to the stream's own dead-letter queue (`unpublished`, WARN "fact not published"), so the
 * events DLQ and its alarm never see a fact whose tables are written; if even that send fails,
 * the record fails. Counts `StreamFacts` (published, unpublished) once per batch.
 *
 * @example deps.stream = projectorStream({ publisher, unpublished, dataStore, maxReceiveCount: 5, logger, metrics })
 */
export function projectorStream(options: ProjectorStreamOptions): FactStream {
  return {
    async publishAccepted(records) {
      const results = new Map<string, FactStreamResult>();
      if (records.length === 0) return results;
      const messages = new Map<
        string,
        { record: AcceptedRecord; message: StreamMessage; envelope: DeliveryEnvelope }
      >();
      await Promise.all(
        records.map(async (record) => {
          const envelope = deliveryEnvelope(record.event, { parsed: record.parsed, outcome: record.outcome });
          try {
            messages.set(record.messageId, {
              record,
              envelope,
              message: await publishableMessage(envelope, record.event, options.dataStore),
            });
          } catch (error) {
            results.set(record.messageId, { error });
          }
        }),
      );
      // One message per delivery: two records of one delivery (an SQS duplicate) publish it once.
      const unique = new Map([...messages.values()].map(({ message }) => [message.id, message]));
      let failed: Map<string, unknown>;
      try {
        failed = (await options.publisher.publish([...unique.values()])).failed;
      } catch (error) {
        // The publisher threw instead of reporting (it should not): every message failed, and is
        // kept unpublished on its last receive like any other failure.
        const reason = new StreamPublishError("the stream's publisher failed", true, { cause: error });
        failed = new Map([...unique.keys()].map((id) => [id, reason]));
      }
      let published = 0;
      let unpublished = 0;
      await Promise.all(
        [...messages].map(async ([messageId, { record, envelope, message }]) => {
          const error = failed.get(message.id);
          if (error === undefined) {
            results.set(messageId, { stream: "published" });
            published++;
            return;
          }
          if (record.receiveCount < options.maxReceiveCount) {
            results.set(messageId, { error });
            return;
          }
          try {
            await options.unpublished.send(unpublishedMessage(message, envelope));
            results.set(messageId, { stream: "unpublished" });
            unpublished++;
            options.logger.warn(
              "fact not published; kept in the stream's unpublished queue (redrive --stream)",
              {
                trigger: envelope.trigger,
                appId: envelope.appId,
                eventId: envelope.eventId,
                reason: "unpublished",
                error: errorSummary(error),
              },
            );
          } catch (sendError) {
            results.set(messageId, { error: sendError });
          }
        }),
      );
      if (published) countOutcome(options.metrics, "stream", "published", published);
      if (unpublished) countOutcome(options.metrics, "stream", "unpublished", unpublished);
      return results;
    },
  };
}
