/**
 * Why a figure from the day sets (users over time, retention, the membership history) is blank
 * for a day: not closed yet, closed without its sets written for the app, or before the first day
 * the sets hold; and the notes that say so, with when the days close (UTC) and what to run.
 */
import { dayStart } from "../../../shared/analytics/rollup";
import type { ActivityStore } from "../../../shared/analytics/store/activity-store";
import { USER_SETS_PREFIX, type UserSetStore } from "../../../shared/analytics/user-sets";
import { dayOfKey, utcDay } from "../../../shared/contracts/bucket-layout";
import { isoTime } from "../../cli/format";
import { dayRanges, rangeText, shellWord } from "./notes";
import { type ActivityViewOptions, DEFAULT_GRACE_MINUTES } from "./options";
import { BLANK, type Note } from "./text";

const DAY_MS = 86_400_000;

/**
 * Why a day shows no figure from the day sets: not closed yet, closed without its sets, or
 * before the first day the sets hold (nothing is known of it: the archive begins later, or its
 * retention has expired it).
 */
export type BlankReason = "not closed" | "not written" | "before the archive";

/** The blank days of a range (`blankDays`), and the first day the sets hold. */
interface Blanks {
  reasons: Map<string, BlankReason>;
  firstWritten?: string;
}

/** A run of days blank for one reason, with what a person can do about it (the JSON's `blank`). */
export interface BlankNote extends Note {
  from: string;
  to: string;
  reason: BlankReason;
  /** When the first of the days closes (not closed) or closed (not written): its end plus the grace period, ISO UTC. */
  closesAt: string;
}

/**
 * The days of `days` whose figures from the day sets (under `prefix`) are not there, and why:
 * not closed (now is before the day's end plus the grace period), or closed but its sets not
 * written for this app (no set object for the day, or the app's stored day is not final: no final
 * pass covered the app), or before the first set written (nothing known of it: blank, but it
 * empties no return or cohort of later days). One listing of the sets and one Query of the app's days.
 */
export async function blankDays(
  store: ActivityStore,
  sets: UserSetStore,
  prefix: string,
  o: ActivityViewOptions,
  days: readonly string[],
): Promise<Blanks> {
  const blank = new Map<string, BlankReason>();
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined) return { reasons: blank };
  const now = o.now ?? Date.now();
  const written = new Set((await sets.list(prefix)).flatMap((k) => dayOfKey(k) ?? []));
  const firstWritten = [...written].sort()[0];
  const stored = new Map((await store.days(o.app, first, last)).map((d) => [d.day, d.final]));
  for (const day of days) {
    const beforeArchive = firstWritten !== undefined && day < firstWritten;
    if (now < closesAt(day, o)) blank.set(day, "not closed");
    else if (beforeArchive) blank.set(day, "before the archive");
    else if (!written.has(day) || stored.get(day) === false) blank.set(day, "not written");
  }
  return { reasons: blank, firstWritten };
}

/** When a day closes: its end plus the grace period (ms). */
const closesAt = (day: string, o: ActivityViewOptions) =>
  dayStart(day) + DAY_MS + (o.graceMinutes ?? DEFAULT_GRACE_MINUTES) * 60_000;

/**
 * What to say of the blank days of the range: a note per run of days with one reason, naming
 * when they close (UTC) and what to run to see them now: a day over but within its grace period
 * can be closed now (`rollup --grace-minutes 0`); today cannot, but its active users so far are
 * the day's `active_users`; a closed day without its sets gets them from a rollup.
 *
 * @example blankNotes({ reasons: new Map([["2026-01-02", "not written"]]) }, o)[0].run // "npx webhook rollup --from 2026-01-02 --to 2026-01-02"
 */
export function blankNotes(
  { reasons: blank, firstWritten }: Blanks,
  o: ActivityViewOptions,
  todaySoFar = true,
): BlankNote[] {
  const now = o.now ?? Date.now();
  const args = o.targetArgs ?? "";
  const today = utcDay(now);
  const period = `its end plus the ${o.graceMinutes ?? DEFAULT_GRACE_MINUTES}-minute grace period, UTC`;
  // The runs: one reason, and (not closed) all over already or all still to end.
  const kind = (day: string) => {
    const reason = blank.get(day);
    if (reason !== "not closed") return reason;
    return dayStart(day) + DAY_MS <= now ? "closing" : "open";
  };
  const inRange = [...blank.keys()].filter((d) => d >= o.from && d <= o.to).sort();
  const notes: BlankNote[] = [];
  for (const k of ["before the archive", "not written", "closing", "open"] as const)
    for (const range of dayRanges(inRange.filter((d) => kind(d) === k))) {
      const [from, to] = range;
      const at = isoTime(closesAt(from, o));
      const one = from === to;
      // One day: when it closes; several: the first's time, the rule for the others.
      const when = one ? `at ${at} (${period})` : `each at ${period}; the first at ${at}`;
      const base = { from, to, reason: blank.get(from) as BlankReason, closesAt: at };
      if (k === "before the archive")
        notes.push({
          ...base,
          text: `${rangeText(range)}: before the first closed day the day sets hold (${firstWritten}): nothing is known of ${one ? "it" : "them"} (the archive begins later, or its retention expired ${one ? "it" : "them"}).`,
        });
      else if (k === "not written")
        notes.push({
          ...base,
          text: `${rangeText(range)}: closed (${one ? `at ${at}, ${period}` : when}), but ${one ? "its" : "their"} day sets are not written; a rollup writes them:`,
          run: `npx webhook rollup --from ${from} --to ${to}${args}`,
        });
      else if (k === "closing")
        notes.push({
          ...base,
          text: `${rangeText(range)}: not closed yet: ${one ? "closes" : "close"} ${when}. To close ${one ? "it" : "them"} now (a fact that arrives later then needs another rollup):`,
          run: `npx webhook rollup --from ${from} --to ${to} --grace-minutes 0${args}`,
        });
      else
        notes.push({
          ...base,
          text: `${rangeText(range)}: not closed yet: ${one ? "closes" : "close"} ${when}.${
            todaySoFar && from <= today && today <= to
              ? " Today's active users so far are its active_users:"
              : ""
          }`,
          ...(todaySoFar && from <= today && today <= to
            ? {
                run: `npx webhook query activity --app ${shellWord(o.app)} --from ${today} --to ${today}${args}`,
              }
            : {}),
        });
    }
  return notes.sort((a, b) => a.from.localeCompare(b.from));
}

/** `—` for a blank day's figure, the value otherwise (`""` for none: a ratio whose divisor is 0). */
export const shownOr = (blank: boolean, value: unknown) => (blank ? BLANK : (value ?? ""));

/** The last closed day: the newest user set (a final pass writes every day set at once). */
export async function closedThroughOf(sets: UserSetStore): Promise<string> {
  const closed = (await sets.list(USER_SETS_PREFIX)).map((k) => dayOfKey(k) ?? "").sort();
  return closed.at(-1) ?? "";
}
