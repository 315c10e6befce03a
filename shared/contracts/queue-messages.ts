import { ContractViolationError } from "@webhook-backend/stream/errors";
import { parseContract } from "@webhook-backend/stream/parse";
import * as z from "zod/mini";
import { NO_APP_MESSAGE_GROUP } from "../platform/constants";

/**
 * The messages that cross the queues, each defined once: the sender builds them from these types
 * and the receiver parses them with these schemas. zod/mini: the ingest imports this module and
 * its bundle is size-sensitive (classic zod alone would add ~440 KB).
 */

/** Message attribute names on the events queue. */
export const MESSAGE_ATTRIBUTE = {
  trigger: "trigger",
  appId: "appId",
  receivedAt: "receivedAt",
  eventId: "eventId",
  bodyLocation: "bodyLocation",
} as const;

/** `bodyLocation` attribute value when the SQS body is a pointer to an S3 object. */
export const BODY_LOCATION_S3 = "s3";

const text = z.string().check(z.minLength(1));
const sha256Hex = z.string().check(z.regex(/^[0-9a-f]{64}$/));

/**
 * The attributes the ingest stamps on each event message. All optional on receipt: a message sent
 * by hand, or redriven by a tool that dropped them, falls back to the body hash and SQS's sent time.
 * A value that is present and malformed is a contract violation.
 */
export const eventAttributesSchema = z.object({
  trigger: z.optional(text),
  appId: z.optional(text),
  receivedAt: z.optional(z.coerce.number().check(z.int(), z.nonnegative())),
  eventId: z.optional(sha256Hex),
  bodyLocation: z.optional(z.literal(BODY_LOCATION_S3)),
});
export type EventAttributes = z.infer<typeof eventAttributesSchema>;

/** What the ingest sends: the attributes every event carries. */
export type StampedEventAttributes = EventAttributes & {
  trigger: string;
  receivedAt: number;
  eventId: string;
};

/** The SQS attribute map of an event (numbers as `Number` attributes), undefined values left out. */
export function eventMessageAttributes(attributes: StampedEventAttributes): Record<string, string | number> {
  return Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined));
}

/**
 * The message group (SQS `MessageGroupId`, the fair queues' tenant) of a message about an app: the
 * app itself, so that one app's burst waits behind its own backlog and not in every app's way.
 * Every queue that carries an app's events or jobs sends with it (the ingest, resend, the
 * recording jobs, redrive).
 *
 * @example messageGroupOf("app1") // "app1"
 * @example messageGroupOf(undefined) // "(no-app)"
 */
export function messageGroupOf(appId: string | undefined): string {
  return appId ?? NO_APP_MESSAGE_GROUP;
}

type SqsAttributeMap = Record<string, { stringValue?: string | undefined } | undefined> | undefined;

/**
 * Parses an SQS record's message attributes as the events queue's contract.
 *
 * @example readEventAttributes({ trigger: { stringValue: "group_created" } }) // { trigger: "group_created" }
 * @throws ContractViolationError naming the attribute that is malformed
 */
export function readEventAttributes(attributes: SqsAttributeMap): EventAttributes {
  const values = Object.fromEntries(
    Object.values(MESSAGE_ATTRIBUTE).map((name) => [name, attributes?.[name]?.stringValue]),
  );
  return parseContract(eventAttributesSchema, values, "event message attributes");
}

/** The pointer that replaces a body too large for SQS: the object holding the body as sent. */
export const oversizePointerSchema = z.object({
  bucket: text,
  key: text,
  size: z.number().check(z.int(), z.nonnegative()),
  eventId: sha256Hex,
});
export type OversizePointer = z.infer<typeof oversizePointerSchema>;

/** A job for the recorder: one recording to fetch. Sent by the projector, read by the recorder. */
export const recordingJobSchema = z.object({
  appId: text,
  sessionId: text,
  startTime: z.string().check(z.regex(/^\d+$/)),
  recordingDate: z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/)),
  recordingUrl: text,
  eventId: text,
});
export type RecordingJob = z.infer<typeof recordingJobSchema>;

/** The attributes of a recording job message (for the DLQ and the console; the body is the job); its group is `messageGroupOf(job.appId)`. */
export function recordingJobAttributes(job: RecordingJob): Record<string, string> {
  return { appId: job.appId, sessionId: job.sessionId, eventId: job.eventId };
}

/**
 * Parses a JSON text (or a value) against a contract.
 *
 * @example parseJsonContract(oversizePointerSchema, record.body, "oversize pointer")
 * @throws ContractViolationError naming the contract and the failing path
 */
export function parseJsonContract<S extends z.ZodMiniType>(
  schema: S,
  json: string,
  what: string,
): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new ContractViolationError(`${what} is not JSON`, { cause: error });
  }
  return parseContract(schema, value, what);
}
