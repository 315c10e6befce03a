/**
 * The rollup: each day's activity figures recomputed from the raw archive by one SQL query
 * and replaced in the activity table, on a schedule or on command. This file is its public face,
 * what the handler, the commands, the erasure and the tests import; each step lives in a file of
 * its own: the calendar (`days.ts`), what a rollup is given (`dependencies.ts`), the day's query
 * (`day-query.ts`), one app's pass (`app-pass.ts`), the pass over every app (`day-pass.ts`) and
 * what the ledger keeps of it (`ledger.ts`), a range on command (`range.ts`) and the schedule
 * with its once-a-day steps (`schedule.ts`). What the steps share among themselves only
 * (`replaceDay`, `passDay`, `isFinal`) is not exported here.
 */
export { rollupDay } from "./app-pass";
export { type DayPassReport, rollupDayAllApps } from "./day-pass";
export { type DayActivities, dayActivities, dayActivity } from "./day-query";
export { dayStart, daysInRange, hoursBegun, receiptDaysOf } from "./days";
export type { DayRollup, RollupDependencies, RollupOptions } from "./dependencies";
export { activityDigest, headlineTotals } from "./ledger";
export { type RangeRollupReport, rollupDays } from "./range";
export { type ScheduledRollupReport, scheduledDays, scheduledRollup } from "./schedule";
