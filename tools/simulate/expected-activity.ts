import { createHash } from "node:crypto";
import {
  type DayActivity,
  type DaySets,
  FIGURE_NAMES,
  type Figures,
  type GroupActivity,
  type MemberChange,
  roundMs,
  TOP_LIMIT,
  type UserActivity,
} from "../../shared/analytics/figures";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { dedupeKey } from "../../shared/events/dedupe";
import { eventTime } from "../../shared/events/event-time";
import { parseWebhookEvent } from "../../shared/events/schemas";
import { compareFacts, type FactOrder, lifecycleRank } from "../../shared/projections/version";
import type { GeneratedEvent } from "./generator";

/**
 * The activity figures a generated history implies, computed here in TypeScript, fact by fact,
 * independently of the SQL that the rollup runs (`shared/analytics/sql/day-activity/`): the
 * simulator's check and the tests compare the two. A fact is an event by its natural key
 * (`dedupeKey`), counted once, at the event time of its first receipt.
 */

type Json = Record<string, unknown>;

const get = (value: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Json)[k] : undefined), value);
const str = (value: unknown, path: string): string | undefined => {
  const v = get(value, path);
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;
};
const int = (value: unknown, path: string): number => Number(get(value, path) ?? 0);

/** The duration buckets of the sessions that ended: under each bound (seconds), the figure counted. */
const DURATION_BUCKETS: ReadonlyArray<readonly [number, keyof Figures]> = [
  [60, "sessions_under_1m"],
  [300, "sessions_1_5m"],
  [900, "sessions_5_15m"],
  [3600, "sessions_15_60m"],
  [Number.POSITIVE_INFINITY, "sessions_over_60m"],
];

const CALL_MESSAGES = ["call_initiated", "call_busy", "call_rejected", "call_cancelled", "call_unanswered"];
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

/** Who acts in an event, as the figures define it (membership and block events: nobody). */
function actorOf(trigger: string, data: unknown): string | undefined {
  if (trigger === "message_sent" || trigger === "user_mentioned") return str(data, "message.sender");
  // Either layout of an edit or delete: the action message's `by`, else the message's own fields.
  if (trigger === "message_edited" || trigger === "message_deleted")
    return (
      str(data, "message.data.entities.by.entity.uid") ??
      str(data, trigger === "message_edited" ? "message.editedBy" : "message.deletedBy") ??
      str(data, "message.sender")
    );
  if (trigger.startsWith("message_reaction_")) return str(data, "reaction.uid");
  if (trigger === "message_delivery_receipt" || trigger === "message_read_receipt")
    return str(data, "body.user.uid") ?? str(data, "receiptSender");
  if (trigger === "user_connection_status_changed") return str(data, "user.uid");
  if (CALL_MESSAGES.includes(trigger)) return str(data, "call.sender");
  if (trigger === "group_created" || trigger === "group_owner_transferred") return str(data, "group.owner");
  if (trigger === "group_updated" || trigger === "group_deleted") return str(data, "group.updatedBy");
  return undefined;
}

interface Fact {
  trigger: string;
  data: unknown;
  order: FactOrder;
  day: string;
  hour: number;
}

interface Bucket {
  figures: Figures;
  users: Set<string>;
  senders: Set<string>;
  online: Set<string>;
  groups: Set<string>;
}

const zero = (): Figures => Object.fromEntries(FIGURE_NAMES.map((n) => [n, 0])) as Figures;
const bucket = (): Bucket => ({
  figures: zero(),
  users: new Set(),
  senders: new Set(),
  online: new Set(),
  groups: new Set(),
});

