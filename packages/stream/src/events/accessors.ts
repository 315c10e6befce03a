import { type Group, type GroupRef, hasGroupDetails, type User } from "./resources.ts";
import type { EventOf, KnownEvent, Trigger } from "./schemas.ts";

/** Triggers whose `data.group` is a group (spec 6.4). */
export const GROUP_TRIGGERS = [
  "group_created",
  "group_updated",
  "group_deleted",
  "group_owner_transferred",
  "group_member_joined",
  "group_member_left",
  "group_member_added",
  "group_member_kicked",
  "group_member_banned",
  "group_member_unbanned",
  "group_member_scope_changed",
] as const satisfies readonly Trigger[];
export type GroupTrigger = (typeof GROUP_TRIGGERS)[number];
export type GroupEvent = EventOf<GroupTrigger>;

/** Membership triggers: they carry `data.members`. */
export const MEMBERSHIP_TRIGGERS = [
  "group_created",
  "group_member_joined",
  "group_member_left",
  "group_member_added",
  "group_member_kicked",
  "group_member_banned",
  "group_member_unbanned",
  "group_member_scope_changed",
] as const satisfies readonly GroupTrigger[];
export type MembershipTrigger = (typeof MEMBERSHIP_TRIGGERS)[number];
export type MembershipEvent = EventOf<MembershipTrigger>;

/** Call and meeting session triggers, including `call_initiated` and the call outcomes. */
export const SESSION_TRIGGERS = [
  "call_initiated",
  "call_started",
  "call_participant_joined",
  "call_participant_left",
  "call_ended",
  "meeting_started",
  "meeting_participant_joined",
  "meeting_participant_left",
  "meeting_ended",
  "recording_generated",
  "call_busy",
  "call_cancelled",
  "call_rejected",
  "call_unanswered",
  "transcription_generated",
] as const satisfies readonly Trigger[];
export type SessionTrigger = (typeof SESSION_TRIGGERS)[number];
export type SessionEvent = EventOf<SessionTrigger>;

/** Triggers whose payload is the message-like call object (`data.call`). */
export type CallMessageTrigger =
  | "call_initiated"
  | "call_busy"
  | "call_cancelled"
  | "call_rejected"
  | "call_unanswered";
export type CallMessageEvent = EventOf<CallMessageTrigger>;

function includes<T extends string>(list: readonly T[], value: string): value is T {
  return (list as readonly string[]).includes(value);
}

export function isGroupEvent(event: KnownEvent): event is GroupEvent {
  return includes(GROUP_TRIGGERS, event.trigger);
}
export function isMembershipEvent(event: KnownEvent): event is MembershipEvent {
  return includes(MEMBERSHIP_TRIGGERS, event.trigger);
}
export function isSessionEvent(event: KnownEvent): event is SessionEvent {
  return includes(SESSION_TRIGGERS, event.trigger);
}
export function isCallMessageEvent(event: KnownEvent): event is CallMessageEvent {
  return "call" in event.data;
}

/** The group of a group event (a membership event's may be slim: `hasGroupDetails`). @example groupOf(event).guid */
export function groupOf(event: GroupEvent): GroupRef {
  return event.data.group;
}

/** The group of a group event with every detail its item needs, or undefined for a slim one. */
export function detailedGroupOf(event: GroupEvent): Group | undefined {
  const group = event.data.group;
  return hasGroupDetails(group) ? group : undefined;
}

/** The members map (uid → user) of a membership event, as a list. */
export function membersOf(event: MembershipEvent): User[] {
  return Object.values(event.data.members);
}

/**
 * Who acted: `data.by` where the payload has it, else the obvious actor (the group's
 * `updatedBy`, the message sender, the reactor, the caller), undefined when unknown.
 */
export function actorOf(event: KnownEvent): string | undefined {
  const data = event.data as Record<string, unknown>;
  const by = data.by as User | undefined;
  if (by?.uid) return by.uid;
  switch (event.trigger) {
    case "group_created":
      return event.data.group.owner;
    case "group_updated":
    case "group_deleted":
    case "group_owner_transferred":
      return event.data.group.updatedBy;
    case "group_member_joined":
    case "group_member_left":
      return Object.keys(event.data.members)[0];
    case "message_sent":
    case "user_mentioned":
      return event.data.message.sender;
    case "message_edited":
    case "message_deleted":
      return messageChangeOf(event).by;
    case "message_reaction_added":
    case "message_reaction_removed":
      return event.data.reaction.uid;
    case "user_connection_status_changed":
      return event.data.user.uid;
    case "message_delivery_receipt":
    case "message_read_receipt":
      return receiptOf(event).uid;
    default:
      return isCallMessageEvent(event) ? event.data.call.sender : undefined;
  }
}

/** The membership triggers that an actor applies to other members (`data.by` acts on `data.members`). */
const ACTED_ON_OTHERS: readonly MembershipTrigger[] = [
  "group_member_kicked",
  "group_member_banned",
  "group_member_unbanned",
];

/**
 * Why a membership event cannot be applied as it came, or undefined. A kick, ban or unban whose
 * only member is its own actor (`data.by`) is the platform's on-behalf-of bug (observed live by
 * its QA suite): the delivery names the actor instead of the target, whom it does not name at all.
 * Applied, it would mark the actor (often the owner) banned and leave the real target a member.
 *
 * @example membershipAnomaly(banOnBehalfOf) // "group_member_banned: data.members holds only its actor (data.by = u1) …"
 */
