import { type RawArchiveLine, utcDay } from "../contracts/bucket-layout";
import { PLATFORM_RETRY_HORIZON_MS } from "../platform/constants";

/**
 * The first day an event may be dated by (UTC): an event time before it is a clock's error (the
 * platform did not exist), and names no day of any figure. Edge copies and the day sets are
 * dated no earlier (`edgeDaysOf`), and the Glue tables' date projection over them starts here
 * (infra/constructs/activity-analytics.ts), so Athena sees every day the writers produce.
 */
export const EARLIEST_EVENT_DAY = "2000-01-01";

/**
 * The days, other than its receipt day, whose activity recompute needs a copy of this line (its
 * "edge"), so that a day is recomputed from the receipt day's raw archive and its edge alone:
 * - a line whose event day (UTC) is not its receipt day (a late or an early event): its event day;
 * - a line received less than `PLATFORM_RETRY_HORIZON_MS` before midnight: the next day, whose
 *   recompute must see this first copy of a natural key received again after midnight (a
 *   platform retry of a receipt-timed event, whose own event time is its receipt on the next
 *   day; or another copy of the same fact with a later time in its payload, as two receipts of
 *   one message by one user).
 * A line without facts (invalid body) is in no figure, and a time no date can hold (beyond the
 * year 275760) or before `EARLIEST_EVENT_DAY` names no day: none. A day after the receipt (a
 * client's clock ahead) is kept: it is read when that day is recomputed, by then no longer future.
 *
 * @example edgeDaysOf({ …, receivedAt: Date.UTC(2026, 0, 3, 2), eventTime: Date.UTC(2026, 0, 2, 23) }) // ["2026-01-02"]
 */
export function edgeDaysOf(line: RawArchiveLine): string[] {
  if (line.eventTime === undefined || !Number.isFinite(new Date(line.eventTime).getTime())) return [];
  const receiptDay = utcDay(line.receivedAt);
  const days = new Set([utcDay(line.eventTime), utcDay(line.receivedAt + PLATFORM_RETRY_HORIZON_MS)]);
  days.delete(receiptDay);
  return [...days].filter((day) => day >= EARLIEST_EVENT_DAY);
}