/** The facts of a history: each natural key once, at its first receipt. */
function factsOf(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Fact[]> {
  const first = new Map<string, { event: GeneratedEvent; at: number; eventId: string }>();
  for (const event of events) {
    const eventId = createHash("sha256").update(event.body).digest("hex");
    const parsed = parseWebhookEvent(JSON.parse(event.body));
    if (parsed.kind !== "known") continue;
    const key = dedupeKey(parsed.event, eventId);
    const at = receivedAt(event);
    const known = first.get(key);
    if (!known || at < known.at || (at === known.at && eventId < known.eventId))
      first.set(key, { event, at, eventId });
  }
  const byApp = new Map<string, Fact[]>();
  for (const { event, at, eventId } of first.values()) {
    const parsed = parseWebhookEvent(JSON.parse(event.body));
    if (parsed.kind !== "known") continue;
    const ms = eventTime(parsed.event, at).ms;
    const day = utcDay(ms);
    const fact: Fact = {
      trigger: parsed.event.trigger,
      data: (JSON.parse(event.body) as Json).data,
      order: { eventTimeMs: ms, rank: lifecycleRank(parsed.event.trigger), firstReceivedAt: at, eventId },
      day,
      hour: Math.floor((ms - Date.parse(`${day}T00:00:00Z`)) / 3_600_000),
    };
    byApp.set(event.appId, [...(byApp.get(event.appId) ?? []), fact]);
  }
  return byApp;
}

function add(b: Bucket, fact: Fact): void {
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

function close(b: Bucket): Figures {
  return {
    ...b.figures,
    active_users: b.users.size,
    active_senders: b.senders.size,
    users_online: b.online.size,
    active_groups: b.groups.size,
    recording_seconds: roundMs(b.figures.recording_seconds),
  };
}

/**
 * Users online through one day, from its presence facts in the order of facts: a user whose
 * first transition is "offline" was online when the day began. Per hour: the level it began
 * with, the highest level reached, and the net change.
 */
function presenceLevels(facts: readonly Fact[]) {
  return levelsOf(
    facts.filter((f) => f.trigger === "user_connection_status_changed"),
    (t) => str(t.data, "user.uid") ?? "",
    (t) => str(t.data, "status") === "online",
  );
}

/** Calls in progress through one day, as `presenceLevels` for users online: started up, ended down. */
function callLevels(facts: readonly Fact[]) {
  return levelsOf(
    facts.filter((f) => f.trigger === "call_started" || f.trigger === "call_ended"),
    (t) => str(t.data, "sessionId") ?? "",
    (t) => t.trigger === "call_started",
  );
}

/**
 * How many things are "up" through one day, from their transitions in the order of facts: one whose
 * first transition is down was up when the day began. Per hour: the level it began with, the
 * highest level reached, and the net change.
 */
function levelsOf(facts: readonly Fact[], keyOf: (f: Fact) => string, isUp: (f: Fact) => boolean) {
  const transitions = [...facts].sort((a, b) => compareFacts(a.order, b.order));
  const status = new Map<string, boolean>();
  for (const t of transitions) {
    const key = keyOf(t);
    if (!status.has(key)) status.set(key, !isUp(t));
  }
  const atStart = [...status.values()].filter(Boolean).length;
  let level = atStart;
  const hours = Array.from({ length: 24 }, () => ({ start: 0, peak: 0, change: 0 }));
  let peak = atStart;
  let hour = 0;
  hours[0] = { start: level, peak: level, change: 0 };
  for (const t of transitions) {
    while (hour < t.hour) {
      hour++;
      hours[hour] = { start: level, peak: level, change: 0 };
    }
    const key = keyOf(t);
    const up = isUp(t);
    const delta = (up ? 1 : 0) - (status.get(key) ? 1 : 0);
    status.set(key, up);
    level += delta;
    const h = hours[hour] as { start: number; peak: number; change: number };
    h.change += delta;
    h.peak = Math.max(h.peak, level);
    peak = Math.max(peak, level);
  }
  while (hour < 23) {
    hour++;
    hours[hour] = { start: level, peak: level, change: 0 };
  }
  return { atStart, peak: transitions.length ? peak : 0, change: level - atStart, hours };
}

/**
 * Each occupant's stint that left in the day (ms from `dayStart`), once by session, name and join
 * time, at the latest leaving reported by a participant-left fact or an end's roster
 * (all_occupants) of the day: its seconds and the hour it left.
 */
function stintsOf(facts: readonly Fact[], dayStart: number): Array<{ seconds: number; hour: number }> {
  const left = new Map<string, { joined: number; left: number }>();
  const report = (sessionId: string | undefined, occupant: unknown) => {
    const at = get(occupant, "left_at");
    if (at === undefined || at === null) return;
    const leftMs = Number(at) * 1000;
    if (leftMs < dayStart || leftMs >= dayStart + 86_400_000) return;
    const joined = int(occupant, "joined_at");
    const key = JSON.stringify([sessionId, str(occupant, "name"), joined]);
    const known = left.get(key);
    left.set(key, { joined, left: Math.max(known?.left ?? leftMs, leftMs) });
  };
  for (const { trigger, data } of facts) {
    if (trigger === "call_participant_left" || trigger === "meeting_participant_left")
      report(str(data, "sessionId"), get(data, "occupant"));
    if (trigger === "call_ended" || trigger === "meeting_ended") {
      const roster = get(data, "all_occupants");
      for (const occupant of Array.isArray(roster) ? roster : []) report(str(data, "sessionId"), occupant);
    }
  }
  return [...left.values()].map((s) => ({
    seconds: s.left / 1000 - s.joined,
    hour: Math.floor((s.left - dayStart) / 3_600_000),
  }));
}

/**
 * The participants of the sessions that ended in the day: per kind (call, meeting), the distinct
 * (session, name) of each end's roster, per day and per hour (the hour its stint left, when it left
 * in the day with a join time; else the end's hour).
 */
function participantsOf(facts: readonly Fact[], dayStart: number) {
  const day = { call_participants: new Set<string>(), meeting_participants: new Set<string>() };
  const hours = Array.from({ length: 24 }, () => ({
    call_participants: new Set<string>(),
    meeting_participants: new Set<string>(),
  }));
  for (const { trigger, data, hour } of facts) {
    if (trigger !== "call_ended" && trigger !== "meeting_ended") continue;
    const figure = trigger === "call_ended" ? "call_participants" : "meeting_participants";
    const roster = get(data, "all_occupants");
    for (const occupant of Array.isArray(roster) ? roster : []) {
      const name = str(occupant, "name");
      if (name === undefined) continue;
      const key = `${str(data, "sessionId")}|${name}`;
      const leftAt = get(occupant, "left_at");
      const leftMs = leftAt === undefined || leftAt === null ? Number.NaN : Math.trunc(Number(leftAt)) * 1000;
      const inDay =
        get(occupant, "joined_at") != null && leftMs >= dayStart && leftMs < dayStart + 86_400_000;
      day[figure].add(key);
      hours[inDay ? Math.floor((leftMs - dayStart) / 3_600_000) : hour]?.[figure].add(key);
    }
  }
  return { day, hours };
}

/** The p-th percentile by nearest rank: the value at the first rank r (from 1, ascending) with 100 r ≥ p n; 0 for none. */
function nearestRank(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p * sorted.length) / 100) - 1] ?? 0;
}

