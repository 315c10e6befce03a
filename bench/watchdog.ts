/**
 * `npm run bench:watchdog`: the judge of the watchdog on labelled traffic (#58). Each app of the
 * fleet (`./watchdog-traces.ts`: fixed shapes, parameters, seeds) is replayed as the deployment
 * runs: a rollup pass every 15 minutes (at a drawn phase) writes the ledger as `passDay` does
 * (`watchEntry`: deliveries archived a minute after they come, yesterday passed until final), the
 * rule reads the passes the deployment reads (`silenceFromPasses`), and the `SilentApps` alarm is
 * evaluated on its datapoints with its own period and datapoints to alarm (`SILENCE_ALARM`); each
 * app is judged as if alone (a fleet alarm pages on any one app: one app's false page is the
 * fleet's). Refusals: the fleet's requests every 5 minutes (each refused delivery tried 3 times,
 * as the platform retries), scanners' bursts of unknown usernames, and the `RefusedDeliveries`
 * alarm (`REFUSAL_ALARM`, `refusalBreaches`). Narrowed triggers: `apps --check`'s own code
 * (`checkPlatformWebhooks`) against the platform's webhooks, once a day at 06:00 UTC (the cron
 * docs/operating.md gives). Prints, per shape and in total: false pages per 1,000 app-months,
 * faults found and the time to find them (p50, p95), and the goal line.
 *
 * `WATCHDOG_APPS_PER_SHAPE=4` for a quick look (the goal needs the default, 35: 3,059 app-months).
 */

import { addWatchEntry, watchEntry, watchFields } from "../shared/analytics/rollup/ledger";
import type { DayPass } from "../shared/analytics/store/rollup-ledger";
import type { KnownApp } from "../shared/apps/dynamo-app-registry";
import type { ManagementApi, PlatformWebhook } from "../shared/apps/management-api";
import {
  pages,
  REFUSAL_ALARM,
  type RefusalPeriod,
  refusalBreaches,
  SILENCE_ALARM,
} from "../shared/watchdog/alarms";
import { silenceFromPasses } from "../shared/watchdog/ledger-history";
import { checkPlatformWebhooks } from "../shared/watchdog/platform-check";
import {
  ALL_TRIGGERS,
  APPS_PER_SHAPE,
  type AppTrace,
  DAY_MS,
  drawApp,
  drawScanners,
  type Fault,
  HOUR_MS,
  MINUTE_MS,
  PRESENCE_TRIGGERS,
  random,
  SHAPES,
  type ShapeName,
  TRACE_MINUTES,
  TRACE_START,
  WARM_UP_DAYS,
} from "./watchdog-traces";

const TICK_MS = 15 * MINUTE_MS;
/** A delivery is in the archive a minute after it came (the projector's batches). */
const ARCHIVE_LAG_MINUTES = 1;
/** A day is passed until 2 hours after its end (the rollup's grace), then final. */
const GRACE_MS = 2 * HOUR_MS;
/** CloudWatch evaluates an alarm within a minute of its datapoint. */
const ALARM_DELAY_MS = MINUTE_MS;
/** A page this long after a fault's end is still the fault's (the pass that sees the app again). */
const FAULT_SLACK_MS = HOUR_MS;
/** `apps --check` as a daily cron (docs/operating.md). */
const CHECK_HOUR_UTC = 6;
const RETRIES = 3;
const TRACE_END = TRACE_START + TRACE_MINUTES * MINUTE_MS;
const MONTH_MS = (365.25 / 12) * DAY_MS;

if (SILENCE_ALARM.periodMinutes !== 15)
  throw new Error("the judge's ticks are the alarm's periods: 15 minutes");

interface Found {
  fault: Fault;
  appId: string;
  shape: ShapeName;
  /** When the fault first cost a delivery (ms), if it did. */
  missedFrom?: number;
  /** Whether the goal covers it (see `eligible`). */
  eligible: boolean;
  foundAt?: number;
  by?: string;
}

