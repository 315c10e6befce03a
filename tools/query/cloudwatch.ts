import {
  CloudWatchClient,
  GetMetricDataCommand,
  GetMetricStatisticsCommand,
  ListMetricsCommand,
} from "@aws-sdk/client-cloudwatch";
import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";
import { QUARANTINE_SPIKE } from "../../shared/platform/constants";
import { METRICS_NAMESPACE } from "../../shared/platform/observability";
import {
  INGEST_OUTCOMES,
  OUTCOME_METRICS,
  PROJECTOR_OUTCOMES,
  quarantineSpikes,
  TRIGGER_METRICS,
} from "../../shared/platform/outcomes";
import {
  FLOW_SERIES,
  FLOW_WINDOW_SECONDS,
  type FlowSeries,
  type FlowSnapshot,
  flowSeriesOf,
  totalsOf,
} from "../local/flow";

/** Outcome counts of the last 24 hours from the functions' CloudWatch metrics (deployed stacks). */
export async function cloudWatchOutcomes(): Promise<Record<string, Record<string, number>>> {
  const cw = new CloudWatchClient({});
  const result: Record<string, Record<string, number>> = {};
  try {
    const listed = await cw.send(new ListMetricsCommand({ Namespace: METRICS_NAMESPACE }));
    const end = new Date();
    const start = new Date(end.getTime() - 86_400_000);
    for (const metric of listed.Metrics ?? []) {
      const dims = Object.fromEntries((metric.Dimensions ?? []).map((d) => [d.Name, d.Value]));
      const out = await cw.send(
        new GetMetricStatisticsCommand({
          Namespace: METRICS_NAMESPACE,
          MetricName: metric.MetricName,
          Dimensions: metric.Dimensions,
          StartTime: start,
          EndTime: end,
          Period: 86_400,
          Statistics: ["Sum"],
        }),
      );
      const sum = (out.Datapoints ?? []).reduce((n, d) => n + (d.Sum ?? 0), 0);
      const service = dims.service ?? metric.MetricName ?? "unknown";
      result[service] = { ...result[service], [dims.outcome ?? "total"]: sum };
    }
  } finally {
    cw.destroy();
  }
  return result;
}

/**
 * A deployed stack's live flow (`tools/local/flow.ts`'s snapshot) from the functions' outcome
 * metrics: one GetMetricData request for the ingest's and the projector's outcomes, a minute a
 * bucket (the metrics' standard resolution), all apps together (the metrics carry no app).
 */
export async function cloudWatchFlow(cw: CloudWatchClient, now = Date.now()): Promise<FlowSnapshot> {
  const minute = 60_000;
  const buckets = FLOW_WINDOW_SECONDS / 60;
  const end = Math.floor(now / minute) * minute + minute;
  const from = end - buckets * minute;
  const queries = [
    ...INGEST_OUTCOMES.map((outcome) => ({ service: "ingest" as const, outcome })),
    ...PROJECTOR_OUTCOMES.map((outcome) => ({ service: "projector" as const, outcome })),
  ];
  const out = await cw.send(
    new GetMetricDataCommand({
      StartTime: new Date(from),
      EndTime: new Date(end),
      MetricDataQueries: queries.map((q, i) => ({
        Id: `m${i}`,
        MetricStat: {
          Metric: {
            Namespace: METRICS_NAMESPACE,
            MetricName: OUTCOME_METRICS[q.service].metric,
            Dimensions: [
              { Name: "service", Value: q.service },
              { Name: "outcome", Value: q.outcome },
            ],
          },
          Period: 60,
          Stat: "Sum",
        },
      })),
    }),
  );
  const series = Object.fromEntries(
    FLOW_SERIES.map((s) => [s, new Array<number>(buckets).fill(0)]),
  ) as Record<FlowSeries, number[]>;
  for (const result of out.MetricDataResults ?? []) {
    const q = queries[Number(result.Id?.slice(1))];
    const name = q && flowSeriesOf(q.service, q.outcome);
    if (!name) continue;
    (result.Timestamps ?? []).forEach((t, i) => {
      const bucket = Math.floor((t.getTime() - from) / minute);
      const values = series[name];
      if (bucket >= 0 && bucket < buckets) values[bucket] = (values[bucket] ?? 0) + (result.Values?.[i] ?? 0);
    });
  }
  return { resolutionSeconds: 60, from, series, totals: totalsOf(series), spikes: [] };
}

/**
 * The triggers whose quarantine rate over the last window is a spike, from the projector's
 * per-trigger metrics (`TRIGGER_METRICS`): what the per-trigger alarms watch. Two metrics per
 * modelled trigger ($0.01 per 1,000 metrics requested): the console asks at most once a minute.
 */
export async function cloudWatchQuarantineSpikes(
  cw: CloudWatchClient,
  now = Date.now(),
): Promise<FlowSnapshot["spikes"]> {
  const window = QUARANTINE_SPIKE.windowMinutes * 60;
  const triggers = [...KNOWN_TRIGGERS].sort();
  const kinds = [TRIGGER_METRICS.events, TRIGGER_METRICS.quarantined] as const;
  const queries = triggers.flatMap((trigger) => kinds.map((metric) => ({ trigger, metric })));
  const out = await cw.send(
    new GetMetricDataCommand({
      StartTime: new Date(now - window * 1000),
      EndTime: new Date(now),
      MetricDataQueries: queries.map((q, i) => ({
        Id: `q${i}`,
        MetricStat: {
          Metric: {
            Namespace: METRICS_NAMESPACE,
            MetricName: q.metric,
            Dimensions: [
              { Name: "service", Value: "projector" },
              { Name: "trigger", Value: q.trigger },
            ],
          },
          Period: window,
          Stat: "Sum",
        },
      })),
    }),
  );
  const counts = new Map(triggers.map((trigger) => [trigger, { trigger, events: 0, quarantined: 0 }]));
  for (const result of out.MetricDataResults ?? []) {
    const q = queries[Number(result.Id?.slice(1))];
    const c = q && counts.get(q.trigger);
    if (!c) continue;
    const sum = (result.Values ?? []).reduce((a, b) => a + b, 0);
    if (q.metric === TRIGGER_METRICS.events) c.events += sum;
    else c.quarantined += sum;
  }
  return quarantineSpikes([...counts.values()]);
}