type Latency = "response" | "delivery" | "read";

/**
 * The latencies of a day's facts, each with its hour: first responses (a 1:1 message after one of
 * the other party's, in the order of facts) and the deliveries and reads of messages sent in the
 * day by a recipient other than the sender (ms after the message).
 */
function latenciesOf(facts: readonly Fact[]): Array<{ kind: Latency; ms: number; hour: number }> {
  const ordered = [...facts].sort((a, b) => compareFacts(a.order, b.order));
  const out: Array<{ kind: Latency; ms: number; hour: number }> = [];
  const sent = new Map<string, { at: number; sender: string | undefined }>();
  const last = new Map<string, { sender: string; at: number }>();
  for (const f of ordered) {
    if (f.trigger !== "message_sent") continue;
    const id = str(f.data, "message.id");
    const sender = str(f.data, "message.sender");
    if (id !== undefined) {
      const known = sent.get(id);
      if (!known || f.order.eventTimeMs > known.at) sent.set(id, { at: f.order.eventTimeMs, sender });
    }
    const receiver = str(f.data, "message.receiver");
    if (str(f.data, "message.receiverType") !== "user" || !sender || !receiver) continue;
    const pair = [sender, receiver].sort().join("|");
    const previous = last.get(pair);
    if (previous && previous.sender !== sender)
      out.push({ kind: "response", ms: f.order.eventTimeMs - previous.at, hour: f.hour });
    last.set(pair, { sender, at: f.order.eventTimeMs });
  }
  for (const f of ordered) {
    if (f.trigger !== "message_delivery_receipt" && f.trigger !== "message_read_receipt") continue;
    const id = str(f.data, "body.messageId") ?? str(f.data, "messageId");
    const message = id === undefined ? undefined : sent.get(id);
    const reader = actorOf(f.trigger, f.data);
    if (!message || reader === undefined || message.sender === undefined || reader === message.sender)
      continue;
    const kind = f.trigger === "message_delivery_receipt" ? "delivery" : "read";
    out.push({ kind, ms: f.order.eventTimeMs - message.at, hour: f.hour });
  }
  return out;
}

