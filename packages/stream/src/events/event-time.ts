import { type CallMessageTrigger, messageChangeOf, receiptOf } from "./accessors.ts";
import type { EventOf, KnownEvent, Trigger } from "./schemas.ts";

/** An event's time in epoch ms, and where it came from (a payload path, or `receivedAt`). */
export interface EventTime {
  ms: number;
  source: string;
}

// Method syntax, so that one extractor written for several triggers fits each of them.
type Extractor<T extends Trigger> = { time(event: EventOf<T>): [number, string] | undefined }["time"];

const seconds = (value: number | undefined, path: string): [number, string] | undefined =>
  value === undefined ? undefined : [value * 1000, path];

const callSentAt: Extractor<CallMessageTrigger> = (e) => seconds(e.data.call.sentAt, "data.call.sentAt");

/** A receipt, current or legacy, is timed by its own time (`receiptOf`). */
const receiptAt: Extractor<"message_delivery_receipt" | "message_read_receipt"> = (e) => {
  const at = receiptOf(e).at;
  return at ? [at.ms, at.path] : undefined;
};

/** An edit or delete is timed by the change (`messageChangeOf`), not by when the message was sent. */
const changedAt: Extractor<"message_edited" | "message_deleted"> = (e) => {
  const at = messageChangeOf(e).at;
  return at ? seconds(at.seconds, at.path) : undefined;
};

/**
 * Per trigger, which payload field is the event time. Most are epoch seconds; the presence
 * event's `data.timestamp` is milliseconds. Membership events, blocks and a group update without
 * `updatedAt` carry no event time: they fall back to the edge's `receivedAt`.
 * docs/how-it-works.md's per-trigger table is this table.
 */
export const EVENT_TIME_FIELDS: { [T in Trigger]: Extractor<T> } = {
  message_sent: (e) => seconds(e.data.message.sentAt, "data.message.sentAt"),
  message_edited: (e) => changedAt(e),
  message_deleted: (e) => changedAt(e),
  message_reaction_added: (e) => seconds(e.data.reaction.reactedAt, "data.reaction.reactedAt"),
  message_reaction_removed: (e) => seconds(e.data.reaction.reactedAt, "data.reaction.reactedAt"),
  user_blocked: () => undefined,
  user_unblocked: () => undefined,
  group_created: (e) => seconds(e.data.group.createdAt, "data.group.createdAt"),
  group_updated: (e) => seconds(e.data.group.updatedAt, "data.group.updatedAt"),
  group_deleted: (e) => seconds(e.data.group.updatedAt, "data.group.updatedAt"),
  group_owner_transferred: (e) => seconds(e.data.group.updatedAt, "data.group.updatedAt"),
  group_member_joined: () => undefined,
  group_member_left: () => undefined,
  group_member_added: () => undefined,
  group_member_kicked: () => undefined,
  group_member_banned: () => undefined,
  group_member_unbanned: () => undefined,
  group_member_scope_changed: () => undefined,
  user_connection_status_changed: (e) => [e.data.timestamp, "data.timestamp (ms)"],
  message_delivery_receipt: (e) => receiptAt(e),
  message_read_receipt: (e) => receiptAt(e),
  call_initiated: callSentAt,
  call_started: (e) => seconds(e.data.created_at, "data.created_at"),
  call_participant_joined: (e) => seconds(e.data.occupant.joined_at, "data.occupant.joined_at"),
  call_participant_left: (e) => seconds(e.data.occupant.left_at, "data.occupant.left_at"),
  call_ended: (e) => seconds(e.data.destroyed_at, "data.destroyed_at"),
  meeting_started: (e) => seconds(e.data.created_at, "data.created_at"),
  meeting_participant_joined: (e) => seconds(e.data.occupant.joined_at, "data.occupant.joined_at"),
  meeting_participant_left: (e) => seconds(e.data.occupant.left_at, "data.occupant.left_at"),
  meeting_ended: (e) => seconds(e.data.destroyed_at, "data.destroyed_at"),
  recording_generated: (e) => seconds(Number(e.data.startTime), "data.startTime"),
  user_mentioned: (e) => seconds(e.data.message.sentAt, "data.message.sentAt"),
  call_busy: callSentAt,
  call_cancelled: callSentAt,
  call_rejected: callSentAt,
  call_unanswered: callSentAt,
  message_delivered_to_all: (e) => seconds(e.data.body.timestamp, "data.body.timestamp"),
  message_read_by_all: (e) => seconds(e.data.body.timestamp, "data.body.timestamp"),
  moderation_engine_blocked: (e) => seconds(e.data.message.sentAt, "data.message.sentAt"),
  moderation_engine_approved: (e) => seconds(e.data.message.sentAt, "data.message.sentAt"),
  // A manual approval happens at the review, which the payload does not date.
  moderation_manual_approved: () => undefined,
  transcription_generated: (e) =>
    e.data.startTime === undefined ? undefined : seconds(Number(e.data.startTime), "data.startTime"),
};

/**
 * The event time of any event in ms, with its source. `receivedAt` (ms, stamped by the ingest)
 * is used when the payload has none, and for unknown triggers (pass `undefined` as the event).
 *
 * @example eventTime(groupCreated, 1700000000123) // { ms: 1696932915000, source: "data.group.createdAt" }
 */
export function eventTime(event: KnownEvent | undefined, receivedAt: number): EventTime {
  const extract = event ? (EVENT_TIME_FIELDS[event.trigger] as Extractor<Trigger>) : undefined;
  const found = event && extract ? extract(event) : undefined;
  return found ? { ms: found[0], source: found[1] } : { ms: receivedAt, source: "receivedAt" };
}
