/**
 * The month's fixed costs, whatever the traffic, at 10, 1,000 and 10,000 apps side by side: the
 * template's monitoring, secrets and keys (`fixedMonthlyLines`), the rollup's schedule with no
 * traffic (Athena bills each query at least 10 MB; the function waits on it) and the watchdog's
 * ledger reads (`printWatchdogCost`, measured in the same run). X-Ray, logs, requests and storage
 * are per event or per byte: priced with the events.
 */
import { readDeploymentConfig } from "../../infra/config";
import { reportTable } from "./doc-block";
import { PRICE } from "./model";
import { fixedMonthlyLines, MONTHLY_PRICE, monitoringCounts, type TemplateJson } from "./template";

/** Athena: $ per byte scanned, at least 10 MB a query. */
export const ATHENA = { perByte: 5 / 1024 ** 4, minimumBytes: 10 * 1024 ** 2 };
/** The rollup function's time per engine query, modelled (Athena's queue and run; the function waits). */
export const SECONDS_PER_QUERY = 10;

/** The schedule's engine queries a day: today every tick, yesterday until its final pass. */
export function scheduledQueriesADay(config = readDeploymentConfig({})): number {
  const ticks = (24 * 60) / config.activityEveryMinutes;
  return ticks + Math.ceil(config.activityGraceMinutes / config.activityEveryMinutes) + 1;
}

/** The rollup schedule's month with no traffic: each query's 10 MB minimum and the function's wait, its invocations. */
export function idleScheduleMonth(rollupMemoryMb: number, config = readDeploymentConfig({})): number {
  const queries = scheduledQueriesADay(config) * 30;
  const ticks = ((24 * 60) / config.activityEveryMinutes) * 30;
  return (
    queries * ATHENA.minimumBytes * ATHENA.perByte +
    queries * SECONDS_PER_QUERY * (rollupMemoryMb / 1024) * PRICE.lambdaGbSecond +
    ticks * PRICE.lambdaRequest
  );
}

/** The rollup function's memory, MB, from the template. */
export function rollupMemory(t: TemplateJson): number {
  for (const r of Object.values(t.Resources)) {
    const p = r.Properties as { MemorySize?: number; Environment?: { Variables?: Record<string, unknown> } };
    if (r.Type === "AWS::Lambda::Function" && p?.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === "rollup")
      return p.MemorySize ?? 128;
  }
  throw new Error("no rollup function in the template");
}

/**
 * The month's fixed items at each number of apps; the rows and totals. `emitted`: the custom
 * metrics a run's log lines emitted (EMF); those no alarm or metric filter names are billed too.
 */
export function fixedMonth(
  t: TemplateJson,
  watchdog: ReadonlyMap<number, number>,
  emitted: ReadonlySet<string>,
) {
  const apps = [...watchdog.keys()];
  const named = monitoringCounts(t).customMetrics;
  const more = [...emitted].filter((m) => !named.has(m)).length;
  const rows = [
    ...fixedMonthlyLines(t).map((l) => ({ item: l.item, usd: apps.map(() => l.usd) })),
    {
      item: `custom metrics the run's functions emitted that no alarm names: ${more} (of ${emitted.size} emitted)`,
      usd: apps.map(() => more * MONTHLY_PRICE.customMetric),
    },
    {
      item: `rollup schedule with no traffic (${scheduledQueriesADay()} queries a day at Athena's 10 MB minimum, ${SECONDS_PER_QUERY} s each at ${rollupMemory(t)} MB)`,
      usd: apps.map(() => idleScheduleMonth(rollupMemory(t))),
    },
    {
      item: "watchdog: ledger GETs, judging, bytes (measured above)",
      usd: apps.map((a) => watchdog.get(a) ?? 0),
    },
  ];
  const totals = apps.map((_, i) => rows.reduce((s, r) => s + (r.usd[i] ?? 0), 0));
  return { apps, rows, totals };
}

/** Prints the month's fixed costs at each number of apps, beside each other, with the total and per app. */
export function printFixedMonth(
  t: TemplateJson,
  watchdog: ReadonlyMap<number, number>,
  emitted: ReadonlySet<string>,
) {
  const { apps, rows, totals } = fixedMonth(t, watchdog, emitted);
  const column = (n: number) => `${n.toLocaleString("en")} apps, $ a month`;
  reportTable(
    "the month's fixed costs (from the synthesized template; us-east-1), whatever the traffic, beside each other:",
    [
      ...rows.map((r) => ({
        item: r.item,
        ...Object.fromEntries(apps.map((a, i) => [column(a), Number((r.usd[i] ?? 0).toFixed(2))])),
      })),
      {
        item: "total",
        ...Object.fromEntries(apps.map((a, i) => [column(a), Number((totals[i] ?? 0).toFixed(2))])),
      },
      {
        item: "per app",
        ...Object.fromEntries(apps.map((a, i) => [column(a), Number(((totals[i] ?? 0) / a).toPrecision(2))])),
      },
    ],
  );
  return { apps, rows, totals };
}