/** The ledger's passes of one app, tick by tick, and the rule's answer at each tick. */
function silenceBreaches(app: AppTrace): { ticks: number[]; breach: Uint8Array } {
  const phase =
    random(
      app.appId.length * 7919 + app.appId.charCodeAt(0) * 31 + app.appId.charCodeAt(app.appId.length - 1),
    )() * TICK_MS;
  const dayHours = new Map<number, number[]>();
  const passes = new Map<number, DayPass>();
  const hoursOf = (day: number) => {
    let hours = dayHours.get(day);
    if (!hours) {
      hours = new Array(24).fill(0);
      dayHours.set(day, hours);
    }
    return hours;
  };
  const ticks: number[] = [];
  const breach = new Uint8Array(Math.ceil((TRACE_END - TRACE_START) / TICK_MS));
  let cursor = 0;
  for (let t = TRACE_START + phase, k = 0; t < TRACE_END; t += TICK_MS, k++) {
    const visible = Math.min(TRACE_MINUTES, Math.floor((t - TRACE_START) / MINUTE_MS) - ARCHIVE_LAG_MINUTES);
    for (; cursor < visible; cursor++) {
      const n = app.counted[cursor] as number;
      if (n > 0) {
        const hours = hoursOf(TRACE_START + Math.floor(cursor / 1440) * DAY_MS);
        const h = Math.floor(cursor / 60) % 24;
        hours[h] = (hours[h] ?? 0) + n;
      }
    }
    const today = Math.floor(t / DAY_MS) * DAY_MS;
    for (const day of [today - DAY_MS, today]) {
      if (day < TRACE_START || (day < today && t >= day + DAY_MS + GRACE_MS)) continue;
      const previous = passes.get(day);
      const fields = watchFields();
      const hours = dayHours.get(day);
      // A day's pass holds the apps with activity that day (`dayActivities`); the deployment passes every day.
      if (hours?.some((n) => n > 0))
        addWatchEntry(fields, app.appId, watchEntry(app.appId, [...hours], previous, t));
      passes.set(day, {
        day: "",
        computedAt: t,
        final: false,
        queries: 0,
        bytesScanned: 0,
        apps: {},
        ...fields,
      });
    }
    ticks.push(t);
    breach[k] = silenceFromPasses((d) => passes.get(d), t).silent.length >= SILENCE_ALARM.threshold ? 1 : 0;
  }
  return { ticks, breach: breach.subarray(0, ticks.length) };
}

function firstDelivery(app: AppTrace, from: number, to: number): number | undefined {
  const a = Math.max(0, Math.floor((from - TRACE_START) / MINUTE_MS));
  const b = Math.min(TRACE_MINUTES, Math.floor((to - TRACE_START) / MINUTE_MS));
  for (let m = a; m < b; m++) if ((app.rhythm[m] as number) > 0) return TRACE_START + m * MINUTE_MS + 30_000;
  return undefined;
}

const usualAt = (app: AppTrace, at: number) =>
  app.usualPerHour[Math.floor((at - TRACE_START) / HOUR_MS)] as number;

