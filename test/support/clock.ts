import { utcDay } from "../../shared/contracts/bucket-layout";

/**
 * The start (epoch s) of a simulated history that began `leadSeconds` ago and lies on one UTC day,
 * and that day. In the first `leadSeconds` (plus a minute) after midnight, "ago" would put the
 * history across midnight or wholly on yesterday while the test reads today's figures: the
 * history then ends a minute before midnight, and the test reads that day. (A history lasts less
 * than `leadSeconds`: the callers' histories run a few minutes of simulated time.)
 *
 * @example oneDayHistoryStart(900, Date.parse("2026-01-02T00:05:00Z")) // { startAt: 2026-01-01T23:44:00Z in s, day: "2026-01-01" }
 */
export function oneDayHistoryStart(
  leadSeconds: number,
  nowMs = Date.now(),
): { startAt: number; day: string } {
  const midnight = Date.parse(`${utcDay(nowMs)}T00:00:00Z`) / 1000;
  const ago = Math.floor(nowMs / 1000) - leadSeconds;
  const startAt = ago - 60 >= midnight ? ago : midnight - leadSeconds - 60;
  return { startAt, day: utcDay(startAt * 1000) };
}
