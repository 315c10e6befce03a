/**
 * A day's activity per app as the oracle computes it (`expectedActivity`): the facts of each day
 * added to the day's and the hours' counts, with the levels, sessions, latencies and chat-to-call
 * of their own files, and the top lists, message kinds and client platforms.
 */
import {
  type DayActivity,
  type GroupActivity,
  TOP_LIMIT,
  type UserActivity,
} from "../../../shared/analytics/figures";
import type { GeneratedEvent } from "../generator";
import { chatToCallOf } from "./chat-to-call";
import { add, type Bucket, bucket, close } from "./counts";
import { factsOf, str } from "./facts";
import { latenciesOf, latencyFigures } from "./latencies";
import { callLevels, presenceLevels } from "./levels";
import { participantsOf, stintsOf } from "./sessions";

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