/**
 * Chat-to-call: the callers who sent a 1:1 message to someone earlier in the day (event time) and
 * then initiated a 1:1 call to them, per day and per hour of the call.
 */
function chatToCallOf(facts: readonly Fact[]): { day: Set<string>; hours: Array<Set<string>> } {
  const firstChat = new Map<string, number>();
  for (const f of facts) {
    if (f.trigger !== "message_sent" || str(f.data, "message.receiverType") !== "user") continue;
    const sender = str(f.data, "message.sender");
    const receiver = str(f.data, "message.receiver");
    if (!sender || !receiver) continue;
    const key = `${sender}>${receiver}`;
    firstChat.set(key, Math.min(firstChat.get(key) ?? Number.POSITIVE_INFINITY, f.order.eventTimeMs));
  }
  const day = new Set<string>();
  const hours = Array.from({ length: 24 }, () => new Set<string>());
  for (const f of facts) {
    if (f.trigger !== "call_initiated" || str(f.data, "call.receiverType") !== "user") continue;
    const caller = str(f.data, "call.sender");
    const callee = str(f.data, "call.receiver");
    if (!caller || !callee) continue;
    if ((firstChat.get(`${caller}>${callee}`) ?? Number.POSITIVE_INFINITY) < f.order.eventTimeMs) {
      day.add(caller);
      hours[f.hour]?.add(caller);
    }
  }
  return { day, hours };
}

/** The latency figures of a set of latencies (a day's, or an hour's). */
function latencyFigures(values: ReadonlyArray<{ kind: Latency; ms: number }>): Partial<Figures> {
  const of = (kind: Latency) => values.filter((v) => v.kind === kind).map((v) => v.ms);
  const [response, delivery, read] = [of("response"), of("delivery"), of("read")];
  return {
    first_responses: response.length,
    first_response_p50_ms: nearestRank(response, 50),
    first_response_p90_ms: nearestRank(response, 90),
    delivery_latencies: delivery.length,
    delivery_latency_p50_ms: nearestRank(delivery, 50),
    delivery_latency_p90_ms: nearestRank(delivery, 90),
    delivery_latency_p99_ms: nearestRank(delivery, 99),
    read_latencies: read.length,
    read_latency_p50_ms: nearestRank(read, 50),
    read_latency_p90_ms: nearestRank(read, 90),
    read_latency_p99_ms: nearestRank(read, 99),
  };
}

const rankBy =
  <T>(count: (x: T) => number, id: (x: T) => string) =>
  (a: T, b: T) =>
    count(b) - count(a) || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);

/**
 * The activity per app and UTC day a history implies, given when each event was first received
 * (events without a payload time fall on their receipt).
 *
 * @example expectedActivity(history.events, (e) => e.at).get("app1")?.get("2026-01-02")?.figures.messages
 */
