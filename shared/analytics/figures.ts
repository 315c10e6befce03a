import type { SqlValue } from "./dialect";

/** A figure's description, tagged as one that counts facts one by one (`FACT_COUNTS`). */
const counts = <T extends string>(text: T) => ({ text, countsFacts: true }) as const;

/**
 * The activity figures of an app, per UTC day and hour, by the names the SQL gives them
 * (`sql/day-activity/`) and the activity table stores. Each is a count over the facts of the
 * day (each fact once, by its natural key, at its event time); docs/analytics.md's table is this one.
 */
export const FIGURES = {
  messages: counts("messages sent (message_sent)"),
  messages_user: "messages sent to a user (receiverType user)",
  messages_group: "messages sent to a group (receiverType group)",
  edited: counts("messages edited"),
  deleted: counts("messages deleted"),
  reactions_added: counts("reactions added"),
  reactions_removed: counts("reactions removed"),
  mentions: counts("mentions (user_mentioned)"),
  delivery_receipts: counts("delivery receipts"),
  read_receipts: counts("read receipts"),
  legacy_receipts: "receipts in the platform's legacy webhook format (also counted in the receipts above)",
  delivered_to_all: counts("group messages delivered to every member (message_delivered_to_all)"),
  read_by_all: counts("group messages read by every member (message_read_by_all)"),
  messages_blocked: counts(
    "messages blocked by a moderation rule (moderation_engine_blocked): they fire no message_sent",
  ),
  active_senders: "distinct senders of messages",
  active_users:
    "distinct uids acting: senders, editors, reactors, readers, presence, call parties, group creators/owners/updaters",
  users_online: counts("distinct users who came online"),
  peak_online: "most users online at once (presence transitions in the order of facts)",
  online_at_start: "users online when the day (hour) began, as the day's transitions imply",
  online_change: "net change of users online over the day (hour)",
  groups_created: counts("groups created"),
  groups_deleted: counts("groups deleted"),
  member_joins: counts("members joined or added (members of each event)"),
  member_leaves: counts("members who left"),
  member_kicks: counts("members kicked"),
  member_bans: counts("members banned"),
  active_groups: "groups with at least one message",
  calls_audio: counts("audio calls initiated"),
  calls_video: counts("video calls initiated"),
  calls_started: counts("calls started"),
  calls_busy: counts("calls busy"),
  calls_rejected: counts("calls rejected"),
  calls_cancelled: counts("calls cancelled"),
  calls_unanswered: counts("calls unanswered"),
  meetings_started: counts("meetings started"),
  call_seconds: "Σ (destroyed_at − created_at) of the calls that ended",
  meeting_seconds: "Σ (destroyed_at − created_at) of the meetings that ended",
  participant_seconds:
    "Σ (left_at − joined_at) of the stints that left (calls and meetings), each once: from participant-left facts and end rosters",
  participants_joined: counts("participants joined (calls and meetings)"),
  sessions_ended: counts("calls and meetings ended"),
  calls_ended: "calls ended",
  meetings_ended: "meetings ended",
  sessions_under_1m: "calls and meetings ended that lasted under a minute (destroyed_at − created_at)",
  sessions_1_5m: "… that lasted 1 to 5 minutes",
  sessions_5_15m: "… 5 to 15 minutes",
  sessions_15_60m: "… 15 to 60 minutes",
  sessions_over_60m: "… an hour or more",
  call_participants:
    "Σ over the calls that ended of their participants (distinct names of the end's roster; ÷ calls_ended: participants per call); per hour, by the hour a stint left",
  meeting_participants: "the same for meetings (÷ meetings_ended: participants per meeting)",
  peak_calls:
    "most calls in progress at once (call_started +1, call_ended −1, in the order of facts; a call whose first transition of the day is its end was in progress at the start)",
  calls_at_start: "calls in progress when the day (hour) began, as the day's transitions imply",
  calls_change: "net change of calls in progress over the day (hour)",
  chat_to_call:
    "distinct users who sent a 1:1 message to someone and later in the day (event time) called that person 1:1 (chat-to-call conversion; ÷ active_senders)",
  first_responses:
    "replies in 1:1 conversations: a message after one of the other party's, in the order of facts, both in the day",
  first_response_p50_ms:
    "first-response time, ms: the median (nearest rank) of the replies' times since the message they answer",
  first_response_p90_ms: "… its 90th percentile",
  delivery_latencies:
    "deliveries of a message sent in the day to a recipient other than its sender (first receipt each)",
  delivery_latency_p50_ms: "delivery latency, ms (receipt time − message time): the median (nearest rank)",
  delivery_latency_p90_ms: "… its 90th percentile",
  delivery_latency_p99_ms: "… its 99th percentile",
  read_latencies:
    "reads of a message sent in the day by a recipient other than its sender (first receipt each)",
  read_latency_p50_ms: "read latency, ms: the median (nearest rank)",
  read_latency_p90_ms: "… its 90th percentile",
  read_latency_p99_ms: "… its 99th percentile",
  recordings: counts("recordings generated"),
  recording_seconds: "Σ duration of the recordings generated",
  transcripts: counts("transcripts generated (transcription_generated)"),
} as const;

