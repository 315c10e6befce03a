/**
 * The session figures of a day: each occupant's stint that left in it (participant-seconds) and
 * the participants of the sessions that ended, per kind, per day and per hour.
 */
import { type Fact, get, int, str } from "./facts";

/**
 * Each occupant's stint that left in the day (ms from `dayStart`), once by session, name and join
 * time, at the latest leaving reported by a participant-left fact or an end's roster
 * (all_occupants) of the day: its seconds and the hour it left.
 */
export function stintsOf(facts: readonly Fact[], dayStart: number): Array<{ seconds: number; hour: number }> {
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
export function participantsOf(facts: readonly Fact[], dayStart: number) {
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
