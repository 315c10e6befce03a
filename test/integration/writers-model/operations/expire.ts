/* The retention window crossed in the writers model (issue #50): a month passes, the schedule running. */
import { rollupDays } from "../../../../shared/analytics/rollup";
import { isExpired, utcDay } from "../../../../shared/contracts/bucket-layout";
import { RETAIN_DAYS, rollupDeps, type Wiring } from "../../../support/writers-model/cores";
import type { Model } from "../../../support/writers-model/model";
import { factDays } from "./deliver";
import { sweep } from "./imports";

const HOUR_MS = 3_600_000;

/**
 * The clock moves to the first hour at which the oldest day the run holds (a fact's receipt day
 * or an import day, not expired yet) expires, the days after it kept; meanwhile the daily schedule
 * ran: the days with facts, closed by then, rolled up (a final pass each), and at the end the
 * retention sweep (`sweep`, with its own check that no retained day's users over time changed).
 */
export async function expireOldest(
  m: Model,
  w: Wiring,
  failureOf: (error: unknown, what: string) => Error,
  beforeTimePasses: (hours: number) => Promise<string>,
): Promise<string> {
  const { clock } = w.site;
  const held = [
    ...m.delivered.map((d) => utcDay(d.receivedAt)),
    ...m.imported.map((i) => utcDay(i.importedAt * 1000)),
  ].filter((day) => !isExpired(day, RETAIN_DAYS, clock.now));
  const oldest = held.sort()[0];
  if (!oldest) return "nothing held";
  let until = clock.now;
  while (!isExpired(oldest, RETAIN_DAYS, until)) until += HOUR_MS;
  // What SQS would not keep that long, dealt with first (as `advance` does).
  const passing = await beforeTimePasses(Math.ceil((until - clock.now) / HOUR_MS));
  // The schedule's pass of each day once it closed: the clock past today's end, the days rolled up.
  const days = factDays(m, clock.now);
  clock.now = Math.min(until, Date.parse(`${utcDay(clock.now)}T00:00:00Z`) + 50 * HOUR_MS);
  if (m.delivered.length && days.length) {
    const report = await rollupDays(days, rollupDeps(w));
    if (report.failures.length) throw failureOf(report.failures[0]?.error, "the schedule failed");
  }
  clock.now = Math.max(clock.now, until);
  return `${oldest} expired${passing}; ${await sweep(m, w)}`;
}
