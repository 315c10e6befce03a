/**
 * The level figures of a day: users online and calls in progress, from their transitions in the
 * order of facts (the level each hour began with, its peak, its net change).
 */
import { compareFacts } from "../../../shared/projections/version";
import { type Fact, str } from "./facts";

/**
 * Users online through one day, from its presence facts in the order of facts: a user whose
 * first transition is "offline" was online when the day began. Per hour: the level it began
 * with, the highest level reached, and the net change.
 */
export function presenceLevels(facts: readonly Fact[]) {
  return levelsOf(
    facts.filter((f) => f.trigger === "user_connection_status_changed"),
    (t) => str(t.data, "user.uid") ?? "",
    (t) => str(t.data, "status") === "online",
  );
}

/** Calls in progress through one day, as `presenceLevels` for users online: started up, ended down. */
export function callLevels(facts: readonly Fact[]) {
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
