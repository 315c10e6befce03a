import { QUARANTINE_SPIKE } from "../../shared/platform/constants";
import { metricTrigger } from "../../shared/platform/metric-trigger";
import { PROJECTOR_OUTCOMES, quarantineSpikes, type TriggerCounts } from "../../shared/platform/outcomes";
import type { LedgerLine } from "./state";

/**
 * The console's live flow: events accepted per second and what the projector made of them, over
 * the last 15 minutes, per app and for all apps. A pure window fed with the local stack's ledger
 * lines (each counted outcome, with when it was counted); `flowSnapshot` reads it.
 */

/** How far back the live flow goes: the quarantine-rate window, so that its highlight and the alarm agree. */
export const FLOW_WINDOW_SECONDS = QUARANTINE_SPIKE.windowMinutes * 60;

/** A trigger whose quarantine rate over the window is a spike (`quarantineSpikes`). */
export type QuarantineSpike = TriggerCounts & { share: number };

/** The series of the flow: what the ingest answered, then where the projector put each event. */
export const FLOW_SERIES = ["accepted", "rejected", ...PROJECTOR_OUTCOMES] as const;
export type FlowSeries = (typeof FLOW_SERIES)[number];

/** The flow of one window: `series[s][i]` events in the bucket that starts at `from + i × resolution`. */
export interface FlowSnapshot {
  /** Seconds per bucket: 1 locally, 60 from CloudWatch. */
  resolutionSeconds: number;
  /** Start of the first bucket, epoch ms. */
  from: number;
  series: Record<FlowSeries, number[]>;
  /** Sums over the window. */
  totals: Record<FlowSeries, number>;
  /** The triggers whose quarantined share over the window is a spike, worst first (the console highlights them). */
  spikes: QuarantineSpike[];
}

/** The flow series an outcome line counts in, if any: the ingest's and the projector's outcomes. */
export function flowSeriesOf(service: string, outcome: string): FlowSeries | undefined {
  if (service === "ingest") return outcome.startsWith("accepted") ? "accepted" : "rejected";
  if (service === "projector" && (PROJECTOR_OUTCOMES as readonly string[]).includes(outcome))
    return outcome as FlowSeries;
  return undefined;
}

const ALL = "";

/** Per-second counts by app and series, forgetting what is older than the window. */
export class FlowWindow {
  /** second → app ("" for all) → series → count. */
  private readonly seconds = new Map<number, Map<string, Partial<Record<FlowSeries, number>>>>();
  /** second → app ("" for all) → trigger → events handled and quarantined. */
  private readonly triggers = new Map<
    number,
    Map<string, Map<string, { events: number; quarantined: number }>>
  >();

  /** Counts the ledger lines that report an ingest or projector outcome (lines without a time are left out). */
  add(lines: Iterable<LedgerLine>): void {
    for (const { at, entry } of lines) {
      if (at === undefined || entry[0] !== "outcome") continue;
      const series = flowSeriesOf(entry[1], entry[2]);
      if (!series) continue;
      const second = Math.floor(at / 1000);
      const apps = this.seconds.get(second) ?? new Map();
      this.seconds.set(second, apps);
      const appsOf = entry[3] ? [ALL, entry[3]] : [ALL];
      for (const app of appsOf) {
        const counts = apps.get(app) ?? {};
        counts[series] = (counts[series] ?? 0) + 1;
        apps.set(app, counts);
      }
      const trigger = entry[4];
      if (entry[1] !== "projector" || trigger === undefined || series === "failed") continue;
      const byApp = this.triggers.get(second) ?? new Map();
      this.triggers.set(second, byApp);
      for (const app of appsOf) {
        const byTrigger = byApp.get(app) ?? new Map();
        byApp.set(app, byTrigger);
        const n = byTrigger.get(metricTrigger(trigger)) ?? { events: 0, quarantined: 0 };
        n.events++;
        if (series === "quarantined") n.quarantined++;
        byTrigger.set(metricTrigger(trigger), n);
      }
    }
  }

  /** The window ending at `now` (the current second last), for one app or all. */
  snapshot(now: number, app?: string): FlowSnapshot {
    const last = Math.floor(now / 1000);
    const first = last - FLOW_WINDOW_SECONDS + 1;
    for (const second of this.seconds.keys()) if (second < first) this.seconds.delete(second);
    for (const second of this.triggers.keys()) if (second < first) this.triggers.delete(second);
    const perTrigger = new Map<string, TriggerCounts>();
    for (const [second, byApp] of this.triggers) {
      if (second > last) continue;
      for (const [trigger, n] of byApp.get(app ?? ALL) ?? []) {
        const sum = perTrigger.get(trigger) ?? { trigger, events: 0, quarantined: 0 };
        sum.events += n.events;
        sum.quarantined += n.quarantined;
        perTrigger.set(trigger, sum);
      }
    }
    const series = Object.fromEntries(
      FLOW_SERIES.map((s) => [s, new Array<number>(FLOW_WINDOW_SECONDS).fill(0)]),
    ) as Record<FlowSeries, number[]>;
    for (const [second, apps] of this.seconds) {
      const counts = apps.get(app ?? ALL);
      if (!counts || second > last) continue;
      for (const s of FLOW_SERIES) {
        const values = series[s];
        values[second - first] = counts[s] ?? 0;
      }
    }
    return {
      resolutionSeconds: 1,
      from: first * 1000,
      series,
      totals: totalsOf(series),
      spikes: quarantineSpikes([...perTrigger.values()]),
    };
  }
}

/** The sums of each series. */
export function totalsOf(series: Record<FlowSeries, number[]>): Record<FlowSeries, number> {
  return Object.fromEntries(FLOW_SERIES.map((s) => [s, series[s].reduce((a, b) => a + b, 0)])) as Record<
    FlowSeries,
    number
  >;
}