export type FigureName = keyof typeof FIGURES;
export type Figures = Record<FigureName, number>;
export const FIGURE_NAMES = Object.keys(FIGURES) as FigureName[];

/**
 * The figures that count facts, each fact once (tagged `counts(…)` above): what the watchdog adds
 * up as an hour's deliveries (`deliveries.ts`, #52). Levels, sums of seconds, percentiles and
 * distinct counts are not.
 */
export const FACT_COUNTS: readonly FigureName[] = FIGURE_NAMES.filter((name) => {
  const figure: string | { countsFacts?: boolean } = FIGURES[name];
  return typeof figure === "object" && figure.countsFacts === true;
});

/** The figures meant per hour (⏱); an hour's item holds every figure. */
export const HOURLY_FIGURES: readonly FigureName[] = [
  "messages",
  "active_users",
  "peak_online",
  "calls_audio",
  "calls_video",
  "calls_started",
  "calls_busy",
  "calls_rejected",
  "calls_cancelled",
  "calls_unanswered",
  "meetings_started",
  "peak_calls",
];

/** The most entries of one top list a day keeps (its replace is one transaction: at most 100 actions). */
export const TOP_LIMIT = 25;

/** A group's day: its messages and the distinct members who sent them. */
export interface GroupActivity {
  groupId: string;
  messages: number;
  activeMembers: number;
}

/** A user's day: the messages they sent. */
export interface UserActivity {
  uid: string;
  messages: number;
}

/** One day of an app: its figures, its hours, its busiest groups and users, its messages by kind. */
export interface DayActivity {
  figures: Figures;
  /**
   * Hours from 0, each hour begun when the day was computed (`hoursBegun`): all 24 of a day that
   * is over; of today, up to the hour of the computation (so far). An hour not begun has no item:
   * it was not measured, and the level online it would carry forward is no figure of it (#42).
   */
  hours: Array<{ hour: number; figures: Figures }>;
  /** Most messages first, ties by id. */
  topGroups: GroupActivity[];
  topUsers: UserActivity[];
  /** Messages by `<category>/<type>`. */
  messageKinds: Record<string, number>;
  /** Distinct users with a presence fact from each client platform (`currentConnection.platform`). */
  platforms: Record<string, number>;
}

/** The GROUPING(hour, group_id, sender, message_kind, set_key, platform) value of each grouping set of the query. */
const GROUPING_SET = {
  day: 63,
  hour: 31,
  group: 47,
  user: 55,
  messageKind: 59,
  daySet: 61,
  platform: 62,
} as const;