function quantile(values: number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

const minutes = (ms: number | undefined) => (ms === undefined ? "-" : `${Math.round(ms / MINUTE_MS)} min`);
const hours = (ms: number | undefined) => (ms === undefined ? "-" : `${(ms / HOUR_MS).toFixed(1)} h`);

async function main(): Promise<void> {
  const started = Date.now();
  const apps: AppTrace[] = [];
  const found: Found[] = [];
  const falsePages = new Map<ShapeName, number>();
  const appMonths = new Map<ShapeName, number>();
  const periods = Math.ceil(TRACE_MINUTES / REFUSAL_ALARM.periodMinutes);
  const requests = new Float64Array(periods);
  const refusedBy = new Map<number, Array<{ username: string; known: boolean; count: number }>>();
  const refuse = (at: number, username: string, known: boolean, count: number) => {
    const p = Math.floor((at - TRACE_START) / (REFUSAL_ALARM.periodMinutes * MINUTE_MS));
    if (p < 0 || p >= periods) return;
    requests[p] = (requests[p] as number) + count;
    const list = refusedBy.get(p) ?? [];
    const entry = list.find((e) => e.username === username);
    if (entry) entry.count += count;
    else list.push({ username, known, count });
    refusedBy.set(p, list);
  };

  for (const shape of SHAPES)
    for (let i = 0; i < APPS_PER_SHAPE; i++) {
      const app = drawApp(shape, i);
      apps.push(app);
      const judgedFrom =
        TRACE_START + Math.max(app.firstMinute, shape === "new-app" ? 0 : WARM_UP_DAYS * 1440) * MINUTE_MS;
      appMonths.set(shape, (appMonths.get(shape) ?? 0) + (TRACE_END - judgedFrom) / MONTH_MS);
      // The fleet's requests every 5 minutes; a refused delivery is tried RETRIES times.
      for (let m = 0; m < TRACE_MINUTES; m++) {
        const p = Math.floor(m / REFUSAL_ALARM.periodMinutes);
        requests[p] = (requests[p] as number) + (app.counted[m] as number);
      }
      const faults: Found[] = app.faults.map((fault) => {
        const missedFrom = firstDelivery(app, fault.start, fault.end);
        const eligible =
          missedFrom !== undefined &&
          (fault.kind === "stop"
            ? fault.label !== "30 min" && usualAt(app, missedFrom) >= 20
            : fault.kind === "refused"
              ? usualAt(app, missedFrom) >= 12
              : true);
        return {
          fault,
          appId: app.appId,
          shape,
          eligible,
          ...(missedFrom === undefined ? {} : { missedFrom }),
        };
      });
      for (const f of faults)
        if (f.fault.kind === "refused")
          for (let t = f.fault.start; t < f.fault.end; t += MINUTE_MS) {
            const n = app.rhythm[Math.floor((t - TRACE_START) / MINUTE_MS)] as number;
            if (n > 0) refuse(t, app.username, true, n * RETRIES);
          }
      found.push(...faults);
      const { ticks, breach } = silenceBreaches(app);
      for (const k of pages(breach, SILENCE_ALARM)) {
        const at = (ticks[k] as number) + ALARM_DELAY_MS;
        if (at < judgedFrom) continue;
        const of = faults.find((f) => at >= f.fault.start && at <= f.fault.end + FAULT_SLACK_MS);
        if (!of) falsePages.set(shape, (falsePages.get(shape) ?? 0) + 1);
        else if (of.foundAt === undefined) Object.assign(of, { foundAt: at, by: "SilentApps" });
      }
    }

  // Refusals: the fleet's alarm over every period.
  for (const burst of drawScanners()) refuse(burst.at, burst.username, false, burst.requests);
  const breaches = Uint8Array.from({ length: periods }, (_, p) =>
    refusalBreaches({
      requests: requests[p] as number,
      refused: refusedBy.get(p) ?? [],
    } satisfies RefusalPeriod)
      ? 1
      : 0,
  );
  let falseRefusalPages = 0;
  for (const p of pages(breaches, REFUSAL_ALARM)) {
    const at = TRACE_START + (p + 1) * REFUSAL_ALARM.periodMinutes * MINUTE_MS + ALARM_DELAY_MS;
    const of = found.find(
      (f) =>
        f.fault.kind === "refused" &&
        at >= f.fault.start &&
        at <= f.fault.end + REFUSAL_ALARM.periodMinutes * MINUTE_MS,
    );
    if (!of) falseRefusalPages++;
    else if (of.foundAt === undefined || at < of.foundAt)
      Object.assign(of, { foundAt: at, by: "RefusedDeliveries" });
  }

  // Narrowed triggers: `apps --check` once a day.
  const known: KnownApp[] = apps.map((a) => ({
    appId: a.appId,
    allowed: true,
    webhook: {
      appId: a.appId,
      record: "webhook",
      webhookId: "webhook-backend-bench",
      url: "https://bench.example/webhook",
      username: a.username,
      triggers: ALL_TRIGGERS,
      enabled: true,
      updatedAt: new Date(TRACE_START).toISOString(),
    },
  }));
  const byApp = new Map(apps.map((a) => [a.appId, a]));
  let falseFindings = 0;
  for (let day = TRACE_START + WARM_UP_DAYS * DAY_MS; day < TRACE_END; day += DAY_MS) {
    const at = day + CHECK_HOUR_UTC * HOUR_MS;
    const narrowedNow = (appId: string) =>
      byApp.get(appId)?.faults.some((f) => f.kind === "narrowed" && at >= f.start && at < f.end) ?? false;
    const api: ManagementApi = {
      listWebhooks: async (appId): Promise<PlatformWebhook[]> => [
        {
          id: "webhook-backend-bench",
          name: "webhook-backend-bench",
          webhookURL: "https://bench.example/webhook",
          useBasicAuth: true,
          username: byApp.get(appId)?.username ?? "",
          enabled: true,
          triggers: narrowedNow(appId) ? PRESENCE_TRIGGERS : ALL_TRIGGERS,
        },
      ],
      createWebhook: async () => undefined,
      updateWebhook: async () => undefined,
      deleteWebhook: async () => undefined,
      createApp: async () => undefined,
    };
    await checkPlatformWebhooks({
      api,
      apps: known,
      webhookUrl: "https://bench.example/webhook",
      acceptedUsernames: (appId) => [byApp.get(appId)?.username ?? ""],
      concurrency: 64,
      onFinding: (finding) => {
        if (finding.state === "ok") return;
        const of = found.find(
          (f) =>
            f.appId === finding.appId &&
            f.fault.kind === "narrowed" &&
            at >= f.fault.start &&
            at < f.fault.end,
        );
        if (!of) falseFindings++;
        else if (of.foundAt === undefined || at < of.foundAt)
          Object.assign(of, { foundAt: at, by: "apps --check" });
      },
    });
  }

  report({
    found,
    falsePages,
    appMonths,
    falseRefusalPages,
    falseFindings,
    seconds: (Date.now() - started) / 1000,
  });
}

function delays(list: Found[], from: (f: Found) => number | undefined): number[] {
  return list.flatMap((f) => {
    const start = from(f);
    return f.foundAt !== undefined && start !== undefined ? [Math.max(0, f.foundAt - start)] : [];
  });
}

function report(r: {
  found: Found[];
  falsePages: Map<ShapeName, number>;
  appMonths: Map<ShapeName, number>;
  falseRefusalPages: number;
  falseFindings: number;
  seconds: number;
}): void {
  const rows: string[][] = [];
  const head = [
    "shape",
    "app-months",
    "false pages",
    "/1,000",
    "stops ≥20/h found ≤60 min",
    "p50",
    "p95",
    "30-min stops found",
    "narrowed found ≤1 d",
    "p95",
    "refused found ≤15 min",
    "p95",
  ];
  const line = (name: string, shapes: readonly ShapeName[]) => {
    const of = r.found.filter((f) => shapes.includes(f.shape));
    const months = shapes.reduce((s, x) => s + (r.appMonths.get(x) ?? 0), 0);
    const falses = shapes.reduce((s, x) => s + (r.falsePages.get(x) ?? 0), 0);
    const stops = of.filter((f) => f.fault.kind === "stop" && f.eligible);
    const stopDelays = delays(stops, (f) => f.missedFrom);
    const inTime = stopDelays.filter((d) => d <= HOUR_MS).length;
    const short = of.filter(
      (f) => f.fault.kind === "stop" && f.fault.label === "30 min" && f.missedFrom !== undefined,
    );
    const narrowed = of.filter((f) => f.fault.kind === "narrowed");
    const narrowedDelays = delays(narrowed, (f) => f.fault.start);
    const refused = of.filter((f) => f.fault.kind === "refused" && f.eligible);
    const refusedDelays = delays(refused, (f) => f.missedFrom);
    rows.push([
      name,
      months.toFixed(0),
      String(falses),
      ((1000 * falses) / months).toFixed(2),
      stops.length ? `${inTime}/${stops.length} (${((100 * inTime) / stops.length).toFixed(0)}%)` : "-",
      minutes(quantile(stopDelays, 0.5)),
      minutes(quantile(stopDelays, 0.95)),
      `${short.filter((f) => f.foundAt !== undefined).length}/${short.length}`,
      narrowed.length ? `${narrowedDelays.filter((d) => d <= DAY_MS).length}/${narrowed.length}` : "-",
      hours(quantile(narrowedDelays, 0.95)),
      refused.length ? `${refusedDelays.filter((d) => d <= 15 * MINUTE_MS).length}/${refused.length}` : "-",
      minutes(quantile(refusedDelays, 0.95)),
    ]);
    return {
      months,
      falses,
      stops: stops.length,
      inTime,
      narrowed: narrowed.length,
      narrowedDelays,
      refused: refused.length,
      refusedDelays,
    };
  };
  for (const shape of SHAPES) line(shape, [shape]);
  const total = line("total", SHAPES);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join("  ");
  console.log(
    `bench:watchdog: ${SHAPES.length} shapes × ${APPS_PER_SHAPE} apps, ${TRACE_MINUTES / 1440 / 7} weeks from ${new Date(TRACE_START).toISOString().slice(0, 10)} (${r.seconds.toFixed(0)} s)`,
  );
  console.log(fmt(head));
  for (const row of rows) console.log(fmt(row));
  console.log(
    `refusal alarm: ${r.falseRefusalPages} false pages (scanners' unknown usernames); apps --check: ${r.falseFindings} false findings`,
  );
  const goals = [
    [
      `0 false pages over ≥ 3,000 app-months`,
      total.falses === 0 && total.months >= 3000,
      `${total.falses} over ${total.months.toFixed(0)}`,
    ],
    [
      `full stops (≥ 20/h) found ≤ 60 min in 95%`,
      total.stops > 0 && total.inTime >= 0.95 * total.stops,
      `${total.inTime}/${total.stops}`,
    ],
    [
      `narrowed triggers found ≤ 1 day`,
      total.narrowedDelays.filter((d) => d <= DAY_MS).length === total.narrowed,
      `${total.narrowedDelays.filter((d) => d <= DAY_MS).length}/${total.narrowed}`,
    ],
    [
      `refusals (≥ 1 per 5 min) found ≤ 15 min in 95%, 0 false`,
      r.falseRefusalPages === 0 &&
        total.refusedDelays.filter((d) => d <= 15 * MINUTE_MS).length >= 0.95 * total.refused,
      `${total.refusedDelays.filter((d) => d <= 15 * MINUTE_MS).length}/${total.refused}, ${r.falseRefusalPages} false`,
    ],
  ] as const;
  console.log(
    `goal: ${goals.map(([name, met, figure]) => `${met ? "MET" : "NOT MET"} ${name} (${figure})`).join("; ")}`,
  );
  console.log(
    "30-min stops are outside the goal: they end before 30 minutes of silence can be told from a gap.",
  );
}

await main();