export function expectedActivity(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Map<string, DayActivity>> {
  const result = new Map<string, Map<string, DayActivity>>();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const days = new Map<string, DayActivity>();
    for (const day of new Set(facts.map((f) => f.day))) {
      const ofDay = facts.filter((f) => f.day === day);
      const dayBucket = bucket();
      const hourBuckets = Array.from({ length: 24 }, bucket);
      const groups = new Map<string, { messages: number; members: Set<string> }>();
      const users = new Map<string, number>();
      const kinds: Record<string, number> = {};
      const platforms = new Map<string, Set<string>>();
      for (const fact of ofDay) {
        add(dayBucket, fact);
        add(hourBuckets[fact.hour] as Bucket, fact);
        const platform =
          fact.trigger === "user_connection_status_changed"
            ? str(fact.data, "currentConnection.platform")
            : undefined;
        const presenceUser = str(fact.data, "user.uid");
        if (platform !== undefined && presenceUser !== undefined)
          platforms.set(platform, (platforms.get(platform) ?? new Set()).add(presenceUser));
        if (fact.trigger !== "message_sent") continue;
        const sender = str(fact.data, "message.sender");
        if (sender) users.set(sender, (users.get(sender) ?? 0) + 1);
        const kind = `${str(fact.data, "message.category") ?? "?"}/${str(fact.data, "message.type") ?? "?"}`;
        kinds[kind] = (kinds[kind] ?? 0) + 1;
        const group = str(fact.data, "message.receiver");
        if (str(fact.data, "message.receiverType") === "group" && group) {
          const g = groups.get(group) ?? { messages: 0, members: new Set<string>() };
          g.messages++;
          if (sender) g.members.add(sender);
          groups.set(group, g);
        }
      }
      for (const stint of stintsOf(ofDay, Date.parse(`${day}T00:00:00Z`))) {
        dayBucket.figures.participant_seconds += stint.seconds;
        (hourBuckets[stint.hour] as Bucket).figures.participant_seconds += stint.seconds;
      }
      const chatToCall = chatToCallOf(ofDay);
      dayBucket.figures.chat_to_call = chatToCall.day.size;
      hourBuckets.forEach((b, hour) => {
        b.figures.chat_to_call = chatToCall.hours[hour]?.size ?? 0;
      });
      const latencies = latenciesOf(ofDay);
      Object.assign(dayBucket.figures, latencyFigures(latencies));
      hourBuckets.forEach((b, hour) => {
        Object.assign(b.figures, latencyFigures(latencies.filter((l) => l.hour === hour)));
      });
      const participants = participantsOf(ofDay, Date.parse(`${day}T00:00:00Z`));
      for (const figure of ["call_participants", "meeting_participants"] as const) {
        dayBucket.figures[figure] = participants.day[figure].size;
        participants.hours.forEach((h, hour) => {
          (hourBuckets[hour] as Bucket).figures[figure] = h[figure].size;
        });
      }
      const presence = presenceLevels(ofDay);
      const inProgress = callLevels(ofDay);
      const figures = {
        ...close(dayBucket),
        peak_online: presence.peak,
        online_at_start: presence.atStart,
        online_change: presence.change,
        peak_calls: inProgress.peak,
        calls_at_start: inProgress.atStart,
        calls_change: inProgress.change,
      };
      const hours = hourBuckets.map((b, hour) => {
        const p = presence.hours[hour] as { start: number; peak: number; change: number };
        const c = inProgress.hours[hour] as { start: number; peak: number; change: number };
        return {
          hour,
          figures: {
            ...close(b),
            peak_online: p.peak,
            online_at_start: p.start,
            online_change: p.change,
            peak_calls: c.peak,
            calls_at_start: c.start,
            calls_change: c.change,
          },
        };
      });
      const topGroups: GroupActivity[] = [...groups]
        .map(([groupId, g]) => ({ groupId, messages: g.messages, activeMembers: g.members.size }))
        .sort(
          rankBy(
            (g: GroupActivity) => g.messages,
            (g) => g.groupId,
          ),
        )
        .slice(0, TOP_LIMIT);
      const topUsers: UserActivity[] = [...users]
        .map(([uid, messages]) => ({ uid, messages }))
        .sort(
          rankBy(
            (u: UserActivity) => u.messages,
            (u) => u.uid,
          ),
        )
        .slice(0, TOP_LIMIT);
      const messageKinds = Object.fromEntries(Object.entries(kinds).sort(([a], [b]) => a.localeCompare(b)));
      days.set(day, {
        figures,
        hours,
        topGroups,
        topUsers,
        messageKinds,
        platforms: Object.fromEntries(
          [...platforms].map(([p, users]) => [p, users.size] as const).sort(([a], [b]) => a.localeCompare(b)),
        ),
      });
    }
    result.set(appId, days);
  }
  return result;
}

