/**
 * The watchdog's two alarms as data (#52, #58): how CloudWatch evaluates them (period, datapoints
 * to alarm) and what one period's datapoint is. `infra/constructs/monitoring.ts` builds the alarms
 * from these, and the judge (`bench/watchdog.ts`) evaluates the same on its traces, so that what
 * is judged is what is deployed.
 */
import { REFUSALS } from "../platform/constants";

/** How an alarm is evaluated: M datapoints breaching out of the last N periods put it in ALARM. */
export interface AlarmEvaluation {
  periodMinutes: number;
  evaluationPeriods: number;
  datapointsToAlarm: number;
}

/** `SilentApps`: the apps silent at a tick (one value a tick, the rollup's schedule), at least 1. */
export const SILENCE_ALARM: AlarmEvaluation & { threshold: number } = {
  periodMinutes: 15,
  evaluationPeriods: 1,
  datapointsToAlarm: 1,
  threshold: 1,
};

/** One period of the ingest's requests as the refusal alarm sees them. */
export interface RefusalPeriod {
  /** Every request the edge answered in the period. */
  requests: number;
  /** The 401s, by the username as presented; `known`: the deployment holds a credential of that name. */
  refused: ReadonlyArray<{ username: string; known: boolean; count: number }>;
}

/** `RefusedDeliveries`: evaluated every `periodMinutes`. */
export const REFUSAL_ALARM: AlarmEvaluation = {
  periodMinutes: REFUSALS.windowMinutes,
  evaluationPeriods: 1,
  datapointsToAlarm: 1,
};

/**
 * Whether one period's datapoint breaches: the most refused username the deployment knows
 * (`MaxContributorValue` of the Contributor Insights rule) refused at least `REFUSALS.minRefusals`
 * times.
 */
export function refusalBreaches(period: RefusalPeriod): boolean {
  const most = Math.max(0, ...period.refused.filter((r) => r.known).map((r) => r.count));
  return most >= REFUSALS.minRefusals;
}

/**
 * The periods at whose end the alarm goes into ALARM (a page), from each period's breach: M of
 * the last N breaching, the alarm not already in ALARM (a period with no data does not breach:
 * `TreatMissingData.NOT_BREACHING`).
 *
 * @example pages([false, true, true, false], { periodMinutes: 15, evaluationPeriods: 1, datapointsToAlarm: 1 }) // [1]
 */
export function pages(breaching: ArrayLike<boolean | number>, alarm: AlarmEvaluation): number[] {
  const paged: number[] = [];
  let inAlarm = false;
  let window = 0;
  for (let i = 0; i < breaching.length; i++) {
    window += breaching[i] ? 1 : 0;
    if (i >= alarm.evaluationPeriods) window -= breaching[i - alarm.evaluationPeriods] ? 1 : 0;
    const breach = window >= alarm.datapointsToAlarm;
    if (breach && !inAlarm) paged.push(i);
    // Back to OK when fewer than M of the last N breach.
    inAlarm = breach;
  }
  return paged;
}