/** An active user of a day, and when their entity says they were created (epoch s), if a fact said. */
export interface ActiveUser {
  uid: string;
  createdAt?: number;
}

/**
 * A member's last change of a day in a group (the membership history, a day at a time): in or out
 * at the end of the day, whether they were out at some time in it (left, kicked or banned), and
 * when (`at`: the order key of the change, comparable across days: event time first).
 */
export interface MemberChange {
  group: string;
  uid: string;
  member: boolean;
  removed: boolean;
  at: string;
}

/** A group deleted in the day, and when (an order key, as `MemberChange.at`). */
export interface GroupDeletion {
  group: string;
  at: string;
}

/**
 * An app's day sets (a final pass asks for them, `:users`): its active users, the conversations
 * with a message, its members' last changes and the groups deleted.
 */
export interface DaySets {
  users: ActiveUser[];
  conversations: string[];
  members: MemberChange[];
  deletions: GroupDeletion[];
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** An app's day sets from its day-set rows (`set_key`: `u|`, `c|`, `m|` or `g|` then the key), each sorted. */
export function daySetsFromRows(rows: readonly Row[]): DaySets {
  const sets: DaySets = { users: [], conversations: [], members: [], deletions: [] };
  for (const r of rows) {
    if (num(r.grouping_set) !== GROUPING_SET.daySet || typeof r.set_key !== "string") continue;
    const kind = r.set_key.slice(0, 2);
    const key = r.set_key.slice(2);
    const change = typeof r.last_change === "string" ? r.last_change : "";
    if (kind === "u|")
      sets.users.push({
        uid: key,
        ...(r.created_at === null || r.created_at === undefined ? {} : { createdAt: num(r.created_at) }),
      });
    else if (kind === "c|") sets.conversations.push(key);
    else if (kind === "m|" && change)
      sets.members.push({
        group: String(r.set_group),
        uid: String(r.set_member),
        member: change.endsWith("1"),
        removed: num(r.removed) === 1,
        at: change.slice(0, -1),
      });
    else if (kind === "g|" && change) sets.deletions.push({ group: key, at: change.slice(0, -1) });
  }
  sets.users.sort((a, b) => byString(a.uid, b.uid));
  sets.conversations.sort(byString);
  sets.members.sort((a, b) => byString(a.group, b.group) || byString(a.uid, b.uid));
  sets.deletions.sort((a, b) => byString(a.group, b.group));
  return sets;
}

type Row = Record<string, SqlValue | null>;

/** Seconds to the millisecond. */
export const roundMs = (seconds: number): number => Math.round(seconds * 1000) / 1000;

const num = (value: SqlValue | null | undefined): number =>
  value === null || value === undefined ? 0 : Number(value);

function figuresOf(row: Row | undefined): Figures {
  return Object.fromEntries(FIGURE_NAMES.map((name) => [name, num(row?.[name])])) as Figures;
}

const byCountThenId =
  <T>(count: (x: T) => number, id: (x: T) => string) =>
  (a: T, b: T) =>
    count(b) - count(a) || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);

/**
 * A day's activity from the rows of `sql/day-activity/`. The query gives each hour the highest
 * level of users online its transitions reached; an hour's peak is also at least the level it
 * began with (carried from the transitions before it), which is filled in here.
 *
 * @example activityFromRows(rows, { hours: 24, top: 25 }).figures.messages // 737
 */
