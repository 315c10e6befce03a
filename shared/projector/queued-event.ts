import { createHash } from "node:crypto";
import type { SQSRecord } from "aws-lambda";
import {
  BODY_LOCATION_S3,
  MESSAGE_ATTRIBUTE,
  oversizePointerSchema,
  parseJsonContract,
  readEventAttributes,
} from "../contracts/queue-messages";
import type { BlobStore } from "../ports/blob-store";

/** An event taken off the events queue, its body resolved (from S3 for an oversize pointer). */
export interface QueuedEvent {
  messageId: string;
  eventId: string;
  receivedAt: number;
  trigger: string;
  appId: string | undefined;
  /** The raw body, as the platform sent it. */
  body: string;
  /** The object the body was read from, when the ingest put it in the bucket (an oversize body). */
  bodyKey?: string;
  /**
   * Set when the body was redacted in flight (a delivery naming a user erased after it was
   * received, `BatchDependencies.redactErased`): the erasure's id, which its archive line and its
   * stream envelope carry as those the erasure rewrote do.
   */
  erasure?: string;
  /** With `erasure`: the pseudonyms the body names in place of erased users (no item of theirs is written). */
  erasedAs?: readonly string[];
  /** With `erasure`: a delivery refused as received stays refused, for this reason (redacted as its body). */
  refusal?: string;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function sentAt(record: SQSRecord): number {
  const sent = Number(record.attributes?.SentTimestamp);
  return Number.isFinite(sent) ? sent : 0;
}

/**
 * Reads one queue message back into the event it carries, parsing its attributes and, for an
 * oversize body, its pointer by their contracts. Messages without attributes (sent by hand, or
 * redriven by a tool that dropped them) fall back to the body hash and SQS's sent time.
 *
 * @throws ContractViolationError when an attribute or the pointer is malformed (permanent: quarantine it)
 * @throws the S3 error when the pointed-to body cannot be read (transient: retry it)
 */
export async function decodeRecord(record: SQSRecord, dataStore: BlobStore): Promise<QueuedEvent> {
  const attributes = readEventAttributes(record.messageAttributes);
  let body = record.body;
  let bodyKey: string | undefined;
  if (attributes.bodyLocation === BODY_LOCATION_S3) {
    const pointer = parseJsonContract(oversizePointerSchema, record.body, "oversize pointer");
    body = await dataStore.getText(pointer.key);
    bodyKey = pointer.key;
  }
  return {
    messageId: record.messageId,
    eventId: attributes.eventId ?? sha256(body),
    receivedAt: attributes.receivedAt ?? sentAt(record),
    trigger: attributes.trigger ?? "(unknown)",
    appId: attributes.appId,
    body,
    ...(bodyKey ? { bodyKey } : {}),
  };
}

/**
 * A record whose message breaks its contract, as an event to quarantine: the message body as it
 * came, with whatever its attributes say (unchecked: they are only used to file it).
 */
export function undecodableRecord(record: SQSRecord): QueuedEvent {
  const raw = (name: string) => record.messageAttributes?.[name]?.stringValue;
  return {
    messageId: record.messageId,
    eventId: sha256(record.body),
    receivedAt: sentAt(record),
    trigger: raw(MESSAGE_ATTRIBUTE.trigger) ?? "(unknown)",
    appId: raw(MESSAGE_ATTRIBUTE.appId),
    body: record.body,
  };
}
