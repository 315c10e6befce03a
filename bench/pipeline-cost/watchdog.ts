/**
 * bench:cost's watchdog lines (#52): what watching every app for silence adds, measured on ledger
 * passes as the rollup writes them (each app's hourly deliveries and the pass that last saw it)
 * for 10, 1,000 and 10,000 apps, beside the same passes without those fields (the baseline of the
 * same run): the ledger's bytes per app and day, the time to judge every app from fifteen passes,
 * and the dollars: per event (no request is made per delivery: $0) and per month, all apps and per
 * app, at the deployed tick (every 15 minutes).
 */
import type { DayPass, RollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { silenceDays, silenceFromLedger } from "../../shared/watchdog/ledger-history";
import { PRICE } from "./model";

const TICKS_A_MONTH = 4 * 24 * 30;
/** Lambda's price per GB-second (arm64) and the rollup function's memory (GB). */
const LAMBDA_GB_SECOND = 0.0000133334;
const ROLLUP_GB = 1;
/**
 * CloudWatch: one custom metric ($0.30 a month), two standard alarms ($0.10 each: SilentApps, and
 * RefusedDeliveries on the Contributor Insights rule's metric), the rule itself ($0.50 a month,
 * #58), whatever the number of apps.
 */
const METRIC_AND_ALARMS_A_MONTH = 0.3 + 0.1 + 0.1 + 0.5;
/** Contributor Insights: $0.02 per million log events matched (refusal lines only: counted at 1M a month). */
const INSIGHT_MATCHED_A_MONTH = 0.02;
/** S3 Standard, $ a GB-month; the ledger's objects are kept as long as the archive (30 days here). */
const S3_GB_MONTH = 0.023;

/** A day's pass for `apps` apps, with or without the watchdog's fields; deliveries drawn per hour. */
function passOf(day: string, apps: number, withWatchdog: boolean): DayPass {
  const ids = Array.from({ length: apps }, (_, i) => `app-${String(i).padStart(6, "0")}`);
  const pass: DayPass = {
    ...{ day, computedAt: Date.parse(`${day}T23:59:00Z`), final: true, queries: 1, bytesScanned: 1e8 },
    apps: Object.fromEntries(ids.map((id, i) => [id, `digest${String(i).padStart(10, "0")}`])),
    totals: Object.fromEntries(ids.map((id, i) => [id, [i % 997, i % 89, (i % 997) * 7]])),
  };
  if (!withWatchdog) return pass;
  // Zipf-like: a few apps with thousands an hour, a long tail with a handful or none.
  const hourly = ids.map((_, i) =>
    Array.from({ length: 24 }, (_, h) => Math.floor(5000 / (i + 1) + ((i * 7 + h) % 5))),
  );
  return {
    ...pass,
    hourly: Object.fromEntries(ids.map((id, i) => [id, hourly[i] ?? []])),
    seenAt: Object.fromEntries(ids.map((id) => [id, pass.computedAt])),
    quarters: Object.fromEntries(
      ids.map((id, i) => {
        const day = (hourly[i] ?? []).reduce((a, b) => a + b, 0);
        return [id, [Math.ceil(day / 4), Math.floor(day / 4), Math.floor(day / 4), Math.floor(day / 4)]];
      }),
    ),
  };
}

/**
 * Prints the watchdog's lines: bytes, time and dollars, with and without it, for 10 to 10,000
 * apps; returns its month's requests, compute and storage by number of apps (its CloudWatch
 * metric and alarms are the template's, counted with the month's fixed items).
 */
export async function printWatchdogCost(): Promise<Map<number, number>> {
  const months = new Map<number, number>();
  const now = Date.UTC(2026, 0, 9, 12);
  const rows = [];
  for (const apps of [10, 1_000, 10_000]) {
    const days = silenceDays(now).map(utcDay);
    const passes = new Map(days.map((d) => [d, passOf(d, apps, true)]));
    const ledger: RollupLedger = {
      pass: async (day) => passes.get(day),
      record: async () => undefined,
      apps: async () => [],
      appTotals: async () => new Map(),
    };
    const before = JSON.stringify(passOf(days[0] ?? "", apps, false)).length;
    const after = JSON.stringify(passes.get(days[0] ?? "")).length;
    // The judgement as the rollup makes it, parsing included (the ledger's adapter parses each GET).
    const texts = days.map((d) => JSON.stringify(passes.get(d)));
    const started = performance.now();
    for (const t of texts) JSON.parse(t);
    const report = await silenceFromLedger(ledger, now);
    const ms = performance.now() - started;
    const getsAMonth = days.length * TICKS_A_MONTH;
    const lambdaAMonth = (ms / 1000) * ROLLUP_GB * LAMBDA_GB_SECOND * TICKS_A_MONTH;
    const storageAMonth = ((after - before) * 30 * S3_GB_MONTH) / 1024 ** 3;
    const monthly =
      getsAMonth * PRICE.s3Get +
      lambdaAMonth +
      storageAMonth +
      METRIC_AND_ALARMS_A_MONTH +
      INSIGHT_MATCHED_A_MONTH;
    months.set(apps, monthly - METRIC_AND_ALARMS_A_MONTH);
    rows.push({
      apps,
      "ledger bytes/app/day, before": Math.round(before / apps),
      "… with the watchdog": Math.round(after / apps),
      "judge every app, ms": Number(ms.toFixed(1)),
      "apps judged": report.judged,
      "$ per 1M events": 0,
      "$ a month, all apps": Number(monthly.toFixed(3)),
      "$ a month per app": Number((monthly / apps).toPrecision(2)),
    });
  }
  console.log(
    "the watchdog (#52, #58): ledger passes with and without each app's hourly deliveries, last seen and quarters of the hour, 29 GETs a 15-minute tick, one metric, two alarms and a Contributor Insights rule:",
  );
  console.table(rows);
  console.log(
    "no request is made per delivery or per app: $0 per event; the month is the 29 GETs a tick, the judging time, the ledger's extra bytes (30 days kept), and $1.02 of CloudWatch (one metric, two alarms, the Contributor Insights rule and 1M matched refusal lines) whatever the number of apps",
  );
  return months;
}