export function activityFromRows(rows: readonly Row[], options: { hours: number; top: number }): DayActivity {
  const set = (row: Row) => num(row.grouping_set);
  const dayRow = rows.find((r) => set(r) === GROUPING_SET.day);
  const figures = figuresOf(dayRow);
  // A sum of decimal durations: to the millisecond, whatever order the engine added them in.
  figures.recording_seconds = roundMs(figures.recording_seconds);
  const hasPresence = dayRow?.peak_online !== null && dayRow?.peak_online !== undefined;
  figures.peak_online = hasPresence ? Math.max(figures.online_at_start, figures.peak_online) : 0;

  const hasCalls = dayRow?.peak_calls !== null && dayRow?.peak_calls !== undefined;
  figures.peak_calls = hasCalls ? Math.max(figures.calls_at_start, figures.peak_calls) : 0;

  const hourRows = new Map(rows.filter((r) => set(r) === GROUPING_SET.hour).map((r) => [num(r.hour), r]));
  let level = figures.online_at_start;
  let calls = figures.calls_at_start;
  const hours = Array.from({ length: options.hours }, (_, hour) => {
    const row = hourRows.get(hour);
    const hourFigures = figuresOf(row);
    hourFigures.recording_seconds = roundMs(hourFigures.recording_seconds);
    const reached =
      row?.peak_online === null || row?.peak_online === undefined ? level : num(row.peak_online);
    hourFigures.online_at_start = level;
    hourFigures.peak_online = Math.max(level, reached);
    level += hourFigures.online_change;
    const callsReached =
      row?.peak_calls === null || row?.peak_calls === undefined ? calls : num(row.peak_calls);
    hourFigures.calls_at_start = calls;
    hourFigures.peak_calls = Math.max(calls, callsReached);
    calls += hourFigures.calls_change;
    return { hour, figures: hourFigures };
  });

  const topGroups = rows
    .filter((r) => set(r) === GROUPING_SET.group && r.group_id !== null)
    .map((r) => ({
      groupId: String(r.group_id),
      messages: num(r.messages),
      activeMembers: num(r.active_senders),
    }))
    .sort(
      byCountThenId(
        (g: GroupActivity) => g.messages,
        (g) => g.groupId,
      ),
    )
    .slice(0, options.top);
  const topUsers = rows
    .filter((r) => set(r) === GROUPING_SET.user && r.sender !== null)
    .map((r) => ({ uid: String(r.sender), messages: num(r.messages) }))
    .sort(
      byCountThenId(
        (u: UserActivity) => u.messages,
        (u) => u.uid,
      ),
    )
    .slice(0, options.top);
  const messageKinds = Object.fromEntries(
    rows
      .filter((r) => set(r) === GROUPING_SET.messageKind && r.message_kind !== null)
      .map((r) => [String(r.message_kind), num(r.messages)])
      .sort(([a], [b]) => String(a).localeCompare(String(b))),
  );
  const platforms = Object.fromEntries(
    rows
      .filter((r) => set(r) === GROUPING_SET.platform && r.platform !== null)
      .map((r) => [String(r.platform), num(r.active_users)])
      .sort(([a], [b]) => String(a).localeCompare(String(b))),
  );
  return { figures, hours, topGroups, topUsers, messageKinds, platforms };
}

/**
 * Ratios shown beside the counts: calls answered per call initiated, participants joined per
 * session started, participants per call and per meeting that ended (distinct names of their
 * rosters), messages per active sender, chat-to-call conversion (callers who wrote first, per
 * active sender). Null where the divisor is 0.
 */
export function derivedFigures(f: Figures): {
  answer_rate: number | null;
  average_participants: number | null;
  participants_per_call: number | null;
  participants_per_meeting: number | null;
  messages_per_sender: number | null;
  chat_to_call_rate: number | null;
} {
  const initiated = f.calls_audio + f.calls_video;
  const sessions = f.calls_started + f.meetings_started;
  const ratio = (a: number, b: number) => (b ? a / b : null);
  return {
    answer_rate: ratio(f.calls_started, initiated),
    average_participants: ratio(f.participants_joined, sessions),
    participants_per_call: ratio(f.call_participants, f.calls_ended),
    participants_per_meeting: ratio(f.meeting_participants, f.meetings_ended),
    messages_per_sender: ratio(f.messages, f.active_senders),
    chat_to_call_rate: ratio(f.chat_to_call, f.active_senders),
  };
}
