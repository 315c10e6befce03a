/**
 * The producer's half of the stream's envelope: what the projector, `replay --to-stream`,
 * `redrive --stream` and `forget` build and publish. The envelope's schemas, types and parser
 * are the stream package's (`@webhook-backend/stream`), which consumers install.
 */
import {
  type DeliveryEnvelope,
  deliveryId,
  ERASURE_NOTICE_TRIGGER,
  type FactEnvelope,
  STREAM_ATTRIBUTES,
  STREAM_KINDS,
  STREAM_SCHEMA_VERSION,
  type StreamEnvelope,
} from "@webhook-backend/stream";
import { eventTime } from "@webhook-backend/stream/events/event-time";
import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import type { ParsedEvent } from "@webhook-backend/stream/events/schemas";
import { versionOf } from "@webhook-backend/stream/projections/version";
import type { RawArchiveLine } from "../contracts/bucket-layout";
import { messageGroupOf } from "../contracts/queue-messages";
import { archiveLine } from "../projector/raw-archive";
import type { StreamMessage } from "./publish-batches";

/** A delivery as the archive and the projector hold it. */
export type AcceptedDelivery = Pick<RawArchiveLine, "eventId" | "receivedAt" | "trigger" | "appId" | "body"> &
  Partial<Pick<RawArchiveLine, "erasure">>;

/**
 * The envelope of an accepted delivery, with the facts the archive line computes (`archiveLine`:
 * event time, natural key, rank) and the version the tables order it by at this receipt.
 *
 * @example deliveryEnvelope(queued, { outcome: "projected" }).id // "5f0c…@1763000000300"
 */
export function deliveryEnvelope(
  delivery: AcceptedDelivery,
  options: { parsed?: ParsedEvent; outcome?: DeliveryEnvelope["outcome"] } = {},
): DeliveryEnvelope {
  return factEnvelope("delivery", delivery, options) as DeliveryEnvelope;
}

/**
 * The envelope of a fact of either kind the copy folds: a delivery, or a fact reconcile observed
 * (`kind: "reconcile"`, its `receivedAt` the listing's fetch time: #57 item 4), built alike.
 *
 * @example factEnvelope("reconcile", { eventId, receivedAt: fetchedAt, appId, trigger, body }).kind // "reconcile"
 */
export function factEnvelope(
  kind: FactEnvelope["kind"],
  delivery: AcceptedDelivery,
  options: { parsed?: ParsedEvent; outcome?: DeliveryEnvelope["outcome"] } = {},
): FactEnvelope {
  const parsed = options.parsed ?? parseEventBody(delivery.body);
  const line = archiveLine({ ...delivery, appId: delivery.appId, messageId: "" }, parsed);
  const known = parsed.kind === "known" ? parsed.event : undefined;
  const time = line.eventTime === undefined ? undefined : eventTime(known, delivery.receivedAt);
  return {
    schemaVersion: STREAM_SCHEMA_VERSION,
    kind,
    id: deliveryId(delivery.eventId, delivery.receivedAt),
    eventId: delivery.eventId,
    receivedAt: delivery.receivedAt,
    ...(delivery.appId === undefined ? {} : { appId: delivery.appId }),
    trigger: delivery.trigger,
    ...(time && line.rank !== undefined
      ? {
          eventTime: time.ms,
          eventTimeSource: time.source,
          rank: line.rank,
          naturalKey: line.naturalKey,
          version: versionOf({
            eventTimeMs: time.ms,
            rank: line.rank as 0 | 1 | 2,
            firstReceivedAt: delivery.receivedAt,
            eventId: delivery.eventId,
          }),
        }
      : {}),
    ...(options.outcome && kind === STREAM_KINDS.delivery ? { outcome: options.outcome } : {}),
    body: delivery.body,
    ...(delivery.erasure ? { erasure: delivery.erasure } : {}),
  };
}

/**
 * Whether a delivery is one the stream carries: an accepted event (a known one the projector
 * applies, or an unknown trigger), never one it refuses (quarantined).
 *
 * @example isPublishable(parseEventBody("{")) // false: not JSON, quarantined
 */
export function isPublishable(parsed: ParsedEvent): boolean {
  return refusalOf(parsed) === undefined;
}

/**
 * The SNS message of an envelope: its JSON and the `appId`, `trigger` and `kind` attributes (an
 * event that names no app is filed under `(no-app)`, as the queues' message groups are).
 *
 * @example streamMessage(envelope).attributes // { appId: "app1", trigger: "group_created", kind: "delivery" }
 */
export function streamMessage(envelope: StreamEnvelope): StreamMessage {
  return {
    id: envelope.id,
    body: JSON.stringify(envelope),
    attributes: {
      [STREAM_ATTRIBUTES.appId]: messageGroupOf(envelope.appId),
      [STREAM_ATTRIBUTES.trigger]:
        envelope.kind === STREAM_KINDS.erasure ? ERASURE_NOTICE_TRIGGER : envelope.trigger,
      [STREAM_ATTRIBUTES.kind]: envelope.kind,
    },
  };
}
