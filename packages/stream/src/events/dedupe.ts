import { type CallMessageTrigger, messageChangeOf, receiptOf } from "./accessors.ts";
import type { EventOf, KnownEvent, Trigger } from "./schemas.ts";

type KeyPart = string | number | undefined;
// Method syntax, so that one extractor written for several triggers fits each of them.
type NaturalKey<T extends Trigger> = { key(event: EventOf<T>): KeyPart[] | undefined }["key"];

type OccupantTrigger =
  | "call_participant_joined"
  | "meeting_participant_joined"
  | "call_participant_left"
  | "meeting_participant_left";

const occupantKey: NaturalKey<OccupantTrigger> = (e) => [
  e.data.sessionId,
  e.data.occupant.name,
  e.data.occupant.joined_at,
  e.data.occupant.left_at,
];

const callKey: NaturalKey<CallMessageTrigger> = (e) => [
  e.data.call.data.entities?.on?.entity.sessionid ?? e.data.call.id,
];

/**
 * An edit or delete is the message's id and the time of the change, in either layout: two edits of
 * one message are two facts, the same edit delivered in the other layout is one. Without a time
 * in the payload nothing tells two edits apart: the body hash decides.
 */
const messageChangeKey: NaturalKey<"message_edited" | "message_deleted"> = (e) => {
  const change = messageChangeOf(e);
  return change.at ? [change.messageId, change.at.seconds] : undefined;
};

/** A receipt is its message and its reader; a legacy one says so in its key (`…|legacy|…`, searchable in `sql`). */
const receiptKey: NaturalKey<"message_delivery_receipt" | "message_read_receipt"> = (e) => {
  const r = receiptOf(e);
  return r.format === "legacy" ? ["legacy", r.messageId, r.uid] : [r.messageId, r.uid];
};

/**
 * Per trigger, the parts of the payload that identify the fact it reports, so that the same fact
 * delivered twice with different bytes is recognised. `undefined` where the payload has nothing
 * that tells two occurrences apart (a block, unblock and block again of the same pair; membership
 * events, which carry no event time): those are deduplicated by the body hash alone.
 */
export const NATURAL_KEYS: { [T in Trigger]: NaturalKey<T> } = {
  message_sent: (e) => [e.data.message.id],
  message_edited: (e) => messageChangeKey(e),
  message_deleted: (e) => messageChangeKey(e),
  message_reaction_added: (e) => [e.data.reaction.id, e.data.reaction.reactedAt],
  message_reaction_removed: (e) => [e.data.reaction.id, e.data.reaction.reactedAt],
  user_blocked: () => undefined,
  user_unblocked: () => undefined,
  group_created: (e) => [e.data.group.guid],
  group_updated: (e) => (e.data.group.updatedAt ? [e.data.group.guid, e.data.group.updatedAt] : undefined),
  group_deleted: (e) => [e.data.group.guid],
  group_owner_transferred: (e) =>
    e.data.group.updatedAt ? [e.data.group.guid, e.data.group.owner, e.data.group.updatedAt] : undefined,
  group_member_joined: () => undefined,
  group_member_left: () => undefined,
  group_member_added: () => undefined,
  group_member_kicked: () => undefined,
  group_member_banned: () => undefined,
  group_member_unbanned: () => undefined,
  group_member_scope_changed: () => undefined,
  user_connection_status_changed: (e) => [e.data.user.uid, e.data.timestamp, e.data.currentConnection.action],
  message_delivery_receipt: (e) => receiptKey(e),
  message_read_receipt: (e) => receiptKey(e),
  call_initiated: callKey,
  call_started: (e) => [e.data.sessionId],
  call_participant_joined: occupantKey,
  call_participant_left: occupantKey,
  call_ended: (e) => [e.data.sessionId],
  meeting_started: (e) => [e.data.sessionId],
  meeting_participant_joined: occupantKey,
  meeting_participant_left: occupantKey,
  meeting_ended: (e) => [e.data.sessionId],
  recording_generated: (e) => [e.data.sessionId, e.data.startTime],
  user_mentioned: (e) => [e.data.message.id],
  call_busy: callKey,
  call_cancelled: callKey,
  call_rejected: callKey,
  call_unanswered: callKey,
  message_delivered_to_all: (e) => [e.data.body.messageId],
  message_read_by_all: (e) => [e.data.body.messageId],
  moderation_engine_blocked: (e) => [e.data.message.id],
  moderation_engine_approved: (e) => [e.data.message.id],
  moderation_manual_approved: (e) => [e.data.message.id],
  transcription_generated: (e) => [e.data.sessionId, e.data.tid ?? e.data.startTime],
};

/**
 * The natural dedupe key of an event: `<appId>|<trigger>|<parts...>`, or undefined when the
 * trigger has none (use the body hash, the eventId, then).
 *
 * @example naturalKey(participantJoined) // "app1|call_participant_joined|s1|Andrew|1696934573|"
 */
export function naturalKey(event: KnownEvent): string | undefined {
  const parts = (NATURAL_KEYS[event.trigger] as NaturalKey<Trigger>)(event);
  if (!parts) return undefined;
  return [
    event.appId,
    event.trigger,
    ...parts.map((p) => (p === undefined ? "" : encodeURIComponent(String(p)))),
  ].join("|");
}

/** The key an event is deduplicated by: its natural key, else its eventId (body hash). */
export function dedupeKey(event: KnownEvent, eventId: string): string {
  return naturalKey(event) ?? `${event.appId}|${event.trigger}|body:${eventId}`;
}
