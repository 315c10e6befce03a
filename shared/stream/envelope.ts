import * as z from "zod/mini";
import type { RawArchiveLine } from "../contracts/bucket-layout";
import { messageGroupOf, parseContract } from "../contracts/queue-messages";
import { eventTime } from "../events/event-time";
import { parseEventBody, refusalOf } from "../events/parse-body";
import type { ParsedEvent } from "../events/schemas";
import { ContractViolationError } from "../platform/errors";
import { versionOf } from "../projections/version";
import { archiveLine } from "../projector/raw-archive";
import type { StreamMessage } from "./publish-batches";
import { STREAM_ATTRIBUTES, STREAM_KINDS } from "./subscribers";

/**
 * The stream's messages, defined once (docs/stream.md): what the projector, `replay --to-stream`,
 * `redrive --stream` and `forget` publish, and what a consumer parses. Versioned by
 * `schemaVersion`; changes are additive only (a new optional field), so a consumer written for
 * version 1 reads every later message of version 1. zod/mini: the projector builds these.
 */

/** The version of the envelope this code writes. It changes only if a field's meaning does. */
export const STREAM_SCHEMA_VERSION = 1;

/** The `trigger` attribute of an erasure notice (no platform trigger is spelt with parentheses). */
export const ERASURE_NOTICE_TRIGGER = "(erasure)";

/** The outcomes a published delivery can have had in the projector (advisory: see `outcome`). */
export const PUBLISHED_OUTCOMES = ["projected", "stale", "archived-only"] as const;

const text = z.string().check(z.minLength(1));

/** Where a body too large for SNS is: an object of the data bucket, readable with `s3:GetObject`. */
export const bodyObjectSchema = z.object({
  bucket: text,
  key: text,
  /** The body's size in bytes. */
  size: z.number().check(z.int(), z.nonnegative()),
});
export type BodyObject = z.infer<typeof bodyObjectSchema>;

/**
 * One accepted delivery (`kind: "delivery"`). `id` names the delivery at the edge: an SQS
 * redelivery, a redrive or an archive replay of it carries the same id, a platform retry (the same
 * bytes received again) has its own. Facts are deduplicated by `naturalKey`, not by id.
 */
export const deliveryEnvelopeSchema = z.object({
  schemaVersion: z.literal(STREAM_SCHEMA_VERSION),
  kind: z.literal(STREAM_KINDS.delivery),
  /** `<eventId>@<receivedAt>`: this delivery. */
  id: text,
  /** SHA-256 (hex) of the body as received: the same bytes always have the same id. */
  eventId: text,
  /** When the edge received this delivery (epoch ms). */
  receivedAt: z.number(),
  /** The app of the envelope; absent when the body names none. */
  appId: z.optional(z.string()),
  trigger: text,
  /** The fact's time (epoch ms): its payload's field, or `receivedAt` when it has none. */
  eventTime: z.optional(z.number()),
  /** Where `eventTime` came from: a payload path (`data.message.sentAt`) or `receivedAt`. */
  eventTimeSource: z.optional(z.string()),
  /** Where the trigger stands in its item's lifecycle: 0 opens, 2 closes, 1 anything else. */
  rank: z.optional(z.number()),
  /** The fact's key (`<app>|<trigger>|…`): two deliveries with the same key are one fact. */
  naturalKey: z.optional(z.string()),
  /** `versionOf(eventTime, rank, receivedAt, eventId)`: orders facts about one item, as the tables do. */
  version: z.optional(z.string()),
  /**
   * What the projector made of it when it published (advisory: a record retried after a failed
   * publish comes back `stale`; absent on a replay). Never a reason to drop a delivery.
   */
  outcome: z.optional(z.enum(PUBLISHED_OUTCOMES)),
  /** The body as the platform sent it (absent when `bodyObject` holds it). */
  body: z.optional(z.string()),
  /** Where the body is when the envelope would pass SNS's 256 KiB. */
  bodyObject: z.optional(bodyObjectSchema),
  /** Set on a line an erasure redacted (`replay --to-stream` after `forget`): the erasure's id. */
  erasure: z.optional(z.string()),
});
export type DeliveryEnvelope = z.infer<typeof deliveryEnvelopeSchema>;

