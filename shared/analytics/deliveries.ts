/**
 * An hour's deliveries as the watchdog (`shared/watchdog/`) counts them (#52), from the figures the rollup computes
 * anyway (no new figure, no new query): the facts the figures count one by one (messages, edits,
 * receipts, reactions, group and member events, calls, recordings…), or, for an hour of presence
 * or other facts only, its distinct active users. Levels (users online, calls in progress), sums
 * of seconds and percentiles are no count of facts and are left out. An approximation from below
 * (a trigger no figure counts adds nothing): what the rule needs is the app's usual rhythm.
 */
import { type DayActivity, FACT_COUNTS, type Figures } from "./figures";

/** @example deliveriesOf({ messages: 3, read_receipts: 2, active_users: 2, … }) // 5 */
export function deliveriesOf(figures: Partial<Figures>): number {
  const counted = FACT_COUNTS.reduce((sum, name) => sum + (figures[name] ?? 0), 0);
  return Math.max(counted, figures.active_users ?? 0);
}

/**
 * An app's deliveries per hour of a day (the hours begun), as the ledger keeps them.
 *
 * @example hourlyDeliveries(activity) // [0, 0, 3, 12, …]
 */
export function hourlyDeliveries(activity: Pick<DayActivity, "hours">): number[] {
  const hours: number[] = [];
  for (const { hour, figures } of activity.hours) hours[hour] = deliveriesOf(figures);
  return Array.from(hours, (n) => n ?? 0);
}