/**
 * Each app's active users per UTC day a history implies (the users `active_users` counts: senders,
 * editors, reactors, readers, presence users, call parties, group owners …), computed fact by fact
 * as `expectedActivity` does: what the day sets of users over time must hold.
 *
 * @example expectedUsers(history.events, (e) => e.at).get("app1")?.get("2026-01-02") // Set { "app1-u3", … }
 */
export function expectedUsers(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Map<string, Set<string>>> {
  const result = new Map<string, Map<string, Set<string>>>();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const days = new Map<string, Set<string>>();
    for (const fact of facts) {
      const b = bucket();
      add(b, fact);
      const users = days.get(fact.day) ?? new Set<string>();
      for (const uid of b.users) users.add(uid);
      days.set(fact.day, users);
    }
    result.set(appId, days);
  }
  return result;
}

/** The actor's own entity's `createdAt` (epoch s) in a fact, as the day query reads it. */
function actorCreatedAt(trigger: string, data: unknown): number | undefined {
  const at = (path: string) => {
    const v = get(data, path);
    return v === undefined || v === null ? undefined : Math.round(Number(v));
  };
  if (trigger === "user_connection_status_changed") return at("user.createdAt");
  if (trigger === "message_delivery_receipt" || trigger === "message_read_receipt")
    return at("body.user.createdAt");
  if (trigger === "message_reaction_added" || trigger === "message_reaction_removed")
    return at("reaction.reactedBy.createdAt");
  if (
    (trigger === "message_sent" || trigger === "user_mentioned") &&
    str(data, "message.data.entities.sender.entity.uid") === str(data, "message.sender")
  )
    return at("message.data.entities.sender.entity.createdAt");
  return undefined;
}

/**
 * When each user of each app was created, as the facts of a history say it (the actor's own
 * entity's `createdAt`, the earliest): what users over time counts as created on a day.
 */
export function expectedCreatedAt(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Map<string, number>> {
  const result = new Map<string, Map<string, number>>();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const created = new Map<string, number>();
    for (const { trigger, data } of facts) {
      const uid = actorOf(trigger, data);
      const at = actorCreatedAt(trigger, data);
      if (uid !== undefined && at !== undefined) created.set(uid, Math.min(created.get(uid) ?? at, at));
    }
    result.set(appId, created);
  }
  return result;
}

const MEMBERSHIP: Partial<Record<string, boolean>> = {
  group_created: true,
  group_member_joined: true,
  group_member_added: true,
  group_member_scope_changed: true,
  group_member_left: false,
  group_member_kicked: false,
  group_member_banned: false,
};

/**
 * What a fact says of the day sets: the conversation of a message, the group of a group fact,
 * whether it deletes that group, and whether it puts the members it names in (true) or out.
 */
function setFactOf({ trigger, data }: Fact) {
  const group = str(data, "group.guid");
  const member = group === undefined ? undefined : MEMBERSHIP[trigger];
  return {
    conversation: trigger === "message_sent" ? str(data, "message.conversationId") : undefined,
    group,
    deletes: group !== undefined && trigger === "group_deleted",
    member,
    uids: member === undefined ? [] : Object.keys((get(data, "members") as Json | undefined) ?? {}),
  };
}

/** A fact's place in the order of facts as the day query writes it (`order_key`): comparable as text. */
const orderKey = (o: FactOrder) =>
  `${String(o.eventTimeMs).padStart(15, "0")}${o.rank}${String(o.firstReceivedAt).padStart(15, "0")}${o.eventId}`;

/**
 * Each app's day sets per UTC day a history implies, fact by fact, independently of the day query:
 * the conversations with a message that day, each member's last membership change of the day (in
 * or out at its end, out at some time in it, when) and the groups deleted (when, the last time):
 * what a final pass must write (users: `expectedUsers`).
 */
