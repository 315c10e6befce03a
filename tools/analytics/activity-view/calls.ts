/**
 * `--calls`: the calls and meetings that ended, by duration (with what the buckets add up to),
 * their participants (per call and per meeting that ended, said so), and the concurrency; the
 * figures of the wide row, and the sections of the text that fits.
 */
import { derivedFigures, type Figures } from "../../../shared/analytics/figures";
import type { StoredDay } from "../../../shared/analytics/store/activity-store";
import { byDay, ratioText, type Section } from "./text";

/** `--calls`: the sessions that ended, by duration, and their participants. */
export const CALL_COLUMNS: ReadonlyArray<keyof Figures> = [
  "calls_ended",
  "meetings_ended",
  "sessions_ended",
  "sessions_under_1m",
  "sessions_1_5m",
  "sessions_5_15m",
  "sessions_15_60m",
  "sessions_over_60m",
  "call_participants",
  "meeting_participants",
  "chat_to_call",
  "peak_calls",
];

/** The duration buckets of the calls and meetings that ended, and their short names. */
const DURATIONS = [
  ["sessions_under_1m", "under_1m"],
  ["sessions_1_5m", "1_5m"],
  ["sessions_5_15m", "5_15m"],
  ["sessions_15_60m", "15_60m"],
  ["sessions_over_60m", "over_60m"],
] as const satisfies ReadonlyArray<readonly [keyof Figures, string]>;

/** `--calls`' participants: what they are, and what the ratios divide them by. */
const PARTICIPANTS_NOTE =
  "Participants: the distinct names on each end's roster (all_occupants). per_call_ended and per_meeting_ended divide them by every call (meeting) that ended: one that ended with nobody on its roster (never answered, or everyone had left) counts, so per_call_ended can be under 1.";

/** `--calls`' duration buckets: what they count, and what they add up to. */
const DURATIONS_NOTE =
  "Calls and meetings that ended, by duration (destroyed_at − created_at): the five buckets add up to sessions_ended = calls_ended + meetings_ended.";

/**
 * `--calls` in sections that fit: the sessions that ended by duration (with what they add up
 * to), their participants (per call and per meeting that ended, said so), and the concurrency.
 */
export function callSections(days: readonly StoredDay[], missing: readonly string[]): Section[] {
  const durations = [
    "day",
    "calls_ended",
    "meetings_ended",
    "sessions_ended",
    ...DURATIONS.map(([, short]) => short),
  ];
  const participants = [
    "day",
    "call_participants",
    "per_call_ended",
    "meeting_participants",
    "per_meeting_ended",
  ];
  const atOnce = ["day", "peak_calls", "chat_to_call"];
  return [
    {
      title: DURATIONS_NOTE,
      columns: durations,
      rows: byDay(
        days,
        missing,
        durations,
      )((d) => [
        {
          day: d.day,
          calls_ended: d.figures.calls_ended,
          meetings_ended: d.figures.meetings_ended,
          sessions_ended: d.figures.sessions_ended,
          ...Object.fromEntries(DURATIONS.map(([f, short]) => [short, d.figures[f]])),
        },
      ]),
    },
    {
      title: PARTICIPANTS_NOTE,
      columns: participants,
      rows: byDay(
        days,
        missing,
        participants,
      )((d) => {
        const derived = derivedFigures(d.figures);
        return [
          {
            day: d.day,
            call_participants: d.figures.call_participants,
            per_call_ended: ratioText(derived.participants_per_call),
            meeting_participants: d.figures.meeting_participants,
            per_meeting_ended: ratioText(derived.participants_per_meeting),
          },
        ];
      }),
    },
    {
      title:
        "The most calls in progress at once; users who sent a 1:1 message to someone and later that day called that person.",
      columns: atOnce,
      rows: byDay(
        days,
        missing,
        atOnce,
      )((d) => [{ day: d.day, peak_calls: d.figures.peak_calls, chat_to_call: d.figures.chat_to_call }]),
    },
  ];
}