export function membershipAnomaly(event: KnownEvent): string | undefined {
  if (!isMembershipEvent(event) || !(ACTED_ON_OTHERS as readonly string[]).includes(event.trigger))
    return undefined;
  const by = actorOf(event);
  const members = Object.keys(event.data.members);
  if (by === undefined || members.length !== 1 || members[0] !== by) return undefined;
  return `${event.trigger}: data.members holds only its actor (data.by = ${by}), not the member acted on: the platform's on-behalf-of bug; not applied (the target is not in the payload)`;
}

/** A delivery or read receipt. */
export type ReceiptEvent = EventOf<"message_delivery_receipt" | "message_read_receipt">;

/** What a receipt reports, in the current format or the legacy one. */
export interface Receipt {
  format: "current" | "legacy";
  messageId: string;
  /** Who delivered or read it. */
  uid: string;
  /** When (epoch ms) and the payload path it came from; undefined when the payload has no time. */
  at?: { ms: number; path: string };
}

type ReceiptData = ReceiptEvent["data"];
type LegacyReceiptData = Extract<ReceiptData, { receiptType: string }>;

function isLegacyReceipt(data: ReceiptData): data is LegacyReceiptData {
  return typeof data.receiptType === "string";
}

/**
 * A receipt, whichever format it came in: the current one (`data.body`, `timestamp` in seconds),
 * or the legacy webhooks' (`data.receiptType`, `receiptSender`, `deliveredAt`/`readAt`: numbers or
 * strings of digits, read as milliseconds when too large to be seconds).
 *
 * @example receiptOf(legacyRead) // { format: "legacy", messageId: "MESSAGE_ID", uid: "receiptSenderUID", at: { ms: 1673017183000, path: "data.readAt" } }
 */
export function receiptOf(event: ReceiptEvent): Receipt {
  const data = event.data;
  if (!isLegacyReceipt(data))
    return {
      format: "current",
      messageId: data.body.messageId,
      uid: data.body.user.uid,
      at: { ms: data.body.timestamp * 1000, path: "data.body.timestamp" },
    };
  const field = event.trigger === "message_read_receipt" ? "readAt" : "deliveredAt";
  const raw = data[field];
  const n = raw === undefined ? undefined : Number(raw);
  return {
    format: "legacy",
    messageId: data.messageId,
    uid: data.receiptSender,
    at: n === undefined ? undefined : { ms: n > 99_999_999_999 ? n : n * 1000, path: `data.${field}` },
  };
}

/** An edit or a delete of a message. */
export type MessageChangeEvent = EventOf<"message_edited" | "message_deleted">;

/** What an edit or delete reports, whichever layout it came in. */
export interface MessageChange {
  /** `action`: the published example's action message; `message`: the message itself, as live deliveries carry it. */
  layout: "action" | "message";
  /** The id of the message edited or deleted. */
  messageId: string;
  /** When it was edited or deleted (epoch seconds) and the payload path it came from; undefined when the payload has no time. */
  at?: { seconds: number; path: string };
  /** Who edited or deleted it, when the payload says or implies it. */
  by?: string;
}

type ChangedMessage = MessageChangeEvent["data"]["message"];
type ActionLayout = Extract<ChangedMessage, { data: { action: string } }>;

function isActionLayout(message: ChangedMessage): message is ActionLayout {
  return message.data?.action !== undefined;
}

/**
 * An edit or delete, whichever layout it came in. The action layout names the message in
 * `entities.on`, the actor in `entities.by`, and is itself sent at the time of the change. The
 * live layout is the message: its `editedAt`/`deletedAt` (else `updatedAt`) is the time and
 * `editedBy`/`deletedBy` (else its sender) the actor; these are the platform's message fields,
 * which the QA suite does not assert, so each has its fallback, the last one the receipt.
 *
 * @example messageChangeOf(liveEdit) // { layout: "message", messageId: "101", at: { seconds: 1757000000, path: "data.message.editedAt" }, by: "qa-user-1" }
 */
export function messageChangeOf(event: MessageChangeEvent): MessageChange {
  const message = event.data.message;
  const [atField, byField] =
    event.trigger === "message_edited"
      ? (["editedAt", "editedBy"] as const)
      : (["deletedAt", "deletedBy"] as const);
  if (isActionLayout(message)) {
    const on = message.data.entities.on.entity;
    const onPath = "data.message.data.entities.on.entity";
    const at =
      on[atField] !== undefined
        ? { seconds: on[atField], path: `${onPath}.${atField}` }
        : { seconds: message.sentAt, path: "data.message.sentAt" };
    return { layout: "action", messageId: on.id, at, by: message.data.entities.by.entity.uid };
  }
  const own = message[atField];
  const at =
    own !== undefined
      ? { seconds: own, path: `data.message.${atField}` }
      : message.updatedAt !== undefined
        ? { seconds: message.updatedAt, path: "data.message.updatedAt" }
        : undefined;
  return { layout: "message", messageId: message.id, at, by: message[byField] ?? message.sender };
}

/**
 * The session id of any call or meeting event. `call_initiated` (and the call outcomes) keep it
 * at `data.call.data.entities.on.entity.sessionid` (lower case); shortened examples lack it.
 */
export function sessionIdOf(event: SessionEvent): string | undefined {
  if (isCallMessageEvent(event)) return event.data.call.data.entities?.on?.entity.sessionid;
  return event.data.sessionId;
}

/**
 * The two uids of a one-to-one conversation id `<uid_a>_user_<uid_b>`, or undefined for a group
 * conversation or anything else.
 *
 * @example conversationUids("alice_user_bob") // ["alice", "bob"]
 */
export function conversationUids(conversationId: string): [string, string] | undefined {
  const at = conversationId.indexOf("_user_");
  if (at <= 0 || conversationId.startsWith("group_")) return undefined;
  const a = conversationId.slice(0, at);
  const b = conversationId.slice(at + "_user_".length);
  return b.length > 0 ? [a, b] : undefined;
}