export function expectedDaySets(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Map<string, Omit<DaySets, "users">>> {
  const result = new Map<string, Map<string, Omit<DaySets, "users">>>();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const days = new Map<
      string,
      { conversations: Set<string>; members: Map<string, MemberChange>; deleted: Map<string, string> }
    >();
    for (const fact of [...facts].sort((a, b) => compareFacts(a.order, b.order))) {
      const d = days.get(fact.day) ?? { conversations: new Set(), members: new Map(), deleted: new Map() };
      days.set(fact.day, d);
      const { conversation, group, deletes, member, uids } = setFactOf(fact);
      if (conversation !== undefined) d.conversations.add(conversation);
      if (group === undefined) continue;
      if (deletes) d.deleted.set(group, orderKey(fact.order));
      if (member === undefined) continue;
      for (const uid of uids) {
        const key = `${group}\0${uid}`;
        const removed = (d.members.get(key)?.removed ?? false) || !member;
        d.members.set(key, { group, uid, member, removed, at: orderKey(fact.order) });
      }
    }
    const byDay = new Map<string, Omit<DaySets, "users">>();
    for (const [day, d] of days) {
      const byKey = (a: { group: string; uid?: string }, b: { group: string; uid?: string }) =>
        a.group < b.group ? -1 : a.group > b.group ? 1 : (a.uid ?? "") < (b.uid ?? "") ? -1 : 1;
      byDay.set(day, {
        conversations: [...d.conversations].sort(),
        members: [...d.members.values()].sort(byKey),
        deletions: [...d.deleted].map(([group, at]) => ({ group, at })).sort(byKey),
      });
    }
    result.set(appId, byDay);
  }
  return result;
}

/**
 * Each app's groups per UTC day a history implies, by replaying its membership facts in order
 * across the whole history (not a day at a time, as the day sets are): members at the start and
 * end of each day, the members at its start who were out at some time in it, the groups with
 * members at its end; and each conversation's first day (conversations started).
 */
export function expectedGroupsOverTime(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<
  string,
  {
    days: Map<string, { membersAtStart: number; membersAtEnd: number; churned: number; groups: number }>;
    conversationsStarted: Map<string, number>;
  }
> {
  const result = new Map<
    string,
    ReturnType<typeof expectedGroupsOverTime> extends Map<string, infer V> ? V : never
  >();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const ordered = [...facts].sort((a, b) => compareFacts(a.order, b.order));
    const members = new Set<string>();
    const days = new Map<
      string,
      { membersAtStart: number; membersAtEnd: number; churned: number; groups: number }
    >();
    const firstDay = new Map<string, string>();
    let day = "";
    let atStart = new Set<string>();
    let churned = new Set<string>();
    const closeDay = () => {
      if (!day) return;
      const groups = new Set([...members].map((k) => k.split("\0")[0]));
      days.set(day, {
        membersAtStart: atStart.size,
        membersAtEnd: members.size,
        churned: churned.size,
        groups: groups.size,
      });
    };
    for (const fact of ordered) {
      if (fact.day !== day) {
        closeDay();
        day = fact.day;
        atStart = new Set(members);
        churned = new Set();
      }
      const { conversation, group, deletes, member, uids } = setFactOf(fact);
      if (conversation !== undefined && !firstDay.has(conversation)) firstDay.set(conversation, fact.day);
      if (group === undefined) continue;
      if (deletes) for (const k of [...members]) if (k.startsWith(`${group}\0`)) members.delete(k);
      if (member === undefined) continue;
      for (const uid of uids) {
        const k = `${group}\0${uid}`;
        if (member) members.add(k);
        else {
          if (atStart.has(k)) churned.add(k);
          members.delete(k);
        }
      }
    }
    closeDay();
    const conversationsStarted = new Map<string, number>();
    for (const d of firstDay.values()) conversationsStarted.set(d, (conversationsStarted.get(d) ?? 0) + 1);
    result.set(appId, { days, conversationsStarted });
  }
  return result;
}