/**
 * An erasure notice (`kind: "erasure"`): `forget` erased a user of an app (`scope: "user"`, who
 * is now `pseudonym` in the tables and the archive) or the whole app. The contract obliges a
 * consumer to erase what it derived (docs/stream.md). It passes every subscriber's filter.
 */
export const erasureNoticeSchema = z.object({
  schemaVersion: z.literal(STREAM_SCHEMA_VERSION),
  kind: z.literal(STREAM_KINDS.erasure),
  /** The erasure's id (what `forget` reported): a re-run publishes the same notice. */
  id: text,
  appId: text,
  scope: z.enum(["user", "app"]),
  pseudonym: z.optional(z.string()),
  /**
   * One user's erasure: the SHA-256 (hex) of `<appId>\0<uid>`. Hash the uids you hold the same way
   * to find whom to erase; it tells nothing to whoever does not already hold the uid.
   */
  subject: z.optional(z.string()),
  /** The days whose archived deliveries the erasure redacted or removed (`replay --to-stream` them for what stands now). */
  days: z.optional(z.array(z.string())),
  /** When the erasure finished (epoch ms). */
  finishedAt: z.number(),
});
export type ErasureNotice = z.infer<typeof erasureNoticeSchema>;

/** Any message of the stream. */
export const streamMessageSchema = z.discriminatedUnion("kind", [
  deliveryEnvelopeSchema,
  erasureNoticeSchema,
]);
export type StreamEnvelope = z.infer<typeof streamMessageSchema>;

/**
 * The id of one delivery at the edge.
 *
 * @example deliveryId("5f0c…", 1763000000300) // "5f0c…@1763000000300"
 */
export function deliveryId(eventId: string, receivedAt: number): string {
  return `${eventId}@${receivedAt}`;
}

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
  const parsed = options.parsed ?? parseEventBody(delivery.body);
  const line = archiveLine({ ...delivery, appId: delivery.appId, messageId: "" }, parsed);
  const known = parsed.kind === "known" ? parsed.event : undefined;
  const time = line.eventTime === undefined ? undefined : eventTime(known, delivery.receivedAt);
  return {
    schemaVersion: STREAM_SCHEMA_VERSION,
    kind: STREAM_KINDS.delivery,
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
    ...(options.outcome ? { outcome: options.outcome } : {}),
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
        envelope.kind === STREAM_KINDS.delivery ? envelope.trigger : ERASURE_NOTICE_TRIGGER,
      [STREAM_ATTRIBUTES.kind]: envelope.kind,
    },
  };
}

/**
 * Reads a message a subscriber's queue received: the envelope itself (raw delivery), or SNS's
 * notification JSON around it (`Message`).
 *
 * @example parseStreamMessage(sqsMessage.Body).kind // "delivery"
 * @throws ContractViolationError when it is neither
 */
export function parseStreamMessage(body: string): StreamEnvelope {
  return parseContract(streamMessageSchema, publishedMessage(body), "stream message");
}

/**
 * The message as it was published, every field kept (those a newer `schemaVersion` adds too):
 * the raw delivery itself, or the `Message` inside SNS's notification JSON.
 *
 * @example publishedMessage('{"Type":"Notification","Message":"{\"kind\":\"delivery\"}"}') // { kind: "delivery" }
 * @throws ContractViolationError when it is not JSON
 */
export function publishedMessage(body: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new ContractViolationError("stream message is not JSON", { cause: error });
  }
  const notification = value as { Type?: unknown; Message?: unknown };
  if (notification?.Type === "Notification" && typeof notification.Message === "string")
    return publishedMessage(notification.Message);
  return value;
}
