/**
 * The counted figures of a day or an hour (`Bucket`): each fact added by its trigger (messages,
 * receipts, reactions, members, calls, sessions and their durations, recordings…) and the
 * distinct users, senders, users online and groups, closed into `Figures`.
 */
import { FIGURE_NAMES, type Figures, roundMs } from "../../../shared/analytics/figures";
import { actorOf, CALL_MESSAGES, type Fact, get, int, type Json, str } from "./facts";

/** The duration buckets of the sessions that ended: under each bound (seconds), the figure counted. */
const DURATION_BUCKETS: ReadonlyArray<readonly [number, keyof Figures]> = [
  [60, "sessions_under_1m"],
  [300, "sessions_1_5m"],
  [900, "sessions_5_15m"],
  [3600, "sessions_15_60m"],
  [Number.POSITIVE_INFINITY, "sessions_over_60m"],
];

const COUNTED: Partial<Record<string, keyof Figures>> = {
  message_sent: "messages",
  message_edited: "edited",
  message_deleted: "deleted",
  message_reaction_added: "reactions_added",
  message_reaction_removed: "reactions_removed",
  user_mentioned: "mentions",
  message_delivery_receipt: "delivery_receipts",
  message_read_receipt: "read_receipts",
  group_created: "groups_created",
  group_deleted: "groups_deleted",
  call_started: "calls_started",
  call_busy: "calls_busy",
  call_rejected: "calls_rejected",
  call_cancelled: "calls_cancelled",
  call_unanswered: "calls_unanswered",
  meeting_started: "meetings_started",
  recording_generated: "recordings",
  message_delivered_to_all: "delivered_to_all",
  message_read_by_all: "read_by_all",
  moderation_engine_blocked: "messages_blocked",
  transcription_generated: "transcripts",
};
const MEMBERS: Partial<Record<string, keyof Figures>> = {
  group_member_joined: "member_joins",
  group_member_added: "member_joins",
  group_member_left: "member_leaves",
  group_member_kicked: "member_kicks",
  group_member_banned: "member_bans",
};

export interface Bucket {
  figures: Figures;
  users: Set<string>;
  senders: Set<string>;
  online: Set<string>;
  groups: Set<string>;
}

const zero = (): Figures => Object.fromEntries(FIGURE_NAMES.map((n) => [n, 0])) as Figures;
export const bucket = (): Bucket => ({
  figures: zero(),
  users: new Set(),
  senders: new Set(),
  online: new Set(),
  groups: new Set(),
});

export function add(b: Bucket, fact: Fact): void {
  const { trigger, data } = fact;
  const f = b.figures;
  const counted = COUNTED[trigger];
  if (counted) f[counted]++;
  if (COUNTED[trigger]?.endsWith("_receipts") && get(data, "receiptType") !== undefined) f.legacy_receipts++;
  const members = MEMBERS[trigger];
  if (members) f[members] += Object.keys((get(data, "members") as Json | undefined) ?? {}).length;
  const actor = actorOf(trigger, data);
  if (actor) b.users.add(actor);
  if (CALL_MESSAGES.includes(trigger) && str(data, "call.receiverType") === "user") {
    const party = str(data, "call.receiver");
    if (party) b.users.add(party);
  }
  if (trigger === "message_sent") {
    const receiverType = str(data, "message.receiverType");
    if (receiverType === "user") f.messages_user++;
    if (receiverType === "group") {
      f.messages_group++;
      const group = str(data, "message.receiver");
      if (group) b.groups.add(group);
    }
    if (actor) b.senders.add(actor);
  }
  if (trigger === "call_initiated") {
    const type = str(data, "call.type");
    if (type === "audio") f.calls_audio++;
    if (type === "video") f.calls_video++;
  }
  if (trigger === "user_connection_status_changed" && str(data, "status") === "online" && actor)
    b.online.add(actor);
  if (trigger === "call_ended") f.call_seconds += int(data, "destroyed_at") - int(data, "created_at");
  if (trigger === "meeting_ended") f.meeting_seconds += int(data, "destroyed_at") - int(data, "created_at");
  if (trigger === "call_ended" || trigger === "meeting_ended") {
    f.sessions_ended++;
    f[trigger === "call_ended" ? "calls_ended" : "meetings_ended"]++;
    // A session without both times is in no bucket (as the SQL's NULL).
    if (get(data, "destroyed_at") != null && get(data, "created_at") != null) {
      const seconds = int(data, "destroyed_at") - int(data, "created_at");
      const bucket = DURATION_BUCKETS.find(([upTo]) => seconds < upTo);
      if (bucket) f[bucket[1]]++;
    }
  }
  if (trigger === "call_participant_joined" || trigger === "meeting_participant_joined")
    f.participants_joined++;
  if (trigger === "recording_generated") f.recording_seconds += Number(get(data, "duration") ?? 0);
}

export function close(b: Bucket): Figures {
  return {
    ...b.figures,
    active_users: b.users.size,
    active_senders: b.senders.size,
    users_online: b.online.size,
    active_groups: b.groups.size,
    recording_seconds: roundMs(b.figures.recording_seconds),
  };
}
